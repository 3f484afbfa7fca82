#!/usr/bin/env bash
# Runs every test suite in every build configuration and prints one closing line,
# "N passed, N failed", counting meson tests across all configurations.
#   test/run.sh         the full CI run (installs missing Debian packages first)
#   test/run.sh quick   one gcc build only, with its coverage report
#                       (test/tools/coverage.py)
#   test/run.sh dev     the contributor loop: after a change to hwtimer.h or a test,
#                       rebuilds what the core and model tests need in build/dev (made
#                       once: the nothreads and pthread modes) and runs them, model test
#                       at 200000 operations; well under a minute on two cores
#   test/run.sh --help  this text, at once
# (Not run here: test/tools/mutate.py, mutation testing of hwtimer.h against these suites.)
# test/ by folder: programs/ (the test programs, tests.list), harness/ (the headers they
# share), compile/ (build checks), fuzz/ (the fuzz target, its seed corpus, fuzz/run.sh),
# examples/, explore/ (the interleaving explorer), prove/ (the proof of the ticks
# arithmetic), adopt/ and subproject/ (hwtimer in a user's build), tools/ (the portability
# matrix, Wine, coverage, mutation testing).
set -uo pipefail
cd "$(dirname "$0")/.." || exit

case "${1:-}" in
'' | quick | dev) ;;
-h | --help)
  sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "$0"
  exit 0
  ;;
*)
  echo "test/run.sh: unknown argument '$1' (test/run.sh --help lists them)" >&2
  exit 2
  ;;
esac

if [ "${1:-}" = dev ]; then
  start=$SECONDS
  if [ ! -f build/dev/build.ninja ]; then
    mkdir -p build
    meson setup build/dev -Dbench=false -Dtest_modes=nothreads,pthread -Dmodel_ops=200000 \
      >build/dev.setup.log 2>&1 || { tail -30 build/dev.setup.log; exit 1; }
  fi
  # (meson test builds only what the chosen tests need; the -m32 ones are left out)
  meson test -C build/dev --suite core --suite model --no-suite m32 --print-errorlogs 2>&1 |
    grep -vE "^ *[0-9]+/[0-9]+ .* OK |^\[[0-9]+/[0-9]+\] |^ninja: "
  rc=${PIPESTATUS[0]}
  echo "test/run.sh dev: $((SECONDS - start)) s"
  exit "$rc"
fi

.ci/deps || { echo "could not install the Debian packages"; exit 1; }

builds=()
failed_builds=()
clk=$(getconf CLK_TCK)

# cpu [PID]: CPU seconds (user + system) used so far by the programs this script (or the
# subshell PID of it) waited for.
cpu() {
  local f
  read -ra f </proc/"${1:-$$}"/stat
  echo $(((f[15] + f[16]) / clk))
}

# configure NAME [meson setup args...]: a fresh build directory build/ci-NAME, every
# target built (warnings as errors). With BUILD=tests, only set up: check then builds what
# the tests it runs need, no more.
configure() {
  local name=$1; shift
  local dir=build/ci-$name
  stage_start=$SECONDS stage_cpu=$(cpu)
  echo "=== $name"
  rm -rf "$dir"
  if ! meson setup "$dir" "$@" >"$dir.setup.log" 2>&1; then
    echo "    meson setup FAILED"; tail -30 "$dir.setup.log"
    failed_builds+=("$name"); return 1
  fi
  [ "${BUILD:-all}" = tests ] && return 0
  if ! ninja -C "$dir" >"$dir.build.log" 2>&1; then
    echo "    build FAILED"; grep -E "error|warning" "$dir.build.log" | head -40
    failed_builds+=("$name"); return 1
  fi
  echo "    built in $((SECONDS - stage_start)) s"
}

# check NAME [meson test args...]: runs the tests (meson test builds what they need
# first), shows the failures and the closing counts, and the stage's wall and CPU time.
check() {
  local name=$1; shift
  local log=build/ci-$name.test.log
  meson test -C "build/ci-$name" --print-errorlogs "$@" >"$log" 2>&1
  if grep -q "^Could not rebuild" "$log"; then
    echo "    build FAILED"; grep -E "error|warning" "$log" | head -40
    failed_builds+=("$name")
  else
    grep -E "^ *[0-9]+/[0-9]+ .*(FAIL|TIMEOUT|ERROR)|^(Ok|Fail|Timeout|Skipped):" "$log"
    builds+=("$name")
  fi
  echo "    ($name: $((SECONDS - stage_start)) s, $(($(cpu) - stage_cpu)) s CPU)"
}

# script NAME COMMAND...: a script of checks, its output in build/ci-NAME.log. Shows its
# FAIL lines (with what follows them, indented) and its closing line "NAME: ...", or with
# SHOW=all everything it prints, as it prints it. A failure counts as a failed build, and
# is its status (for a stage run in a background subshell, whose failed_builds is its own).
script() {
  local name=$1 start=$SECONDS cpu_start rc me=$BASHPID
  cpu_start=$(cpu "$me")
  shift
  echo "=== $name"
  if [ "${SHOW:-}" = all ]; then
    "$@" 2>&1 | tee "build/ci-$name.log"
    rc=${PIPESTATUS[0]}
  else
    "$@" >"build/ci-$name.log" 2>&1
    rc=$?
    grep -E "^(FAIL| {9}|$name:)" "build/ci-$name.log"
  fi
  [ "$rc" -eq 0 ] || failed_builds+=("$name")
  echo "    ($name: $((SECONDS - start)) s, $(($(cpu "$me") - cpu_start)) s CPU)"
  return "$rc"
}

# with_threads BUILDDIR: the names of its tests that start threads: the suites threads
# and examples, and the core tests whose source includes harness_threads.h.
with_threads() {
  meson test -C "$1" --list --no-rebuild 2>/dev/null | awk -v uses="$(
      grep -l '#include "harness_threads.h"' test/programs/test_*.c |
        sed 's|^test/programs/||; s|\.c$||' | xargs)" '
    BEGIN { n = split(uses, u, " "); for (i = 1; i <= n; i++) starts[u[i]] = 1 }
    {
      split($0, f, " / "); stem = f[2]; sub(/_[a-z0-9]+$/, "", stem)
      if (f[1] ~ /:(threads|examples)(\+|$)/ || (f[1] ~ /:core\+/ && stem in starts)) print f[2]
    }'
}

mkdir -p build
# Each stage is there for what no other one tests; what they would repeat is left out.
# gcc, with coverage: every harness mode, every suite (the -m32 one too: what a 64-bit build
# cannot reach, a wheel whose size does not fit a 32-bit size_t), the explorer without
# shards (its freed nodes poisoned; clang runs it with shards, which costs three times as
# much here: 47 s of CPU against 15 s); then test/tools/coverage.py prints hwtimer.h's
# lines, branches and functions per section and fails below 99.5 % of its lines or 95 % of
# its branches. Compiled without inlining (see test/tools/coverage.py: gcov counts a branch
# once per copy the compiler makes of it), and with HWTIMER_TEST_COVERAGE (forked children
# write their counts), at -Og: it builds in half the time of -O2 and its tests run as fast
# without inlining. The matrix, ASan and the benchmark build compile with inlining. Its
# counters and calls make the model test about 14 times slower here: it runs 200000
# operations, as under ASan (clang's build runs the default 1000000).
coverage_args="['-fno-inline','-Dalways_inline=unused','-DHWTIMER_TEST_COVERAGE']"
if configure gcc -Dbench=false -Db_coverage=true "-Dc_args=$coverage_args" \
     "-Dcpp_args=$coverage_args" -Dmodel_ops=200000 -Doptimization=g; then
  check gcc --no-suite explore_shards
  SHOW=all script coverage test/tools/coverage.py build/ci-gcc
fi
if [ "${1:-}" != quick ]; then
  # clang: its warnings on every target, its code in the two base modes, the libFuzzer
  # corpus replay (clang only), clang++ for test_cpp, the explorer with shards (its freed
  # nodes poisoned). Not the explorer without shards (a deterministic search: gcc's run
  # covers it), the examples (real-time programs, run by gcc and TSan) nor -m32 (built here
  # for clang's warnings, run by the matrix and gcc).
  if CC=clang CXX=clang++ configure clang -Dbench=false -Dtest_modes=nothreads,pthread; then
    check clang --no-suite explore_plain --no-suite examples --no-suite m32
  fi
  # ASan+UBSan: the tests in the modes whose code differs (no threads, one wheel with
  # pthreads, shards; the lock-free and C11 modes add no memory handling of their own), and
  # the explorer once, where a freed node is really freed, its search capped (gcc runs it
  # whole, clang with shards). Not the compile suite (a build check: gcc and clang
  # make it) nor the examples (gcc runs them, TSan for races): building them under ASan
  # costs more than all its tests. Only what runs is built, at -Og: gcc compiles these
  # sanitizers at -O2 three times slower, and the tests run no faster for it.
  if BUILD=tests configure asan -Dbench=false -Db_sanitize=address,undefined -Db_lundef=false \
       -Dmodel_ops=200000 -Dtest_modes=nothreads,pthread,shards -Doptimization=g; then
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
      check asan --no-suite explore_shards --no-suite compile --no-suite examples
  fi
  # TSan: data races, in the two pthread modes (C11 threads are left out: TSan in clang 14
  # does not intercept thrd_create). A race needs two threads: the threads suite, the
  # examples and the core tests that start threads (they include harness_threads.h); not
  # the other core tests nor the model test, which run on one thread.
  if CC=clang CXX=clang++ BUILD=tests configure tsan -Dbench=false -Db_sanitize=thread \
       -Db_lundef=false -Dtest_modes=pthread,shards; then
    mapfile -t tsan_tests < <(with_threads build/ci-tsan)
    TSAN_OPTIONS=halt_on_error=1 check tsan "${tsan_tests[@]}"
  fi
  # the README's first command builds the benchmark: check it builds (warnings as errors)
  # and that every peer fires every callback, none early, at a tiny size (no timings)
  if configure bench -Dtests=false -Dbench=true; then check bench --suite bench; fi
  # compilers, standards, word sizes, options and optimization levels meson does not
  # build; valgrind; Windows under Wine
  SHOW=all script matrix test/tools/matrix.sh
  # The last four stages run no real-time test, so they share the two cores: the proof
  # and the fuzzer in the background, each shown when it is done.
  # the proof of the tick arithmetic (test/prove/run.sh): Frama-C's WP on bit facts proved
  # in Why3; its provers get 20 s a goal and the slowest takes a few, so sharing the cores
  # slows the stage without failing it
  script prove test/prove/run.sh >build/ci-prove.stage 2>&1 &
  prove_stage=$!
  # a bounded libFuzzer run against the reference model (test/fuzz/run.sh 3600 for a long
  # one): one process, beside the two checks below, which build more than they run
  SHOW=all script fuzz test/fuzz/run.sh 30 >build/ci-fuzz.stage 2>&1 &
  fuzz_stage=$!
  # hwtimer as a parent project's meson subproject, and the README's install-only command
  script subproject test/subproject/run.sh
  # every way the README tells a user to add hwtimer to a build, and that it quotes them
  script adopt test/adopt/run.sh
  wait "$prove_stage" || failed_builds+=(prove)
  cat build/ci-prove.stage
  wait "$fuzz_stage" || failed_builds+=(fuzz)
  cat build/ci-fuzz.stage
fi

# The closing line: every meson test of every configuration.
python3 - "${builds[@]}" <<'PY'
import json, sys
passed = failed = skipped = 0
for name in sys.argv[1:]:
    try:
        lines = open(f"build/ci-{name}/meson-logs/testlog.json").read().splitlines()
    except OSError:
        failed += 1
        continue
    for line in lines:
        r = json.loads(line)
        if r["result"] in ("OK", "EXPECTEDFAIL"):
            passed += 1
        elif r["result"] == "SKIP":
            skipped += 1
        else:
            failed += 1
            print(f"FAILED: {name}: {r['name']} ({r['result']}); the end of what it printed:")
            # (CI shows only this run's output: say what failed, not just that it did)
            for out in (r.get("stdout") or "", r.get("stderr") or ""):
                for line in out.splitlines()[-25:]:
                    print(f"    {line}")
open("build/ci-summary.txt", "w").write(f"{passed} {failed} {skipped}\n")
PY
read -r passed failed skipped < build/ci-summary.txt
# a failed script stage: its failure lines again, with what they print below them (CI
# shows the end of the run's output): test/tools/matrix.sh indents that by nine spaces,
# test/tools/wine.sh by twelve
for name in "${failed_builds[@]}"; do
  [ -f "build/ci-$name.log" ] || continue
  echo "FAILED: $name:"
  grep -E "^ *(FAIL|XPASS)|^ {9}" "build/ci-$name.log" | head -n 60
done
failed=$((failed + ${#failed_builds[@]}))
[ ${#failed_builds[@]} -eq 0 ] || echo "builds that failed: ${failed_builds[*]}"
echo "$passed passed, $failed failed, $skipped skipped"
echo "test/run.sh: $SECONDS s in all"
[ "$failed" -eq 0 ]
