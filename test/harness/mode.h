/* mode.h - what the harness mode (HWTIMER_TEST_MODE, see harness.h) asks of hwtimer.h's
   options. Included before hwtimer.h by harness.h and by impl.c, so that a test program
   and the implementation it links were compiled with the same options. */
#ifndef HWTIMER_TEST_MODE_H
#define HWTIMER_TEST_MODE_H

#ifndef HWTIMER_TEST_MODE
#define HWTIMER_TEST_MODE 1
#endif
#if HWTIMER_TEST_MODE == 0 && !defined(HWTIMER_NO_THREADS)
#define HWTIMER_NO_THREADS
#endif
#if HWTIMER_TEST_MODE == 3 && !defined(HWTIMER_C11_THREADS)
#define HWTIMER_C11_THREADS
#endif

/* A program that links the implementation built apart (HWTIMER_TEST_NO_IMPLEMENTATION) asks
   for the POSIX declarations itself, as hwtimer.h does where the implementation is compiled
   in: the harness uses clock_gettime and nanosleep, which strict -std=c99 hides. */
#if defined(HWTIMER_TEST_NO_IMPLEMENTATION) && !defined(_WIN32) && !defined(__APPLE__) && \
    !defined(_POSIX_C_SOURCE) && !defined(_XOPEN_SOURCE) && !defined(_GNU_SOURCE) &&    \
    !defined(_DEFAULT_SOURCE) && !defined(_BSD_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif

#endif
