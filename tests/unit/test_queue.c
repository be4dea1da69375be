/* Unit tests for agent/callbacks/queue.c: sizing, FIFO order, commit order, overflow
 * counting, wrap-around, and a multi-producer stress run with a concurrent
 * consumer in which every record is either consumed once, in per-producer
 * order, or counted as dropped. */
#include "queue.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"

struct rec {
    uint32_t producer;
    uint32_t pad;
    uint64_t seq;
    uint64_t check;
};

static uint64_t rec_check(uint32_t producer, uint64_t seq)
{
    uint64_t x = (seq + 1) * 0x9e3779b97f4a7c15ull ^ ((uint64_t)producer << 56);
    return x ^ (x >> 29);
}

/* Reserves and commits one record; 0 when the queue was full. */
static int push(struct queue *q, uint32_t producer, uint64_t seq)
{
    uint64_t ticket;
    struct rec *r = queue_reserve(q, &ticket);
    if (!r)
        return 0;
    r->producer = producer;
    r->seq = seq;
    r->check = rec_check(producer, seq);
    queue_commit(q, ticket);
    return 1;
}

/* Peeks and releases one record; 0 when none was committed. */
static int pop(struct queue *q, struct rec *out)
{
    const struct rec *r = queue_peek(q);
    if (!r)
        return 0;
    *out = *r;
    queue_release(q);
    return 1;
}

static void test_sizes(void)
{
    static const struct {
        unsigned ask, want;
    } cases[] = {{2, 2}, {3, 4}, {5, 8}, {8, 8}, {9, 16}, {1000, 1024}, {1024, 1024}, {1025, 2048}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct queue *q = queue_new(cases[i].ask, sizeof(struct rec));
        if (!CHECK(q != NULL))
            continue;
        unsigned n = 0;
        while (n <= cases[i].want && push(q, 0, n))
            n++;
        if (!CHECK_UINT(n, cases[i].want))
            fprintf(stderr, "    asked for %u slots\n", cases[i].ask);
        CHECK_UINT(queue_dropped(q), 1);
        queue_free(q);
    }
    queue_free(NULL);
}

/* Asking for 0 or 1 slots still gives a working queue: a full queue refuses
 * the next record instead of overwriting one that was not consumed yet. */
static void test_tiny_queue(void)
{
    for (unsigned ask = 0; ask <= 1; ask++) {
        struct queue *q = queue_new(ask, sizeof(struct rec));
        if (!CHECK(q != NULL))
            continue;
        unsigned n = 0;
        while (n < 64 && push(q, 5, n))
            n++;
        if (!CHECK(n >= 1 && n <= 2))
            fprintf(stderr, "    queue_new(%u): %u records accepted without consuming any\n", ask, n);
        CHECK_UINT(queue_dropped(q), n < 64 ? 1 : 0);
        struct rec r;
        unsigned got = 0, bad = 0;
        while (got < 64 && pop(q, &r)) {
            bad += r.seq != got || r.check != rec_check(5, got);
            got++;
        }
        if (!CHECK_UINT(got, n) || !CHECK_UINT(bad, 0))
            fprintf(stderr, "    queue_new(%u): pushed %u, popped %u, %u wrong\n", ask, n, got, bad);
        queue_free(q);
    }
}

static void test_slot_size(void)
{
    for (size_t want = 1; want <= 100; want += 11) {
        struct queue *q = queue_new(4, want);
        if (!CHECK(q != NULL))
            continue;
        size_t got = queue_slot_size(q);
        CHECK(got >= want);
        /* Slots are distinct, aligned for 8-byte fields, and writable over their whole size. */
        uint64_t t[4];
        unsigned char *s[4];
        for (int k = 0; k < 4; k++) {
            s[k] = queue_reserve(q, &t[k]);
            if (!CHECK(s[k] != NULL))
                break;
            CHECK_UINT((uintptr_t)s[k] % 8, 0);
            memset(s[k], 0x40 + k, got);
        }
        for (int k = 0; k < 4; k++)
            queue_commit(q, t[k]);
        for (int k = 0; k < 4; k++) {
            unsigned char *p = queue_peek(q);
            if (!CHECK(p != NULL))
                break;
            CHECK(p[0] == 0x40 + k && p[got - 1] == 0x40 + k);
            queue_release(q);
        }
        queue_free(q);
    }
}

static void test_fifo(void)
{
    struct queue *q = queue_new(16, sizeof(struct rec));
    struct rec r;
    CHECK(queue_peek(q) == NULL);
    CHECK(!queue_pending(q));
    for (uint64_t i = 0; i < 10; i++)
        CHECK(push(q, 7, i));
    for (uint64_t i = 0; i < 10; i++) {
        if (!CHECK(pop(q, &r)))
            break;
        CHECK_UINT(r.producer, 7);
        CHECK_UINT(r.seq, i);
        CHECK_UINT(r.check, rec_check(7, i));
    }
    CHECK(queue_peek(q) == NULL);
    CHECK_UINT(queue_dropped(q), 0);
    /* Peek does not consume. */
    CHECK(push(q, 1, 42));
    struct rec *a = queue_peek(q), *b = queue_peek(q);
    CHECK(a != NULL && a == b);
    CHECK(pop(q, &r) && r.seq == 42);
    CHECK(queue_peek(q) == NULL);
    queue_free(q);
}

static void test_commit_order(void)
{
    struct queue *q = queue_new(8, sizeof(struct rec));
    uint64_t t0, t1;
    struct rec *r0 = queue_reserve(q, &t0);
    struct rec *r1 = queue_reserve(q, &t1);
    if (!CHECK(r0 && r1)) {
        queue_free(q);
        return;
    }
    CHECK(r0 != r1);
    CHECK(t1 == t0 + 1);
    r0->seq = 100;
    r1->seq = 101;
    /* Reserved but not committed: nothing to consume, but pending (the writer polls). */
    CHECK(queue_peek(q) == NULL);
    CHECK(queue_pending(q));
    /* The second committed first: still waits for the first. */
    queue_commit(q, t1);
    CHECK(queue_peek(q) == NULL);
    CHECK(queue_pending(q));
    queue_commit(q, t0);
    struct rec r;
    CHECK(pop(q, &r) && r.seq == 100);
    CHECK(queue_pending(q));
    CHECK(pop(q, &r) && r.seq == 101);
    CHECK(queue_peek(q) == NULL);
    CHECK(!queue_pending(q));
    queue_free(q);
}

static void test_full_and_release(void)
{
    struct queue *q = queue_new(4, sizeof(struct rec));
    struct rec r;
    for (uint64_t i = 0; i < 4; i++)
        CHECK(push(q, 0, i));
    uint64_t ticket = 0;
    CHECK(queue_reserve(q, &ticket) == NULL);
    CHECK_UINT(queue_dropped(q), 1);
    CHECK(!push(q, 0, 99));
    CHECK(!push(q, 0, 99));
    CHECK_UINT(queue_dropped(q), 3);

    /* Peeking alone frees nothing. */
    CHECK(queue_peek(q) != NULL);
    CHECK(!push(q, 0, 99));
    CHECK_UINT(queue_dropped(q), 4);

    /* Releasing one slot makes room for exactly one. */
    CHECK(pop(q, &r) && r.seq == 0);
    CHECK(push(q, 0, 4));
    CHECK(!push(q, 0, 99));
    CHECK_UINT(queue_dropped(q), 5);
    for (uint64_t i = 1; i <= 4; i++)
        CHECK(pop(q, &r) && r.seq == i);
    CHECK(queue_peek(q) == NULL);
    queue_free(q);
}

static void test_wraparound(void)
{
    struct queue *q = queue_new(4, sizeof(struct rec));
    uint64_t next_in = 0, next_out = 0;
    unsigned bad = 0;
    /* Vary how full the queue gets so head and tail wrap many times at every offset. */
    for (int round = 0; round < 1000; round++) {
        int in = 1 + round % 4, out = 1 + (round * 7) % 4;
        for (int k = 0; k < in; k++)
            if (push(q, 3, next_in))
                next_in++;
        struct rec r;
        for (int k = 0; k < out && pop(q, &r); k++) {
            bad += r.seq != next_out || r.check != rec_check(3, r.seq);
            next_out++;
        }
    }
    struct rec r;
    while (pop(q, &r)) {
        bad += r.seq != next_out;
        next_out++;
    }
    CHECK_UINT(bad, 0);
    CHECK_UINT(next_out, next_in);
    CHECK(next_in > 1000);
    queue_free(q);
}

/* Stress: producers push (id, seq, check, filler) and record what they dropped;
 * the main thread consumes concurrently and records what it saw. */
enum { PRODUCERS = 4, PER_PRODUCER = 200000 };

struct producer {
    pthread_t thread;
    struct queue *q;
    uint32_t id;
    uint64_t dropped;
    unsigned char *dropped_bits; /* PER_PRODUCER bits */
};

static atomic_int producers_done;
static atomic_int producers_go;

static void fill_slot(unsigned char *slot, size_t size, uint32_t id, uint64_t seq)
{
    struct rec *r = (struct rec *)slot;
    r->producer = id;
    r->pad = 0;
    r->seq = seq;
    r->check = rec_check(id, seq);
    memset(slot + sizeof(*r), (int)((seq * 31 + id) & 0xff), size - sizeof(*r));
}

static int slot_ok(const unsigned char *slot, size_t size)
{
    const struct rec *r = (const struct rec *)slot;
    if (r->producer >= PRODUCERS || r->seq >= PER_PRODUCER || r->check != rec_check(r->producer, r->seq))
        return 0;
    unsigned char fill = (unsigned char)((r->seq * 31 + r->producer) & 0xff);
    for (size_t k = sizeof(*r); k < size; k++)
        if (slot[k] != fill)
            return 0;
    return 1;
}

static void *producer_main(void *arg)
{
    struct producer *p = arg;
    size_t size = queue_slot_size(p->q);
    while (!atomic_load(&producers_go))
        ;
    for (uint64_t seq = 0; seq < PER_PRODUCER; seq++) {
        uint64_t ticket;
        unsigned char *slot = queue_reserve(p->q, &ticket);
        if (!slot) {
            p->dropped++;
            p->dropped_bits[seq / 8] |= (unsigned char)(1u << (seq % 8));
            if (seq % 64 == 0)
                sched_yield(); /* give the consumer a chance on small machines */
            continue;
        }
        fill_slot(slot, size, p->id, seq);
        queue_commit(p->q, ticket);
    }
    atomic_fetch_add(&producers_done, 1);
    return NULL;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void stress(unsigned slots)
{
    struct queue *q = queue_new(slots, 56); /* rec plus filler */
    if (!CHECK(q != NULL))
        return;
    size_t size = queue_slot_size(q);
    struct producer prods[PRODUCERS];
    unsigned char *seen_bits[PRODUCERS];
    int64_t last_seq[PRODUCERS];
    uint64_t consumed[PRODUCERS] = {0};
    uint64_t corrupt = 0, out_of_order = 0;
    atomic_store(&producers_done, 0);
    atomic_store(&producers_go, 0);
    for (uint32_t i = 0; i < PRODUCERS; i++) {
        prods[i] = (struct producer){.q = q, .id = i, .dropped_bits = calloc(PER_PRODUCER / 8 + 1, 1)};
        seen_bits[i] = calloc(PER_PRODUCER / 8 + 1, 1);
        last_seq[i] = -1;
        if (!CHECK_INT(pthread_create(&prods[i].thread, NULL, producer_main, &prods[i]), 0))
            return; // NOLINT(clang-analyzer-unix.Malloc): the test has failed; the process ends
    }
    double t0 = now_s();
    atomic_store(&producers_go, 1);
    for (;;) {
        const unsigned char *slot = queue_peek(q);
        if (!slot) {
            if (atomic_load(&producers_done) == PRODUCERS) {
                /* Every commit happened before its producer's done increment. */
                if (!queue_peek(q))
                    break;
                continue;
            }
            sched_yield();
            continue;
        }
        if (!slot_ok(slot, size)) {
            corrupt++;
            queue_release(q);
            continue;
        }
        const struct rec *r = (const struct rec *)slot;
        uint32_t id = r->producer;
        int64_t seq = (int64_t)r->seq;
        if (seq <= last_seq[id])
            out_of_order++;
        last_seq[id] = seq;
        seen_bits[id][seq / 8] |= (unsigned char)(1u << (seq % 8));
        consumed[id]++;
        queue_release(q);
    }
    double elapsed = now_s() - t0;

    uint64_t total_dropped = 0, total_consumed = 0, both = 0, neither = 0;
    for (uint32_t i = 0; i < PRODUCERS; i++) {
        pthread_join(prods[i].thread, NULL);
        for (uint64_t s = 0; s < PER_PRODUCER; s++) {
            int d = (prods[i].dropped_bits[s / 8] >> (s % 8)) & 1;
            int c = (seen_bits[i][s / 8] >> (s % 8)) & 1;
            both += d && c;
            neither += !d && !c;
        }
        if (!CHECK_UINT(consumed[i] + prods[i].dropped, PER_PRODUCER))
            fprintf(stderr, "    producer %u: consumed %ju dropped %ju\n", i, (uintmax_t)consumed[i],
                    (uintmax_t)prods[i].dropped);
        total_dropped += prods[i].dropped;
        total_consumed += consumed[i];
        free(prods[i].dropped_bits);
        free(seen_bits[i]);
    }
    CHECK_UINT(corrupt, 0);
    CHECK_UINT(out_of_order, 0);
    CHECK_UINT(both, 0);    /* a dropped record was also consumed */
    CHECK_UINT(neither, 0); /* a record was lost without being counted */
    CHECK_UINT(queue_dropped(q), total_dropped);
    CHECK_UINT(total_consumed + total_dropped, (uint64_t)PRODUCERS * PER_PRODUCER);
    CHECK(total_consumed > 0);
    CHECK(queue_peek(q) == NULL);
    printf("     stress %u slots: %ju consumed, %ju dropped, %.3f s\n", slots, (uintmax_t)total_consumed,
           (uintmax_t)total_dropped, elapsed);
    queue_free(q);
}

static void test_stress_small_queue(void)
{
    stress(64); /* mostly full: many drops, constant wrap-around */
}

static void test_stress_large_queue(void)
{
    stress(1 << 16);
}

int main(void)
{
    CHECK_RUN(test_sizes);
    CHECK_RUN(test_tiny_queue);
    CHECK_RUN(test_slot_size);
    CHECK_RUN(test_fifo);
    CHECK_RUN(test_commit_order);
    CHECK_RUN(test_full_and_release);
    CHECK_RUN(test_wraparound);
    CHECK_RUN(test_stress_small_queue);
    CHECK_RUN(test_stress_large_queue);
    CHECK_MAIN_RETURN();
}
