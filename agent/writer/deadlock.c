#include "deadlock.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "active_pins.h"
#include "blocker.h"
#include "carriers.h"
#include "clock.h"
#include "hogs.h"
#include "jthread.h"
#include "log.h"
#include "outputs.h"
#include "pin_cycle.h"
#include "self_cost.h"
#include "trace.h"
#include "writer_thread.h"

/* Carriers looked at; a scheduler with more is not judged (said nowhere: none seen so large). */
#define DEADLOCK_CARRIERS_MAX 64
#define DEADLOCK_TEXT_MAX 1024

/* The longest cycle said whole. */
#define DEADLOCK_CYCLE_MAX 8

/* A starvation with hogged carriers is said once it has held this long: a hog may yet finish its
 * computation and free its carrier, where a pin behind the starved owner cannot. */
#define DEADLOCK_HOG_HOLD_NS 1000000000LL

static struct {
    int64_t next_ns;
    uint64_t said;       /* the pins of the carrier starvation said last (their ids' sum): not said twice */
    uint64_t said_cycle; /* the same for the cycle said last */
    uint64_t hog_seen;   /* pins and hogs of a starvation with hogs seen last (ids' sum), since hog_since */
    int64_t hog_since;
} dl;

/* A pinned carrier as looked at: its pin, the virtual thread waiting on it, and what it waits for. */
struct pinned {
    const struct carrier_slot *carrier;
    const struct pin_brief *pin;
    jthread waiter;
    jobject sync;               /* the j.u.c. lock's synchronizer, or the monitor */
    jthread owner;              /* the virtual thread on no carrier at the chain's end */
    int monitor;                /* blocked entering the monitor sync, not parked on a lock */
    char via[JTHREAD_NAME_MAX]; /* the first owner, when it is a platform thread that itself waits: "" none */
};

/* A carrier held by a hog (hogs.h): a virtual thread computing without unmounting. */
struct hogged {
    const struct carrier_slot *carrier;
    int64_t vthread_id;
    const char *name; /* NULL: not known */
};

void deadlock_reset(void)
{
    memset(&dl, 0, sizeof(dl));
}

static const struct pin_brief *pin_on(const struct pin_brief *pins, unsigned n, int tid)
{
    for (unsigned i = 0; i < n; i++)
        if (pins[i].carrier_tid == tid)
            return &pins[i];
    return NULL;
}

static jint state_of(jvmtiEnv *jvmti, jthread t)
{
    jint st = 0;
    return COUNTED(CALL_GET_THREAD_STATE, (*jvmti)->GetThreadState(jvmti, t, &st)) == JVMTI_ERROR_NONE ? st : 0;
}

/* The pinned carrier's virtual thread waits, untimed, for what a virtual thread owns: parked on a
 * java.util.concurrent lock (JNI reads), or (24+, where a virtual owner can unmount holding a
 * monitor) blocked entering a monitor whose owner its blocker named virtual and unmounted, looked
 * at again now (one look from the blockers' budget: only pins whose blocker said so cost one).
 * p's waiter, sync, owner and monitor set (local refs), 1; else 0. */
static int waits_on_virtual_owner(JNIEnv *jni, jvmtiEnv *jvmti, struct pinned *p)
{
    jthread vt = NULL;
    if (jthread_mounted(jni, p->carrier->thread, &vt) != 0 || !vt)
        return 0;
    p->waiter = vt;
    if (jthread_id(jni, vt) != p->pin->vthread_id)
        return 0;
    jint st = state_of(jvmti, vt);
    if (st & JVMTI_THREAD_STATE_WAITING_INDEFINITELY)
        return blocker_lock_of(jni, vt, &p->sync, &p->owner) && p->owner && (*jni)->IsVirtualThread(jni, p->owner);
    const struct blocker *b = p->pin->blocker;
    if (!(st & JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER) || !b || b->what != BLOCKER_MONITOR || !b->has_thread ||
        !b->is_virtual || b->carrier_tid)
        return 0;
    p->monitor = 1;
    p->owner = blocker_monitor_owner(jni, vt, clock_mono_ns(), &p->sync);
    return p->owner && (*jni)->IsVirtualThread(jni, p->owner);
}

/* What platform thread t waits for, untimed, as blocker.h names it: the owner of the j.u.c. lock it
 * is parked on, or (a look) of the monitor it is blocked entering. A new local ref, or NULL. */
static jthread platform_waits_for(JNIEnv *jni, jvmtiEnv *jvmti, jthread t)
{
    jint st = state_of(jvmti, t);
    jobject what = NULL;
    jthread owner = NULL;
    if (st & JVMTI_THREAD_STATE_WAITING_INDEFINITELY)
        blocker_lock_of(jni, t, &what, &owner);
    else if (st & JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER)
        owner = blocker_monitor_owner(jni, t, clock_mono_ns(), &what);
    if (what)
        (*jni)->DeleteLocalRef(jni, what);
    return owner;
}

/* waits_on_virtual_owner, and when the owner is a platform thread, the chain on (blocker.h): that
 * thread waits, untimed, for a lock or monitor whose owner ... is a virtual thread, within
 * BLOCKER_CHAIN_MAX hops. A platform thread waits as long as the virtual thread at the end of its
 * chain, which needs a carrier. p->owner becomes that virtual thread, p->via the first owner. */
static int waits_on_chain_to_virtual(JNIEnv *jni, jvmtiEnv *jvmti, struct pinned *p)
{
    if (waits_on_virtual_owner(jni, jvmti, p))
        return 1;
    if (!p->owner || (*jni)->IsVirtualThread(jni, p->owner))
        return 0; /* waits for nothing such, or for a virtual owner that is not this kind */
    jthread_copy_name(jni, p->owner, p->via);
    for (int hop = 0; hop < BLOCKER_CHAIN_MAX && p->owner && !(*jni)->IsVirtualThread(jni, p->owner); hop++) {
        jthread next = platform_waits_for(jni, jvmti, p->owner);
        (*jni)->DeleteLocalRef(jni, p->owner);
        p->owner = next;
    }
    return p->owner && (*jni)->IsVirtualThread(jni, p->owner);
}

static void release(JNIEnv *jni, struct pinned *on, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        jobject refs[] = {on[i].waiter, on[i].sync, on[i].owner};
        for (unsigned k = 0; k < 3; k++)
            if (refs[k])
                (*jni)->DeleteLocalRef(jni, refs[k]);
    }
}

static void say(JNIEnv *jni, const struct pinned *on, unsigned n, const struct hogged *hogs, unsigned n_hogs,
                unsigned parallelism, const struct pinned *starving, jint state)
{
    char owner[JTHREAD_NAME_MAX], lock[BLOCKER_CLASS_MAX], text[DEADLOCK_TEXT_MAX], held[96];
    jthread_copy_name(jni, starving->owner, owner);
    blocker_class_name(jni, starving->sync, lock, sizeof(lock));
    if (n_hogs)
        snprintf(held, sizeof(held), "pinned or hogged (%u pinned, %u hogged), each pin", n, n_hogs);
    else
        snprintf(held, sizeof(held), "pinned, each");
    unsigned monitors = 0;
    for (unsigned i = 0; i < n; i++)
        monitors += on[i].monitor != 0;
    const char *waits = !monitors      ? "a park on a java.util.concurrent lock"
                        : monitors < n ? "a park on a java.util.concurrent lock or an entry to a monitor"
                                       : "an entry to a monitor";
    int chained = 0;
    for (unsigned i = 0; i < n; i++)
        chained |= on[i].via[0] != 0;
    char holds[JTHREAD_NAME_MAX + 48] = "";
    if (starving->via[0]) /* the owner of the waiter's lock waits for the starving one in turn */
        snprintf(holds, sizeof(holds), "what \"%s\" waits for, which holds ", starving->via);
    size_t len = (size_t)snprintf(
        text, sizeof(text),
        "deadlock (carrier starvation): all %u carriers of the scheduler (parallelism %u) are %s by %s whose "
        "owner %s a virtual thread on no carrier; \"%s\" (virtual thread %lld, %s) holds %sthe %s%s that \"%s\" "
        "waits for, and can release it only on a carrier, which none of the pins can free%s. Pinned:",
        n + n_hogs, parallelism, held, waits, chained ? "is, or waits for," : "is", owner,
        (long long)jthread_id(jni, starving->owner), blocker_state_name(state, 1), holds, lock,
        starving->monitor ? " monitor" : "", starving->pin->vthread_name, n_hogs ? " and no hog gives up" : "");
    for (unsigned i = 0; i < n && len < sizeof(text); i++) {
        char waits_for[JTHREAD_NAME_MAX], via[JTHREAD_NAME_MAX + 32] = "";
        jthread_copy_name(jni, on[i].owner, waits_for);
        if (on[i].via[0])
            snprintf(via, sizeof(via), "\"%s\", which waits for ", on[i].via);
        len += (size_t)snprintf(text + len, sizeof(text) - len, "%s %s by \"%s\" (pin #%llu, waits for %s\"%s\")",
                                i ? "," : "", on[i].carrier->name, on[i].pin->vthread_name,
                                (unsigned long long)on[i].pin->pin_id, via, waits_for);
    }
    for (unsigned i = 0; i < n_hogs && len < sizeof(text); i++)
        len += (size_t)snprintf(text + len, sizeof(text) - len, "%s %s by \"%s\" (virtual thread %lld, computing)",
                                i ? "," : ". Hogged:", hogs[i].carrier->name, hogs[i].name ? hogs[i].name : "",
                                (long long)hogs[i].vthread_id);
    outputs_say(SINK_RECORD | SINK_LINK, VTPIN__V1__SEVERITY__ERROR, "deadlock.carrier_starvation", text);
    log_tell("%s", text);
}

/* The owner that starves, when each pinned carrier's virtual thread waits, untimed, for a lock or
 * a monitor owned by a virtual thread on no carrier (waits_on_virtual_owner; a mounted owner would
 * be one of the waiters: not this kind): a runnable one when there is one, else the first; NULL when it is not so.
 * Runnable or not (on 25 an owner's sleep stays TIMED_PARKED past its end: the task that would unpark it needs a
 * carrier too), an owner releases its lock only on a carrier, and none can be freed. */
static const struct pinned *starving_owner(JNIEnv *jni, jvmtiEnv *jvmti, struct pinned *on, unsigned n,
                                           const struct hogged *hogs, unsigned n_hogs, jint *state)
{
    for (unsigned i = 0; i < n; i++)
        if (!waits_on_chain_to_virtual(jni, jvmti, &on[i]))
            return NULL;
    const struct pinned *starving = NULL;
    for (unsigned i = 0; i < n; i++) {
        for (unsigned k = 0; k < n; k++)
            if ((*jni)->IsSameObject(jni, on[i].owner, on[k].waiter))
                return NULL;
        int64_t owner_id = jthread_id(jni, on[i].owner);
        for (unsigned k = 0; k < n_hogs; k++)
            if (hogs[k].vthread_id == owner_id) /* a hogging owner has a carrier: it may yet unlock */
                return NULL;
        jint st = state_of(jvmti, on[i].owner);
        if (!starving || ((st & JVMTI_THREAD_STATE_RUNNABLE) && !(*state & JVMTI_THREAD_STATE_RUNNABLE))) {
            starving = &on[i];
            *state = st;
        }
    }
    return starving;
}

/* What pin p waits for, in a few words: "the java.lang.Object monitor", "the ...ReentrantLock". */
static const char *waited_for(const struct pin_brief *p, char *out, size_t cap)
{
    const struct blocker *b = p->blocker;
    snprintf(out, cap, "the %s%s", b->object_class[0] ? b->object_class : "unknown object",
             b->what == BLOCKER_MONITOR ? " monitor" : "");
    return out;
}

static void say_cycle(struct symbols *symbols, const struct pin_brief *pins, const unsigned *ring, unsigned len)
{
    char text[DEADLOCK_TEXT_MAX];
    size_t n = (size_t)snprintf(text, sizeof(text),
                                "deadlock (cycle): %u pinned virtual threads wait for each other, each for what the "
                                "next one holds, and none can go on:",
                                len);
    for (unsigned i = 0; i < len && n < sizeof(text); i++) {
        const struct pin_brief *p = &pins[ring[i]], *next = &pins[ring[(i + 1) % len]];
        const struct carrier_slot *c = carriers_by_tid(p->carrier_tid);
        char frame[512] = "", what[BLOCKER_CLASS_MAX + 16];
        if (p->stack)
            trace_format_frame(symbols, p->stack, p->culprit, frame, sizeof(frame));
        n += (size_t)snprintf(text + n, sizeof(text) - n, "%s \"%s\" (pin #%llu on %s%s%s) waits for %s held by \"%s\"",
                              i ? ";" : "", p->vthread_name, (unsigned long long)p->pin_id, c ? c->name : "a carrier",
                              frame[0] ? ", at " : "", frame, waited_for(p, what, sizeof(what)), next->vthread_name);
    }
    outputs_say(SINK_RECORD | SINK_LINK, VTPIN__V1__SEVERITY__ERROR, "deadlock.cycle", text);
    log_tell("%s", text);
}

/* Each pin of the cycle still waits for the next one's thread: its blocker looked at again now
 * (the looks that made the cycle were each made once, as its pin crossed the threshold, and an
 * owner may have changed since). Uses the blockers' look budget. */
static int cycle_holds(const struct pin_brief *pins, const unsigned *ring, unsigned len)
{
    JNIEnv *jni = writer_thread_jni();
    if (!jni)
        return 0;
    int holds = 1;
    for (unsigned i = 0; holds && i < len; i++) {
        const struct pin_brief *p = &pins[ring[i]], *next = &pins[ring[(i + 1) % len]];
        const struct carrier_slot *c = carriers_by_tid(p->carrier_tid);
        jthread vt = NULL;
        holds = c && jthread_mounted(jni, c->thread, &vt) == 0 && vt && jthread_id(jni, vt) == p->vthread_id;
        struct blocker b;
        if (holds) {
            int found = p->blocker->what == BLOCKER_LOCK ? blocker_find_lock(jni, vt, clock_mono_ns(), &b, NULL)
                                                         : blocker_find(jni, vt, clock_mono_ns(), &b, NULL);
            holds = found == 1 && b.has_thread && b.id == next->vthread_id;
        }
        if (vt)
            (*jni)->DeleteLocalRef(jni, vt);
    }
    return holds;
}

/* A cycle among the pins in progress (pin_cycle.h), from their blockers: said once. 1 when there is one. */
static int check_cycle(struct symbols *symbols, const struct pin_brief *pins, unsigned count)
{
    struct pin_edge edges[DEADLOCK_CARRIERS_MAX];
    for (unsigned i = 0; i < count; i++) {
        const struct blocker *b = pins[i].blocker;
        edges[i] =
            (struct pin_edge){.pin_id = pins[i].pin_id,
                              .vthread_id = pins[i].vthread_id,
                              .owner_id = b && b->what != BLOCKER_NONE && b->has_thread && b->is_virtual ? b->id : 0};
    }
    unsigned ring[DEADLOCK_CYCLE_MAX];
    unsigned len = pin_cycle_find(edges, count, ring, DEADLOCK_CYCLE_MAX);
    if (!len)
        return 0;
    uint64_t sum = 0;
    for (unsigned i = 0; i < len; i++)
        sum += pins[ring[i]].pin_id;
    if (sum == dl.said_cycle) /* said, and its pins still in progress: no new looks */
        return 1;
    if (!cycle_holds(pins, ring, len))
        return 0;
    dl.said_cycle = sum;
    say_cycle(symbols, pins, ring, len);
    return 1;
}

int deadlock_check(jvmtiEnv *jvmti, struct symbols *symbols, unsigned parallelism, int64_t now)
{
    if (!jvmti || now < dl.next_ns)
        return 0;
    dl.next_ns = now + DEADLOCK_CHECK_NS;
    struct pin_brief pins[DEADLOCK_CARRIERS_MAX];
    unsigned count = active_pins_brief(pins, DEADLOCK_CARRIERS_MAX);
    /* a cycle among the first DEADLOCK_CARRIERS_MAX pins in progress (more: the rest not looked at) */
    if (count >= 2 && check_cycle(symbols, pins, count < DEADLOCK_CARRIERS_MAX ? count : DEADLOCK_CARRIERS_MAX))
        return 1;
    if (!parallelism || parallelism > DEADLOCK_CARRIERS_MAX || !count || count > DEADLOCK_CARRIERS_MAX)
        return 0;
    /* every live carrier pinned or hogged, and at least parallelism of them (fewer: the pool may start one) */
    struct pinned on[DEADLOCK_CARRIERS_MAX];
    struct hogged hogged[DEADLOCK_CARRIERS_MAX];
    unsigned n = 0, n_hogs = 0;
    for (unsigned i = 0; i < carriers_capacity(); i++) {
        const struct carrier_slot *c = carriers_slot(i);
        if (!c || atomic_load(&c->state) != SLOT_LIVE)
            continue;
        const struct pin_brief *p = pin_on(pins, count, c->tid);
        struct hogged h = {.carrier = c};
        if (n + n_hogs == DEADLOCK_CARRIERS_MAX)
            return 0;
        if (p)
            on[n++] = (struct pinned){.carrier = c, .pin = p};
        else if (hogs_on(c, &h.vthread_id, &h.name))
            hogged[n_hogs++] = h;
        else
            return 0;
    }
    /* only now does the writer join the JVM: it stays out of it while it has no JVMTI work */
    JNIEnv *jni = n && n + n_hogs >= parallelism ? writer_thread_jni() : NULL;
    if (!jni)
        return 0;
    jint state = 0;
    const struct pinned *starving = starving_owner(jni, jvmti, on, n, hogged, n_hogs, &state);
    if (starving && n_hogs) {
        uint64_t seen = 0;
        for (unsigned i = 0; i < n; i++)
            seen += on[i].pin->pin_id;
        for (unsigned i = 0; i < n_hogs; i++)
            seen += (uint64_t)hogged[i].vthread_id;
        if (seen != dl.hog_seen) {
            dl.hog_seen = seen;
            dl.hog_since = now;
        }
        if (now - dl.hog_since < DEADLOCK_HOG_HOLD_NS)
            starving = NULL; /* not yet: a hog may end */
    }
    if (starving) {
        uint64_t sum = 0;
        for (unsigned i = 0; i < n; i++)
            sum += on[i].pin->pin_id;
        if (sum != dl.said) {
            dl.said = sum;
            say(jni, on, n, hogged, n_hogs, parallelism, starving, state);
        }
    }
    release(jni, on, n);
    return starving != NULL;
}
