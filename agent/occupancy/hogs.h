/* Carrier hogs on the writer side: each sample of a carrier (sampler.c) goes
 * through its hog_track (hog_track.h); a hog is reported once it has lasted
 * hog= (HogStart: its virtual thread, carrier, a stack taken while it runs and
 * its top application frame) and when it ends (HogEnd). Without exact
 * occupancy it switches the counting of mounts on and off (mount_events.h).
 * Writer thread only. */
#ifndef VTPIN_HOGS_H
#define VTPIN_HOGS_H

#include <jvmti.h>
#include <stdint.h>

#include "carriers.h"
#include "symbols.h"
#include "writer_config.h"

int hogs_init(const struct writer_config *cfg, struct symbols *symbols); /* 0 or -ENOMEM */
void hogs_fini(void);

/* hog= is on: samples are worth taking. */
int hogs_enabled(void);
/* One sample of carrier c: vt (a local ref, or NULL) mounted with id vid, or none (vid 0). */
void hogs_sample(JNIEnv *jni, struct carrier_slot *c, jthread vt, int64_t vid, int64_t now);
/* After a round's samples: without exact occupancy, mounts are counted (mount_events.h) from
 * shortly before a watch reaches hog= to its end, and only then (hog_track.h). */
void hogs_round_end(void);
/* The carrier ended: its hog in progress ends now. */
void hogs_carrier_gone(struct carrier_slot *c, int64_t now);
/* 1 when a hog is in progress on c, reported: its virtual thread's id and name (NULL: none known) in
 * *vthread_id and *name; else 0. */
int hogs_on(const struct carrier_slot *c, int64_t *vthread_id, const char **name);
/* The hogs in progress again, to a new collector connection. */
void hogs_resend(unsigned sinks);
uint64_t hogs_reported(void);

#endif
