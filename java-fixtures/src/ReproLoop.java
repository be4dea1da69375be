import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Long-running Repro for dynamic-attach tests: rounds of `threads` virtual threads, each
 * sleeping sleepMs inside its OWN monitor (pins on JDK 21, not on 24+), until durationSec
 * elapsed or stopFile exists (checked between rounds).
 *
 * usage: ReproLoop [durationSec=30] [stopFile|-] [threads=8] [sleepMs=100]
 */
public class ReproLoop {

    static final class Account {
        final Object lock = new Object();
        long balanceMinor;
    }

    static void settle(Account a, long sleepMs) throws InterruptedException {
        synchronized (a.lock) {          // <== pinning site on JDK 21
            Thread.sleep(sleepMs);
            a.balanceMinor += 1;
        }
    }

    public static void main(String[] args) throws Exception { WarmUp.virtualThreads(); // the JDK's one-time work first
        long durationSec = args.length > 0 ? Long.parseLong(args[0]) : 30;
        Path stopFile = args.length > 1 && !args[1].equals("-") ? Path.of(args[1]) : null;
        int threads = args.length > 2 ? Integer.parseInt(args[2]) : 8;
        long sleepMs = args.length > 3 ? Long.parseLong(args[3]) : 100;
        System.out.println("java.version = " + System.getProperty("java.version"));
        System.out.println("ReproLoop: ready pid=" + ProcessHandle.current().pid());
        System.out.flush();

        long start = System.nanoTime();
        long deadline = start + durationSec * 1_000_000_000L;
        long rounds = 0;
        String why = "duration";
        while (System.nanoTime() < deadline) {
            if (stopFile != null && Files.exists(stopFile)) { why = "stop file"; break; }
            List<Thread> vts = new ArrayList<>(threads);
            List<Account> accounts = new ArrayList<>(threads);
            for (int t = 0; t < threads; t++) {
                Account a = new Account();
                accounts.add(a);
                vts.add(Thread.ofVirtual().name("reproloop-" + t).start(() -> {
                    try {
                        settle(a, sleepMs);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }));
            }
            for (Thread vt : vts) vt.join();
            for (Account a : accounts) {
                if (a.balanceMinor != 1) throw new AssertionError("task did not run");
            }
            rounds++;
        }
        long ms = (System.nanoTime() - start) / 1_000_000L;
        System.out.println("ReproLoop: stopped by " + why + " after rounds=" + rounds
            + " tasks=" + rounds * threads);
        System.out.println("fixture ReproLoop done in " + ms + " ms");
    }
}
