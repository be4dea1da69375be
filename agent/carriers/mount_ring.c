#include "mount_ring.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>

/* Each index is written by one side only; the other side's acquire of it
 * orders the entries: the consumer reads an entry only after the producer's
 * release of head, the producer reuses one only after the consumer's release
 * of tail. */
struct mount_ring {
    _Alignas(64) _Atomic uint64_t head; /* producer: the carrier thread */
    _Alignas(64) _Atomic uint64_t tail; /* consumer: the writer */
    uint64_t mask;
    struct mount_entry entries[];
};

struct mount_ring *mount_ring_new(unsigned entries)
{
    uint64_t n = 2;
    while (n < entries)
        n <<= 1;
    struct mount_ring *r = aligned_alloc(64, (sizeof(*r) + n * sizeof(struct mount_entry) + 63) & ~(size_t)63);
    if (!r)
        return NULL;
    atomic_init(&r->head, 0);
    atomic_init(&r->tail, 0);
    r->mask = n - 1;
    return r;
}

void mount_ring_free(struct mount_ring *r)
{
    free(r);
}

int mount_ring_push(struct mount_ring *r, int64_t time_ns, int64_t vthread_id)
{
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    if (head - atomic_load_explicit(&r->tail, memory_order_acquire) > r->mask)
        return -ENOSPC;
    struct mount_entry *e = &r->entries[head & r->mask];
    e->time_ns = time_ns;
    e->vthread_id = vthread_id;
    atomic_store_explicit(&r->head, head + 1, memory_order_release);
    return 0;
}

unsigned mount_ring_take(struct mount_ring *r, struct mount_entry *out, unsigned cap)
{
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
    unsigned n = 0;
    while (tail != head && n < cap)
        out[n++] = r->entries[tail++ & r->mask];
    atomic_store_explicit(&r->tail, tail, memory_order_release);
    return n;
}

void mount_ring_clear(struct mount_ring *r)
{
    atomic_store(&r->tail, atomic_load(&r->head));
}
