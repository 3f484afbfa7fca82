#!/usr/bin/env python3
"""test/tools/sections.py: the sections of hwtimer.h, by their [hwtimer:NAME] banner tags.

A section starts at its banner (a "/* ====" line followed by the line with the tag) and ends
where the next banner starts (or at the end of the file). Scripts that look at the header's
structure find its sections here, at run time, by name: never by line numbers.

  test/tools/sections.py [FILE]   prints "NAME FIRST LAST" per section (1-based lines,
                                  inclusive), in file order; FILE defaults to hwtimer.h
  from sections import find_sections, select_sections
                                  (test/tools/coverage.py, mutate.py, test/fuzz/run.sh)
"""
import fnmatch
import os
import re
import sys


def find_sections(lines):
    """[(name, first, end)] in file order: 0-based indices, the section is lines[first:end]."""
    starts = []
    for i in range(1, len(lines)):
        m = re.match(r"\s*\[hwtimer:([A-Za-z0-9_-]+)\]", lines[i])
        if m and re.match(r"/\* =+\s*$", lines[i - 1]):
            starts.append((m.group(1), i - 1))
    return [(name, s, starts[k + 1][1] if k + 1 < len(starts) else len(lines))
            for k, (name, s) in enumerate(starts)]


def select_sections(sections, wanted):
    """The sections `wanted` names: names or shell patterns, comma- or blank-separated; A..B
    is every section after A and before B. Exits with the list of sections on a name that
    matches none."""
    names = [s[0] for s in sections]
    chosen = set()
    for part in re.split(r"[,\s]+", wanted.strip()):
        if not part:
            continue
        if ".." in part:
            a, b = part.split("..", 1)
            for x in (a, b):
                if x not in names:
                    sys.exit(f"no section [hwtimer:{x}] (the sections: {' '.join(names)})")
            chosen.update(names[names.index(a) + 1:names.index(b)])
        else:
            hit = fnmatch.filter(names, part)
            if not hit:
                sys.exit(f"no section matches {part} (the sections: {' '.join(names)})")
            chosen.update(hit)
    return [s for s in sections if s[0] in chosen]


if __name__ == "__main__":
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "hwtimer.h")
    with open(path, encoding="utf-8") as f:
        text = f.read().split("\n")
    for name, first, end in find_sections(text):
        print(name, first + 1, end)
