#!/usr/bin/env python3
"""Coverage of hwtimer.h, section by section, from a gcc build with coverage.

    test/tools/coverage.py BUILDDIR

BUILDDIR is a meson build made with -Db_coverage=true whose tests have run (test/run.sh's
gcc stage). Reads every C program's counts of hwtimer.h (the -m32 ones too), leaves out what
test/tools/coverage.exclude lists (code that cannot run on Linux x86-64), and prints for
each section of the header ([hwtimer:NAME] banners, found in the file as it is now) its
lines, branches and functions, then the whole header's, then what is not covered. Exits 1
when the header is below MIN_LINES % of its lines or MIN_BRANCHES % of its branches, or an
entry of test/tools/coverage.exclude matches nothing.

How it counts. Each program that compiles the implementation has its own counts of the
header's lines; they add up line by line (a line ran if it ran in any program), and a
line's branches position by position (the first branch of a line in one program is its
first in every other). gcov's JSON format lists exactly a line's branches, in order, so
this is exact wherever two programs compiled a line alike: with the flags below every line
of the C programs but two compiles alike in all of them. (gcovr, which reads gcov's text
format, keys a branch by its number there, which counts the line's calls too, so the same
branch of two programs lands on two keys wherever their calls differ, and shows as never
taken; C++ makes other branches of the same lines, so the C++ program is left out.)
The build is meant to compile with -fno-inline and always_inline taken away
(-Dalways_inline=unused): gcov counts a branch once per copy the compiler makes of it, so
an inlined helper's branch would count once per caller, in contexts that can never take
both of its ways; without inlining each branch of the header counts once.
"""
import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

sys.dont_write_bytecode = True  # (no __pycache__ in test/)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sections import find_sections  # noqa: E402 (test/tools/sections.py)

MIN_LINES = 99.5
MIN_BRANCHES = 95.0
SHOW_MISSING = 60  # rows of what is not covered, at most

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
HEADER = os.path.join(ROOT, "hwtimer.h")
EXCLUDE = os.path.join(HERE, "coverage.exclude")


def section_of(line_number, sections):
    """The name of the section (find_sections) that holds this 1-based line."""
    for name, first, end in sections:
        if first < line_number <= end:
            return name
    return "(before the sections)"


def exclusions(lines):
    """{line number: 'lines' or 'branches'} from test/tools/coverage.exclude, and the
    entries that matched nothing."""
    excluded, stale = {}, []
    with open(EXCLUDE) as f:
        for raw in f:
            entry = raw.split()
            if not entry or entry[0].startswith("#"):
                continue
            if entry[0] not in ("lines", "branches") or not 2 <= len(entry) <= 3:
                sys.exit(f"coverage: bad entry in {EXCLUDE}: {raw.strip()}")
            kind, start = entry[0], re.compile(entry[1])
            end = re.compile(entry[2]) if len(entry) == 3 else None
            matched = False
            i = 0
            while i < len(lines):
                if start.search(lines[i]):
                    j = i
                    while end and j + 1 < len(lines) and not end.search(lines[j]):
                        j += 1
                    for k in range(i + 1, j + 2):  # 1-based, i .. j
                        if excluded.get(k) != "lines":
                            excluded[k] = kind
                    matched = True
                    i = j
                i += 1
            if not matched:
                stale.append(raw.strip())
    return excluded, stale


def gcov_json(builddir, gcdas):
    """gcov's JSON documents for these counts files (run from the build directory, where the
    compiler's paths start)."""
    out = subprocess.run(["gcov", "--json-format", "--stdout", "--branch-probabilities"] + gcdas,
                         cwd=builddir, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"coverage: gcov failed:\n{out.stderr}")
    return [json.loads(doc) for doc in out.stdout.splitlines() if doc.strip()]


def merged_counts(builddir):
    """Per line of hwtimer.h: [count, [branch counts]]; per function (name, line): count."""
    gcdas = []
    for top, _, files in os.walk(builddir):
        for name in files:
            if name.endswith(".gcda") and not name.endswith((".cpp.gcda", ".cc.gcda")):
                gcdas.append(os.path.relpath(os.path.join(top, name), builddir))
    if not gcdas:
        sys.exit(f"coverage: no counts in {builddir} (made with -Db_coverage=true, tests run?)")
    batches = [sorted(gcdas)[i::os.cpu_count() or 1] for i in range(os.cpu_count() or 1)]
    lines, functions = {}, {}
    with ThreadPoolExecutor() as pool:
        for docs in pool.map(lambda b: gcov_json(builddir, b) if b else [], batches):
            for doc in docs:
                for f in doc["files"]:
                    path = os.path.normpath(os.path.join(builddir, f["file"]))
                    if os.path.realpath(path) != os.path.realpath(HEADER):
                        continue
                    for line in f["lines"]:
                        mine = lines.setdefault(line["line_number"], [0, []])
                        mine[0] += line["count"]
                        for k, branch in enumerate(line["branches"]):
                            if k == len(mine[1]):
                                mine[1].append(0)
                            mine[1][k] += branch["count"]
                    for fn in f["functions"]:
                        key = (fn["name"], fn["start_line"])
                        functions[key] = functions.get(key, 0) + fn["execution_count"]
    if not lines:
        sys.exit(f"coverage: no program in {builddir} ran the implementation of hwtimer.h")
    return lines, functions


def pct(done, total):
    return 100.0 * done / total if total else 100.0


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    src = open(HEADER).read().split("\n")
    sections = find_sections(src)
    excluded, stale = exclusions(src)
    lines, functions = merged_counts(sys.argv[1])

    rows = {}  # section -> [lines, run, branches, taken, functions, called]
    missing = []
    dropped = [0, 0]  # lines, branches test/tools/coverage.exclude left out

    def row(n):
        return rows.setdefault(section_of(n, sections), [0] * 6)

    for n, (count, branches) in sorted(lines.items()):
        how = excluded.get(n)
        if how == "lines":
            dropped[0] += 1
            dropped[1] += len(branches)
            continue
        r = row(n)
        r[0] += 1
        r[1] += count > 0
        if count == 0:
            missing.append((n, "never ran"))
        if how == "branches":
            dropped[1] += len(branches)
            continue
        taken = sum(1 for c in branches if c > 0)
        r[2] += len(branches)
        r[3] += taken
        if count > 0 and taken < len(branches):
            missing.append((n, f"{len(branches) - taken} of {len(branches)} branches never taken"))
    for (name, n), count in sorted(functions.items(), key=lambda kv: kv[0][1]):
        if excluded.get(n) == "lines":
            continue
        r = row(n)
        r[4] += 1
        r[5] += count > 0
        if count == 0:
            missing.append((n, f"{name} never called"))

    print(f"{'section':<22} {'lines':>17} {'branches':>17} {'functions':>15}")
    order = [name for name, _, _ in sections]
    total = [0] * 6

    def show(name, r):
        print(f"{name:<22} {r[1]:>5}/{r[0]:<5}{pct(r[1], r[0]):6.1f}% "
              f"{r[3]:>5}/{r[2]:<5}{pct(r[3], r[2]):6.1f}% {r[5]:>4}/{r[4]:<4}{pct(r[5], r[4]):6.1f}%")

    for name in ["(before the sections)"] + order:
        if name in rows:
            show(name, rows[name])
            total = [a + b for a, b in zip(total, rows[name])]
    show("hwtimer.h", total)
    print(f"(test/tools/coverage.exclude left out {dropped[0]} lines and "
          f"{dropped[1]} branches)")
    if missing:
        print("not covered:")
        for n, what in sorted(missing)[:SHOW_MISSING]:
            print(f"  hwtimer.h:{n} [{section_of(n, sections)}] {what}: {src[n - 1].strip()[:72]}")
        if len(missing) > SHOW_MISSING:
            print(f"  ... and {len(missing) - SHOW_MISSING} more")
    lines_pct, branches_pct = pct(total[1], total[0]), pct(total[3], total[2])
    failed = False
    for entry in stale:
        print(f"FAIL: test/tools/coverage.exclude: '{entry}' matches no line of hwtimer.h")
        failed = True
    if lines_pct < MIN_LINES:
        print(f"FAIL: lines {lines_pct:.2f}% < {MIN_LINES}%")
        failed = True
    if branches_pct < MIN_BRANCHES:
        print(f"FAIL: branches {branches_pct:.2f}% < {MIN_BRANCHES}%")
        failed = True
    print(f"coverage: lines {total[1]}/{total[0]} ({lines_pct:.2f}%), branches "
          f"{total[3]}/{total[2]} ({branches_pct:.2f}%), functions {total[5]}/{total[4]} "
          f"({pct(total[5], total[4]):.2f}%){': FAILED' if failed else ''}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
