/* lease_watchdog.c - keep a lock's lease alive while it is held (Redisson's watchdog).

   The problem: a distributed lock is granted with a lease (Redisson: 30 s), so that the
   lock of a client that died runs out by itself. A live client that holds the lock longer
   than the lease must renew it in time, and must stop renewing the moment it releases the
   lock, or a late renewal would extend a lease it no longer holds. Redisson's lock watchdog
   renews every lease / 3 on a HashedWheelTimer: two renewals can be missed before the
   lease runs out.

   How the timer is used: worker mode (cfg.worker = 1 and a thread backend in cfg.threads,
   here POSIX threads: see worker_timer() in harness_threads.h), so renewals run on the
   timer's thread while the application works.
   Acquiring a lock schedules a periodic renewal every LEASE / 3
   (hwtimer_schedule_periodic: fixed rate, no drift). Releasing it cancels the renewal
   before giving the lock back; cancel is synchronous, so when release returns no renewal
   is running or will ever run.

   The test: LOCKS locks are acquired together and released one by one after different hold
   times. Checked: every renewal and every release finds the lease not yet expired (it never
   ran out while held); each lock was renewed about held / (LEASE / 3) times, never more
   than the periods that passed; no renewal runs after release returned. */
#include "harness.h"
#include "harness_threads.h"
#include "example_util.h"

#define LEASE HWTIMER_MS(150)
#define RENEW_EVERY (LEASE / 3)
#define TICK HWTIMER_MS(1)
#define LOCKS 4
#define MAX_SKIPPED 2 /* periods a worker stalled by a busy machine may skip */

/* One lock: the lock server's view of it (expires_at) and the holder's watchdog. */
typedef struct lock {
    uint64_t expires_at; /* the lease: 0 when free */
    hwtimer_timeout watchdog;
    uint64_t acquired_at, released_at;
    unsigned renewals, renewals_at_release;
    unsigned found_expired; /* renewals or releases that came after the lease ran out */
    unsigned renewed_free;  /* renewals of a lock not held: must never happen */
} lock;

/* The lock server's side of a renewal or a release: was the lease still valid? */
static void check_lease(lock *l, uint64_t now) {
    if (l->expires_at == 0) l->renewed_free++;
    else if (now >= l->expires_at) l->found_expired++;
}

static void on_renew(hwtimer_timeout *to, void *arg) {
    lock *l = (lock *)arg;
    uint64_t now = now_ns();
    (void)to;
    check_lease(l, now);
    l->expires_at = now + LEASE;
    l->renewals++;
}

static void acquire(hwtimer *t, lock *l) {
    l->acquired_at = now_ns();
    l->expires_at = l->acquired_at + LEASE;
    CHECK_EQ(hwtimer_schedule_periodic(t, &l->watchdog, RENEW_EVERY, RENEW_EVERY, on_renew, l),
             HWTIMER_OK);
}

/* Stop the watchdog first: once cancel returns, no renewal can touch the lease. */
static void release(hwtimer *t, lock *l) {
    CHECK_EQ(hwtimer_cancel(t, &l->watchdog), 1);
    l->released_at = now_ns();
    l->renewals_at_release = l->renewals;
    check_lease(l, l->released_at);
    l->expires_at = 0;
}

static void check_renewals(const lock *l) {
    uint64_t held = l->released_at - l->acquired_at;
    unsigned periods = (unsigned)(held / RENEW_EVERY);
    printf("held %3llu ms: %2u renewals (%u periods of %llu ms)\n",
           (unsigned long long)(held / HWTIMER_MS(1)), l->renewals, periods,
           (unsigned long long)(RENEW_EVERY / HWTIMER_MS(1)));
    /* The first renewal is due one period after acquiring: at most one per period. The
       last may not have run yet, and a stalled worker may skip a few. */
    CHECK(l->renewals <= periods);
    CHECK(l->renewals + 1 + MAX_SKIPPED >= periods);
    CHECK_EQ(l->found_expired, 0);
    CHECK_EQ(l->renewed_free, 0);
    CHECK_EQ(l->renewals, l->renewals_at_release);
}

static void test_watchdog_keeps_lease_until_release(void) {
    static const uint64_t hold_for[LOCKS] = {HWTIMER_MS(300), HWTIMER_MS(500), HWTIMER_MS(700),
                                             HWTIMER_MS(1000)};
    hwtimer *t = worker_timer(TICK, 512);
    lock locks[LOCKS];
    uint64_t start;
    unsigned i;
    memset(locks, 0, sizeof locks);
    start = now_ns();
    for (i = 0; i < LOCKS; i++) acquire(t, &locks[i]);
    for (i = 0; i < LOCKS; i++) {
        sleep_until(start + hold_for[i]); /* the work done under the lock */
        release(t, &locks[i]);
    }
    sleep_ns(3 * RENEW_EVERY); /* time for any stray renewal to show up */
    for (i = 0; i < LOCKS; i++) check_renewals(&locks[i]);
    CHECK_EQ(hwtimer_pending(t), 0);
    hwtimer_destroy(t);
}

int main(void) {
    RUN_TIMED_TEST(test_watchdog_keeps_lease_until_release);
    return test_finish();
}
