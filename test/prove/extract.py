#!/usr/bin/env python3
"""Builds the proof's C file: test/prove/ticks.c (the ACSL contracts) with each line
`//@extract FIRST LINE` replaced by the block of hwtimer.h that starts with exactly that
line (a function or a typedef, up to its closing brace at column 0), verbatim.

  extract.py HEADER TEMPLATE OUT [--mutant NAME]   write OUT; with a mutant, changed so
  extract.py --list-mutants                        (the proof must then fail)
  extract.py --axioms TICKS BITS                   fails unless each axiom of TICKS is
                                                   a lemma of BITS, quoted as it reads

Fails loudly (exit 1) if a block is missing, found twice, or if a function of that name
is defined in hwtimer.h with another first line: its contract was written for that shape.
"""
import re
import sys

# Each mutant: (name, function, text in it, replacement). Each must make the proof fail.
MUTANTS = [
    ("add_sat: comparison flipped", "hwtimer__add_sat",
     "a > UINT64_MAX - b", "a < UINT64_MAX - b"),
    ("add_sat: saturates to 0", "hwtimer__add_sat", "? UINT64_MAX :", "? 0 :"),
    ("shr: shifts by 64", "hwtimer__shr", "n < 64", "n <= 64"),
    ("shl: shifts by 64", "hwtimer__shl", "n < 64", "n <= 64"),
    ("mulhi: the low product unshifted", "hwtimer__mulhi64",
     "mid = al * bl / 4294967296u +", "mid = al * bl +"),
    ("mulhi: the middle product whole", "hwtimer__mulhi64",
     "lh % 4294967296u + ah * bl", "lh + ah * bl"),
    ("div_tick: division a tick short", "hwtimer__div_tick",
     "return n / g->tick_ns;", "return n / g->tick_ns - (n >= g->tick_ns);"),
    ("due_tick: ceiling made a floor", "hwtimer__due_tick",
     "deadline - g->start - 1) + 1", "deadline - g->start) + 0"),
    ("due_tick: a tick late", "hwtimer__due_tick",
     "deadline - g->start - 1) + 1", "deadline - g->start) + 1"),
    ("due_tick: start compared by <", "hwtimer__due_tick",
     "deadline <= g->start", "deadline < g->start"),
    ("tick_time: no saturation", "hwtimer__tick_time",
     "tick > (UINT64_MAX - g->start) / g->tick_ns", "0"),
    ("msb64: a bit high", "hwtimer__msb64", "63u -", "64u -"),
    ("wheel_where: slot mask one wider", "hwtimer__wheel_where",
     "& g->mask;", "& (g->mask * 2 + 1);"),
    ("wheel_where: digit shifted a bit more", "hwtimer__wheel_where",
     "tick >> g->level_shift[bit]", "tick >> (g->level_shift[bit] + 1)"),
    ("wheel_where: a slot past", "hwtimer__wheel_where",
     "return g->level_where[bit] + slot;", "return g->level_where[bit] + slot + 1;"),
    ("tick_time: saturates a tick early", "hwtimer__tick_time",
     "tick > (UINT64_MAX - g->start)", "tick >= (UINT64_MAX - g->start)"),
    ("leeway_grid: wrap not tested", "hwtimer__leeway_grid", "up < e || ", ""),
    ("leeway_grid: rounds down", "hwtimer__leeway_grid",
     "uint64_t up = e + w->memo.mask;", "uint64_t up = e;"),
    ("set_leeway_memo: grid twice as coarse", "hwtimer__set_leeway_memo",
     "hwtimer__msb64(n + 1)) - 1", "(hwtimer__msb64(n + 1) + 1)) - 1"),
    ("set_leeway_memo: grid half as coarse", "hwtimer__set_leeway_memo",
     "hwtimer__msb64(n + 1)) - 1", "(hwtimer__msb64(n + 1) - (n > 0))) - 1"),
    ("slot_start: elapsed's digits from one too high", "hwtimer__slot_start",
     "unsigned up = shift + w->geo.bits;", "unsigned up = shift + w->geo.bits + 1;"),
    ("slot_start: slot one digit too low", "hwtimer__slot_start",
     "hwtimer__shl(slot, shift)", "hwtimer__shl(slot, shift - (shift > 0))"),
    ("div_tick: reciprocal correction by >", "hwtimer__div_tick",
     "n - q * g->tick_ns >= g->tick_ns", "n - q * g->tick_ns > g->tick_ns"),
    ("mulhi: the middle sum's carry dropped", "hwtimer__mulhi64",
     " + mid / 4294967296u;", ";"),
]


def fail(msg):
    print(f"FAIL: test/prove/extract.py: {msg}")
    sys.exit(1)


def block(lines, first):
    """The block of `lines` whose first line is `first`, up to its closing brace."""
    at = [i for i, l in enumerate(lines) if l == first]
    name = re.search(r"(hwtimer_\w+)\s*(\(|\{|$)", first)
    name = name.group(1) if name else first
    if len(at) != 1:
        if at:
            fail(f"{name}: {len(at)} lines of hwtimer.h read `{first}`: expected one")
        shaped = [l for l in lines if re.match(rf"^\S.*\b{re.escape(name)}\(", l) and l.endswith(("{", ","))]
        if shaped:
            fail(f"{name} changed shape: hwtimer.h now reads `{shaped[0]}`, its contract in "
                 f"test/prove/ticks.c was written for `{first}`: review the contract")
        fail(f"{name} is missing from hwtimer.h (its contract in test/prove/ticks.c expects "
             f"`{first}`)")
    i = at[0]
    if first.rstrip().endswith("}") or first.rstrip().endswith(";"):
        return name, [lines[i]]
    for j in range(i + 1, len(lines)):
        if lines[j].startswith("}"):
            return name, lines[i:j + 1]
        if lines[j] and not lines[j][0].isspace() and not lines[j].startswith("#"):
            break
    fail(f"{name}: no closing brace at column 0 after `{first}`")


def axioms(text):
    """Each `axiom NAME` statement of an ACSL text, {NAME: its text with whitespace made
    single spaces}. A statement ends at its first `;` that does not close the binders of
    a \\forall or \\exists."""
    found = {}
    for m in re.finditer(r"^\s*axiom (\w+)", text, re.M):
        i, end = m.start(), None
        while i < len(text):
            if text.startswith(("\\forall", "\\exists"), i):
                i = text.index(";", i) + 1
            elif text[i] == ";":
                end = i + 1
                break
            else:
                i += 1
        found[m.group(1)] = " ".join(text[m.start():end].split())
    return found


def check_axioms(ticks, bits):
    """Each axiom of ticks.c must be a lemma of the same name in bits.mlw, so that one
    added later cannot go unproved, and be quoted, as it reads there, in bits.mlw's comment
    `(* ticks.c, verbatim: axiom NAME: ... *)` above the lemma that proves it: so an axiom
    changed in one file and not in the other fails here, and its reader is sent to
    restate that lemma."""
    quoted, proved = {}, open(bits).read()
    for m in re.finditer(r"\(\* ticks\.c, verbatim: (axiom (\w+).*?) \*\)", proved, re.S):
        quoted[m.group(2)] = " ".join(m.group(1).split())
    stated = axioms(open(ticks).read())
    if not stated:
        fail(f"no axiom found in {ticks}")
    missing = [n for n in stated if not re.search(rf"^ *lemma {n}:", proved, re.M)]
    if missing:
        fail(f"axioms of {ticks} with no lemma in {bits}: {' '.join(missing)}")
    bad = [n for n, text in stated.items() if quoted.get(n) != text]
    if bad:
        fail(f"axioms of {ticks} not quoted as they read in {bits} (the comment "
             f"`(* ticks.c, verbatim: axiom NAME: ... *)` above its lemma): "
             f"{' '.join(bad)}; if the axiom changed, restate its lemma, then the quote")
    return 0


def main(argv):
    if len(argv) == 4 and argv[1] == "--axioms":
        return check_axioms(argv[2], argv[3])
    if argv[1:] == ["--list-mutants"]:
        for m in MUTANTS:
            print(m[0])
        return 0
    if len(argv) not in (4, 6):
        fail("usage: extract.py HEADER TEMPLATE OUT [--mutant NAME]")
    header, template, out = argv[1:4]
    mutant = None
    if len(argv) == 6:
        mutant = next((m for m in MUTANTS if m[0] == argv[5]), None)
        if not mutant:
            fail(f"no mutant named {argv[5]!r}")
    lines = open(header).read().split("\n")
    result, seen = [], set()
    for t in open(template).read().split("\n"):
        if not t.startswith("//@extract "):
            result.append(t)
            continue
        name, text = block(lines, t[len("//@extract "):])
        seen.add(name)
        text = "\n".join(text)
        if mutant and mutant[1] == name:
            if text.count(mutant[2]) != 1:
                fail(f"mutant {mutant[0]!r}: `{mutant[2]}` is not once in {name}")
            text = text.replace(mutant[2], mutant[3])
        result.append(f"/* hwtimer.h: {name}, verbatim */")
        result.append(text)
    if mutant and mutant[1] not in seen:
        fail(f"mutant {mutant[0]!r}: {mutant[1]} is not extracted")
    open(out, "w").write("\n".join(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
