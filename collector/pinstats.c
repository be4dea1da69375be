#include "pinstats.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/frames_kind.h"
#include "common/hash.h"

#define OPEN_MAX (PINSTATS_OPEN * 3 / 4)

struct pinstats *pinstats_new(void)
{
    struct pinstats *p = calloc(1, sizeof(*p));
    if (!p || table_init(&p->open_ix, OPEN_MAX, TABLE_FIXED)) {
        free(p);
        errno = ENOMEM;
        return NULL;
    }
    return p;
}

void pinstats_free(struct pinstats *p)
{
    if (!p)
        return;
    table_fini(&p->open_ix);
    free(p);
}

size_t pinstats_memory(const struct pinstats *p)
{
    return sizeof(*p) + table_bytes(&p->open_ix);
}

static int open_eq(const void *ctx, uint32_t item, const void *key)
{
    const struct pinstats *p = ctx;
    return p->open[item].pin_id == *(const uint64_t *)key;
}

/* The index of the open pin pin_id, or -1. */
static int find(const struct pinstats *p, uint64_t pin_id)
{
    return (int)table_find(&p->open_ix, hash_u64(pin_id), open_eq, p, &pin_id);
}

/* Forgets open pin i: the last one takes its place. */
static void erase(struct pinstats *p, unsigned i)
{
    unsigned last = p->nopen - 1;
    table_remove(&p->open_ix, hash_u64(p->open[i].pin_id), i);
    if (i != last) {
        table_move(&p->open_ix, hash_u64(p->open[last].pin_id), last, i);
        p->open[i] = p->open[last];
    }
    p->nopen--;
}

/* Index of site s among the sites (added while there is room), -1 for other. */
static int16_t site_index(struct pinstats *p, const char *s)
{
    char name[PINSTATS_SITE_CAP];
    if (!s || !*s)
        s = "unknown";
    size_t n = strlen(s);
    if (n >= PINSTATS_SITE_CAP) {
        n = PINSTATS_SITE_CAP - 1;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) /* s[n] continues a character: cut before it */
            n--;
    }
    memcpy(name, s, n);
    name[n] = '\0';
    for (unsigned i = 0; i < p->nsites; i++)
        if (strcmp(p->sites[i].name, name) == 0)
            return (int16_t)i;
    if (p->nsites == PINSTATS_SITES)
        return -1;
    memcpy(p->sites[p->nsites].name, name, n + 1);
    return (int16_t)p->nsites++;
}

int pinstats_start(struct pinstats *p, uint64_t pin_id, int reason, int origin, const char *site)
{
    if (pin_id == 0 || find(p, pin_id) >= 0)
        return 0;
    if (p->nopen >= OPEN_MAX) {
        /* ends were lost (dropped events, a reconnect): forget the oldest pin */
        unsigned oldest = 0;
        for (unsigned i = 1; i < p->nopen; i++)
            if (p->open[i].pin_id < p->open[oldest].pin_id)
                oldest = i;
        erase(p, oldest);
        p->lost++;
    }
    unsigned i = p->nopen;
    if (table_add(&p->open_ix, hash_u64(pin_id), i))
        return 0; /* cannot happen: room was made above */
    p->open[i].pin_id = pin_id;
    p->open[i].reason = (int16_t)(reason >= 0 && reason < PINSTATS_REASONS ? reason : 0);
    p->open[i].site = site_index(p, site);
    p->open[i].origin = (int8_t)(origin == PIN_ORIGIN_JDK ? PIN_ORIGIN_JDK : PIN_ORIGIN_APP);
    p->nopen++;
    return 1;
}

static void add(struct pinstats_total *t, int64_t ns)
{
    t->count++;
    t->ns += ns > 0 ? (uint64_t)ns : 0;
}

void pinstats_end(struct pinstats *p, uint64_t pin_id, int64_t duration_ns)
{
    int i = pin_id ? find(p, pin_id) : -1;
    if (i < 0)
        return;
    const struct pinstats_open *o = &p->open[i];
    add(&p->reasons[o->reason], duration_ns);
    if (o->origin == PIN_ORIGIN_JDK)
        add(&p->jdk[o->reason], duration_ns);
    add(o->site >= 0 ? &p->sites[o->site].t : &p->other, duration_ns);
    erase(p, (unsigned)i);
}
