/* The carrier threads of the virtual-thread scheduler.
 *
 * A fixed registry of slots filled at ThreadStart (and at attach), one
 * single-producer ring per carrier for the exact occupancy source (the
 * VirtualThreadMount/Unmount callbacks append {time, vthread id}), and the
 * fields the writer keeps per carrier for sampling and the native-block
 * watchdog. Callbacks never lock or allocate; a full ring drops and counts. */
#ifndef VTPIN_CARRIERS_H
#define VTPIN_CARRIERS_H

#include <jvmti.h>
#include <stdint.h>

#include "hog_track.h"
#include "jthread.h"
#include "mount_ring.h"
#include "native_awake.h"

enum slot_state { SLOT_FREE = 0, SLOT_CLAIMED, SLOT_LIVE, SLOT_DEAD };

struct carrier_slot {
    _Atomic int state;
    jobject thread;        /* global ref */
    uintptr_t java_thread; /* its JavaThread*, valid while LIVE (vmstructs_thread_state) */
    int tid;
    char name[JTHREAD_NAME_MAX];
    int64_t start_ns;
    struct mount_ring *ring;
    /* this carrier's callbacks only: a record is filled here before a queue slot is taken (pins.c) */
    void *scratch;
    size_t scratch_size;
    int scratch_busy;
    /* writer-only */
    unsigned announced; /* sinks told about this carrier */
    int64_t seen_vthread, watch_since;
    int watch_kind;
    jmethodID native_method;    /* top frame of what the watchdog watches */
    int64_t watch_bci;          /* and its bci (VM_BLOCK) */
    int watch_set_aside;        /* what it watches is a stall of the JVM's own, not a pin (watchdog.c) */
    int stat_fd1, stat_tid;     /* /proc/self/task/TID/stat kept open (fd + 1; 0: none) for stat_tid */
    int status_fd1, status_tid; /* the same for /proc/self/task/TID/status (parked: context switches) */
    int has_switches;
    uint64_t switches; /* voluntary context switches at the last sample that saw it parked */
    uint64_t block_pin;
    struct native_awake awake;       /* block_pin's native call found running between its sleeps (watchdog.c) */
    uint64_t mounts_taken;           /* mounts read from the ring (exact occupancy) */
    _Atomic uint64_t mounts_counted; /* mounts counted on demand (carriers_on_mount_counted; hogs.c) */
    struct hog_track hog;            /* hogs.c: the thread holding it, and whether it is a hog */
    uint64_t hog_id;                 /* of the hog in progress, reported */
    uint32_t hog_stack, hog_culprit, hog_vname;
};

/* record_size: each carrier's scratch record (carriers_scratch_take). 0 or -ENOMEM. */
int carriers_init(unsigned max_carriers, unsigned ring_entries, int exact, size_t record_size);

/* From ThreadStart of a CarrierThread (runs on that thread; agent.c). */
void carriers_register(JNIEnv *jni, jthread thread, int tid, const char *name);
/* From ThreadEnd (runs on the ending thread; agent.c). */
void carriers_unregister(void);
/* Attach: carriers that started before the agent; tids are unknown (0) until seen. */
void carriers_register_existing(jvmtiEnv *jvmti, JNIEnv *jni, jclass carrier_class);

void JNICALL carriers_on_mount(jvmtiEnv *jvmti, JNIEnv *jni, jthread vthread);
void JNICALL carriers_on_unmount(jvmtiEnv *jvmti, JNIEnv *jni, jthread vthread);
/* This carrier's scratch record of at least size bytes, for one callback to fill before it takes a
 * queue slot, so that a slot is never held while its record is made (queue.h). NULL when there is
 * none: a thread with no carrier slot, a depth raised by a later attach, or a callback on this thread
 * that holds it already (a JVMTI event inside one of its JNI calls). Give it back when done. */
void *carriers_scratch_take(size_t size);
void carriers_scratch_give_back(void *scratch);
/* Mounts counted, nothing recorded: the carrier's mounts_counted goes up by one (mount_events.h). */
void JNICALL carriers_on_mount_counted(jvmtiEnv *jvmti, JNIEnv *jni, jthread vthread);

/* Writer side. */
unsigned carriers_capacity(void);
struct carrier_slot *carriers_slot(unsigned i); /* NULL unless LIVE or DEAD */
struct carrier_slot *carriers_by_tid(int tid);  /* the LIVE carrier with this OS tid, or NULL */
/* Frees a DEAD slot (deletes its global ref) once the writer is done with it. */
void carriers_release(JNIEnv *jni, struct carrier_slot *slot);
/* Moves up to cap entries out of the slot's ring. */
unsigned carriers_take(struct carrier_slot *slot, struct mount_entry *out, unsigned cap);
uint64_t carriers_dropped(void);      /* ring overflows + mounts on unregistered carriers */
uint64_t carriers_unregistered(void); /* carriers beyond the registry's capacity */

#endif
