import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * K virtual threads each call a native method which calls back (JNI) into
 * sleepCallback, which sleeps. A native frame on the stack pins on every JDK
 * (reason NATIVE, "Native or VM frame on stack" in JFR on 24+).
 *
 * usage: JniSleep [threads=4] [sleepMs=200] [until-eof]
 * until-eof: round after round of those pins until standard input ends (a test
 * that must keep the JVM pinning across an outage of its own length).
 * needs -Djava.library.path=<dir containing libvtpinfixture.so>
 */
public class JniSleep {

    static {
        System.loadLibrary("vtpinfixture");
    }

    /** Implemented in native/vtpin_fixture_jni.c: calls sleepCallback(ms) through JNI. */
    static native void sleepInNative(long ms);

    /** Called from C. */
    static void sleepCallback(long ms) throws InterruptedException {
        Thread.sleep(ms);         // <== pinned: native frame sleepInNative below
    }

    public static void main(String[] args) throws Exception {
        ClockMark.markIfAsked(); // a test comparing JFR's times asks (ClockMark)
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 4;
        long sleepMs = args.length > 1 ? Long.parseLong(args[1]) : 200;
        System.out.println("java.version = " + System.getProperty("java.version"));
        System.out.println("JniSleep: threads=" + threads + " sleepMs=" + sleepMs);

        // main (a platform thread: no pin) links the native method and its callback first, so the
        // virtual threads' pins are the sleeps, not the JDK's one-time linkage racing between them
        sleepInNative(0);
        WarmUp.virtualThreads(); // and the JDK's first timed park of a virtual thread (its timer classes)

        boolean untilEof = args.length > 2 && args[2].equals("until-eof");
        AtomicBoolean inputEnded = new AtomicBoolean(!untilEof);
        if (untilEof) {
            Thread.ofPlatform().daemon().name("stdin-reader").start(() -> {
                try {
                    while (System.in.read() >= 0) { }
                } catch (IOException e) {
                    // an unreadable input ends the rounds as its end would
                }
                inputEnded.set(true);
            });
        }
        long start = System.nanoTime();
        int rounds = 0;
        do {
            List<Thread> vts = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                vts.add(Thread.ofVirtual().name("jnisleep-" + t).start(() -> sleepInNative(sleepMs)));
            }
            for (Thread vt : vts) vt.join();
            rounds++;
        } while (!inputEnded.get());
        long ms = (System.nanoTime() - start) / 1_000_000L;
        System.out.println("fixture JniSleep done in " + ms + " ms, " + rounds + " round(s)");
    }
}
