// NettyBench.java - Netty's io.netty.util.HashedWheelTimer in the scenarios of
// hwtimer_bench (bench/main.c), with the same seeded delays (splitmix64).
//
// Run by hwtimer_bench, which reads the lines "R,<scenario>,<n>,<metric>,<value>,<unit>"
// and "N,<scenario>,<text>" from stdout. Every timer has a 1 ms tick and 512 buckets.
// Each scenario runs a JIT warm-up first; each timed loop is the best of 3 for N <= 10^5.
//
// What differs from the C peers, and why:
// - Netty's worker runs on the real clock, so nothing can fast-forward an hour: scenario 2
//   (expiry) is not run, scenario 4 is simulated in C, scenario 3 cannot expire its timers.
// - newTimeout and cancel only enqueue: the worker thread files new timeouts into buckets
//   and unlinks cancelled ones on its next tick, in the background, on another core. The
//   ns/op of scenarios 1 and 3 are the caller's cost; scenario 5 includes the worker.
// - Netty has no reschedule: scenario 3 does cancel + newTimeout, as its users do.
import io.netty.util.HashedWheelTimer;
import io.netty.util.Timeout;
import io.netty.util.TimerTask;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

public final class NettyBench {
    static final long SEED = 0x9e3779b97f4a7c15L; // BENCH_SEED
    static final long MS = 1_000_000L;
    static final int WINDOW = 1024; // PRODUCER_WINDOW
    static final int RESCHEDULES = 10;
    static final TimerTask NOOP = t -> { };

    // splitmix64, as bench_rand_next in util.c.
    static long state;

    static long next() {
        long z = (state += 0x9e3779b97f4a7c15L);
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    static int[] delays(int n, int loMs, int hiMs, long seed) {
        state = seed;
        int[] d = new int[n];
        long span = (long) hiMs - loMs + 1;
        for (int i = 0; i < n; i++) {
            d[i] = loMs + (int) Long.remainderUnsigned(next(), span);
        }
        return d;
    }

    // A random permutation of 0 .. n-1, as bench_permutation in util.c.
    static int[] permutation(int n, long seed) {
        state = seed;
        int[] order = new int[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        for (int i = n; i > 1; i--) {
            int j = (int) Long.remainderUnsigned(next(), i);
            int swap = order[i - 1];
            order[i - 1] = order[j];
            order[j] = swap;
        }
        return order;
    }

    static void result(int scenario, long n, String metric, double value, String unit) {
        System.out.println("R," + scenario + "," + n + "," + metric + "," + value + "," + unit);
    }

    static void note(int scenario, String text) {
        System.out.println("N," + scenario + "," + text);
    }

    static HashedWheelTimer newTimer(String threadName) {
        ThreadFactory f = r -> {
            Thread t = new Thread(r, threadName);
            t.setDaemon(true);
            return t;
        };
        HashedWheelTimer timer = new HashedWheelTimer(f, 1, TimeUnit.MILLISECONDS, 512);
        timer.start();
        return timer;
    }

    // Waits (at most 5 s) until the worker has unlinked every cancelled timeout, so one
    // run does not leave work for the next.
    static void drain(HashedWheelTimer timer) throws InterruptedException {
        long giveUp = System.nanoTime() + 5000 * MS;
        while (timer.pendingTimeouts() > 0 && System.nanoTime() < giveUp) {
            Thread.sleep(1);
        }
    }

    static int repeats(int n) {
        return n <= 100_000 ? 3 : 1;
    }

    // ---- scenario 1: schedule N, cancel all ----

    // Returns {schedule ns, cancel ns, cancel in the given order ns}: a second round of
    // newTimeout cancelled in that order.
    static long[] rpcOnce(HashedWheelTimer timer, int[] d, int[] order, int n, Timeout[] slots)
            throws Exception {
        System.gc();
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            slots[i] = timer.newTimeout(NOOP, d[i], TimeUnit.MILLISECONDS);
        }
        long t1 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            slots[i].cancel();
        }
        long t2 = System.nanoTime();
        drain(timer);
        for (int i = 0; i < n; i++) {
            slots[i] = timer.newTimeout(NOOP, d[i], TimeUnit.MILLISECONDS);
        }
        long t3 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            slots[order[i]].cancel();
        }
        long t4 = System.nanoTime();
        drain(timer);
        return new long[] {t1 - t0, t2 - t1, t4 - t3};
    }

    static void rpc(HashedWheelTimer timer, int[] d, int[] sizes, Timeout[] slots) throws Exception {
        int warm = Math.min(100_000, d.length);
        int[] warmOrder = permutation(warm, SEED + 1);
        for (int w = 0; w < 5; w++) {
            rpcOnce(timer, d, warmOrder, warm, slots);
        }
        for (int n : sizes) {
            int[] order = permutation(n, SEED + 1);
            long[] best = {Long.MAX_VALUE, Long.MAX_VALUE, Long.MAX_VALUE};
            for (int rep = 0; rep < repeats(n); rep++) {
                long[] t = rpcOnce(timer, d, order, n, slots);
                for (int k = 0; k < 3; k++) {
                    best[k] = Math.min(best[k], t[k]);
                }
            }
            result(1, n, "schedule", (double) best[0] / n, "ns/op");
            result(1, n, "cancel", (double) best[1] / n, "ns/op");
            result(1, n, "cancel in random order", (double) best[2] / n, "ns/op");
        }
        note(1, "newTimeout and cancel enqueue; the worker files and unlinks them on its next "
                + "tick on the other core (not in these ns/op)");
    }

    // ---- scenario 3: reschedule = cancel + newTimeout ----

    static long churnOnce(HashedWheelTimer timer, int[] d, int n, Timeout[] slots) throws Exception {
        System.gc();
        for (int i = 0; i < n; i++) {
            slots[i] = timer.newTimeout(NOOP, d[i], TimeUnit.MILLISECONDS);
        }
        long t0 = System.nanoTime();
        for (int k = 1; k <= RESCHEDULES; k++) {
            for (int i = 0; i < n; i++) {
                slots[i].cancel();
                slots[i] = timer.newTimeout(NOOP, d[i] + k * 1000L, TimeUnit.MILLISECONDS);
            }
        }
        long t1 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            slots[i].cancel();
        }
        drain(timer);
        return t1 - t0;
    }

    static void churn(HashedWheelTimer timer, int[] d, int[] sizes, Timeout[] slots) throws Exception {
        for (int w = 0; w < 3; w++) {
            churnOnce(timer, d, Math.min(100_000, d.length), slots);
        }
        for (int n : sizes) {
            long best = Long.MAX_VALUE;
            for (int rep = 0; rep < repeats(n); rep++) {
                best = Math.min(best, churnOnce(timer, d, n, slots));
            }
            result(3, n, "reschedule", (double) best / ((long) n * RESCHEDULES), "ns/op");
        }
        note(3, "no reschedule in Netty: cancel + newTimeout; timers cancelled at the end, "
                + "not expired (real clock)");
    }

    // ---- scenario 5: producer threads against the worker ----

    static double producers(HashedWheelTimer timer, int threads, long pairs, int[] d) throws Exception {
        long rounds = pairs / WINDOW;
        CyclicBarrier start = new CyclicBarrier(threads + 1);
        Thread[] ts = new Thread[threads];
        for (int k = 0; k < threads; k++) {
            int offset = k * WINDOW;
            ts[k] = new Thread(() -> {
                Timeout[] w = new Timeout[WINDOW];
                try {
                    start.await();
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
                for (long r = 0; r < rounds; r++) {
                    for (int i = 0; i < WINDOW; i++) {
                        w[i] = timer.newTimeout(NOOP, d[offset + i], TimeUnit.MILLISECONDS);
                    }
                    for (int i = 0; i < WINDOW; i++) {
                        w[i].cancel();
                    }
                }
            });
            ts[k].start();
        }
        start.await();
        long t0 = System.nanoTime();
        for (Thread t : ts) {
            t.join();
        }
        long t1 = System.nanoTime();
        drain(timer);
        return (double) threads * rounds * WINDOW / (t1 - t0) * 1e3;
    }

    static void producerScenario(long pairs) throws Exception {
        HashedWheelTimer timer = newTimer("nb-producers");
        int[] d = delays(2 * WINDOW, 1000, 61000, SEED + 5);
        for (int w = 0; w < 3; w++) {
            producers(timer, 1, Math.min(pairs, 500_000), d);
        }
        for (int threads = 1; threads <= 2; threads++) {
            System.gc();
            double mops = producers(timer, threads, pairs, d);
            result(5, 0, threads == 1 ? "1 producer thread" : "2 producer threads", mops, "M pairs/s");
        }
        timer.stop();
    }

    // ---- scenario 6: accuracy ----

    // Lateness of n timeouts with delays uniform in [1 ms, maxMs] (ns resolution), sorted;
    // null if some never ran.
    static long[] lateness(HashedWheelTimer timer, int n, int maxMs, long seed) throws Exception {
        long[] late = new long[n];
        long[] deadline = new long[n];
        CountDownLatch done = new CountDownLatch(n);
        long span = (maxMs - 1) * MS;
        state = seed;
        for (int i = 0; i < n; i++) {
            long delay = MS + Long.remainderUnsigned(next(), span);
            int idx = i;
            deadline[i] = System.nanoTime() + delay;
            timer.newTimeout(t -> {
                late[idx] = System.nanoTime() - deadline[idx];
                done.countDown();
            }, delay, TimeUnit.NANOSECONDS);
        }
        if (!done.await(maxMs + 5000L, TimeUnit.MILLISECONDS)) {
            return null;
        }
        Arrays.sort(late);
        return late;
    }

    static void accuracy(int n, int maxMs) throws Exception {
        HashedWheelTimer timer = newTimer("nb-accuracy");
        lateness(timer, 20_000, 50, SEED); // warm-up
        long[] late = lateness(timer, n, maxMs, SEED + 6);
        timer.stop();
        if (late == null) {
            note(6, "some timeouts never ran within the deadline + 5 s");
            return;
        }
        long early = Arrays.stream(late).filter(v -> v < 0).count();
        result(6, n, "lateness p50", late[n / 2] / 1e3, "µs");
        result(6, n, "lateness p99", late[(int) ((long) n * 99 / 100)] / 1e3, "µs");
        result(6, n, "lateness max", late[n - 1] / 1e3, "µs");
        result(6, n, "early firings", early, "count");
    }

    // ---- scenario 7: idle wake-ups, from /proc ----

    static long voluntarySwitches(String threadName) throws IOException {
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Paths.get("/proc/self/task"))) {
            for (Path task : tasks) {
                String comm = new String(Files.readAllBytes(task.resolve("comm"))).trim();
                if (!comm.equals(threadName)) {
                    continue;
                }
                for (String line : Files.readAllLines(task.resolve("status"))) {
                    if (line.startsWith("voluntary_ctxt_switches:")) {
                        return Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
                    }
                }
            }
        }
        return -1;
    }

    static void idle(long idleMs) throws Exception {
        HashedWheelTimer empty = newTimer("nb-idle-empty");
        HashedWheelTimer one = newTimer("nb-idle-one");
        one.newTimeout(NOOP, 1, TimeUnit.HOURS);
        Thread.sleep(100);
        long e0 = voluntarySwitches("nb-idle-empty"), o0 = voluntarySwitches("nb-idle-one");
        long t0 = System.nanoTime();
        Thread.sleep(idleMs);
        double secs = (System.nanoTime() - t0) / 1e9;
        long e1 = voluntarySwitches("nb-idle-empty"), o1 = voluntarySwitches("nb-idle-one");
        empty.stop();
        one.stop();
        if (e0 < 0 || o0 < 0) {
            note(7, "could not find the worker threads in /proc/self/task: computed 1000 "
                    + "wake-ups/s (one per 1 ms tick)");
            return;
        }
        result(7, 0, "nothing pending", (e1 - e0) / secs, "wake-ups/s");
        result(7, 0, "one timeout due in 1 h", (o1 - o0) / secs, "wake-ups/s");
    }

    // ---- scenario 8: memory per pending timeout ----

    static long usedAfterGc() throws InterruptedException {
        Runtime rt = Runtime.getRuntime();
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(50);
        }
        return rt.totalMemory() - rt.freeMemory();
    }

    static void memory(int n, int[] d) throws Exception {
        HashedWheelTimer timer = newTimer("nb-memory");
        long before = usedAfterGc();
        for (int i = 0; i < n; i++) {
            timer.newTimeout(NOOP, 3_600_000L + d[i], TimeUnit.MILLISECONDS);
        }
        Thread.sleep(200); // the worker files them into buckets (100000 per tick)
        long after = usedAfterGc();
        timer.stop();
        result(8, n, "per pending timeout", (double) (after - before) / n, "bytes");
        note(8, "Runtime heap delta after GC over " + n + " pending timeouts sharing one "
                + "TimerTask (a HashedWheelTimeout object: header + 5 references + 2 longs + "
                + "an int, 56 bytes with compressed oops)");
    }

    // ---- main ----

    public static void main(String[] args) throws Exception {
        int[] sizes = {1000, 10000, 100000, 1000000};
        long pairs = 2_000_000;
        int accuracyN = 100_000, accuracyMaxMs = 1000, memoryN = 1_000_000;
        long idleMs = 2000;
        for (int i = 0; i + 1 < args.length; i += 2) {
            String v = args[i + 1];
            switch (args[i]) {
                case "--sizes": sizes = Arrays.stream(v.split(",")).mapToInt(Integer::parseInt).toArray(); break;
                case "--pairs": pairs = Long.parseLong(v); break;
                case "--accuracy": accuracyN = Integer.parseInt(v); break;
                case "--accuracy-max-ms": accuracyMaxMs = Integer.parseInt(v); break;
                case "--idle-ms": idleMs = Long.parseLong(v); break;
                case "--memory": memoryN = Integer.parseInt(v); break;
                default: throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        int maxN = Math.max(Arrays.stream(sizes).max().orElse(1000), memoryN);
        int[] d = delays(maxN, 1000, 61000, SEED);
        Timeout[] slots = new Timeout[maxN];

        HashedWheelTimer timer = newTimer("nb-rpc");
        System.err.println("  Netty: scenario 1");
        rpc(timer, d, sizes, slots);
        System.err.println("  Netty: scenario 3");
        churn(timer, d, sizes, slots);
        timer.stop();
        Arrays.fill(slots, null);
        System.err.println("  Netty: scenario 5");
        producerScenario(pairs);
        System.err.println("  Netty: scenario 6");
        accuracy(accuracyN, accuracyMaxMs);
        System.err.println("  Netty: scenario 7");
        idle(idleMs);
        System.err.println("  Netty: scenario 8");
        memory(memoryN, d);
    }
}
