/* Unit tests for agent/carriers/mount_ring.c: capacity, order, batches, wrap-around,
 * clearing for a new carrier, and a carrier thread pushing while the writer
 * takes, in which every entry is either taken once, in order, or counted as
 * dropped by its producer. Built with TSan too (label tsan). */
#include "mount_ring.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"

/* Entry n's vthread id: its time and id must arrive together. */
static int64_t vid_of(int64_t n)
{
    return n * 7 + 1;
}

static int push(struct mount_ring *r, int64_t n)
{
    return mount_ring_push(r, n, vid_of(n));
}

static void test_capacity(void)
{
    static const struct {
        unsigned ask, want;
    } cases[] = {{0, 2}, {1, 2}, {2, 2}, {3, 4}, {8, 8}, {9, 16}, {1000, 1024}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct mount_ring *r = mount_ring_new(cases[i].ask);
        if (!CHECK(r != NULL))
            continue;
        unsigned n = 0;
        while (n <= cases[i].want && push(r, n) == 0)
            n++;
        if (!CHECK_UINT(n, cases[i].want))
            fprintf(stderr, "    asked for %u entries\n", cases[i].ask);
        CHECK_INT(push(r, 99), -ENOSPC);
        mount_ring_free(r);
    }
    mount_ring_free(NULL);
}

static void test_order_and_batches(void)
{
    struct mount_ring *r = mount_ring_new(8);
    struct mount_entry out[8];
    CHECK_UINT(mount_ring_take(r, out, 8), 0);
    for (int64_t n = 0; n < 5; n++)
        CHECK_INT(push(r, n), 0);
    /* A smaller batch leaves the rest for the next take. */
    CHECK_UINT(mount_ring_take(r, out, 2), 2);
    CHECK(out[0].time_ns == 0 && out[1].time_ns == 1 && out[1].vthread_id == vid_of(1));
    CHECK_UINT(mount_ring_take(r, out, 8), 3);
    CHECK(out[0].time_ns == 2 && out[2].time_ns == 4 && out[2].vthread_id == vid_of(4));
    CHECK_UINT(mount_ring_take(r, out, 0), 0);
    mount_ring_free(r);
}

static void test_full_then_room(void)
{
    struct mount_ring *r = mount_ring_new(4);
    struct mount_entry out[4];
    for (int64_t n = 0; n < 4; n++)
        CHECK_INT(push(r, n), 0);
    CHECK_INT(push(r, 4), -ENOSPC);
    /* Taking one makes room for exactly one; the refused entry is gone. */
    CHECK_UINT(mount_ring_take(r, out, 1), 1);
    CHECK_INT(push(r, 5), 0);
    CHECK_INT(push(r, 6), -ENOSPC);
    CHECK_UINT(mount_ring_take(r, out, 4), 4);
    CHECK(out[0].time_ns == 1 && out[2].time_ns == 3 && out[3].time_ns == 5);
    mount_ring_free(r);
}

static void test_wraparound(void)
{
    struct mount_ring *r = mount_ring_new(4);
    struct mount_entry out[4];
    int64_t next_in = 0, next_out = 0;
    unsigned bad = 0;
    for (int round = 0; round < 1000; round++) {
        for (int k = 0; k < 1 + round % 4; k++)
            if (push(r, next_in) == 0)
                next_in++;
        unsigned got = mount_ring_take(r, out, 1 + (unsigned)(round * 7) % 4);
        for (unsigned k = 0; k < got; k++, next_out++)
            bad += out[k].time_ns != next_out || out[k].vthread_id != vid_of(next_out);
    }
    for (unsigned got; (got = mount_ring_take(r, out, 4)) > 0;)
        for (unsigned k = 0; k < got; k++, next_out++)
            bad += out[k].time_ns != next_out;
    CHECK_UINT(bad, 0);
    CHECK_INT(next_out, next_in);
    CHECK(next_in > 1000);
    mount_ring_free(r);
}

/* A slot reused by a new carrier: what the last one left is not the new one's. */
static void test_clear(void)
{
    struct mount_ring *r = mount_ring_new(4);
    struct mount_entry out[4];
    for (int64_t n = 0; n < 4; n++)
        push(r, n);
    mount_ring_clear(r);
    CHECK_UINT(mount_ring_take(r, out, 4), 0);
    for (int64_t n = 10; n < 14; n++)
        CHECK_INT(push(r, n), 0);
    CHECK_UINT(mount_ring_take(r, out, 4), 4);
    CHECK(out[0].time_ns == 10 && out[3].time_ns == 13);
    mount_ring_free(r);
}

/* Stress: the carrier pushes 0..MOUNTS-1 and notes what was refused; the
 * writer (main thread) takes in batches of varying size meanwhile. */
enum { MOUNTS = 300000 };

struct carrier {
    pthread_t thread;
    struct mount_ring *r;
    atomic_int done;
    uint64_t dropped;
    unsigned char *dropped_bits; /* MOUNTS bits */
};

static void *carrier_main(void *arg)
{
    struct carrier *c = arg;
    for (int64_t n = 0; n < MOUNTS; n++) {
        if (push(c->r, n) == 0)
            continue;
        c->dropped++;
        c->dropped_bits[n / 8] |= (unsigned char)(1u << (n % 8));
        if (c->dropped % 64 == 0)
            sched_yield(); /* give the writer a chance on small machines */
    }
    atomic_store(&c->done, 1);
    return NULL;
}

static int bit(const unsigned char *bits, int64_t n)
{
    return (bits[n / 8] >> (n % 8)) & 1;
}

/* Takes until the carrier is done and the ring empty, noting each entry in
 * taken_bits; returns the entries out of order or torn. */
static uint64_t writer_take_all(struct carrier *c, unsigned char *taken_bits)
{
    struct mount_entry out[16];
    int64_t last = -1;
    uint64_t bad = 0;
    for (unsigned round = 0;; round++) {
        unsigned got = mount_ring_take(c->r, out, 1 + round % 16);
        if (got == 0) {
            /* Every push happened before done was set. */
            if (atomic_load(&c->done) && mount_ring_take(c->r, out, 1) == 0)
                return bad;
            sched_yield();
            continue;
        }
        for (unsigned k = 0; k < got; k++) {
            int64_t n = out[k].time_ns;
            if (n <= last || n >= MOUNTS || out[k].vthread_id != vid_of(n)) {
                bad++;
                continue;
            }
            taken_bits[n / 8] |= (unsigned char)(1u << (n % 8));
            last = n;
        }
    }
}

static void stress(unsigned entries)
{
    struct carrier c = {.r = mount_ring_new(entries), .dropped_bits = calloc(MOUNTS / 8 + 1, 1)};
    unsigned char *taken_bits = calloc(MOUNTS / 8 + 1, 1);
    if (!CHECK(c.r && c.dropped_bits && taken_bits))
        goto cleanup;
    atomic_init(&c.done, 0);
    if (!CHECK_INT(pthread_create(&c.thread, NULL, carrier_main, &c), 0))
        goto cleanup;
    CHECK_UINT(writer_take_all(&c, taken_bits), 0);
    pthread_join(c.thread, NULL);
    uint64_t taken = 0, both = 0, neither = 0;
    for (int64_t n = 0; n < MOUNTS; n++) {
        int d = bit(c.dropped_bits, n), t = bit(taken_bits, n);
        taken += t;
        both += d && t;
        neither += !d && !t;
    }
    CHECK_UINT(both, 0);    /* a refused entry was taken */
    CHECK_UINT(neither, 0); /* an entry was lost without being counted */
    CHECK_UINT(taken + c.dropped, MOUNTS);
    CHECK(taken > 0);
    printf("     stress %u entries: %ju taken, %ju dropped\n", entries, (uintmax_t)taken, (uintmax_t)c.dropped);
cleanup:
    free(taken_bits);
    free(c.dropped_bits);
    mount_ring_free(c.r);
}

static void test_stress_small_ring(void)
{
    stress(8);
}

static void test_stress_large_ring(void)
{
    stress(4096);
}

int main(void)
{
    CHECK_RUN(test_capacity);
    CHECK_RUN(test_order_and_batches);
    CHECK_RUN(test_full_then_room);
    CHECK_RUN(test_wraparound);
    CHECK_RUN(test_clear);
    CHECK_RUN(test_stress_small_ring);
    CHECK_RUN(test_stress_large_ring);
    CHECK_MAIN_RETURN();
}
