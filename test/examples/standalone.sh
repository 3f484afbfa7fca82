#!/bin/sh
# standalone.sh - builds each event-loop recipe as a user who copied it would, and runs it.
#
#   sh standalone.sh CC HWTIMER_H RECIPE.c[:LIB] ...
#   e.g. sh test/examples/standalone.sh cc hwtimer.h test/examples/loop_poll.c \
#            test/examples/loop_libuv.c:uv
#
# For each recipe: a new empty folder with only hwtimer.h and the recipe in it, where
# `CC -I. loop_X.c [-lLIB] -Wall -Wextra -Werror` must build it and the program must exit 0.
# CC may be several words (e.g. "ccache gcc"). A recipe whose library does not link here,
# or that says it cannot run here (exit 77), is reported as skipped, never as passed.
# Exit status: 1 if any recipe failed, else 77 if any was skipped, else 0.
set -u
if [ $# -lt 3 ]; then
    echo "usage: sh standalone.sh CC HWTIMER_H RECIPE.c[:LIB] ..." >&2
    exit 2
fi
cc=$1
header=$2
shift 2
failed=0
skipped=0
for arg in "$@"; do
    src=${arg%%:*}
    lib=
    case $arg in *:*) lib=-l${arg#*:} ;; esac
    name=$(basename "$src" .c)
    dir=$(mktemp -d) || exit 1
    if [ -n "$lib" ] &&
        ! echo 'int main(void) { return 0; }' | $cc -x c - $lib -o "$dir/probe" 2>/dev/null; then
        echo "$name: skipped: $lib does not link here (its development package is missing)"
        skipped=1
    else
        cp "$header" "$src" "$dir/" &&
            (cd "$dir" && echo "$name: $cc -I. $name.c${lib:+ $lib} -Wall -Wextra -Werror" &&
                $cc -I. "$name.c" $lib -Wall -Wextra -Werror -o "$name" && "./$name")
        status=$?
        case $status in
        0) echo "$name: passed" ;;
        77) echo "$name: skipped (it said why above)"; skipped=1 ;;
        *) echo "$name: FAILED (exit status $status)"; failed=1 ;;
        esac
    fi
    rm -rf "$dir"
done
[ $failed -eq 0 ] || exit 1
[ $skipped -eq 0 ] || exit 77
exit 0
