#!/usr/bin/env bash
# hwtimer as a meson subproject, and the README's install-only command. In a temporary
# directory, a parent project (test/subproject/parent) gets this checkout as
# subprojects/hwtimer (a symlink), then:
#   1. builds with dependency('hwtimer') alone: hwtimer adds no target of its own, and the
#      parent's program gets -pthread from the dependency and runs a timeout in worker mode;
#   2. `meson install` of the parent installs its program and nothing of hwtimer's;
#   3. with -Dhwtimer:install=true it installs hwtimer.h and hwtimer.pc, whose Libs (not
#      Cflags: once is enough) carry -pthread; a program built from that .pc alone runs in
#      worker mode;
#   4. hwtimer's own install-only setup (-Dtests=false -Dbench=false) has no build target
#      and installs exactly hwtimer.h, hwtimer.pc and, where cmake is installed, the CMake
#      package (hwtimerConfig.cmake, hwtimerConfigVersion.cmake in <libdir>/cmake/hwtimer);
#   5. the same parent with a copy of only hwtimer.h, meson.build and meson_options.txt in
#      subprojects/hwtimer (what a user vendors: no test/, no bench/) configures, builds
#      and runs.
# Prints one line per check and exits nonzero on any failure. About 5 s.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit
root=$PWD
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0

. test/tools/check.sh # check DESCRIPTION COMMAND...

# same_lines EXPECTED ACTUAL: fails, showing both, unless the two texts are equal.
same_lines() {
  [ "$1" = "$2" ] && return 0
  printf 'expected:\n%s\nactual:\n%s\n' "$1" "$2"
  return 1
}

# build_targets BUILDDIR: the names of the build's targets, one a line, sorted.
build_targets() {
  meson introspect --targets "$1" |
    python3 -c 'import json, sys; print("\n".join(sorted(t["name"] for t in json.load(sys.stdin))))'
}

# installed DESTDIR: the files under DESTDIR, relative to it, sorted.
installed() {
  (cd "$1" && find . -type f | sed 's|^\./||' | sort)
}

# libdir BUILDDIR: the build's libdir option, relative to the prefix (where the .pc goes).
libdir() {
  meson introspect --buildoptions "$1" |
    python3 -c 'import json, sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "libdir"))'
}

# links_with_pthread BUILDDIR TARGET: the target's link command has -pthread.
links_with_pthread() {
  local link
  link=$(ninja -C "$1" -t commands "$2" | tail -1)
  grep -q -- '-pthread' <<<"$link" || { echo "$link"; return 1; }
}

# pc_pthread_in_libs PCFILE: Libs carries -pthread, Cflags does not.
pc_pthread_in_libs() {
  if grep -qE '^Cflags:.*-pthread' "$1" || ! grep -qE '^Libs:.*-pthread' "$1"; then
    cat "$1"
    return 1
  fi
}

# built_from_pc PCFILE PREFIX: main.c compiled with the flags of the .pc (installed under
# the destdir PREFIX) and nothing else, then run.
built_from_pc() {
  local flags
  flags=$(PKG_CONFIG_PATH=$(dirname "$1") pkg-config --define-variable=prefix="$2" \
            --cflags --libs hwtimer) || return 1
  echo "pkg-config: $flags"
  # shellcheck disable=SC2086 # flags are words
  cc -std=c99 -Wall -Wextra -Wpedantic -Werror test/subproject/parent/main.c $flags \
    -o "$tmp/from_pc" && "$tmp/from_pc"
}

prefix=/usr/local
parent=$tmp/parent
mkdir -p "$parent/subprojects"
cp test/subproject/parent/meson.build test/subproject/parent/main.c "$parent"
ln -s "$root" "$parent/subprojects/hwtimer"

# 1. a parent that only asks for the dependency
check "parent: meson setup, hwtimer as a subproject" \
  meson setup "$parent/build" "$parent" --prefix "$prefix" --force-fallback-for=hwtimer
check "parent: no target of hwtimer's (no tests, no benchmarks)" \
  same_lines parent "$(build_targets "$parent/build")"
check "parent: builds" ninja -C "$parent/build"
check "parent: dependency('hwtimer') links with -pthread" \
  links_with_pthread "$parent/build" parent
check "parent: the timeout fires on hwtimer's worker" "$parent/build/parent"

# 2. its install: the parent's program, nothing of hwtimer's
check "parent: meson install" meson install -C "$parent/build" --destdir "$tmp/dest-default"
check "parent: installs nothing of hwtimer's unless asked" \
  same_lines "${prefix#/}/bin/parent" "$(installed "$tmp/dest-default")"

# 3. the parent asks for hwtimer's install
check "parent: -Dhwtimer:install=true" meson configure "$parent/build" -Dhwtimer:install=true
check "parent: meson install, hwtimer's install asked for" \
  meson install -C "$parent/build" --destdir "$tmp/dest-asked"
asked=$(installed "$tmp/dest-asked")
check "parent: hwtimer.h installed" grep -qx "${prefix#/}/include/hwtimer.h" <<<"$asked"
pc=${prefix#/}/$(libdir "$parent/build")/pkgconfig/hwtimer.pc
check "parent: hwtimer.pc installed" grep -qx "$pc" <<<"$asked"
check "hwtimer.pc: Libs carries -pthread, Cflags does not" pc_pthread_in_libs "$tmp/dest-asked/$pc"
check "hwtimer.pc: a worker-mode program built from it alone runs" \
  built_from_pc "$tmp/dest-asked/$pc" "$tmp/dest-asked$prefix"

# 4. the README's install-only command, on hwtimer itself
check "install-only: meson setup -Dtests=false -Dbench=false" \
  meson setup "$tmp/top" "$root" --prefix "$prefix" -Dtests=false -Dbench=false
check "install-only: no build target" same_lines "" "$(build_targets "$tmp/top")"
check "install-only: meson install" meson install -C "$tmp/top" --destdir "$tmp/dest-top"
top_files=("${prefix#/}/include/hwtimer.h" "$pc")
if command -v cmake >/dev/null; then
  top_files+=("${pc%/pkgconfig/hwtimer.pc}/cmake/hwtimer/hwtimerConfig.cmake"
              "${pc%/pkgconfig/hwtimer.pc}/cmake/hwtimer/hwtimerConfigVersion.cmake")
fi
check "install-only: installs exactly hwtimer.h, hwtimer.pc and the CMake package" \
  same_lines "$(printf '%s\n' "${top_files[@]}" | sort)" "$(installed "$tmp/dest-top")"

# 5. the vendored copy: the three files, nothing else
vendored=$tmp/vendored
mkdir -p "$vendored/subprojects/hwtimer"
cp test/subproject/parent/meson.build test/subproject/parent/main.c "$vendored"
cp hwtimer.h meson.build meson_options.txt "$vendored/subprojects/hwtimer"
check "vendored copy (hwtimer.h, meson.build, meson_options.txt): meson setup" \
  meson setup "$vendored/build" "$vendored"
check "vendored copy: builds" ninja -C "$vendored/build"
check "vendored copy: the timeout fires on hwtimer's worker" "$vendored/build/parent"

if [ "$failed" -eq 0 ]; then echo "subproject: all checks passed"; else echo "subproject: $failed FAILED"; fi
[ "$failed" -eq 0 ]
