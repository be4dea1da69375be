import java.util.ArrayList;
import java.util.List;

/**
 * Virtual threads pin in native code (JniSleep.sleepInNative) under a chain of
 * 20 distinct methods: a stack with more methods than the agent's smallest
 * method table (methods=16).
 *
 * usage: DeepPin [threads=4] [sleepMs=100]
 * prints, per thread, the monotonic clock (System.nanoTime(), which a stepped wall
 * clock does not move) just before its sleep began:
 * "deeppin-N sleep_from_mono_ns=T". The JDK's park ends at T + sleepMs or
 * later; it starts later than T by whatever the JDK did first (parkNanos takes
 * its deadline before scheduleUnpark, which can block), so the pin's end, not
 * its length, is what the sleep fixes.
 * needs -Djava.library.path=<dir containing libvtpinfixture.so>
 */
public class DeepPin {

    static void d0(long ms) { d1(ms); }
    static void d1(long ms) { d2(ms); }
    static void d2(long ms) { d3(ms); }
    static void d3(long ms) { d4(ms); }
    static void d4(long ms) { d5(ms); }
    static void d5(long ms) { d6(ms); }
    static void d6(long ms) { d7(ms); }
    static void d7(long ms) { d8(ms); }
    static void d8(long ms) { d9(ms); }
    static void d9(long ms) { d10(ms); }
    static void d10(long ms) { d11(ms); }
    static void d11(long ms) { d12(ms); }
    static void d12(long ms) { d13(ms); }
    static void d13(long ms) { d14(ms); }
    static void d14(long ms) { d15(ms); }
    static void d15(long ms) { d16(ms); }
    static void d16(long ms) { d17(ms); }
    static void d17(long ms) { d18(ms); }
    static void d18(long ms) { d19(ms); }
    static void d19(long ms) { d20(ms); }
    static void d20(long ms) { JniSleep.sleepInNative(ms); }

    public static void main(String[] args) throws Exception {
        ClockMark.markIfAsked(); // a test comparing JFR's times asks (ClockMark)
        WarmUp.virtualThreads(); // the JDK's one-time work first
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 4;
        long sleepMs = args.length > 1 ? Long.parseLong(args[1]) : 100;
        List<Thread> vts = new ArrayList<>();
        long[] from = new long[threads];
        // Done first on main (a platform thread: no pin), what comes before the park: JniSleep's loading and
        // linkage, Thread.sleep's own start-up (beforeSleep's event class). Four threads racing through
        // them contend there first (a NATIVE pin in beforeSleep of 0.03 ms before the sleep's own on 27,
        // 1 run in ~40). The virtual threads' timer start-up is left to them: the nested blocks inside
        // the park pin are what this fixture is for.
        JniSleep.sleepInNative(0);
        Thread.sleep(1);
        for (int t = 0; t < threads; t++) {
            final int i = t;
            vts.add(Thread.ofVirtual().name("deeppin-" + t).start(() -> {
                from[i] = System.nanoTime();
                d0(sleepMs);
            }));
        }
        for (Thread vt : vts) vt.join();
        for (int t = 0; t < threads; t++) {
            System.out.println("deeppin-" + t + " sleep_from_mono_ns=" + from[t]);
        }
        System.out.println("fixture DeepPin done");
    }
}
