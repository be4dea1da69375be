package com.example;

import java.util.Map;

/** The product catalog, loaded once, when the class is first used. */
public final class Catalog {
    private static final Map<String, Integer> PRICES = load();

    private Catalog() {}

    public static int price(String sku) {
        return PRICES.getOrDefault(sku, 0);
    }

    /**
     * Stands for a slow load (a remote call, a big file). It runs in the class's static initializer:
     * a virtual thread that first uses Catalog blocks with the JVM's call to <clinit> on its stack,
     * which pins its carrier on every JDK.
     */
    private static Map<String, Integer> load() {
        try {
            Thread.sleep(50);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return Map.of("apple", 3, "pear", 4);
    }
}
