import java.time.Instant;

/**
 * For latency benchmarks: count times, sequentially, one virtual thread records
 * System.nanoTime() and the wall-clock Instant, prints
 *   PinTimer start_nanotime=<n> start_epoch_nanos=<n> seq=<i>
 * then sleeps sleepMs pinned:
 *   default   inside synchronized (pins on JDK 21 only, reason MONITOR)
 *   --native  through JniSleep.sleepInNative (JNI callback; pins on 21 and 25, NATIVE)
 * System.nanoTime() is CLOCK_MONOTONIC on Linux.
 *
 * usage: PinTimer [--native] [count=20] [sleepMs=50]
 * --native needs -Djava.library.path=<dir containing libvtpinfixture.so>
 */
public class PinTimer {

    static final Object LOCK = new Object();

    static void pinMonitor(int seq, long sleepMs) throws InterruptedException {
        synchronized (LOCK) {
            stamp(seq);
            Thread.sleep(sleepMs);       // <== pinned on JDK 21
        }
    }

    static void pinNative(int seq, long sleepMs) {
        stamp(seq);
        JniSleep.sleepInNative(sleepMs); // <== pinned on every JDK
    }

    static void stamp(int seq) {
        long nano = System.nanoTime();
        Instant now = Instant.now();
        long epochNanos = now.getEpochSecond() * 1_000_000_000L + now.getNano();
        System.out.println("PinTimer start_nanotime=" + nano + " start_epoch_nanos=" + epochNanos
            + " seq=" + seq);
        System.out.flush();
    }

    public static void main(String[] args) throws Exception { WarmUp.virtualThreads(); // the JDK's one-time work first
        boolean nativeMode = false;
        int pos = 0;
        int count = 20;
        long sleepMs = 50;
        for (String a : args) {
            if (a.equals("--native")) { nativeMode = true; continue; }
            if (pos == 0) count = Integer.parseInt(a);
            else if (pos == 1) sleepMs = Long.parseLong(a);
            pos++;
        }
        System.out.println("java.version = " + System.getProperty("java.version"));
        System.out.println("PinTimer: mode=" + (nativeMode ? "native" : "monitor")
            + " count=" + count + " sleepMs=" + sleepMs);
        if (nativeMode) Class.forName("JniSleep"); // load the library before timing

        final boolean nat = nativeMode;
        final long ms0 = sleepMs;
        long start = System.nanoTime();
        for (int i = 0; i < count; i++) {
            final int seq = i;
            Thread vt = Thread.ofVirtual().name("pintimer-" + i).start(() -> {
                try {
                    if (nat) pinNative(seq, ms0);
                    else pinMonitor(seq, ms0);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            vt.join();
        }
        long ms = (System.nanoTime() - start) / 1_000_000L;
        System.out.println("fixture PinTimer done in " + ms + " ms");
    }
}
