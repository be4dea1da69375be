package com.example.legacy;

/** A vendor's exchange rates, loaded as Catalog is: a known pin the team has accepted. */
public final class Rates {
    private static final double EUR = load();

    private Rates() {}

    public static double eur() {
        return EUR;
    }

    private static double load() {
        try {
            Thread.sleep(50);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return 1.1;
    }
}
