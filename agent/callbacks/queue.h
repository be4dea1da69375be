/* Bounded multi-producer, single-consumer queue of fixed-size slots.
 *
 * Producers (JVMTI callbacks on any thread) reserve a slot with one CAS, fill
 * it in place and commit it; when the queue is full they get NULL and the
 * drop is counted. The single consumer (the writer thread) peeks committed
 * slots in order. No locks, no allocation after queue_new. */
#ifndef VTPIN_QUEUE_H
#define VTPIN_QUEUE_H

#include <stddef.h>
#include <stdint.h>

struct queue;

struct queue *queue_new(unsigned slots, size_t slot_size); /* slots rounded up to a power of 2 */
void queue_free(struct queue *q);

/* Producer side. */
void *queue_reserve(struct queue *q, uint64_t *ticket);
void queue_commit(struct queue *q, uint64_t ticket);
uint64_t queue_dropped(const struct queue *q);

/* Consumer side: the next committed slot or NULL; release it when done. */
void *queue_peek(struct queue *q);
void queue_release(struct queue *q);
/* Nonzero when a slot is reserved but the next one to consume is not committed yet. */
int queue_pending(const struct queue *q);

size_t queue_slot_size(const struct queue *q);

#endif
