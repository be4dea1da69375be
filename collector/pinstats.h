/* Pinned time of one JVM by reason and by pin site, for the metrics
 * (metrics.h). A pin counts when it ends (PinEnd carries its duration), as
 * Micrometer's jvm.threads.virtual.pinned timer does; pins in progress are
 * remembered from their PinStart for their reason and site.
 *
 * Bounded: PINSTATS_SITES sites per JVM: the first PINSTATS_SITES distinct
 * sites (culprit frames) seen keep their own totals for the JVM's life, so
 * every total only grows; the time of any later site goes to `other`. At most
 * PINSTATS_OPEN pins in progress are remembered: when full (pin ends lost on
 * the way), the oldest is forgotten and counted in `lost`. Pure: no I/O. */
#ifndef VTPIN_COLLECTOR_PINSTATS_H
#define VTPIN_COLLECTOR_PINSTATS_H

#include <stddef.h>
#include <stdint.h>

#include "common/table.h"

#include "wire_names.h"

#define PINSTATS_REASONS WIRE_REASON_COUNT /* vtpin.v1.PinReason; other values count as 0 */
#define PINSTATS_SITES 20
#define PINSTATS_SITE_CAP 256 /* bytes of a site name, NUL included (longer ones are cut) */
#define PINSTATS_OPEN 1024    /* 3/4 of it are remembered */

struct pinstats_total {
    uint64_t count;
    uint64_t ns;
};

struct pinstats_site {
    char name[PINSTATS_SITE_CAP];
    struct pinstats_total t;
};

struct pinstats_open {
    uint64_t pin_id;
    int16_t reason;
    int16_t site;  /* index into sites, -1: other */
    int8_t origin; /* enum pin_origin (common/frames_kind.h) */
};

struct pinstats {
    struct pinstats_total reasons[PINSTATS_REASONS]; /* every pin, by reason */
    struct pinstats_total jdk[PINSTATS_REASONS];     /* of which the JDK's own (origin jdk), by reason */
    struct pinstats_site sites[PINSTATS_SITES];
    unsigned nsites;
    struct pinstats_total other; /* sites beyond the first PINSTATS_SITES */
    uint64_t lost;               /* pins in progress forgotten: the table was full */
    unsigned nopen;
    struct pinstats_open open[PINSTATS_OPEN * 3 / 4]; /* the first nopen, by pin_id in open_ix */
    struct table open_ix;
};

/* NULL with errno ENOMEM. */
struct pinstats *pinstats_new(void);
void pinstats_free(struct pinstats *p);
/* Bytes it holds. */
size_t pinstats_memory(const struct pinstats *p);

/* A pin began: its reason, its origin (enum pin_origin) and site (the culprit frame;
 * NULL or "": "unknown"). A PinStart re-sent after a reconnect (same pin_id, still
 * open) changes nothing. 1 when the pin was not open before, else 0. */
int pinstats_start(struct pinstats *p, uint64_t pin_id, int reason, int origin, const char *site);
/* A pin ended after duration_ns: counted under its reason and site, once.
 * Ends of pins never started (or forgotten) are ignored. */
void pinstats_end(struct pinstats *p, uint64_t pin_id, int64_t duration_ns);

#endif
