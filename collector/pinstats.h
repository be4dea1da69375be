/* Pinned time of one JVM by reason and by pin site, for the metrics
 * (metrics.h). A pin counts when it ends (PinEnd carries its duration), as
 * Micrometer's jvm.threads.virtual.pinned timer does; its reason, origin and
 * site come from its start, which the JVM's table of pins in progress
 * (proto/session_pins.h) keeps until then.
 *
 * Bounded: PINSTATS_SITES sites per JVM: the first PINSTATS_SITES distinct
 * sites (culprit frames) seen keep their own totals for the JVM's life, so
 * every total only grows; the time of any later site goes to `other`.
 * Pure: no I/O. */
#ifndef VTPIN_COLLECTOR_PINSTATS_H
#define VTPIN_COLLECTOR_PINSTATS_H

#include <stddef.h>
#include <stdint.h>

#include "session_pins.h"
#include "wire_names.h"

#define PINSTATS_REASONS WIRE_REASON_COUNT /* vtpin.v1.PinReason; other values count as 0 */
#define PINSTATS_SITES 20
#define PINSTATS_SITE_CAP 256 /* bytes of a site name, NUL included (longer ones are cut) */

struct pinstats_total {
    uint64_t count;
    uint64_t ns;
};

struct pinstats_site {
    char name[PINSTATS_SITE_CAP];
    struct pinstats_total t;
};

struct pinstats {
    struct pinstats_total reasons[PINSTATS_REASONS]; /* every pin, by reason */
    struct pinstats_total jdk[PINSTATS_REASONS];     /* of which the JDK's own (origin jdk), by reason */
    struct pinstats_site sites[PINSTATS_SITES];
    unsigned nsites;
    struct pinstats_total other; /* sites beyond the first PINSTATS_SITES */
};

/* NULL with errno ENOMEM. */
struct pinstats *pinstats_new(void);
void pinstats_free(struct pinstats *p);
/* Bytes it holds. */
size_t pinstats_memory(const struct pinstats *p);

/* The site of a pin that begins: the index of its culprit frame's text (NULL or "": "unknown")
 * among the sites, added while there is room; -1: other. For session_pin.site. */
int16_t pinstats_site(struct pinstats *p, const char *site);
/* A pin ended after duration_ns: counted under its start's reason, origin and site. */
void pinstats_end(struct pinstats *p, const struct session_pin *pin, int64_t duration_ns);

#endif
