/* forking.h - what the tests that fork() share (POSIX only; include after harness.h and
   harness_threads.h): forking, ending a child, reading its status. A child reports through
   its exit status (0: every check passed), which the parent reads with waitpid, so no child
   is left behind. A child leaves with _exit, so that it neither runs the parent's exit
   handlers nor flushes the parent's buffered output again.

   Also TEST_WORKER_IN_CHILD: whether a worker may start in a child (hwtimer_fork_child in
   worker mode). AddressSanitizer does not intercept C11's thrd_create (GCC 12, clang 14): it
   never registers those threads, so it never clears the poison of a stack they reuse. A
   worker that hwtimer_fork_child starts in a child runs on the stack of the parent's worker
   (glibc hands the child the stacks of the threads it does not have), whose shadow still
   marks the scopes that had ended in the frames live at the fork: a false
   stack-use-after-scope in the new worker's first frames (seen with the pass's frames of
   hwtimer 0.3.0; the same program built without -fsanitize-address-use-after-scope, or in
   the pthread mode under ASan, passes). So the C11 mode under ASan starts no worker in a
   child; every other build does. */
#ifndef HWTIMER_TEST_FORKING_H
#define HWTIMER_TEST_FORKING_H

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define TEST_WORKER_IN_CHILD !(HWTIMER_TEST_MODE == 3 && TEST_ASAN)

static inline pid_t fork_or_die(void) {
    pid_t pid;
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid < 0) {
        fprintf(stderr, "fatal: fork failed\n");
        exit(1);
    }
    return pid;
}

#ifdef HWTIMER_TEST_COVERAGE
/* The coverage build (test/run.sh): libgcov writes a program's counts at exit, which _exit
   skips, so a child writes them first (what ran in children counts too). */
void __gcov_dump(void);
#endif

/* Ends a child: status 0 when no check failed since `checks_before`. */
static inline void child_exit(int checks_before) {
    fflush(stdout);
    fflush(stderr);
#ifdef HWTIMER_TEST_COVERAGE
    __gcov_dump();
#endif
    _exit(test__checks_failed == checks_before ? 0 : 1);
}

/* Reaps the child: its exit status, -1 if it did not exit by itself. */
static inline int reap_child(pid_t pid) {
    int status = 0;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Reaps the child and checks that it exited by itself with status 0. */
static inline void check_child(pid_t pid) {
    CHECK_EQ(reap_child(pid), 0);
}

#endif
