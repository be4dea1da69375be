/* Unit tests for proto/session_pins.c, the one table of pins and hogs in progress: a start new,
 * re-sent or (keeping ended ones) a duplicate; an end that hands back its start; pins and hogs
 * apart; many in progress ended in a scrambled order; the bound that forgets the oldest. */
#include "session_pins.h"

#include <stdio.h>

#include "check.h"

static int start(struct session_pins *t, int kind, uint64_t id, int64_t start_ns, int32_t reason)
{
    struct session_pin p = {.id = id, .kind = (uint8_t)kind, .start_ns = start_ns, .reason = reason};
    return session_pins_start(t, &p, NULL);
}

static void test_start_and_end(void)
{
    struct session_pins *t = NULL;
    if (!CHECK_INT(session_pins_new(&t, 0, 0), 0))
        return;
    CHECK_INT(start(t, SESSION_PIN, 1, 100, 3), SESSION_PINS_NEW);
    CHECK_INT(start(t, SESSION_HOG, 1, 101, 0), SESSION_PINS_NEW); /* a hog's ids are its own */
    struct session_pin again = {.id = 1, .kind = SESSION_PIN, .start_ns = 900, .reason = 7}, *kept = NULL;
    CHECK_INT(session_pins_start(t, &again, &kept), SESSION_PINS_AGAIN); /* re-sent: the first start stays */
    if (CHECK(kept != NULL)) {
        CHECK_INT(kept->reason, 3);
        kept->site = 5; /* what a reader derived stays with it */
    }
    CHECK_UINT(session_pins_in_progress(t), 2);
    struct session_pin out;
    CHECK_INT(session_pins_end(t, SESSION_PIN, 1, &out), SESSION_PINS_ENDS);
    CHECK_INT(out.reason, 3);
    CHECK_INT(out.start_ns, 100);
    CHECK_INT(out.site, 5);
    CHECK_INT(session_pins_end(t, SESSION_PIN, 1, &out), SESSION_PINS_UNKNOWN); /* out of the table */
    CHECK_INT(session_pins_end(t, SESSION_PIN, 9, &out), SESSION_PINS_UNKNOWN);
    size_t pos = 0;
    const struct session_pin *p = session_pins_next(t, &pos);
    if (CHECK(p != NULL))
        CHECK_INT(p->kind, SESSION_HOG);
    CHECK(session_pins_next(t, &pos) == NULL);
    CHECK_INT(start(t, SESSION_PIN, 1, 200, 1), SESSION_PINS_NEW); /* ended and forgotten: new again */
    session_pins_free(t);
}

/* The report's table: every id stays, so a second start or end is a duplicate. */
static void test_keep_ended(void)
{
    struct session_pins *t = NULL;
    if (!CHECK_INT(session_pins_new(&t, 4, 1), 0))
        return;
    struct session_pin p = {.id = 42, .kind = SESSION_PIN, .index = 0}, *kept;
    CHECK_INT(session_pins_start(t, &p, &kept), SESSION_PINS_NEW);
    if (CHECK(kept != NULL))
        kept->index = 17;
    struct session_pin out;
    CHECK_INT(session_pins_end(t, SESSION_PIN, 42, &out), SESSION_PINS_ENDS);
    CHECK_UINT(out.index, 17);
    CHECK_INT(session_pins_end(t, SESSION_PIN, 42, &out), SESSION_PINS_DONE);
    CHECK_INT(session_pins_start(t, &p, &kept), SESSION_PINS_DONE);
    CHECK(kept == NULL);
    CHECK_UINT(session_pins_in_progress(t), 0);
    /* no bound: the 4 asked for does not apply to a table that keeps every id */
    for (uint64_t i = 100; i < 110; i++)
        CHECK_INT(start(t, SESSION_PIN, i, (int64_t)i, 1), SESSION_PINS_NEW);
    CHECK_UINT(session_pins_in_progress(t), 10);
    CHECK_UINT(session_pins_lost(t), 0);
    session_pins_free(t);
}

/* Ended ids are bits in words of 64: an id's neighbours in the word are not ended with it, a hog's
 * ids are not a pin's, the ids at the ends of the range hold, and a million rising ids cost next to
 * nothing (the report keeps every id of a session of millions of pins). */
static void test_ended_words(void)
{
    struct session_pins *t = NULL;
    if (!CHECK_INT(session_pins_new(&t, 0, 1), 0))
        return;
    struct session_pin out;
    const uint64_t ids[] = {0, 63, 64, 130, UINT64_MAX, UINT64_MAX - 63};
    for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
        CHECK_INT(start(t, SESSION_PIN, ids[i], 1, 1), SESSION_PINS_NEW);
        CHECK_INT(session_pins_end(t, SESSION_PIN, ids[i], &out), SESSION_PINS_ENDS);
    }
    for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
        CHECK_INT(session_pins_end(t, SESSION_PIN, ids[i], &out), SESSION_PINS_DONE);
        CHECK_INT(session_pins_end(t, SESSION_HOG, ids[i], &out), SESSION_PINS_UNKNOWN); /* a hog's are its own */
    }
    const uint64_t neighbours[] = {1, 62, 65, 129, 131, UINT64_MAX - 1, UINT64_MAX - 62};
    for (size_t i = 0; i < sizeof(neighbours) / sizeof(neighbours[0]); i++)
        CHECK_INT(start(t, SESSION_PIN, neighbours[i], 1, 1), SESSION_PINS_NEW);
    size_t before = session_pins_bytes(t);
    for (uint64_t id = 1000; id < 1000 + 1000000; id++) {
        start(t, SESSION_PIN, id, (int64_t)id, 1);
        if (id % 4 == 3) /* ended out of order: the bits fill in as they come */
            for (uint64_t k = id - 3; k <= id; k++)
                session_pins_end(t, SESSION_PIN, k, &out);
    }
    CHECK_INT(session_pins_end(t, SESSION_PIN, 1000 + 999999, &out), SESSION_PINS_DONE);
    CHECK_INT(start(t, SESSION_PIN, 500000, 1, 1), SESSION_PINS_DONE);
    size_t grown = session_pins_bytes(t) - before;
    printf("session_pins: %zu bytes for 1000000 ended ids\n", grown);
    CHECK(grown < 1000000); /* under a byte an id (16 bytes each before they were bits) */
    session_pins_free(t);
}

/* Many pins in progress at once, ended in a scrambled order: the table's deletions keep every
 * other pin findable; over its bound, the one that began first goes, counted. */
static void test_many_and_bounded(void)
{
    enum { BOUND = 1024 };
    struct session_pins *t = NULL;
    if (!CHECK_INT(session_pins_new(&t, BOUND, 0), 0))
        return;
    const unsigned n = BOUND / 2;
    for (unsigned i = 1; i <= n; i++)
        start(t, SESSION_PIN, (uint64_t)i * 7919, i, 1);
    CHECK_UINT(session_pins_in_progress(t), n);
    unsigned ended = 0;
    struct session_pin out;
    for (unsigned k = 0; k < n; k++) {
        unsigned i = (k * 389u) % n + 1; /* 389 is prime to n: a permutation */
        ended += session_pins_end(t, SESSION_PIN, (uint64_t)i * 7919, &out) == SESSION_PINS_ENDS && out.start_ns == i;
    }
    CHECK_UINT(ended, n);
    CHECK_UINT(session_pins_in_progress(t), 0);
    CHECK_UINT(session_pins_lost(t), 0);
    /* ends never come: the table stays bounded and forgets the one that began first */
    for (uint64_t i = 1; i <= 2 * BOUND; i++)
        start(t, SESSION_PIN, 1000000 + i, 5000 + (int64_t)i, 2);
    CHECK_UINT(session_pins_in_progress(t), BOUND);
    CHECK_UINT(session_pins_lost(t), BOUND);
    CHECK_INT(session_pins_end(t, SESSION_PIN, 1000000 + 1, &out), SESSION_PINS_UNKNOWN); /* forgotten */
    CHECK_INT(session_pins_end(t, SESSION_PIN, 1000000 + 2 * BOUND, &out), SESSION_PINS_ENDS);
    size_t bytes = session_pins_bytes(t);
    printf("session_pins: %zu bytes for %d in progress\n", bytes, BOUND);
    CHECK(bytes < BOUND * 128);
    session_pins_free(t);
}

/* The pin of a PinStart and of a HogStart: what the wire said, the readers' fields empty. */
static void test_of_wire(void)
{
    Vtpin__V1__PinStart ps = VTPIN__V1__PIN_START__INIT;
    ps.pin_id = 9;
    ps.start_ns = 1234;
    ps.reason = VTPIN__V1__PIN_REASON__MONITOR;
    ps.has_carrier_tid = 1;
    ps.carrier_tid = 77;
    struct session_pin p = session_pin_of_start(&ps);
    CHECK_UINT(p.id, 9);
    CHECK_INT(p.kind, SESSION_PIN);
    CHECK_INT(p.start_ns, 1234);
    CHECK_INT(p.reason, VTPIN__V1__PIN_REASON__MONITOR);
    CHECK(p.has_carrier_tid && p.carrier_tid == 77);
    Vtpin__V1__HogStart hs = VTPIN__V1__HOG_START__INIT;
    hs.hog_id = 4;
    hs.start_ns = 31;
    p = session_pin_of_hog(&hs);
    CHECK_INT(p.kind, SESSION_HOG);
    CHECK_INT(p.start_ns, 31);
    CHECK(!p.has_carrier_tid);
    CHECK_INT(p.reason, 0);
}

int main(void)
{
    test_start_and_end();
    test_keep_ended();
    test_ended_words();
    test_many_and_bounded();
    test_of_wire();
    CHECK_MAIN_RETURN();
}
