import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.ArrayList;
import java.util.List;

/**
 * K virtual threads each sort a small int array with libc's qsort through an
 * FFM downcall; the Java comparator (an FFM upcall) sleeps. The downcall's
 * native frame pins on every JDK (reason NATIVE; JFR: "Native or VM frame on
 * stack"). Each sort of N elements calls the comparator at least N-1 times.
 *
 * usage: FfmQsort [threads=4] [elements=2] [sleepMs=5] [--ready]
 * (JDK 22+, --enable-native-access=ALL-UNNAMED; main sorts once first, unpinned;
 * --ready: print "FfmQsort: ready pid=<pid>", wait for a line on stdin, then sort)
 */
public class FfmQsort {

    static final Linker LINKER = Linker.nativeLinker();
    static final MethodHandle QSORT = LINKER.downcallHandle(
        LINKER.defaultLookup().find("qsort").orElseThrow(),
        FunctionDescriptor.ofVoid(ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG,
                                  ValueLayout.ADDRESS));
    static final FunctionDescriptor COMPARE_DESC = FunctionDescriptor.of(ValueLayout.JAVA_INT,
        ValueLayout.ADDRESS.withTargetLayout(ValueLayout.JAVA_INT),
        ValueLayout.ADDRESS.withTargetLayout(ValueLayout.JAVA_INT));
    static long sleepMs = 5;

    /** The upcall: the blocking operation. */
    static int compare(MemorySegment a, MemorySegment b) {
        try {
            Thread.sleep(sleepMs);          // <== blocks while qsort's frame is on the stack
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return Integer.compare(a.get(ValueLayout.JAVA_INT, 0), b.get(ValueLayout.JAVA_INT, 0));
    }

    /** The culprit: the user frame that invokes the downcall handle. */
    static void sortInC(int[] values) throws Throwable {
        try (Arena arena = Arena.ofConfined()) {
            MethodHandle cmp = MethodHandles.lookup().findStatic(FfmQsort.class, "compare",
                MethodType.methodType(int.class, MemorySegment.class, MemorySegment.class));
            MemorySegment comparator = LINKER.upcallStub(cmp, COMPARE_DESC, arena);
            MemorySegment array = arena.allocateFrom(ValueLayout.JAVA_INT, values);
            QSORT.invokeExact(array, (long) values.length, ValueLayout.JAVA_INT.byteSize(), comparator);
            MemorySegment.copy(array, ValueLayout.JAVA_INT, 0, values, 0, values.length);
        }
    }

    public static void main(String[] args) throws Throwable {
        ClockMark.markIfAsked(); // a test comparing JFR's times asks (ClockMark)
        List<String> rest = new ArrayList<>(List.of(args));
        boolean ready = rest.remove("--ready");
        int threads = rest.size() > 0 ? Integer.parseInt(rest.get(0)) : 4;
        int elements = rest.size() > 1 ? Integer.parseInt(rest.get(1)) : 2;
        sleepMs = rest.size() > 2 ? Long.parseLong(rest.get(2)) : 5;
        System.out.println("java.version = " + System.getProperty("java.version"));
        System.out.println("FfmQsort: threads=" + threads + " elements=" + elements + " sleepMs=" + sleepMs);
        // One sort on main (a platform thread: no pin) links the downcall and the upcall first, so
        // the virtual threads' pins are the comparator's, not the JDK's one-time linkage racing
        // between them (contended entries, class initialization waits)
        long sleep = sleepMs;
        sleepMs = 0;
        sortInC(new int[] {2, 1});
        sleepMs = sleep;
        if (ready) {
            System.out.println("FfmQsort: ready pid=" + ProcessHandle.current().pid());
            System.out.flush();
            System.in.read();
        }
        long start = System.nanoTime();
        List<Thread> vts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int[] values = new int[elements];
            for (int i = 0; i < elements; i++) values[i] = elements - i;
            vts.add(Thread.ofVirtual().name("ffmqsort-" + t).start(() -> {
                try {
                    sortInC(values);
                } catch (Throwable e) {
                    throw new RuntimeException(e);
                }
                for (int i = 1; i < values.length; i++)
                    if (values[i - 1] > values[i]) throw new AssertionError("not sorted");
            }));
        }
        for (Thread vt : vts) vt.join();
        long ms = (System.nanoTime() - start) / 1_000_000L;
        System.out.println("fixture FfmQsort done in " + ms + " ms");
    }
}
