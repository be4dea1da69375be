/* One carrier's exact mount history: a bounded single-producer,
 * single-consumer ring of {time, vthread id}. The producer is the carrier's
 * own thread (VirtualThreadMount/Unmount, carriers.c), the consumer the writer
 * (sampler.c). No locks, no allocation after mount_ring_new; a full ring
 * refuses the entry and the caller counts the drop. */
#ifndef VTPIN_MOUNT_RING_H
#define VTPIN_MOUNT_RING_H

#include <stdint.h>

struct mount_entry {
    int64_t time_ns;
    int64_t vthread_id; /* 0: unmounted */
};

struct mount_ring;

struct mount_ring *mount_ring_new(unsigned entries); /* rounded up to a power of 2, at least 2 */
void mount_ring_free(struct mount_ring *r);

/* Producer: 0, or -ENOSPC when the consumer has not made room. */
int mount_ring_push(struct mount_ring *r, int64_t time_ns, int64_t vthread_id);
/* Consumer: moves up to cap entries out, oldest first. */
unsigned mount_ring_take(struct mount_ring *r, struct mount_entry *out, unsigned cap);
/* A new producer on a reused ring, while the consumer keeps off it: forgets what is left. */
void mount_ring_clear(struct mount_ring *r);

#endif
