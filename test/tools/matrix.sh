#!/usr/bin/env bash
# Portability matrix: the tests compiled directly by each compiler, language standard,
# thread configuration, word size and optimization level, warnings as errors, and run
# where it tells something new; valgrind memcheck on the unit tests; Windows under Wine
# (test/tools/wine.sh). Prints one line per configuration as it finishes and a closing
# count; exits nonzero on any failure. Called by test/run.sh (the full run); a few minutes
# on two cores (Wine's first start in a fresh checkout adds up to a minute).
#
#   test/tools/matrix.sh                 everything
#   MATRIX_JOBS=N test/tools/matrix.sh   N configurations at a time (default 2)
#   MATRIX_ONLY=REGEX test/tools/matrix.sh
#                                        only the configurations whose name matches (bash =~)
#
# Each configuration's compiler output and test output is in build-hard-matrix/NAME.log.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit
out=build-hard-matrix
rm -rf "$out"
mkdir -p "$out/bin"
start_all=$SECONDS

# The warning flags and the test programs: the lists meson reads (test/warnings.list,
# test/programs/tests.list).
mapfile -t cwarn < <(sed '/^#/d; /^$/d' test/warnings.list)
warn=()
for w in "${cwarn[@]}"; do
  [ "$w" = -Wstrict-prototypes ] || warn+=("$w") # C only: not for C++
done
warn+=(-Werror)
cwarn+=(-Werror)

# programs FIELD VALUE: the programs in test/programs/tests.list whose field FIELD (2 suite,
# 5 tags) is VALUE, or for tags has VALUE among them.
programs() {
  awk -v field="$1" -v want="$2" '!/^#/ && NF {
    n = split($field, values, ",")
    for (i = 1; i <= n; i++) if (values[i] == want) { print $1; next }
  }' test/programs/tests.list
}
mapfile -t unit < <(programs 2 core)              # caller-driven: every mode
mapfile -t threaded < <(programs 5 threaded)      # worker and synchronous cancel
mapfile -t compiled < <(programs 5 compile)       # the most API and harness code
# test_model with the list's arguments for a short run
model_short=("$(awk '!/^#/ && $1 == "test_model" {
  s = $1; for (i = 6; i <= NF; i++) s = s " " $i; print s }' test/programs/tests.list)")

# ---- steps a configuration is made of --------------------------------------------------

# build NAME COMPILER SOURCE FLAGS...: compiles one test program to $out/bin/NAME (FLAGS
# may end with objects to link).
build() {
  local name=$1 compiler=$2 src=$3
  shift 3
  echo "\$ $compiler $* $src"
  "$compiler" "$@" "$src" -o "$out/bin/$name" -pthread
}

# own_implementation SOURCE (test/tools/programs.sh)
. test/tools/programs.sh

# tests CONFIG COMPILER "FLAGS" RUNNER TEST[ ARGS]...: builds each test of test/programs/
# with FLAGS (and -Itest/harness, the headers the tests share) and runs it: RUNNER "-" runs
# it directly, another is the command prefix (e.g. valgrind), "none" and "link" only build.
# Stops at the first failure. With "none" each test is compiled as one file, the
# implementation in it (each test must build alone); otherwise the implementation is
# compiled once (test/programs/impl.c, with FLAGS), as meson does, and linked into each test
# but those that compile it themselves.
tests() {
  local config=$1 compiler=$2 flags="-Itest/harness $3" runner=$4 spec src args bin impl=()
  shift 4
  if [ "$runner" != none ]; then
    impl=("$out/bin/$config-impl.o")
    echo "\$ $compiler $flags -c test/programs/impl.c"
    # shellcheck disable=SC2086 # flags are words
    "$compiler" $flags -c test/programs/impl.c -o "${impl[0]}" || return 1
  fi
  for spec in "$@"; do
    src=${spec%% *}
    args=${spec#"$src"}
    bin=$config-$src
    if [ ${#impl[@]} -gt 0 ] && ! own_implementation "test/programs/$src.c"; then
      # shellcheck disable=SC2086 # flags and args are words
      build "$bin" "$compiler" "test/programs/$src.c" $flags -DHWTIMER_TEST_NO_IMPLEMENTATION \
        "${impl[@]}" || return 1
    else
      # shellcheck disable=SC2086
      build "$bin" "$compiler" "test/programs/$src.c" $flags || return 1
    fi
    [ "$runner" = none ] || [ "$runner" = link ] && continue
    echo "\$ $runner $bin$args"
    if [ "$runner" = - ]; then
      # shellcheck disable=SC2086
      timeout 300 "$out/bin/$bin" $args | tail -3 || return 1
    else
      # shellcheck disable=SC2086
      timeout 300 $runner "$out/bin/$bin" $args | tail -3 || return 1
    fi
  done
}

cpp_test() {
  local config=$1 compiler=$2 std=$3
  build "$config" "$compiler" test/compile/test_cpp.cpp -std="$std" -O2 "${warn[@]}" \
    -Wold-style-cast && "$out/bin/$config"
}

# -m32: run natively where the kernel runs 32-bit programs (probed once), otherwise under
# qemu-i386 (Debian: qemu-user). qemu-user aborts when the forked child of a threaded program
# starts a thread, so there test_fork (covered natively by the 64-bit runs) is left out.
m32_run=-
m32_how=native
m32_threaded=("${threaded[@]}")
m32_fork_note=""
if ! printf 'int main(void) { return 0; }\n' | gcc -m32 -x c - -o "$out/bin/m32-probe"; then
  echo "-m32: gcc -m32 cannot link a program (Debian: gcc-multilib)" # the builds say why
elif ! "$out/bin/m32-probe" 2>/dev/null; then
  if command -v qemu-i386 >/dev/null && qemu-i386 "$out/bin/m32-probe"; then
    m32_run=qemu-i386
    m32_how=qemu-i386
    m32_fork_note="; test_fork left out"
    mapfile -t m32_threaded < <(printf '%s\n' "${threaded[@]}" | grep -vx test_fork)
    echo "-m32: this kernel runs no 32-bit programs: they run under qemu-i386"
  else
    m32_run=none
    m32_how="built only: no 32-bit kernel support, no qemu-i386"
    echo "-m32: this kernel runs no 32-bit programs and qemu-i386 is missing" \
      "(Debian: qemu-user): the -m32 configurations only build"
  fi
fi

vg="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect"

# ---- the configurations: name, then the command -----------------------------------------

configs=()
declare -A command
add() {
  [[ $1 =~ ${MATRIX_ONLY:-.} ]] || return 0
  configs+=("$1")
  command[$1]=$2
}

# What each configuration adds; the ones meson's builds already make are left out (gcc
# and clang at -std=c99 in every harness mode, test_cpp as C++11 with g++ and clang++,
# gcc's -m32 caller-driven tests in the m32 suite).
# The longest first, so that neither job runs alone at the end: valgrind, then Windows
# (mostly waiting for Wine).
#
# valgrind: reads of uninitialized memory, which ASan does not see (the pthreads mode: the
# caller-driven code of the thread-free mode, with the locks)
if command -v valgrind >/dev/null; then
  add "valgrind memcheck, pthreads" \
    "tests vg gcc '-std=c99 -O1 -g ${cwarn[*]} -DHWTIMER_TEST_MODE=2' '$vg' \
       ${unit[*]} 'test_model --ops 20000'"
else
  echo "skipped: valgrind memcheck (valgrind is not installed)"
fi
add "Windows (mingw-w64, Win32 threads) under Wine" "test/tools/wine.sh"
# C11 with the pthreads backend (meson builds C11 only with C11 threads), and with both
# (each program compiled alone, the implementation in it: every test must build so; once,
# with gcc: clang compiles them all in its meson build)
add "gcc c11 compile" \
  "tests 'gcc-c11' gcc '-std=c11 -O2 ${cwarn[*]} -DHWTIMER_TEST_MODE=2' none ${compiled[*]}"
for cc in gcc clang; do
  add "$cc c11 compile, C11 threads beside pthreads" \
    "tests '$cc-c11-both' $cc '-std=c11 -O2 ${cwarn[*]} -DHWTIMER_TEST_MODE=3' none test_sync"
done
# later C++ standards (C++11 is meson's)
for cxx in g++ clang++; do
  for std in c++17 c++20; do
    add "$cxx $std run test_cpp" "cpp_test '$cxx-$std' $cxx $std"
  done
done
# the C11 backend alone: no pthreads compiled in
add "gcc c11 C11 threads only (HWTIMER_NO_PTHREADS) run" \
  "tests gcc-c11only gcc '-std=c11 -O2 ${cwarn[*]} -DHWTIMER_TEST_MODE=3 -DHWTIMER_NO_PTHREADS' - \
     ${unit[*]} ${threaded[*]} '${model_short[*]}'"
# 32-bit: size_t and pointers narrower than the 64-bit ticks, run with the pthreads backend
# (the caller-driven tests run there too, with locks). Meson's gcc and clang builds compile
# the caller-driven tests at -m32 (clang's -Wconversion warns of 64-to-32-bit truncations
# gcc's does not).
add "gcc -m32 pthreads run ($m32_how$m32_fork_note)" \
  "tests gcc-m32-pthread gcc '-m32 -std=c99 -O2 ${cwarn[*]} -DHWTIMER_TEST_MODE=2' '$m32_run' \
     ${unit[*]} ${m32_threaded[*]} '${model_short[*]}'"
# 32-bit x86 before the i586, which has no 8-byte compare-and-swap: hwtimer_create refuses
# threads there (another thread could read half of a 64-bit value) and says why
add "gcc -m32 -march=i486 (no 8-byte compare-and-swap: threads refused) run ($m32_how)" \
  "tests gcc-m32-i486 gcc '-m32 -march=i486 -std=c99 -O2 ${cwarn[*]} -DHWTIMER_TEST_MODE=1' \
     '$m32_run' test_create test_log"
# The wheel's lists per slot (HWTIMER_SLOT_LISTS) at both ends of their range, and locks
# that sleep at once (HWTIMER_LOCK_SPINS=0): run by clang, compiled by gcc too, whose
# -Wextra flags a loop bounded by a constant 0.
add "gcc HWTIMER_SLOT_LISTS=1 HWTIMER_LOCK_SPINS=0 run" \
  "tests gcc-lists1 gcc '-std=c99 -O2 ${cwarn[*]} -DHWTIMER_TEST_MODE=1 -DHWTIMER_SLOT_LISTS=1 -DHWTIMER_LOCK_SPINS=0' - \
     ${unit[*]} '${model_short[*]}'"
add "clang HWTIMER_SLOT_LISTS=16 HWTIMER_LOCK_SPINS=0 run" \
  "tests clang-lists16 clang '-std=c11 -O2 ${cwarn[*]} -DHWTIMER_TEST_MODE=2 -DHWTIMER_SLOT_LISTS=16 -DHWTIMER_LOCK_SPINS=0' - \
     ${unit[*]} ${threaded[*]} '${model_short[*]}'"
# optimization levels meson's builds do not use, and NDEBUG (no assertions)
add "gcc -O0 run" \
  "tests gcc-O0 gcc '-std=c99 -O0 ${cwarn[*]} -DHWTIMER_TEST_MODE=1' - \
     ${unit[*]} '${model_short[*]}'"
add "clang -O3 run" \
  "tests clang-O3 clang '-std=c99 -O3 ${cwarn[*]} -DHWTIMER_TEST_MODE=1' - \
     ${unit[*]} '${model_short[*]}'"
add "gcc -O3 -DNDEBUG run" \
  "tests gcc-O3 gcc '-std=c99 -O3 -DNDEBUG ${cwarn[*]} -DHWTIMER_TEST_MODE=2' - \
     ${unit[*]} ${threaded[*]}"

# a C99 compiler with neither GCC's nor MSVC's builtins (tcc): hwtimer.h's portable bit
# scans, inlining hints and plain loads, which no other configuration compiles; the
# caller-driven tests, without thread code and with the pthreads backend compiled in
if command -v tcc >/dev/null; then
  add "tcc (neither GCC's nor MSVC's builtins) run" \
    "tests tcc-nothreads tcc '-std=c99 -Wall -Werror -DHWTIMER_TEST_MODE=0' - \
       ${unit[*]} '${model_short[*]}' &&
     tests tcc-unlocked tcc '-std=c99 -Wall -Werror -DHWTIMER_TEST_MODE=1' - \
       ${unit[*]} '${model_short[*]}'"
else
  echo "skipped: tcc (tcc is not installed)"
fi

# a big-endian machine (s390x under qemu-s390x): the node's state is then the last byte of
# its word, the way hwtimer__state_word, hwtimer__quick_to_arm and hwtimer__leeway_bits
# take there, which no little-endian build runs; the caller-driven tests, one thread.
# clang cross-compiles, with Debian's s390x libc, libgcc and linker: Debian's s390x gcc
# cannot be installed beside gcc-multilib, which the -m32 configurations need.
s390x=(--target=s390x-linux-gnu -static)
if printf 'int main(void) { return 0; }\n' | clang "${s390x[@]}" -x c - -o "$out/bin/s390x-probe" \
     2>/dev/null && qemu-s390x "$out/bin/s390x-probe" 2>/dev/null; then
  add "s390x (big-endian) under qemu-s390x run" \
    "tests s390x-nothreads clang '${s390x[*]} -std=c99 -O2 ${cwarn[*]} -DHWTIMER_TEST_MODE=0' \
       qemu-s390x ${unit[*]} '${model_short[*]}'"
else
  echo "skipped: s390x (Debian: libc6-dev-s390x-cross, libgcc-12-dev-s390x-cross," \
    "binutils-s390x-linux-gnu, qemu-user)"
fi

# 32-bit ARM (ARMv7, hard float, under qemu-arm), where a header-only timer often lands:
# its 64-bit values are read whole by an 8-byte exclusive load (test_whole_reads, with the
# pthreads backend; a plain load there is two, which 1.1.5 tore), and the caller-driven
# tests with locks. clang cross-compiles, with Debian's armhf libc, libgcc and linker.
armv7=(--target=arm-linux-gnueabihf -march=armv7-a -static)
if printf 'int main(void) { return 0; }\n' | clang "${armv7[@]}" -x c - -o "$out/bin/armv7-probe" \
     2>/dev/null && qemu-arm "$out/bin/armv7-probe" 2>/dev/null; then
  add "armv7 (32-bit ARM) pthreads under qemu-arm run" \
    "tests armv7-pthread clang '${armv7[*]} -std=c99 -O2 ${cwarn[*]} -DHWTIMER_TEST_MODE=2' \
       qemu-arm ${unit[*]} 'test_whole_reads 300'"
else
  echo "skipped: armv7 (Debian: libc6-dev-armhf-cross, libgcc-12-dev-armhf-cross," \
    "binutils-arm-linux-gnueabihf, qemu-user)"
fi

# ---- include order: the implementation after system headers ---------------------------

# include_order CONFIG COMPILER: test/compile/include_order.c (stdio.h and stdlib.h before
# the implementation) with COMPILER, warnings as errors. Where POSIX is visible (gnu99,
# -D_POSIX_C_SOURCE) it must compile and run. Under strict -std=c99/c11, with and without
# -pthread (with it glibc turns on POSIX 1995, not 2008), it may instead stop at exactly one
# error, an #error directive of hwtimer.h: never at a cascade of unrelated errors.
include_order() {
  local config=$1 compiler=$2 flags
  for flags in "-std=gnu99 -pthread" "-std=c99 -D_POSIX_C_SOURCE=200809L -pthread"; do
    include_order_build "$config" "$compiler" "$flags" && "$out/bin/$config" || return 1
  done
  for flags in -std=c99 -std=c11 "-std=c99 -pthread" "-std=c11 -pthread"; do
    runs_or_stops_at_one_error "$config" "$compiler" "$flags" || return 1
  done
}

# include_order_build CONFIG COMPILER FLAGS: builds it, the compiler's output shown and
# kept in $out/CONFIG.compile.log.
include_order_build() {
  local config=$1 compiler=$2 flags=$3 rc
  echo "\$ $compiler $flags test/compile/include_order.c"
  # shellcheck disable=SC2086 # flags are words
  "$compiler" $flags -O2 "${cwarn[@]}" test/compile/include_order.c -o "$out/bin/$config" \
    >"$out/$config.compile.log" 2>&1
  rc=$?
  cat "$out/$config.compile.log"
  return $rc
}

# stopped_at_one_error LOG: the compiler output has one error, at a line of hwtimer.h that
# is an #error directive.
stopped_at_one_error() {
  local errors line
  errors=$(grep -c "error:" "$1")
  line=$(sed -nE 's/.*hwtimer\.h:([0-9]+):[0-9]+: (fatal )?error:.*/\1/p' "$1" | head -1)
  if [ "$errors" -ne 1 ] || [ -z "$line" ] || ! sed -n "${line}p" hwtimer.h | grep -qE '^[[:space:]]*#[[:space:]]*error'; then
    echo "FAIL: $errors error(s), want exactly one and that one hwtimer.h's #error"
    return 1
  fi
  echo "stopped at hwtimer.h:$line, its #error, as it should"
}

# runs_or_stops_at_one_error CONFIG COMPILER FLAGS: test/compile/include_order.c built with
# FLAGS runs, or its build stops at exactly one error, an #error of hwtimer.h.
runs_or_stops_at_one_error() {
  if include_order_build "$@"; then
    "$out/bin/$1"
  else
    stopped_at_one_error "$out/$1.compile.log"
  fi
}

# build_mistakes CONFIG COMPILER: the same program built as a user may get wrong. The C11
# thread backend alone (HWTIMER_C11_THREADS, no POSIX threads) compiles and runs from C11
# on; before C11 (gnu99, c99), where <time.h> has no timespec_get, it may only stop at
# hwtimer.h's one #error. HWTIMER_SLOT_LISTS 0 or 3 (not a power of two) must stop there.
build_mistakes() {
  local config=$1 compiler=$2 std flags c11="-DHWTIMER_C11_THREADS -DHWTIMER_NO_PTHREADS -pthread"
  include_order_build "$config" "$compiler" "-std=gnu11 $c11" && "$out/bin/$config" || return 1
  for std in gnu99 c99; do
    runs_or_stops_at_one_error "$config" "$compiler" "-std=$std $c11" || return 1
  done
  for flags in -DHWTIMER_SLOT_LISTS=0 -DHWTIMER_SLOT_LISTS=3; do
    if include_order_build "$config" "$compiler" "-std=gnu99 $flags"; then
      echo "FAIL: it built with $flags"
      return 1
    fi
    stopped_at_one_error "$out/$config.compile.log" || return 1
  done
}

for cc in gcc clang; do
  add "$cc include order: system headers first" "include_order '$cc-include-order' $cc"
  add "$cc build mistakes: one #error each" "build_mistakes '$cc-build-mistakes' $cc"
done

# ---- run them, two at a time; each prints its line when it is done -----------------------

slug() { echo "$1" | tr -c 'A-Za-z0-9\n' '_'; }

run_config() {
  local name=$1 t0=$SECONDS rc log
  log=$out/$(slug "$name").log
  (eval "${command[$name]}") >"$log" 2>&1
  rc=$?
  if [ "$rc" -eq 0 ]; then
    printf 'ok     %-52s %4s s\n' "$name" "$((SECONDS - t0))"
  else
    printf 'FAIL   %-52s %4s s   (%s)\n%s\n' "$name" "$((SECONDS - t0))" "$log" \
      "$(grep -v -E '^ok +' "$log" | tail -n 40 | sed 's/^/         /')" # nine spaces: test/run.sh repeats them
  fi
  echo "$rc" >"$out/$(slug "$name").rc"
}

for name in "${configs[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "${MATRIX_JOBS:-2}" ]; do wait -n; done
  run_config "$name" &
done
wait
passed=0
failed=0
for name in "${configs[@]}"; do
  if [ "$(cat "$out/$(slug "$name").rc" 2>/dev/null)" = 0 ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
done
echo "matrix: $passed passed, $failed failed ($((SECONDS - start_all)) s)"
[ "$failed" -eq 0 ]
