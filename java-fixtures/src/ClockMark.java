import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * Lets a test read this JVM's JFR times on the monotonic clock. JFR makes its Unix times from one
 * clock pair of its own (the wall clock when its recording began, plus monotonic ticks since), as
 * vtpin does from its Hello's pair: a wall-clock step between the two pairs (a virtual machine's
 * clock sync; seen in CI, 20 ms) makes them differ by the step. A mark is a JFR event carrying
 * System.nanoTime() read just before and just after it begins: its startTime less their middle is
 * JFR's offset, to half their distance. The first marks run cold (the event's class is initialized,
 * its methods linked: tens of microseconds, which put a 1.7 us JFR event of a CI run beside vtpin's
 * pin, not on it): MARKS of them are committed and the harness takes the tightest.
 *
 * A fixture calls markIfAsked() first in main. It marks only when the test asks
 * (-Dvtpin.clockmark=true, which the harness gives with JFR): otherwise no JFR class is loaded.
 */
public final class ClockMark {

    static final int MARKS = 20;

    @Name("vtpin.ClockMark")
    @Label("vtpin clock mark")
    @StackTrace(false)
    static final class Mark extends Event {
        @Label("System.nanoTime() before the event began")
        long nanoBefore;
        @Label("System.nanoTime() after it began")
        long nanoAfter;
    }

    private ClockMark() {
    }

    public static void markIfAsked() {
        if (!Boolean.getBoolean("vtpin.clockmark"))
            return;
        for (int i = 0; i < MARKS; i++) {
            Mark m = new Mark();
            long before = System.nanoTime();
            m.begin();
            long after = System.nanoTime();
            m.nanoBefore = before;
            m.nanoAfter = after;
            m.commit();
        }
    }
}
