/**
 * The JDK's one-time start-up of virtual threads (its event classes' static initializers, the
 * first timed park), done on a first virtual thread that is joined before a fixture starts its own.
 * Where two of the fixture's threads would race through it, a second one contends for a monitor
 * inside it: a MONITOR_ENTER pin on 21 that is the JDK's, not the fixture's.
 */
final class WarmUp {
    private WarmUp() {}

    static void virtualThreads() throws InterruptedException {
        Thread warm = Thread.ofVirtual().start(() -> {
            try {
                Thread.sleep(1); // unpinned: no lock held, no native frame
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
        });
        warm.join();
    }
}
