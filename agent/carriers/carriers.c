#include "carriers.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock.h"
#include "jthread.h"
#include "self_cost.h"
#include "vmstructs.h"

static struct carrier_slot *slots;
static unsigned slot_count;
static unsigned mounts_per_ring;
static int exact_source;
static size_t scratch_bytes;
static _Atomic uint64_t dropped, unregistered;
/* Bumped when carriers_register_existing registers carriers from outside their own threads. */
static _Atomic unsigned registry_generation;

/* The carrier's own slot, so the mount callbacks find their ring without a lookup. */
static __thread struct carrier_slot *my_slot;
/* The registry generation this thread last looked itself up in (found nothing). */
static __thread unsigned my_lookup_generation;

int carriers_init(unsigned max_carriers, unsigned ring_entries, int exact, size_t record_size)
{
    if (slots)
        return 0;
    slots = calloc(max_carriers, sizeof(*slots));
    if (!slots)
        return -ENOMEM;
    slot_count = max_carriers;
    mounts_per_ring = ring_entries;
    exact_source = exact;
    scratch_bytes = record_size;
    return 0;
}

static struct carrier_slot *claim(void)
{
    for (unsigned i = 0; i < slot_count; i++) {
        int expected = SLOT_FREE;
        if (atomic_compare_exchange_strong(&slots[i].state, &expected, SLOT_CLAIMED))
            return &slots[i];
    }
    atomic_fetch_add(&unregistered, 1);
    return NULL;
}

static void publish(struct carrier_slot *s, JNIEnv *jni, jthread thread, int tid, const char *name)
{
    s->thread = (*jni)->NewGlobalRef(jni, thread);
    s->java_thread = vmstructs_java_thread(jni, thread);
    s->tid = tid;
    memcpy(s->name, name, JTHREAD_NAME_MAX);
    s->name[JTHREAD_NAME_MAX - 1] = '\0';
    s->start_ns = clock_mono_ns();
    s->announced = 0;
    s->seen_vthread = s->watch_since = 0;
    s->watch_kind = 0;
    s->native_method = NULL;
    s->block_pin = 0;
    if (exact_source && !s->ring)
        s->ring = mount_ring_new(mounts_per_ring); /* kept across reuse of the slot */
    else if (s->ring)
        mount_ring_clear(s->ring);
    if (!s->scratch) { /* kept across reuse too; none (out of memory): records are filled in their slot */
        s->scratch = malloc(scratch_bytes);
        s->scratch_size = s->scratch ? scratch_bytes : 0;
    }
    s->scratch_busy = 0;
    atomic_store_explicit(&s->state, SLOT_LIVE, memory_order_release);
}

void carriers_register(JNIEnv *jni, jthread thread, int tid, const char *name)
{
    if (!slots || my_slot)
        return;
    struct carrier_slot *s = claim();
    if (!s)
        return;
    publish(s, jni, thread, tid, name);
    my_slot = s;
}

void carriers_unregister(void)
{
    if (my_slot)
        atomic_store_explicit(&my_slot->state, SLOT_DEAD, memory_order_release);
    my_slot = NULL;
}

void carriers_register_existing(jvmtiEnv *jvmti, JNIEnv *jni, jclass carrier_class)
{
    jint n = 0;
    jthread *threads = NULL;
    if (!slots || !carrier_class ||
        COUNTED(CALL_GET_ALL_THREADS, (*jvmti)->GetAllThreads(jvmti, &n, &threads)) != JVMTI_ERROR_NONE)
        return;
    /* Registered by an earlier session (attach, stop, attach): a carrier that
     * ended meanwhile (no ThreadEnd while stopped) is let go, a live one kept. */
    int *known = calloc((size_t)n + 1, sizeof(*known));
    for (unsigned k = 0; k < slot_count; k++) {
        if (atomic_load(&slots[k].state) != SLOT_LIVE)
            continue;
        int alive = 0;
        for (jint i = 0; i < n && !alive; i++)
            if ((*jni)->IsSameObject(jni, slots[k].thread, threads[i])) {
                alive = 1;
                if (known)
                    known[i] = 1;
            }
        if (!alive)
            atomic_store_explicit(&slots[k].state, SLOT_DEAD, memory_order_release);
    }
    for (jint i = 0; i < n; i++) {
        if (known && known[i]) {
            (*jni)->DeleteLocalRef(jni, threads[i]);
            continue;
        }
        if ((*jni)->IsInstanceOf(jni, threads[i], carrier_class)) {
            jvmtiThreadInfo info;
            memset(&info, 0, sizeof(info));
            char name[JTHREAD_NAME_MAX] = "";
            if ((*jvmti)->GetThreadInfo(jvmti, threads[i], &info) == JVMTI_ERROR_NONE && info.name) {
                strncpy(name, info.name, JTHREAD_NAME_MAX - 1);
                (*jvmti)->Deallocate(jvmti, (unsigned char *)info.name);
            }
            struct carrier_slot *s = claim();
            if (s)
                publish(s, jni, threads[i], vmstructs_thread_tid(jni, threads[i]), name);
        }
        (*jni)->DeleteLocalRef(jni, threads[i]);
    }
    free(known);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)threads);
    atomic_fetch_add_explicit(&registry_generation, 1, memory_order_release); /* their threads look again */
}

/* This carrier's slot. A carrier registered after the fact (dynamic attach: carriers_register_existing
 * runs on another thread) finds it at its first mount by its OS tid, once per registration round: its
 * thread-local was never set, and exact occupancy after attach recorded no mount at all before. */
static struct carrier_slot *this_carriers_slot(void)
{
    if (my_slot)
        return my_slot;
    unsigned generation = atomic_load_explicit(&registry_generation, memory_order_acquire);
    if (!slots || generation == my_lookup_generation)
        return NULL;
    my_lookup_generation = generation;
    int tid = (int)syscall(SYS_gettid);
    for (unsigned i = 0; i < slot_count; i++)
        if (atomic_load_explicit(&slots[i].state, memory_order_acquire) == SLOT_LIVE && slots[i].tid == tid)
            return my_slot = &slots[i];
    return NULL;
}

static void record_mount(JNIEnv *jni, jthread vthread, int mounted)
{
    struct carrier_slot *s = this_carriers_slot();
    struct mount_ring *r = s ? s->ring : NULL;
    if (!r || mount_ring_push(r, clock_mono_ns(), mounted ? jthread_id(jni, vthread) : 0) != 0)
        atomic_fetch_add_explicit(&dropped, 1, memory_order_relaxed);
}

void JNICALL carriers_on_mount(jvmtiEnv *jvmti, JNIEnv *jni, jthread vthread)
{
    (void)jvmti;
    record_mount(jni, vthread, 1);
}

void JNICALL carriers_on_unmount(jvmtiEnv *jvmti, JNIEnv *jni, jthread vthread)
{
    (void)jvmti;
    record_mount(jni, vthread, 0);
}

void *carriers_scratch_take(size_t size)
{
    struct carrier_slot *s = this_carriers_slot();
    if (!s || !s->scratch || s->scratch_size < size || s->scratch_busy)
        return NULL;
    s->scratch_busy = 1;
    return s->scratch;
}

void carriers_scratch_give_back(void *scratch)
{
    struct carrier_slot *s = this_carriers_slot();
    if (s && scratch && s->scratch == scratch)
        s->scratch_busy = 0;
}

void JNICALL carriers_on_mount_counted(jvmtiEnv *jvmti, JNIEnv *jni, jthread vthread)
{
    (void)jvmti;
    (void)jni;
    (void)vthread;
    struct carrier_slot *s = this_carriers_slot();
    if (s) /* one writer (this carrier), one reader (the writer thread) */
        atomic_fetch_add_explicit(&s->mounts_counted, 1, memory_order_relaxed);
}

unsigned carriers_capacity(void)
{
    return slot_count;
}

struct carrier_slot *carriers_slot(unsigned i)
{
    if (i >= slot_count)
        return NULL;
    int st = atomic_load_explicit(&slots[i].state, memory_order_acquire);
    return st == SLOT_LIVE || st == SLOT_DEAD ? &slots[i] : NULL;
}

struct carrier_slot *carriers_by_tid(int tid)
{
    for (unsigned i = 0; tid > 0 && i < slot_count; i++) {
        struct carrier_slot *c = carriers_slot(i);
        if (c && c->tid == tid && atomic_load(&c->state) == SLOT_LIVE)
            return c;
    }
    return NULL;
}

void carriers_release(JNIEnv *jni, struct carrier_slot *s)
{
    if (atomic_load(&s->state) != SLOT_DEAD)
        return;
    if (s->thread && jni)
        (*jni)->DeleteGlobalRef(jni, s->thread);
    s->thread = NULL;
    if (s->stat_fd1 > 0)
        close(s->stat_fd1 - 1);
    s->stat_fd1 = 0;
    if (s->status_fd1 > 0)
        close(s->status_fd1 - 1);
    s->status_fd1 = 0;
    s->has_switches = 0;
    atomic_store_explicit(&s->state, SLOT_FREE, memory_order_release);
}

unsigned carriers_take(struct carrier_slot *s, struct mount_entry *out, unsigned cap)
{
    return s->ring ? mount_ring_take(s->ring, out, cap) : 0;
}

uint64_t carriers_dropped(void)
{
    return atomic_load_explicit(&dropped, memory_order_relaxed);
}

uint64_t carriers_unregistered(void)
{
    return atomic_load_explicit(&unregistered, memory_order_relaxed);
}
