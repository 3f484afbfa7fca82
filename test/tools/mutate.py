#!/usr/bin/env python3
"""test/tools/mutate.py: mutation testing of hwtimer.h.

Samples operator mutants of the core sections of hwtimer.h, applies each to a copy of the
tree, builds it, runs a named suite on it and prints the kill rate and every survivor. A
mutant is killed when a test fails or the suite outlives its time limit; a survivor is a
change no test noticed: a missing test, or an equivalent mutant (the same program whatever
the input).

  test/tools/mutate.py [--suite dev|gcc|model] [--seed N] [--count N] [--sections LIST]
  test/tools/mutate.py --list ...        the sampled mutants, without running them
  test/tools/mutate.py --ids 12,407 ...  those mutants (ids from --list or a run), not a
                                         sample

  --suite dev     the tests of `test/run.sh dev`: the core and model suites, nothreads and
                  pthread modes, the model test at 200000 operations (the default)
          gcc     every meson test of a gcc build of every mode but the -m32 ones; the core
                  and model suites first, the rest only if they pass
          model   the model test alone (nothreads and pthread): quick and rough
  --seed N        the sample (default 1); the same seed and header give the same mutants
  --count N       how many mutants to sample (default 50; all of them if fewer)
  --sections LIST the sections to mutate, by their [hwtimer:NAME] banner tags: names or
                  shell patterns, comma-separated; A..B is every section after A and before B
                  in the file. Default: portability..platform (the core: everything between
                  the portability helpers and the platform's clock and thread backends)
  --timeout S     a mutant's time limit (default: 10x the unmutated run's, at least 120 s:
                  the machine may get busier meanwhile); a mutant that outlives it, or makes
                  a test outlive meson's own timeout of that test, is killed by a timeout
  --list          print the sampled mutants (id, line, original -> mutated) and stop

Mutation operators, on the code of each line (not comments, strings or preprocessor lines):
relational (< <= > >= == !=), arithmetic and bitwise (+ - & | << >>, their compound
assignments, ++ --), logical (&& ||, a ! removed), constants (0 <-> 1, n -> n+1, n-1), a
negated if/while condition, a statement deleted, a return value replaced by 0 (or 1).
Lines of HWTIMER_ASSERT are left alone: an assertion that holds is no behaviour to test.

How: the tree (the files git lists, uncommitted changes included) is copied to
build/mutate/B.src, built in build/mutate/B.build (B: dev for the dev and model suites, gcc).
Every mutant lies in the implementation (after #if defined(HWTIMER_IMPLEMENTATION)), so the
objects built without it cannot change: hwtimer.h keeps one modification time, and only the
objects that compile the implementation are rebuilt for each mutant. First impl.c is
compiled alone in each mode of the suite, without debug information: a mutant that does not
compile is counted apart and excluded from the rate, and one whose objects are identical to
the unmutated header's in every mode is the same program ("same code"), excluded too (so
is a mutant in code gcc on Linux does not compile or folds away: the Win32 clock and
threads, which test/tools/wine.sh runs, built with mingw-w64; the branch for compilers with
neither GCC's nor MSVC's builtins, which test/tools/matrix.sh runs with tcc; the big-endian
ways, which test/tools/matrix.sh runs on s390x under qemu-s390x; check those there by hand.
No test builds the MSVC branch). Then meson test runs with --maxfail 1. The working tree is
never modified.
"""
import argparse
import hashlib
import json
import os
import random
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # (no __pycache__ in test/)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sections import find_sections, select_sections  # noqa: E402 (test/tools/sections.py)

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
WORK = os.path.join(ROOT, "build", "mutate")
HEADER = "hwtimer.h"

# name: (meson setup options, the meson test runs in order: each [args], stop at a failure)
SUITES = {
    "dev": ("dev", ["-Dbench=false", "-Dtest_modes=nothreads,pthread", "-Dmodel_ops=200000"],
            [["--suite", "core", "--suite", "model", "--no-suite", "m32"]]),
    "model": ("dev", ["-Dbench=false", "-Dtest_modes=nothreads,pthread", "-Dmodel_ops=200000"],
              [["--suite", "model"]]),
    "gcc": ("gcc", ["-Dbench=false"],
            [["--suite", "core", "--suite", "model", "--no-suite", "m32"],
             ["--no-suite", "core", "--no-suite", "model", "--no-suite", "m32"]]),
}

# ----------------------------------------------------------------------------- sections


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return f.read().split("\n")


def implementation_range(lines):
    """The line indices inside #if defined(HWTIMER_IMPLEMENTATION) ... #endif."""
    first = next(i for i, l in enumerate(lines)
                 if l.startswith("#if defined(HWTIMER_IMPLEMENTATION)"))
    last = max(i for i, l in enumerate(lines) if re.match(r"#endif\s*/\*\s*HWTIMER_IMPLEMENTATION", l))
    return first, last


# ----------------------------------------------------------------------------- mutants

TOKEN = re.compile(r"""
    (?P<comment>/\*.*?(\*/|$)|//.*$)
  | (?P<string>"(\\.|[^"\\])*"|'(\\.|[^'\\])*')
  | (?P<number>\b(0[xX][0-9a-fA-F]+|[0-9]+)([uUlL]*)\b)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op><<=|>>=|->|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^]=|[-+*/%&|^!~<>=?:;,.(){}\[\]])
  | (?P<space>\s+)
  | (?P<other>.)""", re.X)

SWAPS = {
    "<": ["<=", ">"], "<=": ["<", ">"], ">": [">=", "<"], ">=": [">", "<"],
    "==": ["!="], "!=": ["=="], "&&": ["||"], "||": ["&&"],
    "+": ["-"], "-": ["+"], "+=": ["-="], "-=": ["+="], "++": ["--"], "--": ["++"],
    "&": ["|"], "|": ["&"], "&=": ["|="], "|=": ["&="], "<<": [">>"], ">>": ["<<"],
}
KIND = {"<": "relational", "<=": "relational", ">": "relational", ">=": "relational",
        "==": "relational", "!=": "relational", "&&": "logical", "||": "logical",
        "+": "arithmetic", "-": "arithmetic", "+=": "arithmetic", "-=": "arithmetic",
        "++": "arithmetic", "--": "arithmetic", "&": "bitwise", "|": "bitwise",
        "&=": "bitwise", "|=": "bitwise", "<<": "bitwise", ">>": "bitwise"}
BINARY_ONLY = {"+", "-", "&", "|", "<", ">"}  # (a unary - or &, a cast's <: not touched)
DECLARATION = re.compile(
    r"(static|const|struct|union|enum|unsigned|signed|int|char|long|short|void|_Bool|"
    r"volatile|typedef|size_t|u?int(8|16|32|64)_t|u?intptr_t|hwtimer\w*_t\b|hwtimer\b|"
    r"hwtimer_\w+\s+\*|hwtimer__\w+\s+\**\w+\s*[;=\[]|HWTIMER__\w+\s+\*)")


def tokens_of(lines):
    """Per line: its tokens [(kind, text, column)], comments and blanks left out, and whether
    the line is code (not inside a comment, not a preprocessor line)."""
    out, in_comment = [], False
    for line in lines:
        toks, pos = [], 0
        if in_comment:
            end = line.find("*/")
            if end < 0:
                out.append([])
                continue
            pos, in_comment = end + 2, False
        if line.lstrip().startswith("#"):
            out.append([])
            in_comment = "/*" in line and "*/" not in line[line.rfind("/*"):]
            continue
        while pos < len(line):
            m = TOKEN.match(line, pos)
            kind = m.lastgroup
            if kind == "comment" and m.group(0).startswith("/*") and not m.group(0).endswith("*/"):
                in_comment = True
            elif kind not in ("comment", "space"):
                toks.append((kind, m.group(0), pos))
            pos = m.end()
        out.append(toks)
    return out


def operand_end(tok):
    return tok[0] in ("name", "number", "string") or tok[1] in (")", "]")


def matching_paren(toks, k):
    depth = 0
    for j in range(k, len(toks)):
        if toks[j][1] == "(":
            depth += 1
        elif toks[j][1] == ")":
            depth -= 1
            if depth == 0:
                return j
    return None


def bump(number, by):
    m = re.match(r"(0[xX][0-9a-fA-F]+|[0-9]+)(.*)$", number)
    value = int(m.group(1), 0) + by
    if value < 0:
        return None
    text = hex(value) if m.group(1).lower().startswith("0x") else str(value)
    return text + m.group(2)


def line_mutants(line, toks, prev_end):
    """[(kind, mutated line)] for one line of code; prev_end is the last character of the
    code before it (whether this line starts a statement)."""
    out = []

    def put(kind, start, end, text):
        out.append((kind, line[:start] + text + line[end:]))

    names = [t[1] for t in toks]
    if "HWTIMER_ASSERT" in names:
        return out  # (an assertion that holds is no behaviour to test)
    in_decl = bool(toks) and DECLARATION.match(line.strip()) is not None
    depth = 0  # of [ ]: a declaration's array size is left alone
    for k, (kind, text, col) in enumerate(toks):
        prev = toks[k - 1] if k else None
        depth += (text == "[") - (text == "]")
        if kind == "op" and text in SWAPS:
            if text in BINARY_ONLY and not (prev and operand_end(prev)):
                continue
            if text in ("<", ">") and ("HWTIMER__" in line and "typedef" in line):
                continue
            for new in SWAPS[text]:
                put(KIND[text], col, col + len(text), new)
        elif kind == "op" and text == "!" and k + 1 < len(toks) and toks[k + 1][1] != "=":
            put("logical", col, col + 1, "")
        elif kind == "number" and not (in_decl and depth > 0):
            m = re.match(r"(0[xX][0-9a-fA-F]+|[0-9]+)", text)
            value = int(m.group(1), 0)
            if value in (0, 1):
                put("constant", col, col + len(text), str(1 - value) + text[len(m.group(1)):])
            else:
                for by in (1, -1):
                    new = bump(text, by)
                    if new:
                        put("constant", col, col + len(text), new)
    # a negated if/while condition, on one line
    for k, (kind, text, col) in enumerate(toks):
        if text in ("if", "while") and k + 1 < len(toks) and toks[k + 1][1] == "(":
            j = matching_paren(toks, k + 1)
            if j is not None:
                a, b = toks[k + 1][2] + 1, toks[j][2]
                out.append(("condition", line[:a] + "!(" + line[a:b] + ")" + line[b:]))
    # a statement deleted, a return value replaced
    stripped = line.strip()
    whole = (stripped.endswith(";") and prev_end in (";", "{", "}", ")", ":", "else")
             and names.count("(") == names.count(")") and "for" not in names[:1]
             and names[:1] not in (["case"], ["default"], ["else"], ["}"]) and not in_decl)
    if whole and names[:1] == ["return"]:
        value = stripped[len("return"):-1].strip()
        if value:
            indent = line[:len(line) - len(line.lstrip())]
            new = "0" if value != "0" else "1"
            out.append(("return", f"{indent}return {new};"))
    elif whole and names[:1] != ["{"] and "=" not in names[:1]:
        indent = line[:len(line) - len(line.lstrip())]
        out.append(("statement", indent + ";"))
    return out


def all_mutants(lines):
    """Every candidate of the header's tagged sections inside the implementation, in order:
    [{id, line (1-based), section, kind, old, new}]. The id is the index in this list."""
    sections = find_sections(lines)
    first, last = implementation_range(lines)
    toks = tokens_of(lines)
    mutants = []
    for name, start, end in sections:
        if start < first or end > last + 1:
            continue
        prev_end, typedef = "{", False
        for i in range(start, end):
            if not toks[i]:
                continue
            # a typedef without a body (a compile-time check): no behaviour to mutate
            typedef = (typedef or toks[i][0][1] == "typedef") and "{" not in lines[i]
            for kind, new in [] if typedef else line_mutants(lines[i], toks[i], prev_end):
                if new != lines[i]:
                    mutants.append({"id": len(mutants), "line": i + 1, "section": name,
                                    "kind": kind, "old": lines[i], "new": new})
            last_tok = toks[i][-1][1]
            prev_end = "else" if last_tok == "else" else last_tok[-1]
            typedef = typedef and last_tok != ";"
    return mutants

# ----------------------------------------------------------------------------- the copy


def git_files():
    out = subprocess.run(["git", "-C", ROOT, "ls-files", "-z", "--cached", "--others",
                          "--exclude-standard"], check=True, capture_output=True).stdout
    return [f for f in out.decode().split("\0") if f and os.path.isfile(os.path.join(ROOT, f))]


def sync_copy(dest):
    """dest = the files git lists, as they are in the working tree. Only the files that
    differ are written (a file written anew is rebuilt). hwtimer.h is left to apply()."""
    files = set(git_files())
    for f in sorted(files):
        if f == HEADER:
            continue
        src, dst = os.path.join(ROOT, f), os.path.join(dest, f)
        data = open(src, "rb").read()
        if os.path.exists(dst) and open(dst, "rb").read() == data:
            continue
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(dst, "wb") as out:
            out.write(data)
        shutil.copymode(src, dst)
    for dirpath, _, names in os.walk(dest):
        for n in names:
            rel = os.path.relpath(os.path.join(dirpath, n), dest)
            if rel not in files:
                os.remove(os.path.join(dirpath, n))


def header_stamp(text, stamp):
    """hwtimer.h in the copy keeps the modification time of this stamp, renewed only when
    the unmutated header changes (then everything is rebuilt once)."""
    digest = hashlib.sha256(text.encode()).hexdigest()
    if not os.path.exists(stamp) or open(stamp).read() != digest:
        with open(stamp, "w") as f:
            f.write(digest)
    return os.stat(stamp).st_mtime_ns


class Build:
    """A suite's copy of the tree (build/mutate/NAME.src) and its build directory
    (NAME.build): runs of suites with different builds may go on at once."""

    def __init__(self, suite, env):
        self.name, self.options, self.runs = SUITES[suite]
        self.src = os.path.join(WORK, self.name + ".src")
        self.dir = os.path.join(WORK, self.name + ".build")
        self.stamp = os.path.join(WORK, self.name + ".sha256")
        self.env = env

    def setup(self):
        if os.path.exists(os.path.join(self.dir, "build.ninja")):
            return
        shutil.rmtree(self.dir, ignore_errors=True)
        log = self.dir + ".setup.log"
        with open(log, "w") as f:
            r = subprocess.run(["meson", "setup", self.dir, self.src] + self.options, env=self.env,
                               stdout=f, stderr=subprocess.STDOUT)
        if r.returncode:
            sys.exit(f"mutate: meson setup failed: see {log}")

    def commands(self):
        if not os.path.exists(os.path.join(self.dir, "compile_commands.json")):
            return []
        with open(os.path.join(self.dir, "compile_commands.json")) as f:
            return json.load(f)

    def implementation_objects(self):
        """The objects compiled with the implementation: every one meson does not build
        with HWTIMER_TEST_NO_IMPLEMENTATION (declarations only)."""
        return [os.path.join(self.dir, c["output"]) for c in self.commands()
                if "-DHWTIMER_TEST_NO_IMPLEMENTATION" not in c["command"]]

    def impl_commands(self):
        """The compile commands of impl.c, one per mode, as argv lists that write an object
        without debug information to a path given later."""
        out = []
        for c in self.commands():
            if not c["file"].endswith("test/programs/impl.c") or "m32" in c["output"]:
                continue
            argv, skip = [], 0
            for a in shlex.split(c["command"]):
                if skip:
                    skip -= 1
                elif a in ("-o", "-MQ", "-MF"):
                    skip = 1
                elif a != "-MD":
                    argv.append(a)
            mode = re.search(r"impl_(\w+)\.a", c["output"]).group(1)
            out.append((mode, argv + ["-g0"], c["directory"]))
        out.sort(key=lambda m: (m[0] != "nothreads", m[0]))
        return out


def apply(text, build, mtime):
    """Writes hwtimer.h into the copy with the one modification time, and removes the
    objects that compile the implementation so that they are rebuilt from it."""
    path = os.path.join(build.src, HEADER)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    os.utime(path, ns=(mtime, mtime))
    for o in build.implementation_objects():
        if os.path.exists(o):
            os.remove(o)


def plain(text):
    """Compiler output without its colours."""
    return re.sub(r"\x1b\[[0-9;]*[mK]", "", text)


def compile_impl(build, scratch, base=None):
    """Compiles impl.c in each mode, nothreads first. Returns (objects {mode: bytes}, None),
    or (None, the first compiler error). With `base` (the unmutated objects) it stops at the
    first object that differs from its base and returns the objects compiled so far."""
    objs = {}
    for mode, argv, cwd in build.impl_commands():
        obj = os.path.join(scratch, f"impl_{mode}.o")
        r = subprocess.run(["nice", "-n", "10"] + argv + ["-o", obj], cwd=cwd,
                           capture_output=True, text=True, env=build.env)
        if r.returncode:
            err = [l for l in plain(r.stderr).splitlines() if "error:" in l]
            return None, (err[0] if err else r.stderr.strip()[:200])
        objs[mode] = open(obj, "rb").read()
        if base is not None and objs[mode] != base[mode]:
            break
    return objs, None


def run_suite(build, limit):
    """Runs the suite's meson test runs in order (each --maxfail 1). Returns (outcome,
    detail, seconds): outcome killed, timeout, survived or nobuild."""
    start = time.time()
    for args in build.runs:
        left = limit - (time.time() - start)
        cmd = ["nice", "-n", "10", "meson", "test", "-C", build.dir, "--maxfail", "1",
               "--print-errorlogs"] + args
        logjson = os.path.join(build.dir, "meson-logs", "testlog.json")
        if os.path.exists(logjson):
            os.remove(logjson)
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             env=build.env, start_new_session=True)
        try:
            out, _ = p.communicate(timeout=max(left, 1))
        except subprocess.TimeoutExpired:
            kill_tree(p.pid)
            p.communicate()
            return "timeout", f"the suite ran past {limit:.0f} s", time.time() - start
        if "Could not rebuild" in out or "ninja: build stopped" in out:
            err = [l for l in plain(out).splitlines() if "error:" in l]
            return "nobuild", (err[0] if err else "the build failed"), time.time() - start
        if p.returncode:
            failed = first_failure(logjson)
            if failed is None:
                return "nobuild", out.strip().splitlines()[-1:] or "meson test failed", time.time() - start
            name, result = failed
            return ("timeout" if result == "TIMEOUT" else "killed"), name, time.time() - start
    return "survived", "", time.time() - start


def kill_tree(pid):
    """Kills a process and every process below it: meson starts each test in a process
    group of its own, which killing meson's would leave running."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    doomed, todo = [], [pid]
    while todo:
        p = todo.pop()
        doomed.append(p)
        todo.extend(children.get(p, []))
    for p in doomed:
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass


def first_failure(logjson):
    if not os.path.exists(logjson):
        return None
    for line in open(logjson):
        r = json.loads(line)
        if r["result"] not in ("OK", "SKIP", "EXPECTEDFAIL"):
            return r["name"], r["result"]
    return None

# ----------------------------------------------------------------------------- main


def show(m):
    return f"#{m['id']} {HEADER}:{m['line']} [{m['section']}] {m['kind']}: " \
           f"{m['old'].strip()}  ->  {m['new'].strip()}"


def main():
    ap = argparse.ArgumentParser(description="Mutation testing of hwtimer.h (see the top of "
                                 "this file).")
    ap.add_argument("--suite", choices=sorted(SUITES), default="dev")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=50)
    ap.add_argument("--sections", default="portability..platform")
    ap.add_argument("--ids", default="")
    ap.add_argument("--timeout", type=float, default=0)
    ap.add_argument("--list", action="store_true")
    opt = ap.parse_args()

    lines = read_lines(os.path.join(ROOT, HEADER))
    mutants = all_mutants(lines)
    chosen_sections = select_sections(find_sections(lines), opt.sections)
    if opt.ids:
        wanted = [int(x) for x in re.split(r"[,\s]+", opt.ids.strip()) if x]
        bad = [i for i in wanted if not 0 <= i < len(mutants)]
        if bad:
            sys.exit(f"mutate: no mutant {bad} (ids 0..{len(mutants) - 1})")
        sample = [mutants[i] for i in wanted]
    else:
        names = {s[0] for s in chosen_sections}
        pool = [m for m in mutants if m["section"] in names]
        sample = random.Random(opt.seed).sample(pool, min(opt.count, len(pool)))
        sample.sort(key=lambda m: m["id"])
        print(f"mutate: {len(sample)} of {len(pool)} candidates in "
              f"{', '.join(s[0] for s in chosen_sections)} (seed {opt.seed})", flush=True)
    if opt.list:
        for m in sample:
            print(show(m))
        return 0

    env = dict(os.environ)
    if opt.suite == "gcc":
        env["CC"], env["CXX"] = "gcc", "g++"
    build = Build(opt.suite, env)
    os.makedirs(build.src, exist_ok=True)
    pristine = "\n".join(lines)
    sync_copy(build.src)
    mtime = header_stamp(pristine, build.stamp)
    apply(pristine, build, mtime)
    build.setup()
    scratch = tempfile.mkdtemp(prefix="objs.", dir=WORK)
    results = []
    started = time.time()
    try:
        # the unmutated tree: its objects for the same-code check, and the suite must pass
        apply(pristine, build, mtime)
        base_objs, err = compile_impl(build, scratch)
        if err:
            sys.exit(f"mutate: the unmutated header does not compile: {err}")
        outcome, detail, secs = run_suite(build, 3600)
        if outcome != "survived":
            sys.exit(f"mutate: the unmutated tree fails the {opt.suite} suite: {outcome} "
                     f"{detail}")
        limit = opt.timeout or max(120.0, 10 * secs)
        print(f"mutate: suite {opt.suite}: the unmutated tree passes in {secs:.0f} s; "
              f"a mutant's limit {limit:.0f} s", flush=True)
        for n, m in enumerate(sample, 1):
            text = lines[:]
            text[m["line"] - 1] = m["new"]
            apply("\n".join(text), build, mtime)
            t0 = time.time()
            objs, err = compile_impl(build, scratch, base_objs)
            if err:
                outcome, detail = "nobuild", err
            elif objs == base_objs:
                outcome, detail = "same", "impl.c's object code is unchanged in every mode"
            else:
                outcome, detail, _ = run_suite(build, limit)
            secs = time.time() - t0
            word = {"killed": "killed by", "timeout": "killed (timeout):", "survived":
                    "SURVIVED", "nobuild": "did not build:", "same": "same code:"}[outcome]
            print(f"[{n}/{len(sample)}] {show(m)}\n    {word} {detail} ({secs:.0f} s)",
                  flush=True)
            results.append(dict(m, outcome=outcome, detail=detail, seconds=round(secs, 1)))
    finally:
        apply(pristine, build, mtime)
        shutil.rmtree(scratch, ignore_errors=True)
        if results:
            summary(results, opt, time.time() - started)
    return 0


def summary(results, opt, seconds):
    count = {k: sum(r["outcome"] == k for r in results)
             for k in ("killed", "timeout", "survived", "nobuild", "same")}
    dead = count["killed"] + count["timeout"]
    ran = dead + count["survived"]
    rate = f"{100.0 * dead / ran:.1f}%" if ran else "n/a"
    survivors = [r for r in results if r["outcome"] == "survived"]
    with open(os.path.join(WORK, f"last-{opt.suite}.json"), "w") as f:
        json.dump(results, f, indent=1)
    print(f"\nmutate: suite {opt.suite}, {len(results)} mutants: {dead} killed "
          f"({count['timeout']} of them by a timeout), {count['survived']} survived, "
          f"{count['nobuild']} did not build, {count['same']} same code; "
          f"kill rate {rate} ({dead}/{ran}); {seconds:.0f} s")
    for r in survivors:
        print("  survivor " + show(r))
    if survivors:
        print("mutate: the survivors again: test/tools/mutate.py --suite SUITE --ids "
              + ",".join(str(r["id"]) for r in survivors))


if __name__ == "__main__":
    sys.exit(main())
