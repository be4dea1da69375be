#include "queue.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Dmitry Vyukov's bounded queue: each slot carries a sequence number that
 * says whose turn it is, so producers never wait for each other. */
struct queue {
    _Alignas(64) _Atomic uint64_t head; /* next ticket for producers */
    _Alignas(64) uint64_t tail;         /* consumer position (consumer-only) */
    _Alignas(64) _Atomic uint64_t dropped;
    uint64_t mask;
    size_t slot_size;
    _Atomic uint64_t *seq;
    unsigned char *slots;
};

struct queue *queue_new(unsigned slots, size_t slot_size)
{
    uint64_t n = 2; /* one slot would make "committed" and "free" the same sequence */
    while (n < slots)
        n <<= 1;
    struct queue *q = aligned_alloc(64, sizeof(struct queue));
    if (!q)
        return NULL;
    memset(q, 0, sizeof(*q));
    q->mask = n - 1;
    q->slot_size = (slot_size + 15) & ~(size_t)15;
    q->seq = calloc(n, sizeof(*q->seq));
    q->slots = calloc(n, q->slot_size);
    if (!q->seq || !q->slots) {
        queue_free(q);
        return NULL;
    }
    for (uint64_t i = 0; i < n; i++)
        atomic_init(&q->seq[i], i);
    return q;
}

void queue_free(struct queue *q)
{
    if (!q)
        return;
    free(q->seq);
    free(q->slots);
    free(q);
}

void *queue_reserve(struct queue *q, uint64_t *ticket)
{
    uint64_t pos = atomic_load_explicit(&q->head, memory_order_relaxed);
    for (;;) {
        uint64_t seq = atomic_load_explicit(&q->seq[pos & q->mask], memory_order_acquire);
        int64_t diff = (int64_t)(seq - pos);
        if (diff == 0) {
            if (atomic_compare_exchange_weak_explicit(&q->head, &pos, pos + 1, memory_order_relaxed,
                                                      memory_order_relaxed)) {
                *ticket = pos;
                return q->slots + (pos & q->mask) * q->slot_size;
            }
        } else if (diff < 0) {
            atomic_fetch_add_explicit(&q->dropped, 1, memory_order_relaxed);
            return NULL;
        } else {
            pos = atomic_load_explicit(&q->head, memory_order_relaxed);
        }
    }
}

void queue_commit(struct queue *q, uint64_t ticket)
{
    atomic_store_explicit(&q->seq[ticket & q->mask], ticket + 1, memory_order_release);
}

uint64_t queue_dropped(const struct queue *q)
{
    return atomic_load_explicit(&((struct queue *)q)->dropped, memory_order_relaxed);
}

void *queue_peek(struct queue *q)
{
    uint64_t pos = q->tail;
    uint64_t seq = atomic_load_explicit(&q->seq[pos & q->mask], memory_order_acquire);
    if (seq != pos + 1)
        return NULL;
    return q->slots + (pos & q->mask) * q->slot_size;
}

void queue_release(struct queue *q)
{
    uint64_t pos = q->tail;
    atomic_store_explicit(&q->seq[pos & q->mask], pos + q->mask + 1, memory_order_release);
    q->tail = pos + 1;
}

int queue_pending(const struct queue *q)
{
    return atomic_load_explicit(&((struct queue *)q)->head, memory_order_relaxed) != q->tail;
}

size_t queue_slot_size(const struct queue *q)
{
    return q->slot_size;
}
