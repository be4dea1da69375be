/**
 * The JDK's one-time start-up of virtual threads (its event classes' static initializers, the
 * first timed park), done on a first virtual thread that is joined before a fixture starts its own.
 * Where two of the fixture's threads would race through it, a second one contends for a monitor
 * inside it: a MONITOR_ENTER pin on 21 that is the JDK's, not the fixture's.
 */
final class WarmUp {
    private WarmUp() {}

    /**
     * With -Dwarmup.carriers=N: N virtual threads compute at once, so that the scheduler has N
     * carriers; then "FIXTURE: carriers ready" and a line on stdin before the fixture goes on. A
     * test waits there until an observer tracks every carrier (the collector's kernel view, which
     * misses a sleep that began on a carrier before it tracked it: a new carrier's first block).
     */
    static void carriersThenGate(String fixture) throws Exception {
        int n = Integer.getInteger("warmup.carriers", 0);
        if (n == 0)
            return;
        java.util.concurrent.atomic.AtomicInteger running = new java.util.concurrent.atomic.AtomicInteger();
        Thread[] threads = new Thread[n];
        for (int i = 0; i < n; i++) {
            threads[i] = Thread.ofVirtual().start(() -> {
                running.incrementAndGet();
                while (running.get() < n) // each holds its carrier until all n run
                    Thread.onSpinWait();
            });
        }
        for (Thread t : threads)
            t.join();
        System.out.println(fixture + ": carriers ready");
        System.out.flush();
        new java.io.BufferedReader(new java.io.InputStreamReader(System.in)).readLine();
    }

    static void virtualThreads() throws InterruptedException {
        Thread warm = Thread.ofVirtual().start(() -> {
            try {
                Thread.sleep(1); // unpinned: no lock held, no native frame
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
        });
        warm.join();
    }
}
