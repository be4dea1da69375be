/* The native-block and VM-block watchdog: pins no callback sees. At each
 * sample it classifies what the virtual thread mounted on a sleeping carrier
 * is doing (in a native method, parked while mounted after attach, blocked
 * inside the JVM); the same state in two samples in a row is a pin
 * (NATIVE_BLOCK, VM_BLOCK, or a park pin found without breakpoints), started
 * at the first sample that saw it and ended when the state changes. Writer
 * thread only (it does file I/O and JVMTI calls). */
#ifndef VTPIN_WATCHDOG_H
#define VTPIN_WATCHDOG_H

#include <jvmti.h>
#include <stdint.h>

#include "carriers.h"
#include "writer_config.h"

int watchdog_init(const struct writer_config *cfg, jvmtiEnv *jvmti); /* 0 or -ENOMEM */
void watchdog_fini(void);

/* Whether carrier c must be classified this sample: its JavaThread is in
 * native or blocked, or it is already watched. The sampler then asks JVMTI
 * (which disables virtual-thread transitions) only when a virtual thread is
 * mounted on it. */
int watchdog_must_look(struct carrier_slot *c);
/* One sample of carrier c in the round that began at round_ns: vt (NULL: nothing
 * to classify) is its mounted virtual thread, vid its id (0: none). */
void watchdog_sample(struct carrier_slot *c, jthread vt, int64_t vid, int64_t round_ns);
/* Ends the carrier's watchdog pin, if any (the carrier ended). */
void watchdog_end(struct carrier_slot *c, int64_t now);
/* Forgets what was watched on c (a new session looks afresh). */
void watchdog_forget(struct carrier_slot *c);

#endif
