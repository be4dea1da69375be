import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Repro with ReentrantLock instead of synchronized: parking through LockSupport unmounts,
 * so no pin on any JDK; wall clock ~sleepMs.
 *
 * usage: LockSleep [tasks=100] [sleepMs=200]
 */
public class LockSleep {

    static final class Account {
        final ReentrantLock lock = new ReentrantLock();
        long balanceMinor;
    }

    static void settle(Account a, long sleepMs) throws InterruptedException {
        a.lock.lock();
        try {
            Thread.sleep(sleepMs);
            a.balanceMinor += 1;
        } finally {
            a.lock.unlock();
        }
    }

    public static void main(String[] args) throws Exception { WarmUp.virtualThreads(); // the JDK's one-time work first
        int tasks = args.length > 0 ? Integer.parseInt(args[0]) : 100;
        long sleepMs = args.length > 1 ? Long.parseLong(args[1]) : 200;
        System.out.println("java.version = " + System.getProperty("java.version"));

        List<Account> accounts = new ArrayList<>();
        for (int i = 0; i < tasks; i++) accounts.add(new Account());

        long start = System.nanoTime();
        try (ExecutorService es = Executors.newVirtualThreadPerTaskExecutor()) {
            for (Account a : accounts) {
                es.submit(() -> { settle(a, sleepMs); return null; });
            }
        }
        long ms = (System.nanoTime() - start) / 1_000_000L;

        long done = accounts.stream().filter(a -> a.balanceMinor == 1).count();
        System.out.println("LockSleep: settled=" + done + "/" + tasks);
        System.out.println("fixture LockSleep done in " + ms + " ms");
    }
}
