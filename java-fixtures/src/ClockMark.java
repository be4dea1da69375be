import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * Lets a test read this JVM's JFR times on the monotonic clock. JFR makes its Unix times from one
 * clock pair of its own (the wall clock when its recording began, plus monotonic ticks since), as
 * vtpin does from its Hello's pair: a wall-clock step between the two pairs (a virtual machine's
 * clock sync; seen in CI, 20 ms) makes them differ by the step. The mark is a JFR event carrying
 * System.nanoTime() read as it begins: its startTime less that is JFR's offset, exactly.
 *
 * A fixture calls markIfAsked() first in main. It marks only when the test asks
 * (-Dvtpin.clockmark=true, which the harness gives with JFR): otherwise no JFR class is loaded.
 */
public final class ClockMark {

    @Name("vtpin.ClockMark")
    @Label("vtpin clock mark")
    @StackTrace(false)
    static final class Mark extends Event {
        @Label("System.nanoTime() as the event began")
        long nanoTime;
    }

    private ClockMark() {
    }

    public static void markIfAsked() {
        if (!Boolean.getBoolean("vtpin.clockmark"))
            return;
        Mark m = new Mark();
        m.begin();
        m.nanoTime = System.nanoTime();
        m.commit();
    }
}
