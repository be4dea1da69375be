import com.acme.Repo;
import com.acme.SlowInit;
import dev.vtpin.Mark;
import dev.vtpin.Pin;
import dev.vtpin.PinReason;
import dev.vtpin.Pins;
import dev.vtpin.Vtpin;
import dev.vtpin.junit.NoPinning;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The @NoPinning extension and the Java API on a real JVM (tests/jvm/test_junit.py runs it with the
 * console launcher and reads each test's verdict and message). The name of each test says what it
 * expects: pass, or fail and why. JNI pins (JniSleep, java-fixtures/src) pin on every JDK; a monitor
 * held across a park pins on 21 alone.
 */
class PinningTests {
    @BeforeAll
    static void warmUp() throws Exception {
        // the JDK's first virtual threads, timed parks and JNI linkage: none of them a test's
        JniSleep.sleepInNative(0);
        WarmUp.virtualThreads();
    }

    /** Runs each task in its own virtual thread ("vt-0", ...) and joins them all. */
    static void inVirtualThreads(Runnable... tasks) throws InterruptedException {
        Thread[] threads = new Thread[tasks.length];
        for (int i = 0; i < tasks.length; i++) {
            threads[i] = Thread.ofVirtual().name("vt-" + i).start(tasks[i]);
        }
        for (Thread t : threads) {
            t.join();
        }
    }

    static void nativeSleep() {
        JniSleep.sleepInNative(20);
    }

    @Test
    @NoPinning
    void passClean() throws Exception {
        inVirtualThreads(() -> LockSupport.parkNanos(20_000_000L), () -> LockSupport.parkNanos(20_000_000L));
    }

    /** Fails on 21 (MONITOR at com.acme.Repo.saveLocked), passes on 24+ where nothing pins. */
    @Test
    @NoPinning
    void monitorPin() throws Exception {
        inVirtualThreads(Repo::saveLocked);
    }

    @Test
    @NoPinning
    void failNative() throws Exception {
        inVirtualThreads(PinningTests::nativeSleep);
    }

    @Test
    @NoPinning(allow = "*.nativeSleep")
    void passNativeAllowed() throws Exception {
        inVirtualThreads(PinningTests::nativeSleep);
    }

    @Test
    @NoPinning(only = "com.acme.*")
    void passNativeOutsideOnly() throws Exception {
        inVirtualThreads(PinningTests::nativeSleep);
    }

    /** SlowInit's <clinit> sleeps: a pin whose culprit is com.acme's, on every JDK. */
    @Test
    @NoPinning(only = "com.acme.*")
    void failInsideOnly() throws Exception {
        inVirtualThreads(SlowInit::touch);
    }

    @Test
    @NoPinning(atMost = 2)
    void passTwoAtMostTwo() throws Exception {
        inVirtualThreads(PinningTests::nativeSleep, PinningTests::nativeSleep);
    }

    @Test
    @NoPinning(atMost = 1)
    void failTwoAtMostOne() throws Exception {
        inVirtualThreads(PinningTests::nativeSleep, PinningTests::nativeSleep);
    }

    @Test
    @NoPinning(reasons = PinReason.MONITOR)
    void passNativeReasonsMonitor() throws Exception {
        inVirtualThreads(PinningTests::nativeSleep);
    }

    /** The API alone: the pins since a mark, as objects; none after a new mark. */
    @Test
    void passApi() throws Exception {
        if (!Vtpin.isLoaded() || Vtpin.version().isEmpty() || Vtpin.threshold().isNegative()) {
            throw new AssertionError("the agent is loaded and detecting");
        }
        Mark mark = Vtpin.mark();
        inVirtualThreads(PinningTests::nativeSleep, PinningTests::nativeSleep);
        Pins pins = Vtpin.pinsSince(mark);
        List<Pin> app = pins.list().stream().filter(p -> !p.jdkInternal()).toList();
        check(app.size() == 2 && pins.dropped() == 0, "2 pins of the application, none dropped: " + pins);
        for (Pin p : app) {
            check(p.reason() == PinReason.NATIVE && !p.inProgress(), "an ended NATIVE pin: " + p);
            // an agent loaded at startup times a park from its start; one attached by Vtpin.load (the
            // self_attach case, -Dvtpin.agent) finds parks by sampling the carriers, so a start up to a
            // sample period late, more on a loaded machine (docs/attach.md; ci6 under ASan: 4.3 of 20 ms)
            boolean attached = System.getProperty("vtpin.agent") != null;
            check(attached ? !p.duration().isNegative() && p.duration().toMillis() <= 1000
                           : p.duration().toMillis() >= 10,
                  "it lasted about 20 ms: " + p);
            check(p.virtualThreadName().startsWith("vt-") && p.virtualThreadId() > 0, "its thread: " + p);
            check(p.culprit().map(f -> f.name().equals("JniSleep.sleepInNative")).orElse(false),
                  "its culprit is the native method: " + p.describe(20));
            check(p.library().endsWith("libvtpinfixture.so"), "its library: " + p);
            check(p.stack().stream().anyMatch(f -> f.name().equals("PinningTests.nativeSleep")),
                  "its stack holds the test's frame: " + p.describe(20));
            check(p.startNanos() >= mark.nanos(), "it started after the mark");
        }
        check(app.get(0).id() != app.get(1).id(), "two pins");
        check(Vtpin.pinsSince(Vtpin.mark()).list().isEmpty(), "nothing since a new mark");
    }

    private static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }
}
