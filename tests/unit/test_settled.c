/* Unit tests for agent/callbacks/settled.c: what a mark means, what hides it, and the
 * real traffic from several threads: carriers queue their pins' starts
 * (agent/callbacks/queue.c) and ask at each end whether the writer settled it, while
 * the writer drains the queue and marks. Built with TSan too (label tsan).
 *
 * Each carrier owns a quarter of the table's slots and its ids grow, so no
 * other thread's mark can hide one of its pins: every result is exact. */
#include "settled.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>

#include "check.h"
#include "queue.h"

enum { CARRIERS = 4, SPAN = SETTLED_SLOTS / CARRIERS, PINS = 10000 };

/* Carrier c's k-th pin: in c's slots, above every earlier id of c, never 0. */
static uint64_t pin_id(uint32_t c, uint64_t k)
{
    return SETTLED_SLOTS * (1 + k / SPAN) + c * SPAN + k % SPAN;
}

/* What the writer decides: a third of the starts keep their stack and are never marked. */
static int writer_settles(uint64_t id)
{
    return id % 3 != 0;
}

static void test_mark_and_hide(void)
{
    /* Ids the carriers below never use: the same slot, one table apart. */
    uint64_t a = pin_id(0, PINS), b = pin_id(0, PINS + SPAN);
    CHECK_UINT(a % SETTLED_SLOTS, b % SETTLED_SLOTS);
    CHECK(!settled_has(a));
    CHECK(!settled_has(b));
    settled_mark(a);
    CHECK(settled_has(a));
    CHECK(!settled_has(b));
    CHECK(!settled_has(pin_id(0, PINS + 1))); /* the next slot */
    /* A later pin in the same slot hides the first: its end takes a stack it did not need. */
    settled_mark(b);
    CHECK(settled_has(b));
    CHECK(!settled_has(a));
}

struct start {
    uint32_t carrier;
    uint64_t id;
};

struct carrier {
    pthread_t thread;
    uint32_t id;
    struct queue *q;
    atomic_int *running;    /* carriers not done yet */
    _Atomic uint64_t acked; /* the writer is done with this carrier's starts up to here */
    /* what its ends found; checked by the main thread after the join */
    uint64_t dropped, wrong_after_ack, marked_unsettled, seen_early;
};

/* The end of a pin whose start was queued: one in four waits until the writer
 * has been through the start, so the answer is exact; the others ask at once or
 * after a yield (a longer pin), racing the mark, and queue up more starts. */
static void pin_end(struct carrier *c, uint64_t k, uint64_t id)
{
    if (k % 4 == 0) {
        while (atomic_load_explicit(&c->acked, memory_order_acquire) < id)
            sched_yield();
        c->wrong_after_ack += settled_has(id) != writer_settles(id);
        return;
    }
    if (k % 4 == 1)
        sched_yield();
    int marked = settled_has(id);
    c->marked_unsettled += marked && !writer_settles(id);
    c->seen_early += marked;
}

static void *carrier_main(void *arg)
{
    struct carrier *c = arg;
    for (uint64_t k = 0; k < PINS; k++) {
        uint64_t id = pin_id(c->id, k), ticket;
        struct start *s = queue_reserve(c->q, &ticket);
        if (!s) { /* the writer never sees it: never marked */
            c->dropped++;
            c->marked_unsettled += settled_has(id);
            sched_yield(); /* let the writer drain, or a carrier drops its every pin at once */
            continue;
        }
        *s = (struct start){.carrier = c->id, .id = id};
        queue_commit(c->q, ticket);
        pin_end(c, k, id);
    }
    atomic_fetch_sub(c->running, 1);
    return NULL;
}

/* The writer: drains the starts until every carrier has ended. Returns the
 * starts it saw out of order or from no carrier. */
static uint64_t writer_drain(struct queue *q, struct carrier *carriers, atomic_int *running)
{
    uint64_t bad = 0, last[CARRIERS] = {0};
    for (;;) {
        const struct start *s = queue_peek(q);
        if (!s) {
            if (atomic_load(running) == 0 && !queue_peek(q))
                return bad;
            sched_yield();
            continue;
        }
        struct start st = *s;
        queue_release(q);
        if (st.carrier >= CARRIERS || st.id <= last[st.carrier]) {
            bad++;
            continue;
        }
        last[st.carrier] = st.id;
        if (writer_settles(st.id))
            settled_mark(st.id);
        atomic_store_explicit(&carriers[st.carrier].acked, st.id, memory_order_release);
    }
}

static void test_carriers_and_writer(void)
{
    struct queue *q = queue_new(8, sizeof(struct start)); /* small: some starts are dropped */
    if (!CHECK(q != NULL))
        return;
    struct carrier carriers[CARRIERS];
    atomic_int running = CARRIERS;
    for (uint32_t i = 0; i < CARRIERS; i++) {
        carriers[i] = (struct carrier){.id = i, .q = q, .running = &running};
        atomic_init(&carriers[i].acked, 0);
    }
    for (uint32_t i = 0; i < CARRIERS; i++)
        if (!CHECK_INT(pthread_create(&carriers[i].thread, NULL, carrier_main, &carriers[i]), 0))
            return;
    CHECK_UINT(writer_drain(q, carriers, &running), 0);
    uint64_t dropped = 0, early = 0;
    for (uint32_t i = 0; i < CARRIERS; i++) {
        pthread_join(carriers[i].thread, NULL);
        CHECK_UINT(carriers[i].wrong_after_ack, 0);
        CHECK_UINT(carriers[i].marked_unsettled, 0);
        dropped += carriers[i].dropped;
        early += carriers[i].seen_early;
    }
    CHECK_UINT(queue_dropped(q), dropped);
    printf("     %d pins: %ju starts dropped, %ju ends that asked at once found their mark\n", CARRIERS * PINS,
           (uintmax_t)dropped, (uintmax_t)early);
    queue_free(q);
}

int main(void)
{
    CHECK_RUN(test_mark_and_hide);
    CHECK_RUN(test_carriers_and_writer);
    CHECK_MAIN_RETURN();
}
