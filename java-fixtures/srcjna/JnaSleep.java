import com.sun.jna.Library;
import com.sun.jna.Native;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * N virtual threads block inside libc's usleep through a JNA interface call,
 * never returning to Java and never parking: no JVMTI or JFR pin event, only
 * the native-block watchdog sees it (NATIVE_BLOCK). JNA's Native.invokeInt is
 * the JNI method on top; the culprit is sleepInC, which calls the interface.
 *
 * usage: JnaSleep [threads=2] [ms=300]   (jna.jar on the class path)
 */
public class JnaSleep {

    /** JNA's default mapping: the interface method's name is the C function's. */
    public interface C extends Library {
        int usleep(int us);
    }

    static final C LIBC = Native.load("c", C.class);

    /** The culprit: the user frame that calls the JNA interface method. */
    static void sleepInC(long ms) {
        long deadline = System.nanoTime() + ms * 1_000_000L;
        for (long left = ms * 1000; left > 0; left = (deadline - System.nanoTime()) / 1000) {
            int rc = LIBC.usleep((int) Math.min(left, Integer.MAX_VALUE));
            if (rc == 0) break;
        }
    }

    public static void main(String[] args) throws Exception {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 2;
        long blockMs = args.length > 1 ? Long.parseLong(args[1]) : 300;
        System.out.println("java.version = " + System.getProperty("java.version"));
        System.out.println("JnaSleep: threads=" + threads + " ms=" + blockMs);
        LIBC.usleep(1); // loads and links JNA's dispatch before the virtual threads run
        long start = System.nanoTime();
        CountDownLatch running = new CountDownLatch(threads);
        List<Thread> vts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            vts.add(Thread.ofVirtual().name("jnasleep-" + t).start(() -> {
                running.countDown();
                sleepInC(blockMs);
            }));
        }
        running.await();
        System.out.println("JnaSleep: started");
        for (Thread vt : vts) vt.join();
        long ms = (System.nanoTime() - start) / 1_000_000L;
        System.out.println("fixture JnaSleep done in " + ms + " ms");
    }
}
