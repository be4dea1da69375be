package com.example;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.vtpin.junit.NoPinning;
import java.util.List;
import org.junit.jupiter.api.Test;

@NoPinning
class OrdersTest {
    /** Fails: the first virtual thread to use Catalog pins its carrier while the catalog loads. */
    @Test
    void totalPinsWhileTheCatalogLoads() throws Exception {
        assertEquals(7, Orders.total(List.of("apple", "pear")));
    }

    /** Passes: the virtual thread unmounts while it waits. */
    @Test
    void shipIsClean() throws Exception {
        assertEquals("42: shipped", Orders.ship("42"));
    }

    /** Passes: the vendor's pin is known and allowed. */
    @Test
    @NoPinning(allow = "com.example.legacy.*")
    void inEuroPinsInAllowedCode() throws Exception {
        assertEquals(11.0, Orders.inEuro(10), 0.01);
    }
}
