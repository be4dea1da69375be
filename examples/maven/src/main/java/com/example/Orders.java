package com.example;

import com.example.legacy.Rates;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/** Handles orders, one virtual thread each. */
public final class Orders {
    private Orders() {}

    /** Prices each order in its own virtual thread; returns the total. */
    public static int total(List<String> skus) throws InterruptedException {
        List<Thread> threads = new ArrayList<>();
        int[] prices = new int[skus.size()];
        for (int i = 0; i < skus.size(); i++) {
            int at = i;
            threads.add(Thread.ofVirtual().start(() -> prices[at] = Catalog.price(skus.get(at))));
        }
        for (Thread t : threads) {
            t.join();
        }
        int total = 0;
        for (int p : prices) {
            total += p;
        }
        return total;
    }

    /** Waits for a slow backend in a virtual thread: it unmounts, nothing pins. */
    public static String ship(String order) throws InterruptedException {
        String[] out = new String[1];
        Thread.ofVirtual().start(() -> {
            LockSupport.parkNanos(30_000_000L);
            out[0] = order + ": shipped";
        }).join();
        return out[0];
    }

    /** Converts in a virtual thread through the vendor's rates. */
    public static double inEuro(int amount) throws InterruptedException {
        double[] out = new double[1];
        Thread.ofVirtual().start(() -> out[0] = amount * Rates.eur()).join();
        return out[0];
    }
}
