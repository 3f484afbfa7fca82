# programs.sh - sourced by the matrix and Wine scripts (from the top of the tree): what they
# both ask of a test program's source. test/meson.build asks the same of it in its own
# language (own_impl).

# own_implementation SOURCE: the test calls the implementation's private hwtimer__
# functions (itself or through model.h), so it compiles the implementation itself rather
# than link the one compiled once per mode (test/programs/impl.c).
own_implementation() {
  grep -qE 'hwtimer__|#include "model.h"' "$1"
}
