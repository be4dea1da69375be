import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * N virtual threads block inside libc's usleep through an FFM downcall, never
 * returning to Java and never parking: no JVMTI or JFR pin event, only the
 * native-block watchdog sees it (NATIVE_BLOCK). glibc's usleep takes any
 * int microseconds (nanosleep underneath); it is called again after EINTR.
 *
 * usage: FfmSleep [threads=2] [ms=1500]   (JDK 22+, --enable-native-access=ALL-UNNAMED)
 */
public class FfmSleep {

    static final Linker LINKER = Linker.nativeLinker();
    static final MethodHandle USLEEP = LINKER.downcallHandle(
        LINKER.defaultLookup().find("usleep").orElseThrow(),
        FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));

    /** The culprit: the user frame that invokes the downcall handle. */
    static void sleepInC(long ms) throws Throwable {
        long deadline = System.nanoTime() + ms * 1_000_000L;
        for (long left = ms * 1000; left > 0; left = (deadline - System.nanoTime()) / 1000) {
            int rc = (int) USLEEP.invokeExact((int) Math.min(left, Integer.MAX_VALUE));
            if (rc == 0) break;
        }
    }

    public static void main(String[] args) throws Exception {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 2;
        long blockMs = args.length > 1 ? Long.parseLong(args[1]) : 1500;
        System.out.println("java.version = " + System.getProperty("java.version"));
        System.out.println("FfmSleep: threads=" + threads + " ms=" + blockMs);
        long start = System.nanoTime();
        CountDownLatch running = new CountDownLatch(threads);
        List<Thread> vts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            vts.add(Thread.ofVirtual().name("ffmsleep-" + t).start(() -> {
                running.countDown();
                try {
                    sleepInC(blockMs);
                } catch (Throwable e) {
                    throw new RuntimeException(e);
                }
            }));
        }
        running.await();
        System.out.println("FfmSleep: started");
        for (Thread vt : vts) vt.join();
        long ms = (System.nanoTime() - start) / 1_000_000L;
        System.out.println("fixture FfmSleep done in " + ms + " ms");
    }
}
