#!/usr/bin/env bash
# Windows: cross-compiles the tests with mingw-w64 (x86_64, the Win32 thread backend and
# the QueryPerformanceCounter clock: harness mode 4; mode 0 for the thread-free build, which
# is built only) and runs them under Wine, three at a time. Prints one line per test
# program and a closing count; exits nonzero on any failure. Called by test/tools/matrix.sh;
# skips (exit 0, with a line saying why) when mingw-w64 or Wine is missing (Debian: apt-get
# install mingw-w64 wine wine64).
#
#   test/tools/wine.sh               every program below
#   WINE_FRESH=1 test/tools/wine.sh  in a new Wine prefix (a temporary directory), as on a
#                                    fresh machine; by default the prefix
#                                    build-hard-wine/prefix is made once (Wine's first start
#                                    takes 15 s to minutes) and reused
#
# Known failures are listed with their reason and reported as "xfail"; a known failure
# that passes is reported as "XPASS" and fails the run, so the list stays true.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit
out=build-hard-wine
cc=x86_64-w64-mingw32-gcc
wine_bin=$(command -v wine64 || command -v wine || true)
if ! command -v "$cc" >/dev/null || [ -z "$wine_bin" ]; then
  echo "wine: skipped: needs $cc and wine (apt-get install mingw-w64 wine wine64)"
  exit 0
fi
start_all=$SECONDS
mkdir -p "$out/bin"

# The warning flags and the test programs: the lists meson reads (test/warnings.list,
# test/programs/tests.list). Each program is built and run in the Win32 mode (4); the
# implementation is built in the thread-free mode (0) too, but not run: what Windows adds
# (the clock, the Win32 backend) the Win32 mode runs, and the thread-free code is the same
# as on Linux, where meson's builds run it. Those tagged no-wine are left out. The headers
# the programs share are in test/harness/.
flags=(-std=c99 -O2 -Werror -D__USE_MINGW_ANSI_STDIO=1 -Itest/harness)
mapfile -t -O "${#flags[@]}" flags < <(sed '/^#/d; /^$/d' test/warnings.list)

# Known failures, by program name (e.g. test_sync_win32): the failing tests, space
# separated, and why. None at present.
declare -A known_failing=() known_why=()

# name|source|mode|arguments: the programs built and run
programs=()
while read -r src _ modes _ tags args; do
  case $src in '' | '#'*) continue ;; esac
  case ",$tags," in *,no-wine,*) continue ;; esac
  programs+=("${src}_win32|$src|4|$args")
done <test/programs/tests.list

# The implementation is compiled once per mode (test/programs/impl.c), as meson does: in the
# Win32 mode for the programs to link, and in the thread-free mode only to check that it
# builds (see above). A program that calls the implementation's private functions compiles
# it in (own_implementation, test/tools/programs.sh).
. test/tools/programs.sh
impl_ok=1
for mode in 4 0; do
  "$cc" "${flags[@]}" -DHWTIMER_TEST_MODE=$mode -c test/programs/impl.c \
    -o "$out/bin/impl$mode.o" >"$out/impl$mode.build.log" 2>&1 || impl_ok=0
done
build() {
  local name=$1 src=$2 mode=$3 impl=()
  rm -f "$out/bin/$name.exe"
  if ! own_implementation "test/programs/$src.c"; then
    impl=(-DHWTIMER_TEST_NO_IMPLEMENTATION "$out/bin/impl$mode.o")
  fi
  "$cc" "${flags[@]}" -DHWTIMER_TEST_MODE="$mode" "test/programs/$src.c" "${impl[@]}" \
    -o "$out/bin/$name.exe" -static -lwinpthread >"$out/$name.build.log" 2>&1
}
for p in "${programs[@]}"; do
  IFS='|' read -r name src mode _ <<<"$p"
  while [ "$(jobs -rp | wc -l)" -ge 2 ]; do wait -n; done
  build "$name" "$src" "$mode" &
done
wait

export WINEPREFIX WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml=,winemenubuilder.exe=d"
if [ -n "${WINE_FRESH:-}" ]; then
  WINEPREFIX=$(mktemp -d)
else
  WINEPREFIX=$PWD/$out/prefix
fi
cleanup() {
  wineserver -k >/dev/null 2>&1 || true
  [ -z "${WINE_FRESH:-}" ] || rm -rf "$WINEPREFIX"
}
trap cleanup EXIT
boot=$SECONDS
if ! timeout 300 "$wine_bin" cmd /c exit >"$out/boot.log" 2>&1; then
  echo "wine: FAILED: Wine did not start within 300 s (see $out/boot.log)"
  exit 1
fi
echo "wine: $("$wine_bin" --version 2>/dev/null), prefix ready in $((SECONDS - boot)) s"
# A wineserver that stays up between the programs (cleanup ends it): otherwise each program
# starts one and waits for it, 1 to 2 s a program.
wineserver -p >/dev/null 2>&1 </dev/null || true

passed=0
failed=0
if [ "$impl_ok" = 1 ]; then
  echo "built  the implementation in the Win32 and the thread-free modes"
else
  echo "FAIL   the implementation's build (see $out/impl4.build.log, $out/impl0.build.log)"
  failed=$((failed + 1))
fi
# run_program NAME ARGS: runs one program, writes its line to $out/NAME.result and 0 or 1
# (a failure) to $out/NAME.failed.
run_program() {
  local name=$1 args=$2 known=${known_failing[$1]:-} why=${known_why[$1]:-} log rc got want
  local t0=$SECONDS secs line bad=1
  log=$out/$name.log
  if [ ! -s "$out/bin/$name.exe" ]; then
    echo "FAIL   $name: build (see $out/$name.build.log)" >"$out/$name.result"
    echo 1 >"$out/$name.failed"
    return
  fi
  for attempt in 1 2; do
    # shellcheck disable=SC2086 # args are words
    timeout 300 "$wine_bin" "$out/bin/$name.exe" $args 2>&1 | tr -d '\r' >"$log"
    rc=${PIPESTATUS[0]}
    # Wine's own server dying ("wine client error: ...") is not the program failing: run
    # the program once more.
    grep -q "^wine client error" "$log" || break
    echo "note   $name: wineserver failed (attempt $attempt): $(head -1 "$log")" >&2
  done
  got=$(sed -n 's/^FAILED: //p' "$log" | sort | xargs)
  want=$(echo "$known" | tr ' ' '\n' | sed '/^$/d' | sort | xargs)
  secs=$((SECONDS - t0))
  if [ "$rc" -eq 0 ] && [ -z "$want" ]; then
    line="ok     $name ($secs s)" bad=0
  elif [ "$rc" -ne 0 ] && [ -n "$want" ] && [ "$got" = "$want" ]; then
    line="xfail  $name ($secs s): $got: $why" bad=0
  elif [ "$rc" -eq 0 ]; then
    line="XPASS  $name ($secs s): $want passed now; drop it from test/tools/wine.sh's known failures"
  else
    line="FAIL   $name ($secs s, exit $rc): ${got:-no FAILED line} (see $log)"
  fi
  # a failure carries the end of what the program printed (CI shows only the run's output)
  [ "$bad" = 0 ] || line+=$'\n'$(tail -n 15 "$log" | sed 's/^/            | /')
  echo "$line" >"$out/$name.result"
  echo "$bad" >"$out/$name.failed"
}

# Three programs at a time: most of a program's time under Wine is waiting, not CPU.
for p in "${programs[@]}"; do
  IFS='|' read -r name _ _ args <<<"$p"
  while [ "$(jobs -rp | wc -l)" -ge 3 ]; do wait -n; done
  run_program "$name" "$args" &
done
wait
for p in "${programs[@]}"; do
  IFS='|' read -r name _ <<<"$p"
  cat "$out/$name.result"
  if [ "$(cat "$out/$name.failed")" = 0 ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
done
echo "wine: $passed passed, $failed failed ($((SECONDS - start_all)) s)"
[ "$failed" -eq 0 ]
