/* impl.c - hwtimer's implementation for one harness mode (HWTIMER_TEST_MODE), compiled
   once per mode into a library that the mode's test programs link: meson builds those
   with HWTIMER_TEST_NO_IMPLEMENTATION, so harness.h gives them only the declarations.
   A program that calls the implementation's private hwtimer__ functions compiles it
   itself, as does any test program compiled alone (test/tools/matrix.sh,
   test/tools/wine.sh). */
#include "mode.h"

#define HWTIMER_IMPLEMENTATION
#include "../../hwtimer.h"
