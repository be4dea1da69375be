import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A small "order service" that pins for several reasons, in waves with idle
 * time between them: the recording behind the README's HTML report
 * screenshot and tests/jvm/test_views.py. Over about `seconds`:
 *   - Ledger.post: synchronized + Thread.sleep          (MONITOR on JDK 21-23)
 *   - Inventory.reserve: contended synchronized          (MONITOR_ENTER on 21-23)
 *   - Mailbox.take: Object.wait inside synchronized      (OBJECT_WAIT on 21-23)
 *   - Codec.encode: JNI up-call that sleeps              (NATIVE on every JDK)
 *   - Checksum.compute: blocked in C nanosleep           (NATIVE_BLOCK on every JDK)
 * needs -Djava.library.path=<dir containing libvtpinfixture.so>
 *
 * usage: Showcase [seconds=3]
 */
public class Showcase {

    static final class Ledger {
        private final Object lock = new Object();
        private long balance;

        void post(long amount) throws InterruptedException {
            synchronized (lock) {
                Thread.sleep(40 + ThreadLocalRandom.current().nextInt(60)); // a blocking "JDBC" call
                balance += amount;
            }
        }
    }

    static final class Inventory {
        static final Object LOCK = new Object();
        static long reserved;

        static void reserve() {
            synchronized (LOCK) {     // contended: the others block in monitor entry
                long end = System.nanoTime() + 8_000_000L;
                while (System.nanoTime() < end) Thread.onSpinWait();
                reserved++;
            }
        }
    }

    static final class Mailbox {
        private final Object lock = new Object();
        private boolean full;

        void take() throws InterruptedException {
            synchronized (lock) {
                while (!full) lock.wait(80);
                full = false;
            }
        }

        void put() {
            synchronized (lock) {
                full = true;
                lock.notifyAll();
            }
        }
    }

    static final class Codec {
        static void encode() {
            JniSleep.sleepInNative(30 + ThreadLocalRandom.current().nextInt(40));
        }
    }

    static final class Checksum {
        static void compute() {
            NativeBlock.blockInNanosleep(250);
        }
    }

    public static void main(String[] args) throws Exception { WarmUp.virtualThreads(); // the JDK's one-time work first
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3;
        long end = System.nanoTime() + (long) (seconds * 1e9);
        Ledger ledger = new Ledger();
        int wave = 0;
        while (System.nanoTime() < end) {
            List<Thread> threads = new ArrayList<>();
            for (int i = 0; i < 3; i++)
                threads.add(Thread.ofVirtual().name("ledger-" + wave + "-" + i).start(() -> {
                    try { ledger.post(10); } catch (InterruptedException e) { Thread.currentThread().interrupt(); }
                }));
            for (int i = 0; i < 4; i++)
                threads.add(Thread.ofVirtual().name("inventory-" + wave + "-" + i).start(Inventory::reserve));
            Mailbox box = new Mailbox();
            threads.add(Thread.ofVirtual().name("mailbox-" + wave).start(() -> {
                try { box.take(); } catch (InterruptedException e) { Thread.currentThread().interrupt(); }
            }));
            threads.add(Thread.ofVirtual().name("codec-" + wave).start(Codec::encode));
            if (wave % 2 == 0)
                threads.add(Thread.ofVirtual().name("checksum-" + wave).start(Checksum::compute));
            Thread.sleep(60);
            box.put();
            for (Thread t : threads) t.join();
            Thread.sleep(150);        // idle carriers between waves
            wave++;
        }
        System.out.println("java.version = " + System.getProperty("java.version"));
        System.out.println("fixture Showcase done: " + wave + " waves");
    }
}
