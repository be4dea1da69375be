import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

public class Repro {

    static final class Account {
        final Object lock = new Object();
        long balanceMinor;
    }

    static final int TASKS = 100;
    static final int BLOCK_MILLIS = 200;

    static void settle(Account a) throws InterruptedException {
        synchronized (a.lock) {          // <== pinning site on JDK 21, 22 and 23
            Thread.sleep(BLOCK_MILLIS);  // stands in for a blocking JDBC / HTTP call
            a.balanceMinor += 1;
        }
    }

    public static void main(String[] args) throws Exception {
        ClockMark.markIfAsked(); // a test comparing JFR's times asks (ClockMark)
        System.out.println("java.version        = " + System.getProperty("java.version"));
        System.out.println("availableProcessors = " + Runtime.getRuntime().availableProcessors());
        // the JDK's first timed park of a virtual thread initializes its timer classes: done once here,
        // or the first sleepers wait for that under load (a VM_BLOCK of the JDK's before their pin)
        WarmUp.virtualThreads();

        List<Account> accounts = new ArrayList<>();
        for (int i = 0; i < TASKS; i++) accounts.add(new Account());

        Instant start = Instant.now();
        try (ExecutorService es = Executors.newVirtualThreadPerTaskExecutor()) {
            for (Account a : accounts) {
                es.submit(() -> { settle(a); return null; });
            }
        }
        long ms = Duration.between(start, Instant.now()).toMillis();

        long done = accounts.stream().filter(a -> a.balanceMinor == 1).count();
        System.out.println("settled             = " + done + "/" + TASKS);
        System.out.println("wall clock          = " + ms + " ms");
        System.out.println("ideal (unpinned)    = ~" + BLOCK_MILLIS + " ms");
        System.out.println("fixture Repro done in " + ms + " ms");
    }
}
