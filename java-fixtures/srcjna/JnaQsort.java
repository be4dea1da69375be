import com.sun.jna.Callback;
import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import java.util.ArrayList;
import java.util.List;

/**
 * K virtual threads each sort a small int array with libc's qsort through a
 * JNA interface call; the comparator, a JNA Callback, sleeps. JNA's JNI
 * method (Native.invokeVoid) pins on every JDK (reason NATIVE). The culprit is
 * sortInC, which calls the interface; the comparator is the blocking operation.
 *
 * usage: JnaQsort [threads=4] [elements=3] [sleepMs=50] [--ready]   (jna.jar on the class path;
 * --ready: print "JnaQsort: ready pid=<pid>", wait for a line on stdin, then sort)
 */
public class JnaQsort {

    public interface Comparator extends Callback {
        int invoke(Pointer a, Pointer b);
    }

    public interface C extends Library {
        void qsort(int[] base, long count, long size, Comparator compare);
    }

    static final C LIBC = Native.load("c", C.class);
    static long sleepMs = 50;

    /** The callback: the blocking operation. */
    static int compare(Pointer a, Pointer b) {
        try {
            Thread.sleep(sleepMs);          // <== blocks while qsort's frame is on the stack
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return Integer.compare(a.getInt(0), b.getInt(0));
    }

    static final Comparator COMPARATOR = JnaQsort::compare;

    /** The culprit: the user frame that calls the JNA interface method. */
    static void sortInC(int[] values) {
        LIBC.qsort(values, values.length, Integer.BYTES, COMPARATOR);
    }

    public static void main(String[] args) throws Exception {
        List<String> rest = new ArrayList<>(List.of(args));
        boolean ready = rest.remove("--ready");
        int threads = rest.size() > 0 ? Integer.parseInt(rest.get(0)) : 4;
        int elements = rest.size() > 1 ? Integer.parseInt(rest.get(1)) : 3;
        sleepMs = rest.size() > 2 ? Long.parseLong(rest.get(2)) : 50;
        System.out.println("java.version = " + System.getProperty("java.version"));
        System.out.println("JnaQsort: threads=" + threads + " elements=" + elements + " sleepMs=" + sleepMs);
        sortInC(new int[] {2, 1}); // loads and links JNA's dispatch and callback before the virtual threads run
        // and the JDK's first timed park of a virtual thread (its timer classes), unpinned, as WarmUp.java
        // does for the other fixtures: else the first sleepers wait for its class initialization (VM_BLOCK)
        Thread warm = Thread.ofVirtual().start(() -> {
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        warm.join();
        if (ready) {
            System.out.println("JnaQsort: ready pid=" + ProcessHandle.current().pid());
            System.out.flush();
            System.in.read();
        }
        long start = System.nanoTime();
        List<Thread> vts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int[] values = new int[elements];
            for (int i = 0; i < elements; i++) values[i] = elements - i;
            vts.add(Thread.ofVirtual().name("jnaqsort-" + t).start(() -> {
                sortInC(values);
                for (int i = 1; i < values.length; i++)
                    if (values[i - 1] > values[i]) throw new AssertionError("not sorted");
            }));
        }
        for (Thread vt : vts) vt.join();
        long ms = (System.nanoTime() - start) / 1_000_000L;
        System.out.println("fixture JnaQsort done in " + ms + " ms");
    }
}
