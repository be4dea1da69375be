#include "pinstats.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/frames_kind.h"

struct pinstats *pinstats_new(void)
{
    struct pinstats *p = calloc(1, sizeof(*p));
    if (!p)
        errno = ENOMEM;
    return p;
}

void pinstats_free(struct pinstats *p)
{
    free(p);
}

size_t pinstats_memory(const struct pinstats *p)
{
    return sizeof(*p);
}

int16_t pinstats_site(struct pinstats *p, const char *s)
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

static void add(struct pinstats_total *t, int64_t ns)
{
    t->count++;
    t->ns += ns > 0 ? (uint64_t)ns : 0;
}

void pinstats_end(struct pinstats *p, const struct session_pin *pin, int64_t duration_ns)
{
    int reason = pin->reason >= 0 && pin->reason < PINSTATS_REASONS ? pin->reason : 0;
    add(&p->reasons[reason], duration_ns);
    if (pin->origin == PIN_ORIGIN_JDK)
        add(&p->jdk[reason], duration_ns);
    add(pin->site >= 0 && pin->site < (int)p->nsites ? &p->sites[pin->site].t : &p->other, duration_ns);
}
