#ifndef VTPIN_CLOCK_H
#define VTPIN_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline int64_t clock_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* At most `max` of something a second: the writer's looks that cost the JVM a safepoint or handshake. */
struct per_second {
    int64_t window_ns;
    unsigned used;
};

/* 1 when one more fits in the second now_ns falls in (and takes it), else 0. */
static inline int per_second_take(struct per_second *b, int64_t now_ns, unsigned max)
{
    if (now_ns - b->window_ns >= 1000000000LL) {
        b->window_ns = now_ns;
        b->used = 0;
    }
    return ++b->used <= max;
}

static inline int64_t clock_unix_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

#endif
