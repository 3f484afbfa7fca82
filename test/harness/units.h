/* units.h - time units in nanoseconds, for the tests: hwtimer.h's own once it has them. */
#ifndef HWTIMER_TEST_UNITS_H
#define HWTIMER_TEST_UNITS_H

#ifdef HWTIMER_US
#define US HWTIMER_US(1)
#define MS HWTIMER_MS(1)
#define SEC HWTIMER_SEC(1)
#else
#define US ((uint64_t)1000)
#define MS (1000 * US)
#define SEC (1000 * MS)
#endif
#define HOUR (3600 * SEC)
#define DAY (24 * HOUR)
#define YEAR (365 * DAY)

#endif
