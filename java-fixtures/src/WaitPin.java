import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

public class WaitPin {

    static final class Box {
        final Object lock = new Object();
        boolean ready;
    }

    static final int TASKS = 50;

    public static void main(String[] args) throws Exception { WarmUp.virtualThreads(); // the JDK's one-time work first
        List<Box> boxes = new ArrayList<>();
        for (int i = 0; i < TASKS; i++) boxes.add(new Box());

        Instant start = Instant.now();
        try (ExecutorService es = Executors.newVirtualThreadPerTaskExecutor()) {
            for (Box b : boxes) {
                es.submit(() -> {                      // waiter
                    synchronized (b.lock) {
                        while (!b.ready) b.lock.wait(); // <== pins, then never releases
                    }
                    return null;
                });
            }
            Thread.sleep(400);
            for (Box b : boxes) {
                es.submit(() -> {                      // notifier, never gets a carrier
                    synchronized (b.lock) { b.ready = true; b.lock.notifyAll(); }
                    return null;
                });
            }
        }
        System.out.println("java.version = " + System.getProperty("java.version")
            + "  completed in " + Duration.between(start, Instant.now()).toMillis() + " ms");
        System.out.println("fixture WaitPin done in " + Duration.between(start, Instant.now()).toMillis() + " ms");
    }
}
