#!/usr/bin/env bash
# Fuzzes hwtimer against the reference model (test/fuzz/fuzz_model.c, test/harness/model.h)
# with libFuzzer, ASan and UBSan. Needs clang and libFuzzer (Debian: libclang-rt-14-dev).
#
#   test/fuzz/run.sh [SECONDS]
#                          build in build/fuzz, then fuzz for SECONDS (default 60;
#                          `test/fuzz/run.sh 3600` for a long run). FUZZ_JOBS=N runs N
#                          processes (libFuzzer -fork). New inputs go to build/fuzz/corpus,
#                          which starts from test/fuzz/corpus and grows across runs; a
#                          failing input is saved as build/fuzz/artifacts/crash-* and the
#                          run stops. Replay one with FUZZ_MODEL_VERBOSE=1 build/fuzz/test/fuzz_model FILE.
#   test/fuzz/run.sh --minimize
#                          rewrite the seed corpus test/fuzz/corpus: from test/fuzz/corpus
#                          and build/fuzz/corpus, the few inputs that together reach every
#                          edge any of them reaches (greedy set cover).
#   test/fuzz/run.sh --coverage [TAG...]
#                          line and branch coverage of hwtimer.h by test/fuzz/corpus alone
#                          (clang source-based coverage, llvm-cov), and its line coverage
#                          per section ([hwtimer:NAME] banners), with the sum over the
#                          sections named (names, patterns or A..B, as
#                          test/tools/mutate.py takes):
#                          `test/fuzz/run.sh --coverage ticks wheel nodes pass entries`;
#                          then the same by test/fuzz/corpus plus build/fuzz/corpus.
#
# The meson test fuzz_model_corpus (suite 'fuzz', clang builds) replays test/fuzz/corpus.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=build/fuzz
fuzzer=$build/test/fuzz_model
work=$build/corpus
flags=(-max_len=4096 -dict=test/fuzz/fuzz_model.dict -timeout=20 -rss_limit_mb=4096)

build_fuzzer() {
  if [ ! -f "$build/build.ninja" ]; then
    mkdir -p "$(dirname "$build")" # (a fresh clone has no build/ for the log yet)
    CC=clang CXX=clang++ meson setup "$build" -Dbench=false >"$build.setup.log" 2>&1 ||
      { tail -20 "$build.setup.log"; exit 1; }
  fi
  ninja -C "$build" test/fuzz_model >/dev/null ||
    { echo "fuzz: no fuzzer: is clang with libFuzzer installed?"; exit 1; }
  mkdir -p "$work" "$build/artifacts"
}

# fuzz SECONDS: one run, then its numbers from libFuzzer's final stats.
fuzz() {
  local seconds=$1 jobs=${FUZZ_JOBS:-1} log=$build/fuzz.log status=0 mode=()
  [ "$jobs" -gt 1 ] && mode=(-fork="$jobs" -ignore_crashes=0)
  echo "fuzz: $seconds s, $jobs process(es), corpus $work (+ test/fuzz/corpus)"
  "$fuzzer" "${flags[@]}" "${mode[@]}" -max_total_time="$seconds" -print_final_stats=1 \
    -artifact_prefix="$build/artifacts/" "$work" test/fuzz/corpus >"$log" 2>&1 || status=$?
  grep -E "^#[0-9]+" "$log" | tail -1 || true
  grep -E "^stat::(number_of_executed_units|average_exec_per_sec|new_units_added)" "$log" || true
  echo "fuzz: corpus now $(find "$work" -type f | wc -l) inputs; full log $log"
  if [ "$status" -ne 0 ]; then
    grep -E "DIVERGENCE|ERROR|SUMMARY|Test unit written" "$log" | head -20
    echo "fuzz: FAILED (exit $status)"
  fi
  return "$status"
}

# Greedy set cover over the edges each input reaches on its own (one merge process per
# input: libFuzzer's own merge keeps hundreds of tiny files, here a few dozen suffice).
minimize() {
  local tmp; tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' RETURN
  mkdir "$tmp/merged"
  "$fuzzer" -merge=1 -use_counters=0 "$tmp/merged" test/fuzz/corpus "$work" >/dev/null 2>&1
  local i=0 f
  for f in "$tmp"/merged/*; do
    rm -rf "$tmp/in" "$tmp/out"
    mkdir "$tmp/in" "$tmp/out"
    cp "$f" "$tmp/in/"
    "$fuzzer" -merge=1 -use_counters=0 -merge_control_file="$tmp/ctl.$i" "$tmp/out" "$tmp/in" \
      >/dev/null 2>&1
    echo "$f" >"$tmp/name.$i"
    i=$((i + 1))
  done
  python3 - "$tmp" "$i" <<'PY'
import os, shutil, sys
tmp, count = sys.argv[1], int(sys.argv[2])
edges = {}
for i in range(count):
    name = open(f"{tmp}/name.{i}").read().strip()
    for line in open(f"{tmp}/ctl.{i}"):
        if line.startswith("FT 0 "):
            edges[name] = set(line.split()[2:])
left = set().union(*edges.values())
total, picked = len(left), []
while left:
    best = max(edges, key=lambda n: (len(edges[n] & left), -os.path.getsize(n)))
    picked.append(best)
    left -= edges[best]
shutil.rmtree("test/fuzz/corpus", ignore_errors=True)
os.makedirs("test/fuzz/corpus")
for n in picked:
    shutil.copy(n, "test/fuzz/corpus/")
print(f"fuzz: test/fuzz/corpus = {len(picked)} inputs reaching all {total} features "
      f"of {count} candidates")
PY
}

# coverage TAG...: the coverage of hwtimer.h by test/fuzz/corpus alone, its line coverage
# per section with the TAGs' sum; then the same by test/fuzz/corpus plus build/fuzz/corpus,
# if that has inputs. Built with NDEBUG: clang counts the line after an assert() as never
# run.
coverage() {
  local dir=$build/coverage
  mkdir -p "$dir"
  clang -std=c99 -O1 -g -fsanitize=fuzzer -fprofile-instr-generate -fcoverage-mapping \
    -DHWTIMER_TEST_MODE=2 -DNDEBUG -pthread -Itest/harness test/fuzz/fuzz_model.c \
    -o "$dir/fuzz_model"
  echo "fuzz: coverage by test/fuzz/corpus ($(find test/fuzz/corpus -type f | wc -l) inputs)"
  replay "$dir" corpus test/fuzz/corpus
  llvm-cov report "$dir/fuzz_model" -instr-profile="$dir/corpus.profdata" hwtimer.h \
    test/harness/model.h
  section_coverage "$dir/hwtimer.h.corpus.txt" "$@"
  if [ -n "$(ls -A "$work")" ]; then
    echo "fuzz: coverage by test/fuzz/corpus and $work ($(find "$work" -type f | wc -l) inputs)"
    replay "$dir" all test/fuzz/corpus "$work"
    section_coverage "$dir/hwtimer.h.all.txt" "$@"
  fi
  echo "fuzz: annotated source in $dir/hwtimer.h.corpus.txt (lines marked 0 were never run)"
}

# replay DIR NAME CORPUS...: runs every input of the corpora once on the instrumented fuzzer
# (no fuzzing): DIR/NAME.profdata and the annotated header DIR/hwtimer.h.NAME.txt.
replay() {
  local dir=$1 name=$2
  shift 2
  rm -f "$dir"/*.profraw
  LLVM_PROFILE_FILE="$dir/run.profraw" "$dir/fuzz_model" -runs=0 "$@" >/dev/null 2>&1
  llvm-profdata merge -o "$dir/$name.profdata" "$dir/run.profraw"
  llvm-cov show "$dir/fuzz_model" -instr-profile="$dir/$name.profdata" hwtimer.h \
    -show-line-counts-or-regions >"$dir/hwtimer.h.$name.txt"
}

# section_coverage ANNOTATED TAG...: the lines of hwtimer.h run and not, per section (by its
# [hwtimer:NAME] banner, test/tools/sections.py), from llvm-cov show's "LINE|COUNT|source"
# lines; then the sum over the TAGs' sections, if any.
section_coverage() {
  python3 -B - "$@" <<'PY'
import re, sys
sys.path.insert(0, "test/tools")
from sections import find_sections, select_sections
annotated, tags = sys.argv[1], sys.argv[2:]
lines = open("hwtimer.h", encoding="utf-8").read().split("\n")
count = {}
for row in open(annotated, encoding="utf-8", errors="replace"):
    m = re.match(r"\s*(\d+)\|\s*([0-9.]+[kMGTPE]?)?\|", row)
    if m and m.group(2) is not None:
        count[int(m.group(1))] = m.group(2) != "0"
sections = find_sections(lines)
def tally(first, end):
    run = [count[i] for i in range(first + 1, end + 1) if i in count]
    return sum(run), len(run)
print(f"    {'section':<16} {'lines run':>10} {'of':>6} {'cover':>8}")
for name, first, end in sections:
    done, total = tally(first, end)
    if total:
        print(f"    {name:<16} {done:>10} {total:>6} {100.0 * done / total:>7.2f}%")
if tags:
    picked = select_sections(sections, " ".join(tags))
    done = total = 0
    for name, first, end in picked:
        d, t = tally(first, end)
        done, total = done + d, total + t
    print(f"    sections {' '.join(p[0] for p in picked)}: {done} of {total} lines run "
          f"({100.0 * done / total:.2f}%)")
PY
}

build_fuzzer
case "${1:-60}" in
  --minimize) minimize ;;
  --coverage) shift; coverage "$@" ;;
  *[!0-9]*) echo "usage: test/fuzz/run.sh [SECONDS | --minimize | --coverage]"; exit 2 ;;
  *) fuzz "${1:-60}" ;;
esac
