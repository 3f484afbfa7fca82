#!/usr/bin/env bash
# Every way the README tells a user to add hwtimer to a build, each done as a user would,
# in a temporary directory, from the snippet files in this directory (the README quotes
# each of them verbatim):
#   quickstart.c    the first program: compiles warning-free (gcc, clang; default, -std=c99
#                   and -std=c11; as C++), runs, prints what it should, in under a second
#   cc.sh           hwtimer.h copied next to app.c, one compiler command
#   meson.build     a parent project with the three files hwtimer.h, meson.build and
#                   meson_options.txt copied into subprojects/hwtimer/
#   install.sh      hwtimer's meson install into a prefix of the user's ($HOME/.local, HOME
#                   a temporary folder here), then
#   pkg-config.sh   PKG_CONFIG_PATH set to the multiarch folder the README names (Debian
#                   x86-64), and a program built from the installed hwtimer.pc (-pthread
#                   once, in its Libs)
#   find_package.cmake  (as CMakeLists.txt) a CMake project that finds that same install
#                   with find_package(hwtimer CONFIG), CMAKE_PREFIX_PATH="$HOME/.local"; and
#                   finds hwtimer's own `cmake --install` into another prefix the same way
#   CMakeLists.txt  add_subdirectory(hwtimer), hwtimer/ holding hwtimer.h and CMakeLists.txt
#                   of this checkout, nothing else; hwtimer builds and installs nothing
#   FetchContent.cmake  (as CMakeLists.txt) FetchContent from a local git repository
#                   (file://, no network) holding this checkout's files
#   Makefile        hwtimer.h next to app.c, make
# The build snippets build test/subproject/parent/main.c as app.c: a timeout on hwtimer's
# worker thread. Then each event-loop recipe the README links (test/examples/loop_*.c),
# built in a folder of its own with the command at its top and run. Last, README.md must
# hold each snippet file's text in a fenced code block, and link each recipe.
# Prints one line per check and exits nonzero on any failure. About 40 s.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit
root=$PWD
adopt=$root/test/adopt
worker=$root/test/subproject/parent/main.c
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0

. test/tools/check.sh # check DESCRIPTION COMMAND...

# folder NAME FILE...: a fresh folder $tmp/NAME holding copies of the files.
folder() {
  local dir=$tmp/$1
  shift
  mkdir -p "$dir" && cp "$@" "$dir/"
}

# inside DIR COMMAND...: runs the command in DIR.
inside() {
  (cd "$1" && shift && "$@")
}

# same_versions VERSION...: all the same, and not empty.
same_versions() {
  local v
  echo "versions: $*"
  for v in "$@"; do [ -n "$v" ] && [ "$v" = "$1" ] || return 1; done
}

# ---- quickstart.c -------------------------------------------------------------------------

mapfile -t warnings < <(sed '/^#/d; /^$/d' test/warnings.list)
mapfile -t cxx_warnings < <(printf '%s\n' "${warnings[@]}" | grep -vx -- -Wstrict-prototypes)
expected="connection 3: retry 1
connection 3: retry 2
connection 3: idle for 50 ms, closed"

# quickstart_builds COMPILER FLAGS...: compiles quickstart.c against this checkout's header,
# warnings as errors.
quickstart_builds() {
  local compiler=$1
  shift
  "$compiler" "$@" -Werror -I"$root" "$adopt/quickstart.c" -o "$tmp/quickstart"
}

# runs_as_expected PROGRAM: exits 0 within a second, having printed $expected.
runs_as_expected() {
  local start output elapsed_ms
  start=$(date +%s%N)
  output=$(timeout 10 "$1") || { echo "exit status $?; printed:"; echo "$output"; return 1; }
  elapsed_ms=$((($(date +%s%N) - start) / 1000000))
  [ "$output" = "$expected" ] || { printf 'printed:\n%s\nexpected:\n%s\n' "$output" "$expected"; return 1; }
  [ "$elapsed_ms" -lt 1000 ] || { echo "took $elapsed_ms ms"; return 1; }
}

for compiler in gcc clang; do
  for std in "" -std=c99 -std=c11; do
    check "quickstart.c: $compiler ${std:-(default mode)} ${warnings[*]}" \
      quickstart_builds "$compiler" $std "${warnings[@]}"
  done
  check "quickstart.c: runs and prints what fired ($compiler)" runs_as_expected "$tmp/quickstart"
done
for compiler in g++ clang++; do
  check "quickstart.c: as C++, $compiler -x c++" \
    quickstart_builds "$compiler" -x c++ "${cxx_warnings[@]}"
done
check "quickstart.c: runs and prints what fired (C++)" runs_as_expected "$tmp/quickstart"

# ---- copy the header ----------------------------------------------------------------------

folder cc hwtimer.h "$adopt/cc.sh"
cp "$adopt/quickstart.c" "$tmp/cc/app.c"
check "copy the header: cc.sh" inside "$tmp/cc" sh -e cc.sh
check "copy the header: the program runs" runs_as_expected "$tmp/cc/app"

# ---- meson subproject ---------------------------------------------------------------------

# the build snippets' program, and hwtimer's three files
folder app "$worker"
mv "$tmp/app/main.c" "$tmp/app/app.c"
three=(hwtimer.h meson.build meson_options.txt)

folder meson "$adopt/meson.build" "$tmp/app/app.c"
mkdir -p "$tmp/meson/subprojects/hwtimer"
cp "${three[@]}" "$tmp/meson/subprojects/hwtimer/"
# (the subproject, not a hwtimer.pc the machine may have installed)
check "meson subproject: meson setup build" \
  inside "$tmp/meson" env PKG_CONFIG_PATH='' PKG_CONFIG_LIBDIR="$tmp/none" meson setup build
check "meson subproject: it used subprojects/hwtimer" \
  grep -q "Executing subproject hwtimer" "$tmp/meson/build/meson-logs/meson-log.txt"
check "meson subproject: meson compile" inside "$tmp/meson" meson compile -C build
check "meson subproject: the program runs" "$tmp/meson/build/app"

# ---- meson install into a prefix, then pkg-config ----------------------------------------

home=$tmp/home # the user's $HOME in install.sh and pkg-config.sh
# (a clone's files that install: the three, and CMakeLists.txt, which writes the CMake
# package's hwtimerConfig.cmake for meson)
folder install "${three[@]}" CMakeLists.txt "$adopt/install.sh"
check "install: install.sh (--prefix=\$HOME/.local)" inside "$tmp/install" env HOME="$home" sh -e install.sh
check "install: hwtimer.h in \$HOME/.local/include" test -f "$home/.local/include/hwtimer.h"
check "install: hwtimer.pc in the folder the README names (Debian x86-64: $(gcc -print-multiarch))" \
  test -f "$home/.local/lib/x86_64-linux-gnu/pkgconfig/hwtimer.pc"
folder pkg-config "$tmp/app/app.c" "$adopt/pkg-config.sh"
# pkg_config_run COMMAND...: as the user, with no hwtimer.pc of the machine's in sight:
# pkg-config searches only what PKG_CONFIG_PATH names.
pkg_config_run() {
  (export HOME="$home" PKG_CONFIG_PATH='' PKG_CONFIG_LIBDIR="$tmp/none" && "$@")
}
# pc_flags_right: with pkg-config.sh's first line (the PKG_CONFIG_PATH export), -pthread in
# the link flags, once in pkg-config.sh's --cflags --libs, and the installed include folder.
pc_flags_right() {
  local cflags libs both
  eval "$(sed -n 1p "$adopt/pkg-config.sh")"
  cflags=$(pkg-config --cflags hwtimer) && libs=$(pkg-config --libs hwtimer) &&
    both=$(pkg-config --cflags --libs hwtimer) || return 1
  echo "--cflags: $cflags; --libs: $libs; --cflags --libs: $both"
  [[ " $libs " == *" -pthread "* && " $cflags " == *" -I$home/.local/include "* &&
     $(grep -o -- -pthread <<<"$both" | wc -l) -eq 1 ]]
}
check "pkg-config: without PKG_CONFIG_PATH it finds nothing" \
  pkg_config_run sh -c '! pkg-config --exists hwtimer'
check "pkg-config: -pthread in --libs, once in --cflags --libs; -I\$HOME/.local/include" \
  pkg_config_run pc_flags_right
check "pkg-config: pkg-config.sh" inside "$tmp/pkg-config" pkg_config_run sh -e pkg-config.sh
check "pkg-config: the program runs" "$tmp/pkg-config/app"

# ---- CMake --------------------------------------------------------------------------------

# version_of CONFIGVERSIONFILE: the PACKAGE_VERSION a hwtimerConfigVersion.cmake sets.
version_of() {
  sed -n 's/^set(PACKAGE_VERSION "\(.*\)")$/\1/p' "$1"
}

# cmake_builds DIR [CMAKE ARGS...]: configures and builds DIR's project, as $home's user.
cmake_builds() {
  local dir=$1
  shift
  inside "$dir" env HOME="$home" cmake -S . -B build "$@" && cmake --build "$dir/build"
}

# cmake_found DIR CONFIGDIR: the project in DIR found hwtimer's package in CONFIGDIR.
cmake_found() {
  local found
  found=$(sed -n 's/^hwtimer_DIR:[A-Z]*=//p' "$1/build/CMakeCache.txt")
  [ "$found" = "$2" ] || { echo "hwtimer_DIR: $found, not $2"; return 1; }
}

# only_app_built DIR: building DIR's project built the target app and nothing else.
only_app_built() {
  local built
  built=$(cmake --build "$1/build" --clean-first | sed -n 's/.*Built target //p')
  [ "$built" = app ] || { echo "built: $built"; return 1; }
}

# installs_nothing DIR: `cmake --install` of DIR's project installs no file.
installs_nothing() {
  cmake --install "$1/build" --prefix "$1/dest" && [ -z "$(find "$1/dest" -type f 2>/dev/null)" ]
}

if command -v cmake >/dev/null; then
  # the meson install above, found by find_package
  cmake_dir=$home/.local/lib/x86_64-linux-gnu/cmake/hwtimer
  check "install: hwtimerConfig.cmake and hwtimerConfigVersion.cmake in <libdir>/cmake/hwtimer" \
    test -f "$cmake_dir/hwtimerConfig.cmake" -a -f "$cmake_dir/hwtimerConfigVersion.cmake"
  folder find_package "$tmp/app/app.c"
  cp "$adopt/find_package.cmake" "$tmp/find_package/CMakeLists.txt"
  # (as its comment says, and as one line: the user's cmake command)
  check "CMake find_package, meson's install: cmake -DCMAKE_PREFIX_PATH=\"\$HOME/.local\"" \
    cmake_builds "$tmp/find_package" -DCMAKE_PREFIX_PATH="$home/.local"
  check "CMake find_package: it found \$HOME/.local's package" \
    cmake_found "$tmp/find_package" "$cmake_dir"
  check "CMake find_package: the program runs" "$tmp/find_package/build/app"

  # hwtimer's own CMake install: the same files, found the same way
  folder cmake-install hwtimer.h CMakeLists.txt
  check "CMake install: cmake -S . -B build && cmake --install build --prefix PREFIX" \
    inside "$tmp/cmake-install" sh -ec \
      'cmake -S . -B build && cmake --build build && cmake --install build --prefix "$PWD/prefix"'
  cmake_prefix=$tmp/cmake-install/prefix
  check "CMake install: hwtimer.h, and the package in lib/cmake/hwtimer (CMake's libdir)" \
    test -f "$cmake_prefix/include/hwtimer.h" \
      -a -f "$cmake_prefix/lib/cmake/hwtimer/hwtimerConfig.cmake" \
      -a -f "$cmake_prefix/lib/cmake/hwtimer/hwtimerConfigVersion.cmake"
  folder find_package-cmake "$tmp/app/app.c"
  cp "$adopt/find_package.cmake" "$tmp/find_package-cmake/CMakeLists.txt"
  check "CMake find_package, CMake's install: builds" \
    cmake_builds "$tmp/find_package-cmake" -DCMAKE_PREFIX_PATH="$cmake_prefix"
  check "CMake find_package, CMake's install: it found that package" \
    cmake_found "$tmp/find_package-cmake" "$cmake_prefix/lib/cmake/hwtimer"
  check "CMake find_package, CMake's install: the program runs" "$tmp/find_package-cmake/build/app"
  header_version=$(sed -n 's/^#define HWTIMER_VERSION "\(.*\)"$/\1/p' hwtimer.h)
  check "version: hwtimer.h's $header_version = meson.build's (meson's package) = CMakeLists.txt's" \
    same_versions "$header_version" "$(version_of "$cmake_dir/hwtimerConfigVersion.cmake")" \
      "$(version_of "$cmake_prefix/lib/cmake/hwtimer/hwtimerConfigVersion.cmake")"

  # add_subdirectory: hwtimer/ holds the two files a user vendors
  folder cmake "$adopt/CMakeLists.txt" "$tmp/app/app.c"
  mkdir -p "$tmp/cmake/hwtimer" && cp hwtimer.h CMakeLists.txt "$tmp/cmake/hwtimer/"
  check "CMake add_subdirectory (hwtimer.h, CMakeLists.txt): builds" cmake_builds "$tmp/cmake"
  check "CMake add_subdirectory: the program runs" "$tmp/cmake/build/app"
  check "CMake add_subdirectory: hwtimer builds no target of its own" only_app_built "$tmp/cmake"
  check "CMake add_subdirectory: cmake --install installs nothing of hwtimer's" \
    installs_nothing "$tmp/cmake"

  # FetchContent: a git repository of this checkout's files, by a file:// URL
  git=$tmp/hwtimer-git
  if command -v git >/dev/null; then
    check "CMake FetchContent: a git repository (branch main) of this checkout's files" \
      sh -ec 'mkdir "$1" && cp hwtimer.h CMakeLists.txt meson.build meson_options.txt "$1" &&
              cd "$1" && git init -q -b main && git add . &&
              git -c user.name=adopt -c user.email=adopt@invalid commit -qm hwtimer' - "$git"
    folder FetchContent "$tmp/app/app.c"
    cp "$adopt/FetchContent.cmake" "$tmp/FetchContent/CMakeLists.txt"
    check "CMake FetchContent: builds, -DHWTIMER_GIT=file://..." \
      cmake_builds "$tmp/FetchContent" -DHWTIMER_GIT="file://$git"
    check "CMake FetchContent: the program runs" "$tmp/FetchContent/build/app"
  else
    check "CMake FetchContent: git is installed (Debian: git)" false
  fi
else
  check "CMake: cmake is installed (Debian: cmake)" false
fi

# ---- Makefile -----------------------------------------------------------------------------

folder make hwtimer.h "$adopt/Makefile" "$tmp/app/app.c"
check "Makefile: make" make -C "$tmp/make"
check "Makefile: the program runs" "$tmp/make/app"

# ---- the event-loop recipes -----------------------------------------------------------------

# recipe_builds RECIPE: a folder with the recipe and, in include/, hwtimer.h; there the
# command after "Build:" in its top comment (the README's `cc -I<dir of hwtimer.h> loop_X.c
# [-l<library>] -pthread`), with include for <dir of hwtimer.h>, must build a.out.
recipe_builds() {
  local name line
  name=$(basename "$1" .c)
  line=$(sed -n 's/^ *Build: *\(cc -I<dir of hwtimer\.h> [^(]*-pthread\).*/\1/p' "$1")
  [ -n "$line" ] || { echo "$1: no line 'Build: cc -I<dir of hwtimer.h> ... -pthread'"; return 1; }
  line=${line//<dir of hwtimer.h>/include}
  folder "recipe-$name" "$1" && mkdir -p "$tmp/recipe-$name/include" &&
    cp hwtimer.h "$tmp/recipe-$name/include/" || return 1
  echo "\$ $line"
  # shellcheck disable=SC2086 # the command's words
  inside "$tmp/recipe-$name" $line
}

# recipe_runs RECIPE: its a.out exits 0, or 77 where it cannot run here (it says why).
recipe_runs() {
  local rc
  inside "$tmp/recipe-$(basename "$1" .c)" timeout 30 ./a.out
  rc=$?
  [ "$rc" -eq 0 ] || [ "$rc" -eq 77 ]
}

for recipe in test/examples/loop_*.c; do
  check "recipe $(basename "$recipe"): the command at its top builds it" recipe_builds "$recipe"
  check "recipe $(basename "$recipe"): it runs and checks what it saw" recipe_runs "$recipe"
done

# ---- the README quotes every snippet ------------------------------------------------------

# quoted FILE: README.md has a fenced code block holding FILE's lines, in a row, verbatim.
quoted() {
  python3 - "$1" README.md <<'PY'
import sys
snippet = open(sys.argv[1]).read().rstrip("\n").split("\n")
blocks, block = [], None
for line in open(sys.argv[2]).read().split("\n"):
    if line.lstrip().startswith("```"):
        if block is None:
            block = []
        else:
            blocks.append(block)
            block = None
    elif block is not None:
        block.append(line)
n = len(snippet)
if not any(b[i:i + n] == snippet for b in blocks for i in range(len(b) - n + 1)):
    sys.exit(f"README.md has no fenced code block that holds {sys.argv[1]} verbatim")
PY
}

for f in quickstart.c cc.sh meson.build install.sh pkg-config.sh find_package.cmake \
         CMakeLists.txt FetchContent.cmake Makefile; do
  check "README.md quotes test/adopt/$f" quoted "test/adopt/$f"
done
for recipe in test/examples/loop_*.c; do
  check "README.md links $recipe" grep -qF "]($recipe)" README.md
done

if [ "$failed" -eq 0 ]; then echo "adopt: all checks passed"; else echo "adopt: $failed FAILED"; fi
[ "$failed" -eq 0 ]
