#include "api_pins.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"

struct kept_pin {
    int64_t start_ns;
    char *record;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int enabled;
static struct {
    struct kept_pin *ring; /* API_PINS_KEPT slots; head is the oldest */
    unsigned head, count;
    size_t bytes; /* of the records kept */
    uint64_t evictions;
    int64_t latest_evicted_start; /* the latest start among the pins dropped, INT64_MIN: none */
    char *in_progress;
} kept;

int api_pins_enable(void)
{
    if (atomic_load(&enabled))
        return 0;
    int rc = 0;
    pthread_mutex_lock(&lock);
    if (!kept.ring) {
        kept.ring = calloc(API_PINS_KEPT, sizeof(*kept.ring));
        rc = kept.ring ? 0 : -ENOMEM;
        kept.latest_evicted_start = INT64_MIN;
    }
    if (!rc)
        atomic_store(&enabled, 1);
    pthread_mutex_unlock(&lock);
    return rc;
}

int api_pins_enabled(void)
{
    return atomic_load_explicit(&enabled, memory_order_relaxed);
}

void api_pins_put_ended(int64_t start_ns, char *record)
{
    pthread_mutex_lock(&lock);
    if (!kept.ring) {
        pthread_mutex_unlock(&lock);
        free(record);
        return;
    }
    size_t len = strlen(record);
    while (kept.count && (kept.count == API_PINS_KEPT || kept.bytes + len > API_PINS_BYTES)) {
        struct kept_pin *old = &kept.ring[kept.head];
        if (old->start_ns > kept.latest_evicted_start)
            kept.latest_evicted_start = old->start_ns;
        kept.bytes -= strlen(old->record);
        free(old->record);
        kept.head = (kept.head + 1) % API_PINS_KEPT;
        kept.count--;
        kept.evictions++;
    }
    kept.ring[(kept.head + kept.count) % API_PINS_KEPT] = (struct kept_pin){start_ns, record};
    kept.count++;
    kept.bytes += len;
    pthread_mutex_unlock(&lock);
}

void api_pins_set_in_progress(char *records)
{
    pthread_mutex_lock(&lock);
    free(kept.in_progress);
    kept.in_progress = records;
    pthread_mutex_unlock(&lock);
}

uint64_t api_pins_evictions(void)
{
    pthread_mutex_lock(&lock);
    uint64_t n = kept.evictions;
    pthread_mutex_unlock(&lock);
    return n;
}

char *api_pins_since(int64_t since_ns, uint64_t evictions_before, size_t *len)
{
    struct strbuf b = {0};
    pthread_mutex_lock(&lock);
    for (unsigned i = 0; kept.ring && i < kept.count; i++) {
        const struct kept_pin *k = &kept.ring[(kept.head + i) % API_PINS_KEPT];
        if (k->start_ns >= since_ns && k->record)
            strbuf_printf(&b, "%s", k->record);
    }
    if (kept.in_progress)
        strbuf_printf(&b, "%s", kept.in_progress);
    /* none of the caller's was dropped unless a dropped pin started at or after since_ns; then
     * the evictions since its mark are as many as it can have lost (at least one) */
    if (kept.latest_evicted_start >= since_ns && kept.evictions > 0) {
        uint64_t lost = kept.evictions > evictions_before ? kept.evictions - evictions_before : 1;
        strbuf_printf(&b, "dropped\t%llu\n", (unsigned long long)lost);
    }
    pthread_mutex_unlock(&lock);
    if (b.oom) {
        strbuf_fini(&b);
        return NULL;
    }
    if (!b.s) {
        b.s = calloc(1, 1);
        if (!b.s)
            return NULL;
    }
    *len = b.len;
    return b.s;
}

void api_pins_reset(void)
{
    pthread_mutex_lock(&lock);
    atomic_store(&enabled, 0);
    for (unsigned i = 0; kept.ring && i < kept.count; i++)
        free(kept.ring[(kept.head + i) % API_PINS_KEPT].record);
    free(kept.ring);
    free(kept.in_progress);
    memset(&kept, 0, sizeof(kept));
    pthread_mutex_unlock(&lock);
}
