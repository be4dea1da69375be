/* The kernel stacks and syscall names of a session's off-CPU intervals, each kept once. A
 * collector's recording writes every interval's stack in full, and a carrier sleeps the same few
 * ways (a futex wait, a nanosleep, a read): kept once each, an interval costs a pointer to its
 * stack, where a copy of every frame cost some 550 bytes, about as much as all else in the
 * report of such a recording. */
#ifndef VTPIN_CLI_KERNEL_STACKS_H
#define VTPIN_CLI_KERNEL_STACKS_H

#include <stddef.h>

struct kernel_stacks;

/* 0 and *out, or -ENOMEM. */
int kernel_stacks_new(struct kernel_stacks **out);
/* The kept copy of frames[0..n) (a NULL frame kept as ""), equal stacks the same pointer; NULL
 * when out of memory. It lives as long as ks, or the store that adopts ks. */
const char *const *kernel_stacks_keep(struct kernel_stacks *ks, char *const *frames, size_t n);
/* The kept copy of s, equal strings the same pointer; NULL when out of memory. */
const char *kernel_stacks_keep_string(struct kernel_stacks *ks, const char *s);
/* From now on ks owns what src kept (src's stacks stay where they are: intervals moved from one
 * session to another keep pointing at them); src is ks's to free. */
void kernel_stacks_adopt(struct kernel_stacks *ks, struct kernel_stacks *src);
/* Distinct stacks and strings kept by ks itself (not those adopted). */
size_t kernel_stacks_count(const struct kernel_stacks *ks);
void kernel_stacks_free(struct kernel_stacks *ks);

#endif
