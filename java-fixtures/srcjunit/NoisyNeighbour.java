import org.junit.jupiter.api.Test;

/**
 * A test without @NoPinning that pins for about 300 ms (ten JNI pins in a row). Run in parallel beside
 * PinningTests (tests/jvm/test_junit.py parallel), its pins would land inside the @NoPinning tests'
 * windows unless those run alone, as NoPinning's global lock makes them.
 */
class NoisyNeighbour {
    @Test
    void pinsWhileOthersRun() throws Exception {
        for (int i = 0; i < 10; i++) {
            Thread.ofVirtual().start(() -> JniSleep.sleepInNative(30)).join();
        }
    }
}
