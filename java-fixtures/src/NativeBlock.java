import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * Virtual threads that block inside C without ever returning to Java
 * (nanosleep, or read() on a pipe a C pthread writes to after ms). No JVMTI event and no
 * JFR event fire for this; the carrier is simply gone for the duration.
 * After "NativeBlock: started" a probe virtual thread is started; with parallelism equal
 * to the number of blocked threads it only gets a carrier when they return.
 *
 * usage: NativeBlock [nanosleep|read|burn|sleeps] [threads=2] [ms=1500] [goFile]
 * (burn: CPU-bound C code, which is not a block; sleeps: one call that sleeps 100 ms at a time
 * with 15 ms of CPU between, one block)
 * goFile (when given): first the carriers are started (threads virtual threads that
 * spin), "NativeBlock: ready" is printed, and the blocks begin once goFile exists, so a
 * test can wait until the collector tracks the carriers.
 * needs -Djava.library.path=<dir containing libvtpinfixture.so>
 */
public class NativeBlock {

    static {
        System.loadLibrary("vtpinfixture");
    }

    /** nanosleep(ms) in C, EINTR-safe. */
    static native void blockInNanosleep(long ms);

    /** read() of one byte from a pipe; a C pthread writes it after ms. */
    static native void blockInRead(long ms);

    /** Burns CPU in C for ms without sleeping: holds the carrier like CPU-bound Java, never a block. */
    static native void burnCpu(long ms);

    /** For ms, sleeps of 100 ms in C with 15 ms of CPU between them, in this one call. */
    static native void blockInSleeps(long ms);

    /** Spins in Java for about ms (a carrier busy, then free). */
    static long spin(long ms) {
        long end = System.nanoTime() + ms * 1_000_000L, x = 0;
        while (System.nanoTime() < end) x++;
        return x;
    }

    static void block(String mode, long ms) {
        if (mode.equals("read")) blockInRead(ms);
        else if (mode.equals("burn")) burnCpu(ms);
        else if (mode.equals("sleeps")) blockInSleeps(ms);
        else blockInNanosleep(ms);
    }

    public static void main(String[] args) throws Exception {
        String mode = args.length > 0 ? args[0] : "nanosleep";
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        long blockMs = args.length > 2 ? Long.parseLong(args[2]) : 1500;
        if (!mode.equals("nanosleep") && !mode.equals("read") && !mode.equals("burn") && !mode.equals("sleeps")) {
            System.err.println("usage: NativeBlock [nanosleep|read|burn|sleeps] [threads] [ms]");
            System.exit(2);
        }
        System.out.println("java.version = " + System.getProperty("java.version"));
        System.out.println("NativeBlock: mode=" + mode + " threads=" + threads + " ms=" + blockMs);
        // main (a platform thread: no pin) links the native method first, so the JDK's one-time
        // linkage does not race between the virtual threads
        block(mode, 0);
        // and a first virtual thread: two of the fixture's racing through the JDK's event classes'
        // initialization made a 187 ms VM_BLOCK of the JDK's own (25, ASan, a loaded clean-clone run)
        WarmUp.virtualThreads();
        Path go = args.length > 3 ? Path.of(args[3]) : null;
        if (go != null) {
            List<Thread> warm = new ArrayList<>();
            for (int t = 0; t < threads; t++) warm.add(Thread.ofVirtual().start(() -> spin(20)));
            for (Thread vt : warm) vt.join();
            System.out.println("NativeBlock: ready");
            System.out.flush();
            while (!Files.exists(go)) Thread.sleep(20);
        }

        long start = System.nanoTime();
        CountDownLatch running = new CountDownLatch(threads);
        List<Thread> vts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            vts.add(Thread.ofVirtual().name("nativeblock-" + t).start(() -> {
                running.countDown();
                block(mode, blockMs);
            }));
        }
        running.await();          // main is a platform thread: not starved
        System.out.println("NativeBlock: started");
        System.out.flush();

        long probeStart = System.nanoTime();
        long[] probeMs = new long[1];
        Thread probe = Thread.ofVirtual().name("nativeblock-probe")
            .start(() -> probeMs[0] = (System.nanoTime() - probeStart) / 1_000_000L);

        for (Thread vt : vts) vt.join();
        probe.join();
        long ms = (System.nanoTime() - start) / 1_000_000L;
        System.out.println("NativeBlock: probe vthread ran after " + probeMs[0] + " ms");
        System.out.println("fixture NativeBlock done in " + ms + " ms");
    }
}
