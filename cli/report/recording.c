#include "recording.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/blocker_text.h"
#include "common/frames_kind.h"
#include "common/grow.h"
#include "common/idmap.h"
#include "common/io.h"
#include "wire.h"

#define RELEASE_STEP (4u << 20) /* a mapped file's read pages are given back this many bytes at a time */

/* ---- small helpers ---- */

int64_t recording_sat_add(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

int64_t recording_sat_sub(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_sub_overflow(a, b, &r))
        return b < 0 ? INT64_MAX : INT64_MIN;
    return r;
}

int recording_unix_ns(const struct recording_session *s, int64_t mono_ns, int64_t *unix_ns)
{
    int64_t delta, r;
    if (!s->hello.has_clock)
        return -ENOENT;
    if (__builtin_sub_overflow(mono_ns, s->hello.start_mono_ns, &delta) ||
        __builtin_add_overflow(s->hello.start_unix_ns, delta, &r))
        return -ERANGE;
    *unix_ns = r;
    return 0;
}

/* From start to the end of what the session says: its last timestamp, or
 * the agent's failed write when it could not write the rest. */
static int64_t duration_so_far(const struct recording_session *s, int64_t start_ns)
{
    int64_t end = s->last_ns;
    /* After a failed write the ends were not written: count up to the failure, not to the Goodbye. */
    for (size_t i = 0; i < s->n_notices; i++)
        if (s->notices[i].code && strcmp(s->notices[i].code, "output.record.write_failed") == 0 &&
            s->notices[i].time_ns < end) {
            end = s->notices[i].time_ns;
            break;
        }
    int64_t d = recording_sat_sub(end, start_ns);
    return d > 0 ? d : 0;
}

int64_t recording_pin_duration(const struct recording_session *s, const struct recording_pin *p)
{
    return p->ended ? p->duration_ns : duration_so_far(s, p->start_ns);
}

int64_t recording_hog_duration(const struct recording_session *s, const struct recording_hog *h)
{
    return h->ended ? h->duration_ns : duration_so_far(s, h->start_ns);
}

int recording_hog_seen_unmounting(const struct recording_hog *h)
{
    for (uint32_t i = 0; h->stack && i < h->stack->count; i++) {
        const struct recording_method *m = h->stack->frames[i].method;
        if (m && strcmp(m->class_name, "java.lang.VirtualThread") == 0 && strcmp(m->name, "yieldContinuation") == 0)
            return 1;
    }
    return 0;
}

/* strdup that keeps NULL; returns 0 or -ENOMEM. */
static int dup_str(const char *s, char **out)
{
    *out = NULL;
    if (!s)
        return 0;
    *out = strdup(s);
    return *out ? 0 : -ENOMEM;
}

/* ---- sessions ---- */

struct session_private {
    struct recording_session pub;
    size_t pins_cap, hogs_cap, notices_cap, carriers_cap, occupancy_cap;
    const struct recording_plan *plan; /* the load's (the recording's own copy) */
    int no_fold;                       /* a pass will read every pin: none is taken out (maybe_fold) */
    int kernel_first;                  /* its intervals came from a first read (recording_plan.fold_kernel) */
    size_t fold_at;                    /* pins in the model that call for the next sum */
    uint64_t pins_started;
    size_t number;      /* from 1, in the file */
    int windowed;       /* after attach: its pins bounded in windows as read (attach_bound_window) */
    int window_closed;  /* windowed, and complete: checked once more */
    int reached_back;   /* a pin reached back past a window's cut (RECORDING_WINDOW_AGAIN) */
    int64_t attach_cut; /* the last window's cut, when windowed */
};

static void stack_free(void *p)
{
    struct recording_stack *st = p;
    free(st->frames);
    free(st);
}

/* What a session holds of its pins and everything they refer to: all but its
 * Hello, Stats, notices and end (session_drop_content keeps those). */
static void content_free(struct recording_session *s)
{
    for (size_t i = 0; i < s->n_pins; i++)
        free(s->pins[i].blocked_in);
    for (size_t i = 0; i < s->n_pin_groups; i++)
        free(s->pin_groups[i].pin.blocked_in);
    free(s->pin_groups);
    table_fini(&s->pin_group_index);
    free(s->late_ends);
    free(s->bounds_moved);
    for (size_t i = 0; i < s->n_extras; i++) {
        free(s->extras[i]->downcall.symbol);
        free(s->extras[i]->downcall.library);
        free(s->extras[i]);
    }
    free(s->extras);
    free(s->kintervals);
    kernel_stacks_free(s->kstacks);
    free(s->folded_spans);
    free(s->pin_kernels);
    free(s->group_kernels);
    free(s->kparks);
    free(s->held);
    free(s->blocker_hops);
    free(s->ktimes);
    free(s->pins);
    free(s->hogs);
    free(s->carriers);
    free(s->occupancy);
    session_defs_free(s->defs);
    if (s->methods)
        idmap_free(s->methods, free);
    if (s->stacks)
        idmap_free(s->stacks, stack_free);
    session_pins_free(s->ids);
}

static void session_free(struct recording_session *s)
{
    if (!s)
        return;
    session_hello_fini(&s->hello);
    content_free(s);
    for (size_t i = 0; i < s->n_notices; i++) {
        free(s->notices[i].code);
        free(s->notices[i].text);
    }
    free(s->notices);
    free(s);
}

static int new_tables(struct recording_session *s)
{
    /* no bounds but the depth: the file is the user's own */
    struct session_defs_limits limits = {.max_depth = RECORDING_MAX_FRAMES};
    s->defs = NULL;
    s->ids = NULL;
    s->methods = idmap_new();
    s->stacks = idmap_new();
    int defs_rc = session_defs_new(&s->defs, &limits), ids_rc = session_pins_new(&s->ids, 0, 1);
    return !defs_rc && !ids_rc && s->methods && s->stacks ? 0 : -ENOMEM;
}

/* A session that will not be shown keeps what the warnings and the session
 * count need, and gives the rest back: memory follows what is shown. */
static int session_drop_content(struct recording_session *s)
{
    struct session_private *sp = (struct session_private *)s;
    content_free(s);
    s->pins = NULL;
    s->pin_groups = NULL;
    s->n_pin_groups = s->pin_groups_cap = 0;
    s->late_ends = NULL;
    s->n_late_ends = s->late_ends_cap = 0;
    s->bounds_moved = NULL;
    s->n_bounds_moved = s->bounds_moved_cap = 0;
    memset(&s->pin_group_index, 0, sizeof(s->pin_group_index));
    s->hogs = NULL;
    s->kintervals = NULL;
    s->kstacks = NULL;
    s->folded_spans = NULL;
    s->n_folded_spans = s->folded_spans_cap = 0;
    s->pin_kernels = NULL;
    s->group_kernels = NULL;
    s->kparks = NULL;
    s->held = NULL;
    s->n_kparks = 0;
    s->blocker_hops = NULL;
    s->n_blocker_hops = s->blocker_hops_cap = 0;
    s->extras = NULL; /* freed above: a blocker's or a downcall's; kept, they were freed again at the end */
    s->n_extras = s->extras_cap = 0;
    s->ktimes = NULL;
    s->carriers = NULL;
    s->occupancy = NULL;
    s->n_pins = s->n_hogs = s->n_kintervals = s->kintervals_cap = s->n_ktimes = s->n_carriers = s->n_occupancy = 0;
    sp->pins_cap = sp->hogs_cap = sp->carriers_cap = sp->occupancy_cap = 0;
    s->skipped = 1;
    return new_tables(s);
}

static struct recording_session *session_new(void)
{
    struct session_private *sp = calloc(1, sizeof(*sp));
    if (!sp)
        return NULL;
    struct recording_session *s = &sp->pub;
    s->parts = 1;
    if (new_tables(s)) {
        session_free(s);
        return NULL;
    }
    return s;
}

static int session_resolve(struct recording_session *s);

/* recording_plan.each: session s is complete (the next one began, or the file ended): resolved,
 * handed to the caller, then given back as a session not shown is. 0 or the first -errno. */
static int hand_over(struct recording *r, struct recording_session *s)
{
    int rc = session_resolve(s);
    if (!rc && ((struct session_private *)s)->number >= r->plan.handed_below)
        rc = r->plan.each(r, s, r->plan.arg);
    int dropped = session_drop_content(s);
    return rc ? rc : dropped;
}

int recording_take_kernel(struct recording_session *dst, struct recording_session *src)
{
    if (src->n_kintervals && !dst->n_kintervals) { /* taken whole: no copy of what can be large */
        free(dst->kintervals);
        kernel_stacks_free(dst->kstacks);
        dst->kintervals = src->kintervals;
        dst->n_kintervals = src->n_kintervals;
        dst->kintervals_cap = src->kintervals_cap;
        dst->kstacks = src->kstacks;
    } else if (src->n_kintervals) {
        size_t n = dst->n_kintervals + src->n_kintervals;
        struct recording_kinterval *k = realloc(dst->kintervals, n * sizeof(*k));
        if (!k)
            return -ENOMEM;
        memcpy(k + dst->n_kintervals, src->kintervals, src->n_kintervals * sizeof(*k));
        dst->kintervals = k;
        dst->n_kintervals = dst->kintervals_cap = n;
        free(src->kintervals);
        if (!dst->kstacks) /* the intervals' stacks and syscall names are dst's now */
            dst->kstacks = src->kstacks;
        else if (src->kstacks)
            kernel_stacks_adopt(dst->kstacks, src->kstacks);
    }
    if (src->n_kintervals) {
        src->kintervals = NULL;
        src->kstacks = NULL;
        src->n_kintervals = src->kintervals_cap = 0;
    }
    if (src->ktimes && (!dst->ktimes || src->ktimes_ns > dst->ktimes_ns)) {
        free(dst->ktimes);
        dst->ktimes = src->ktimes;
        dst->n_ktimes = src->n_ktimes;
        dst->ktimes_ns = src->ktimes_ns;
        src->ktimes = NULL;
        src->n_ktimes = 0;
    }
    return 0;
}

/* fold_kernel's second read: session s (the latest, new) takes the kernel view the first read kept of it. */
static void take_first_intervals(struct recording *r, struct recording_session *s)
{
    struct recording *first = r->plan.kernel_from;
    if (!first || first->n_sessions < r->n_sessions)
        return;
    struct recording_session *f = first->sessions[r->n_sessions - 1];
    if (f->n_kintervals && recording_take_kernel(s, f) == 0) /* s has none: taken whole, never fails */
        ((struct session_private *)s)->kernel_first = 1;
}

static int recording_add_session(struct recording *r, struct recording_session **out)
{
    struct recording_session *s = session_new();
    if (!s)
        return -ENOMEM;
    struct recording_session **n = realloc(r->sessions, (r->n_sessions + 1) * sizeof(*n));
    if (!n) {
        session_free(s);
        return -ENOMEM;
    }
    r->sessions = n;
    r->sessions[r->n_sessions++] = s;
    ((struct session_private *)s)->plan = &r->plan;
    ((struct session_private *)s)->fold_at = r->plan.fold_pins;
    *out = s;
    take_first_intervals(r, s);
    ((struct session_private *)s)->number = r->n_sessions;
    if (r->plan.each && r->n_sessions < r->plan.handed_below)
        s->skipped = 1;                    /* handed over by a read before */
    if (r->plan.each && r->n_sessions > 1) /* the one before is complete */
        return hand_over(r, r->sessions[r->n_sessions - 2]);
    if (r->plan.keep == RECORDING_KEEP_LAST && r->n_sessions > 1) /* the one before is not the last */
        return session_drop_content(r->sessions[r->n_sessions - 2]);
    if (r->plan.keep != RECORDING_KEEP_ALL && r->plan.keep != RECORDING_KEEP_LAST && r->n_sessions != r->plan.keep)
        s->skipped = 1; /* never read: --session N reads only that session */
    return 0;
}

static void note_time(struct recording_session *s, int64_t t)
{
    if (!s->has_time) {
        s->first_ns = s->last_ns = t;
        s->has_time = 1;
        return;
    }
    if (t < s->first_ns)
        s->first_ns = t;
    if (t > s->last_ns)
        s->last_ns = t;
}

/* ---- one event into the model ---- */

/* A rotated recording's next file (the agent's record_max=, the collector's --record-max), concatenated
 * after s, the file before it, which ended rotating out: the same connection's Hello, right after
 * the magic. */
static int goes_on(const struct recording_session *s, const Vtpin__V1__Hello *h)
{
    return s->has_hello && s->hello.has_clock && h->has_start_unix_ns && h->has_start_mono_ns &&
           h->pid == s->hello.pid && h->start_unix_ns == s->hello.start_unix_ns &&
           h->start_mono_ns == s->hello.start_mono_ns && (h->has_connection ? h->connection : 0) == s->hello.connection;
}

static int apply_hello(struct recording *r, struct recording_session **cur, const Vtpin__V1__Hello *h)
{
    struct recording_session *s = *cur;
    int rc;
    struct recording_session *before = r->goes_on;
    r->goes_on = NULL;
    if (!s && before && goes_on(before, h)) {
        /* one session read on: what the new file says again (definitions, pins in progress, carriers,
         * counters) is taken as a reconnect's re-sends are, its notices once (apply_notice) */
        *cur = before;
        before->parts++;
        before->rotated_out = 0;
        return 0;
    }
    if (!s || s->has_hello || s->events > 0) {
        rc = recording_add_session(r, &s);
        if (rc)
            return rc;
        *cur = s;
    }
    s->has_hello = 1;
    if ((rc = session_hello_take(&s->hello, h)))
        return rc;
    if (s->hello.has_clock)
        note_time(s, s->hello.start_mono_ns);
    struct session_private *sp = (struct session_private *)s;
    if (r->plan.kernel_at_hello && !s->skipped && !s->n_kintervals && !r->plan.kernel_only) {
        if ((rc = r->plan.kernel_at_hello(s, r->plan.kernel_arg)) < 0)
            return rc;
        sp->kernel_first = rc > 0 && s->n_kintervals > 0; /* none of its own in this file are read */
    }
    return 0;
}

/* b's own fields (what, the class, the owner) into k, string ids unresolved. */
static void read_hop(const Vtpin__V1__Blocker *b, struct recording_hop *k)
{
    memset(k, 0, sizeof(*k));
    k->what = (int)b->what;
    k->class_sid = b->has_object_class ? b->object_class : 0;
    k->name_sid = b->has_thread_name ? b->thread_name : 0;
    k->carrier_sid = b->has_carrier_name ? b->carrier_name : 0;
    k->has_thread = b->has_thread_id;
    k->thread_id = b->thread_id;
    k->is_virtual = b->has_virtual_ && b->virtual_;
    snprintf(k->state, sizeof(k->state), "%s", b->state ? b->state : "");
}

/* b's chain (what the owner itself waits for) into the session's blocker_hops, as x's. A hop of no
 * kind known ends it. 0 or -ENOMEM. */
static int read_chain(struct recording_session *s, const Vtpin__V1__Blocker *b, struct recording_blocker *x)
{
    x->chain_at = (uint32_t)s->n_blocker_hops;
    for (size_t i = 0; i < b->n_chain && i < RECORDING_CHAIN_MAX; i++) {
        const Vtpin__V1__Blocker *h = b->chain[i];
        if (!h->has_what || !blocker_kind_name((int)h->what))
            break;
        int rc = grow_array((void **)&s->blocker_hops, &s->blocker_hops_cap, s->n_blocker_hops + 1,
                            sizeof(*s->blocker_hops));
        if (rc)
            return rc;
        read_hop(h, &s->blocker_hops[s->n_blocker_hops++]);
        x->n_chain++;
    }
    return 0;
}

/* A new extra for a pin, owned by the session: *out. 0 or -ENOMEM. */
static int new_extra(struct recording_session *s, struct recording_pin_extra **out)
{
    if (s->n_extras == s->extras_cap) {
        size_t cap = s->extras_cap ? 2 * s->extras_cap : 16;
        struct recording_pin_extra **v = realloc(s->extras, cap * sizeof(*v));
        if (!v)
            return -ENOMEM;
        s->extras = v;
        s->extras_cap = cap;
    }
    if (!(*out = calloc(1, sizeof(**out))))
        return -ENOMEM;
    s->extras[s->n_extras++] = *out;
    return 0;
}

/* The extras no pin holds any more (its pin was taken out: recording_fold_fn), freed; the others
 * kept in order. */
void recording_pin_release(struct recording_pin *p)
{
    free(p->blocked_in);
    p->blocked_in = NULL;
    if (p->extra)
        p->extra->unused = 1;
    p->extra = NULL;
}

static void drop_unused_extras(struct recording_session *s)
{
    size_t kept = 0;
    for (size_t i = 0; i < s->n_extras; i++) {
        struct recording_pin_extra *x = s->extras[i];
        if (!x->unused) {
            s->extras[kept++] = x;
            continue;
        }
        free(x->downcall.symbol);
        free(x->downcall.library);
        free(x);
    }
    s->n_extras = kept;
}

/* Whether p's stack runs through VirtualThread.parkOnCarrierThread, as the definitions read so far tell
 * (a window reads the pins before their stacks are resolved); complete: the session is, and what was
 * never defined never will be (resolved, such a stack or frame names nothing). */
static uint8_t park_stack_of(const struct recording_session *s, const struct recording_pin *p, int complete)
{
    uint8_t unknown = complete ? RECORDING_PARK_NO : RECORDING_PARK_UNKNOWN;
    if (!p->stack_id)
        return RECORDING_PARK_NO;
    const struct session_defs_stack *st = session_defs_stack(s->defs, p->stack_id);
    if (!st)
        return unknown;
    uint8_t kind = RECORDING_PARK_NO;
    for (uint32_t i = 0; i < st->count; i++) {
        const struct session_defs_method *m = session_defs_method(s->defs, st->frames[i].method);
        const char *cls = m ? session_defs_string(s->defs, m->class_sid) : NULL;
        const char *name = m ? session_defs_string(s->defs, m->name_sid) : NULL;
        if (!cls || !name)
            kind = unknown;
        else if (recording_park_frame(cls, name))
            return RECORDING_PARK_YES;
    }
    return kind;
}

/* A session after attach without the kernel view, read in windows (recording_plan.window): its pins
 * bounded up to cut, each pin's stack asked first (attach_bounds.h). */
static int bound_window(struct recording_session *s, int64_t cut, int complete)
{
    struct session_private *sp = (struct session_private *)s;
    for (size_t i = 0; i < s->n_pins; i++) {
        struct recording_pin *p = &s->pins[i];
        if (p->park_stack == RECORDING_PARK_UNASKED || p->park_stack == RECORDING_PARK_UNKNOWN)
            p->park_stack = park_stack_of(s, p, complete);
    }
    if (sp->windowed && cut < sp->attach_cut)
        cut = sp->attach_cut;
    int rc = sp->plan->window(s, sp->windowed ? sp->attach_cut : INT64_MIN, cut);
    sp->reached_back = rc == RECORDING_WINDOW_AGAIN;
    if (rc)
        return rc;
    sp->windowed = 1;
    sp->attach_cut = cut;
    return 0;
}

/* The cut of a window now: RECORDING_WINDOW_NS and twice the agent's threshold behind the latest time read. */
static int64_t window_cut(const struct recording_session *s)
{
    uint64_t threshold = s->hello.has_threshold ? s->hello.threshold_ns : 0;
    int64_t twice = threshold > INT64_MAX / 2 ? INT64_MAX : (int64_t)threshold * 2;
    return recording_sat_sub(s->last_ns, recording_sat_add(RECORDING_WINDOW_NS, twice));
}

/* Whether the session numbered number keeps its pins after attach whole: it reached back past a window in a
 * read before (recording_plan.whole). */
static int kept_whole(const struct recording_plan *plan, size_t number)
{
    for (size_t i = 0; i < plan->n_whole; i++)
        if (plan->whole[i] == number)
            return 1;
    return plan->whole_after && plan->n_whole && number > plan->whole[plan->n_whole - 1];
}

/* Ended pins summed up (pin_groups.h) when the load asks, the model holds fold_at pins, and no
 * pass will need them: memory follows the groups and the pins in progress (and, after attach, the
 * pins a window keeps). 0, -ENOMEM, -EAGAIN (read again, the intervals first) or RECORDING_WINDOW_AGAIN. */
static int maybe_fold(struct recording_session *s)
{
    struct session_private *sp = (struct session_private *)s;
    size_t fold = sp->plan->fold && !sp->no_fold ? sp->plan->fold_pins : 0;
    if (!fold || s->n_pins < sp->fold_at)
        return 0;
    if (s->n_kintervals && !sp->kernel_first && sp->plan->fold_kernel && !sp->plan->kernel_from)
        return -EAGAIN; /* a long session with the kernel view: read it again, its intervals first */
    int attach = s->hello.mode == VTPIN__V1__LOAD_MODE__ATTACH && !sp->plan->attach_as_read;
    int whole = !sp->plan->window || s->n_kintervals || kept_whole(sp->plan, sp->number);
    if ((attach && whole) || (s->n_kintervals && !sp->kernel_first)) {
        sp->no_fold = 1; /* the attach passes read every pin; the kernel's, every interval before any pin */
        return 0;
    }
    if (attach) {
        int rc = bound_window(s, window_cut(s), 0);
        if (rc)
            return rc;
    }
    uint32_t *moved = malloc(s->n_pins * sizeof(*moved));
    if (!moved)
        return -ENOMEM;
    int rc = sp->plan->fold(s, moved, sp->plan->fold_arg);
    session_pins_renumber(s->ids, SESSION_PIN, moved); /* the pins in progress moved down */
    free(moved);
    for (size_t i = 0; i < s->n_pins; i++)
        s->pins[i].late |= !s->pins[i].ended; /* it outlasts a sum: its end is kept (late_ends) */
    drop_unused_extras(s);
    sp->fold_at = s->n_pins > fold / 2 ? 2 * s->n_pins : fold; /* amortized: pins in progress stay */
    return rc;
}

/* A start seen before (session_pins_start's rc) that a rotated recording's next file says again by
 * design: a pin or hog in progress at the rotation, not a duplicate. */
static int said_again(const struct recording_session *s, int rc)
{
    return rc == SESSION_PINS_AGAIN && s->parts > 1;
}

static int apply_pin_start(struct recording_session *s, const Vtpin__V1__PinStart *d)
{
    struct session_private *sp = (struct session_private *)s;
    note_time(s, d->start_ns);
    int rc = maybe_fold(s); /* first: it moves the pins in progress that the table points at */
    if (rc)
        return rc;
    struct session_pin begun = session_pin_of_start(d), *kept;
    rc = session_pins_start(s->ids, &begun, &kept);
    if (rc < 0)
        return rc;
    if (rc != SESSION_PINS_NEW) {
        s->duplicates += !said_again(s, rc);
        return 0;
    }
    if (sp->windowed && d->start_ns < sp->attach_cut) {
        sp->reached_back = 1; /* written later than the window allows: a pin it settled may read it */
        return RECORDING_WINDOW_AGAIN;
    }
    if (s->n_pins >= UINT32_MAX)
        return -EOVERFLOW; /* session_pin.index is 32 bits */
    kept->index = (uint32_t)s->n_pins;
    rc = grow_array((void **)&s->pins, &sp->pins_cap, s->n_pins + 1, sizeof(*s->pins));
    if (rc)
        return rc;
    struct recording_pin *p = &s->pins[s->n_pins];
    memset(p, 0, sizeof(*p));
    p->id = d->pin_id;
    p->seq = sp->pins_started++;
    p->reason = (int)d->reason;
    p->start_ns = d->start_ns;
    p->has_vthread_id = d->has_vthread_id;
    p->vthread_id = d->vthread_id;
    p->vthread_sid = d->has_vthread_name ? d->vthread_name : 0;
    p->has_carrier_tid = d->has_carrier_tid;
    p->carrier_tid = d->carrier_tid;
    p->carrier_sid = d->has_carrier_name ? d->carrier_name : 0;
    p->jdk_reason_sid = d->has_jdk_reason ? d->jdk_reason : 0;
    p->stack_id = d->has_stack ? d->stack : 0;
    p->has_culprit_raw = d->has_culprit_frame;
    p->culprit_raw = d->culprit_frame;
    if (d->blocked_in && *d->blocked_in && !(p->blocked_in = strdup(d->blocked_in)))
        return -ENOMEM;
    p->has_blocking_raw = d->has_blocking_frame;
    p->blocking_raw = d->blocking_frame;
    int has_blocker = d->blocker && d->blocker->has_what && d->blocker->what;
    if ((has_blocker || d->downcall) && (rc = new_extra(s, &p->extra)))
        return rc;
    if (has_blocker) {
        const Vtpin__V1__Blocker *b = d->blocker;
        struct recording_blocker *x = &p->extra->blocker;
        read_hop(b, &x->head);
        x->stack_id = b->has_stack ? b->stack : 0;
        x->pin = b->has_pin ? b->pin : 0;
        if ((rc = read_chain(s, b, x)))
            return rc;
    }
    if (d->downcall) {
        struct recording_downcall *dc = &p->extra->downcall;
        p->extra->has_downcall = 1;
        dc->api = d->downcall->has_api && d->downcall->api == VTPIN__V1__NATIVE_API__NATIVE_API_JNA ? NATIVE_API_JNA
                                                                                                    : NATIVE_API_FFM;
        dc->address = d->downcall->has_address ? d->downcall->address : 0;
        const char *sym = d->downcall->symbol, *lib = d->downcall->library;
        if ((sym && *sym && !(dc->symbol = strdup(sym))) || (lib && *lib && !(dc->library = strdup(lib))))
            return -ENOMEM;
    }
    s->n_pins++;
    return 0;
}

/* Where the pin or hog (kind, id) that ends now is in the session, or -1: a second end (counted in
 * *dups) or the end of one never started (in *unmatched). */
static int64_t ending(struct recording_session *s, int kind, uint64_t id, uint64_t *dups, uint64_t *unmatched)
{
    struct session_pin begun;
    int seen = session_pins_end(s->ids, kind, id, &begun);
    if (seen == SESSION_PINS_ENDS)
        return begun.index;
    (*(seen == SESSION_PINS_DONE ? dups : unmatched))++;
    return -1;
}

static void apply_pin_end(struct recording_session *s, const Vtpin__V1__PinEnd *d)
{
    note_time(s, d->end_ns);
    int64_t at = ending(s, SESSION_PIN, d->pin_id, &s->duplicates, &s->unmatched_ends);
    if (at < 0 || at == RECORDING_PIN_GONE)
        return; /* RECORDING_PIN_GONE: handed over before its end, which was known (pin_stream.h) */
    struct recording_pin *p = &s->pins[at];
    p->ended = 1;
    p->end_ns = d->end_ns;
    p->duration_ns = d->duration_ns > 0 ? d->duration_ns : 0;
    p->last_asleep_ns = d->has_last_asleep_ns && d->last_asleep_ns >= p->start_ns && d->last_asleep_ns <= d->end_ns
                            ? d->last_asleep_ns
                            : 0;
    if (p->late && grow_array((void **)&s->late_ends, &s->late_ends_cap, s->n_late_ends + 1, sizeof(*s->late_ends)) ==
                       0) /* out of memory: a second pass waits for its end */
        s->late_ends[s->n_late_ends++] = (struct recording_pin_end){
            .id = p->id, .end_ns = p->end_ns, .duration_ns = p->duration_ns, .last_asleep_ns = p->last_asleep_ns};
}

/* A hog is loaded as a pin is: its ids resolved once everything is read, a
 * second start or end of the same id counted and ignored. */
static int apply_hog_start(struct recording_session *s, const Vtpin__V1__HogStart *d)
{
    struct session_private *sp = (struct session_private *)s;
    note_time(s, d->start_ns);
    struct session_pin begun = session_pin_of_hog(d), *kept;
    int rc = session_pins_start(s->ids, &begun, &kept);
    if (rc < 0)
        return rc;
    if (rc != SESSION_PINS_NEW) {
        s->duplicate_hogs += !said_again(s, rc);
        return 0;
    }
    if (s->n_hogs >= UINT32_MAX)
        return -EOVERFLOW;
    kept->index = (uint32_t)s->n_hogs;
    rc = grow_array((void **)&s->hogs, &sp->hogs_cap, s->n_hogs + 1, sizeof(*s->hogs));
    if (rc)
        return rc;
    struct recording_hog *h = &s->hogs[s->n_hogs];
    memset(h, 0, sizeof(*h));
    h->id = d->hog_id;
    h->start_ns = d->start_ns;
    h->has_vthread_id = d->has_vthread_id;
    h->vthread_id = d->vthread_id;
    h->vthread_sid = d->has_vthread_name ? d->vthread_name : 0;
    h->has_carrier_tid = d->has_carrier_tid;
    h->carrier_tid = d->carrier_tid;
    h->carrier_sid = d->has_carrier_name ? d->carrier_name : 0;
    h->stack_id = d->has_stack ? d->stack : 0;
    h->has_culprit_raw = d->has_culprit_frame;
    h->culprit_raw = d->culprit_frame;
    s->n_hogs++;
    return 0;
}

static void apply_hog_end(struct recording_session *s, const Vtpin__V1__HogEnd *d)
{
    note_time(s, d->end_ns);
    int64_t at = ending(s, SESSION_HOG, d->hog_id, &s->duplicate_hogs, &s->unmatched_hog_ends);
    if (at < 0)
        return;
    struct recording_hog *h = &s->hogs[at];
    h->ended = 1;
    h->end_ns = d->end_ns;
    h->duration_ns = d->duration_ns > 0 ? d->duration_ns : 0;
    h->last_running_ns = d->has_last_running_ns && d->last_running_ns >= h->start_ns && d->last_running_ns <= d->end_ns
                             ? d->last_running_ns
                             : 0;
}

static void copy_stats(struct recording_session *s, const Vtpin__V1__Stats *d)
{
    note_time(s, d->time_ns);
    session_stats_take(&s->stats, d);
}

/* A kernel view interval (collector recordings); stacks capped at RECORDING_MAX_KSTACK frames. */
static int apply_kinterval(struct recording_session *s, const Vtpin__V1__KernelInterval *d)
{
    struct session_private *sp = (struct session_private *)s;
    if (sp->kernel_first) { /* held since the session began */
        note_time(s, d->end_ns);
        return 0;
    }
    if (sp->windowed) {
        sp->reached_back = 1; /* the kernel view after attach: its passes read every pin */
        return RECORDING_WINDOW_AGAIN;
    }
    if (s->pins_folded && sp->plan->fold_kernel && !sp->plan->kernel_from)
        return -EAGAIN; /* the kernel view after pins were summed up: read again, its intervals first */
    s->kernel_after_fold |= s->pins_folded > 0; /* a load without fold_kernel */
    int rc = grow_array((void **)&s->kintervals, &s->kintervals_cap, s->n_kintervals + 1, sizeof(*s->kintervals));
    if (rc || (!s->kstacks && (rc = kernel_stacks_new(&s->kstacks))))
        return rc;
    struct recording_kinterval *k = &s->kintervals[s->n_kintervals];
    memset(k, 0, sizeof(*k));
    k->carrier_tid = d->carrier_tid;
    k->start_ns = d->start_ns;
    k->end_ns = d->end_ns > d->start_ns ? d->end_ns : d->start_ns;
    k->state = d->has_state ? (int)d->state : 0;
    k->has_syscall = d->has_syscall;
    k->syscall = d->syscall;
    k->runqueue_ns = d->has_runqueue_ns ? d->runqueue_ns : 0;
    if (d->has_vthread_id && d->has_java_wait && d->vthread_id >= 0) {
        k->has_java = 1;
        k->vthread_id = d->vthread_id;
        k->java_wait = (int)d->java_wait;
    }
    if (d->syscall_name && *d->syscall_name &&
        !(k->syscall_name = kernel_stacks_keep_string(s->kstacks, d->syscall_name)))
        return -ENOMEM;
    size_t n = d->n_stack < RECORDING_MAX_KSTACK ? d->n_stack : RECORDING_MAX_KSTACK;
    if (n && !(k->stack = kernel_stacks_keep(s->kstacks, d->stack, n)))
        return -ENOMEM;
    k->n_stack = (uint8_t)n;
    s->n_kintervals++;
    note_time(s, d->end_ns);
    return 0;
}

/* The collector's per-carrier kernel times: the last event wins (arrays cut to the shortest). */
static int apply_ktimes(struct recording_session *s, const Vtpin__V1__KernelTimes *d)
{
    size_t n = d->n_carrier_tids;
    if (d->n_on_cpu_ns < n)
        n = d->n_on_cpu_ns;
    if (d->n_off_cpu_ns < n)
        n = d->n_off_cpu_ns;
    if (d->n_runqueue_ns < n)
        n = d->n_runqueue_ns;
    if (n > 65536)
        n = 65536;
    struct recording_ktimes *k = n ? calloc(n, sizeof(*k)) : NULL;
    if (n && !k)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++)
        k[i] = (struct recording_ktimes){d->carrier_tids[i], d->on_cpu_ns[i], d->off_cpu_ns[i], d->runqueue_ns[i]};
    free(s->ktimes);
    s->ktimes = k;
    s->n_ktimes = n;
    s->ktimes_ns = d->time_ns;
    note_time(s, d->time_ns);
    return 0;
}

const char *recording_carrier_name(const struct recording_session *s, int32_t tid)
{
    for (size_t i = 0; i < s->n_carriers; i++)
        if (s->carriers[i].tid == tid && s->carriers[i].name)
            return s->carriers[i].name;
    for (size_t i = 0; i < s->n_pins; i++)
        if (s->pins[i].has_carrier_tid && s->pins[i].carrier_tid == tid && s->pins[i].carrier_name)
            return s->pins[i].carrier_name;
    for (size_t i = 0; i < s->n_pin_groups; i++) {
        const struct recording_pin *p = &s->pin_groups[i].pin;
        if (p->has_carrier_tid && p->carrier_tid == tid && p->carrier_name)
            return p->carrier_name;
    }
    return NULL;
}

int recording_add_notice(struct recording_session *s, int64_t time_ns, int severity, const char *code, const char *text)
{
    struct session_private *sp = (struct session_private *)s;
    int rc = grow_array((void **)&s->notices, &sp->notices_cap, s->n_notices + 1, sizeof(*s->notices));
    if (rc)
        return rc;
    struct recording_notice *n = &s->notices[s->n_notices];
    memset(n, 0, sizeof(*n));
    n->time_ns = time_ns;
    n->severity = severity;
    if ((rc = dup_str(code ? code : "", &n->code)) || (rc = dup_str(text ? text : "", &n->text))) {
        free(n->code);
        return rc;
    }
    s->n_notices++;
    return 0;
}

/* The code of a notice that ends a file of a rotated recording. */
static int rotated_out_code(const char *code)
{
    return code &&
           (strcmp(code, "output.record.rotated_out") == 0 || strcmp(code, "collector.recording_rotated_out") == 0);
}

/* A rotated recording's next file says the session's notices again: said once. The ones it repeats
 * are among the session's first (the agent's, and the collector's carried: 256 at most). */
static int said_before(const struct recording_session *s, const Vtpin__V1__Notice *d)
{
    for (size_t i = 0; s->parts > 1 && i < s->n_notices && i < 512; i++) {
        const struct recording_notice *n = &s->notices[i];
        if (n->time_ns == d->time_ns && n->severity == (int)d->severity &&
            strcmp(n->code, d->code ? d->code : "") == 0 && strcmp(n->text, d->text ? d->text : "") == 0)
            return 1;
    }
    return 0;
}

static int apply_notice(struct recording_session *s, const Vtpin__V1__Notice *d)
{
    if (said_before(s, d))
        return 0;
    if (rotated_out_code(d->code))
        s->rotated_out = 1;
    note_time(s, d->time_ns);
    return recording_add_notice(s, d->time_ns, (int)d->severity, d->code, d->text);
}

static int apply_carrier(struct recording_session *s, const Vtpin__V1__Carrier *d)
{
    struct session_private *sp = (struct session_private *)s;
    struct recording_carrier *c = NULL;
    for (size_t i = 0; i < s->n_carriers && !c; i++)
        if (s->carriers[i].tid == d->tid)
            c = &s->carriers[i]; /* announced again (a reconnection): the last word wins */
    if (!c) {
        if (s->n_carriers >= RECORDING_MAX_CARRIERS)
            return 0; /* hostile input: the lanes would be unreadable anyway */
        int rc = grow_array((void **)&s->carriers, &sp->carriers_cap, s->n_carriers + 1, sizeof(*s->carriers));
        if (rc)
            return rc;
        c = &s->carriers[s->n_carriers++];
        memset(c, 0, sizeof(*c));
        c->tid = d->tid;
    }
    if (d->has_name)
        c->name_sid = d->name;
    if (d->has_start_ns) {
        c->has_start = 1;
        c->start_ns = d->start_ns;
        note_time(s, d->start_ns);
    }
    return 0;
}

static int add_occupancy(struct recording_session *s, int32_t tid, int64_t t, int64_t vthread_id)
{
    struct session_private *sp = (struct session_private *)s;
    if (sp->plan->skip_occupancy) { /* not shown: its time still counts (the session's span) */
        note_time(s, t);
        return 0;
    }
    if (s->n_occupancy >= RECORDING_MAX_OCCUPANCY) {
        s->occupancy_dropped++;
        return 0;
    }
    int rc = grow_array((void **)&s->occupancy, &sp->occupancy_cap, s->n_occupancy + 1, sizeof(*s->occupancy));
    if (rc)
        return rc;
    s->occupancy[s->n_occupancy++] = (struct recording_occupancy){.time_ns = t, .vthread_id = vthread_id, .tid = tid};
    note_time(s, t);
    return 0;
}

static int apply_transitions(struct recording_session *s, const Vtpin__V1__Transitions *d)
{
    size_t n = d->n_times_ns < d->n_vthread_ids ? d->n_times_ns : d->n_vthread_ids;
    s->occupancy_dropped += (d->n_times_ns > n ? d->n_times_ns : d->n_vthread_ids) - n;
    for (size_t i = 0; i < n; i++) {
        int rc = add_occupancy(s, d->carrier_tid, d->times_ns[i], d->vthread_ids[i]);
        if (rc)
            return rc;
    }
    return 0;
}

static int apply_carrier_sample(struct recording_session *s, const Vtpin__V1__CarrierSample *d)
{
    size_t n = d->n_carrier_tids < d->n_vthread_ids ? d->n_carrier_tids : d->n_vthread_ids;
    s->occupancy_dropped += (d->n_carrier_tids > n ? d->n_carrier_tids : d->n_vthread_ids) - n;
    for (size_t i = 0; i < n; i++) {
        int rc = add_occupancy(s, d->carrier_tids[i], d->time_ns, d->vthread_ids[i]);
        if (rc)
            return rc;
    }
    return 0;
}

/* What a session not kept (--session N) still reads: its Hello, counters, notices and end. */
static int read_when_skipped(int body)
{
    return body == VTPIN__V1__EVENT__BODY_HELLO || body == VTPIN__V1__EVENT__BODY_STATS ||
           body == VTPIN__V1__EVENT__BODY_NOTICE || body == VTPIN__V1__EVENT__BODY_GOODBYE;
}

/* What a kernel_only read reads: the kernel view, and what tells the sessions apart (fold_kernel's
 * second read must find the same ones: a rotated file goes on by its notice). */
static int read_for_intervals(int body)
{
    return read_when_skipped(body) || body == VTPIN__V1__EVENT__BODY_KERNEL_INTERVAL ||
           body == VTPIN__V1__EVENT__BODY_KERNEL_TIMES;
}

/* Whether session s does not read a frame of this body. */
static int unread(const struct recording *r, const struct recording_session *s, int body)
{
    return (s->skipped && !read_when_skipped(body)) || (r->plan.kernel_only && !read_for_intervals(body)) ||
           (r->plan.no_intervals && body == VTPIN__V1__EVENT__BODY_KERNEL_INTERVAL);
}

/* A wall clock this far from where the Hello's pair puts it at the Goodbye was stepped: said. */
#define WALL_STEP_SAID_NS 1000000

/* The session's times are the Hello's wall clock plus monotonic time: a step of the wall clock since
 * (NTP, a virtual machine's clock sync or pause) makes them differ from wall-clock stamps taken after
 * it, which a person comparing with logs or JFR needs to know. */
static int note_wall_step(struct recording_session *s, const Vtpin__V1__Goodbye *g)
{
    int64_t expected, step;
    if (!g->has_unix_ns || recording_unix_ns(s, g->time_ns, &expected) != 0 ||
        __builtin_sub_overflow(g->unix_ns, expected, &step) || (step < WALL_STEP_SAID_NS && step > -WALL_STEP_SAID_NS))
        return 0;
    char text[400];
    snprintf(text, sizeof(text),
             "the wall clock moved %+.1f ms against the monotonic clock during the session (stepped: NTP, or a "
             "virtual machine's clock sync or pause). Its times are the wall clock at its start plus monotonic "
             "time: wall-clock stamps taken after the step (logs, Instant.now(), JFR's) differ from them by up to "
             "that; System.nanoTime() does not",
             (double)step / 1e6);
    return recording_add_notice(s, g->time_ns, VTPIN__V1__SEVERITY__INFO, "clock.wall_stepped", text);
}

static int apply_event(struct recording *r, struct recording_session **cur, const WireEvent *ev)
{
    int rc = 0;
    if (ev->body_case == VTPIN__V1__EVENT__BODY_HELLO) {
        rc = apply_hello(r, cur, ev->hello);
        if (!rc)
            (*cur)->events++;
        return rc;
    }
    if (!*cur) { /* events before any Hello: a session we know nothing about */
        rc = recording_add_session(r, cur);
        if (rc)
            return rc;
    }
    struct recording_session *s = *cur;
    s->events++;
    if (unread(r, s, (int)ev->body_case))
        return 0;
    switch (ev->body_case) {
    case VTPIN__V1__EVENT__BODY_STRING:
    case VTPIN__V1__EVENT__BODY_METHOD:
    case VTPIN__V1__EVENT__BODY_STACK:
        return session_defs_take(s->defs, ev) < 0 ? -ENOMEM : 0;
    case VTPIN__V1__EVENT__BODY_PIN_START:
        return apply_pin_start(s, ev->pin_start);
    case VTPIN__V1__EVENT__BODY_PIN_END:
        apply_pin_end(s, ev->pin_end);
        return 0;
    case VTPIN__V1__EVENT__BODY_HOG_START:
        return apply_hog_start(s, ev->hog_start);
    case VTPIN__V1__EVENT__BODY_HOG_END:
        apply_hog_end(s, ev->hog_end);
        return 0;
    case VTPIN__V1__EVENT__BODY_STATS:
        copy_stats(s, ev->stats);
        return 0;
    case VTPIN__V1__EVENT__BODY_NOTICE:
        return apply_notice(s, ev->notice);
    case VTPIN__V1__EVENT__BODY_CARRIER:
        return apply_carrier(s, ev->carrier);
    case VTPIN__V1__EVENT__BODY_TRANSITIONS:
        return apply_transitions(s, ev->transitions);
    case VTPIN__V1__EVENT__BODY_CARRIER_SAMPLE:
        return apply_carrier_sample(s, ev->carrier_sample);
    case VTPIN__V1__EVENT__BODY_KERNEL_INTERVAL:
        return apply_kinterval(s, ev->kernel_interval);
    case VTPIN__V1__EVENT__BODY_KERNEL_TIMES:
        return apply_ktimes(s, ev->kernel_times);
    case VTPIN__V1__EVENT__BODY_GOODBYE:
        s->has_goodbye = 1;
        note_time(s, ev->goodbye->time_ns);
        if (ev->goodbye->stats)
            copy_stats(s, ev->goodbye->stats);
        return note_wall_step(s, ev->goodbye);
    default:
        return 0;
    }
}

/* ---- resolving ids once everything is read ---- */

/* A required name: the string, or the placeholder (counted). */
static const char *name_of(struct recording_session *s, uint32_t sid)
{
    const char *text = session_defs_string(s->defs, sid);
    if (!text) {
        s->unknown_refs++;
        return RECORDING_UNKNOWN;
    }
    return text;
}

/* An optional string: NULL for id 0 (not sent), the placeholder for an unknown id. */
static const char *optional_of(struct recording_session *s, uint32_t sid)
{
    return sid ? name_of(s, sid) : NULL;
}

static void resolve_hop(struct recording_session *s, struct recording_hop *k)
{
    k->object_class = optional_of(s, k->class_sid);
    k->thread_name = optional_of(s, k->name_sid);
    k->carrier_name = optional_of(s, k->carrier_sid);
}

static const char *frame_class(const void *stack, uint32_t i)
{
    return ((const struct recording_stack *)stack)->frames[i].method->class_name;
}

int recording_stack_origin(const struct recording_stack *st)
{
    return st ? frames_pin_origin(frame_class, st, st->count, st->truncated) : PIN_ORIGIN_APP;
}

int recording_park_frame(const char *class_name, const char *method_name)
{
    return strcmp(method_name, "parkOnCarrierThread") == 0 && strcmp(class_name, "java.lang.VirtualThread") == 0;
}

/* Each method defined, its names resolved, into s->methods. */
static int resolve_methods(struct recording_session *s)
{
    size_t pos = 0;
    uint32_t id;
    const struct session_defs_method *d;
    while (session_defs_next_method(s->defs, &pos, &id, &d)) {
        struct recording_method *m = calloc(1, sizeof(*m));
        if (!m)
            return -ENOMEM;
        *m = (struct recording_method){.id = id,
                                       .defined = 1,
                                       .class_sid = d->class_sid,
                                       .name_sid = d->name_sid,
                                       .signature_sid = d->signature_sid,
                                       .source_sid = d->source_sid,
                                       .library_sid = d->library_sid,
                                       .module_sid = d->module_sid,
                                       .is_native = d->is_native};
        m->class_name = name_of(s, m->class_sid);
        m->name = name_of(s, m->name_sid);
        m->signature = optional_of(s, m->signature_sid);
        m->source_file = optional_of(s, m->source_sid);
        m->library = optional_of(s, m->library_sid);
        m->module = optional_of(s, m->module_sid);
        /* the agent's kind, else classified by the names */
        m->kind = d->kind >= 0 ? d->kind : (int)frames_classify(m->class_name, m->name, m->is_native);
        int rc = idmap_put(s->methods, id, m, NULL);
        if (rc) {
            free(m);
            return rc;
        }
    }
    return 0;
}

/* The method of id: the one defined, else a placeholder made once and shared by every frame naming it. */
static struct recording_method *method_or_placeholder(struct recording_session *s, uint32_t id)
{
    struct recording_method *m = idmap_get(s->methods, id);
    if (m)
        return m;
    s->unknown_refs++;
    m = calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    m->id = id;
    m->class_name = RECORDING_UNKNOWN;
    m->name = RECORDING_UNKNOWN;
    if (idmap_put(s->methods, id, m, NULL) != 0) {
        free(m);
        return NULL;
    }
    return m;
}

/* Each stack defined, its frames pointing at their methods, into s->stacks. */
static int resolve_stacks(struct recording_session *s)
{
    size_t pos = 0;
    uint32_t id;
    const struct session_defs_stack *d;
    while (session_defs_next_stack(s->defs, &pos, &id, &d)) {
        struct recording_stack *st = calloc(1, sizeof(*st));
        if (!st || !(st->frames = calloc(d->count ? d->count : 1, sizeof(*st->frames)))) {
            free(st);
            return -ENOMEM;
        }
        st->id = id;
        st->count = d->count;
        st->truncated = d->truncated;
        int rc = idmap_put(s->stacks, id, st, NULL);
        if (rc) {
            stack_free(st);
            return rc;
        }
        for (uint32_t i = 0; i < d->count; i++) {
            const struct session_defs_frame *f = &d->frames[i];
            st->frames[i] = (struct recording_frame){
                .method_id = f->method, .line = f->line, .bci = f->bci, .monitors = f->monitors};
            if (!(st->frames[i].method = method_or_placeholder(s, f->method)))
                return -ENOMEM;
        }
    }
    return 0;
}

/* A pin's ids (or a group's example's, for its n pins) into what they name. */
static void resolve_pin(struct recording_session *s, struct recording_pin *p, uint64_t n)
{
    p->stack = p->stack_id ? idmap_get(s->stacks, p->stack_id) : NULL;
    if (p->stack_id && !p->stack)
        s->unknown_refs += n;
    uint64_t unknown = s->unknown_refs; /* the group's key: each of its pins named the same */
    p->carrier_name = optional_of(s, p->carrier_sid);
    p->jdk_reason = optional_of(s, p->jdk_reason_sid);
    s->unknown_refs = unknown + (s->unknown_refs - unknown) * n;
    p->vthread_name = optional_of(s, p->vthread_sid); /* its own (pin_groups.c counts the others') */
    if (p->extra) {
        struct recording_blocker *b = &p->extra->blocker;
        resolve_hop(s, &b->head);
        b->stack = b->stack_id ? idmap_get(s->stacks, b->stack_id) : NULL;
    }
    p->has_culprit = p->has_culprit_raw && p->stack && p->culprit_raw < p->stack->count;
    p->culprit = p->has_culprit ? p->culprit_raw : 0;
    if (p->has_culprit_raw && p->stack && !p->has_culprit)
        s->unknown_refs += n; /* an index outside the stack */
    p->origin = recording_stack_origin(p->stack);
    p->has_blocking = p->has_blocking_raw && p->stack && p->blocking_raw < p->stack->count;
    p->blocking = p->has_blocking ? p->blocking_raw : 0;
    if (p->has_blocking_raw && p->stack && !p->has_blocking)
        s->unknown_refs += n;
}

void recording_resolve_from(const struct recording_session *from, struct recording_pin *p)
{
    struct recording_session *s = (struct recording_session *)from; /* its counts restored: unchanged */
    uint64_t unknown = s->unknown_refs;
    resolve_pin(s, p, 1);
    s->unknown_refs = unknown;
}

static int session_resolve(struct recording_session *s)
{
    struct session_private *sp = (struct session_private *)s;
    if (sp->windowed && !sp->window_closed) { /* complete: what the last window assumed still holds? */
        int rc = bound_window(s, sp->attach_cut, 1);
        if (rc)
            return rc;
        sp->window_closed = 1;
    }
    /* pin and hog ids matched their ends while the file was read: nothing looks them up after */
    session_pins_free(s->ids);
    s->ids = NULL;
    for (size_t i = 0; i < s->n_carriers; i++)
        s->carriers[i].name = optional_of(s, s->carriers[i].name_sid);
    int rc = resolve_methods(s);
    if (!rc)
        rc = resolve_stacks(s);
    if (rc)
        return rc;
    for (size_t i = 0; i < s->n_blocker_hops; i++)
        resolve_hop(s, &s->blocker_hops[i]);
    for (size_t i = 0; i < s->n_pins; i++)
        resolve_pin(s, &s->pins[i], 1);
    for (size_t i = 0; i < s->n_pin_groups; i++)
        resolve_pin(s, &s->pin_groups[i].pin, s->pin_groups[i].count);
    for (size_t i = 0; i < s->n_hogs; i++) {
        struct recording_hog *h = &s->hogs[i];
        h->stack = h->stack_id ? idmap_get(s->stacks, h->stack_id) : NULL;
        if (h->stack_id && !h->stack)
            s->unknown_refs++;
        h->vthread_name = optional_of(s, h->vthread_sid);
        h->carrier_name = optional_of(s, h->carrier_sid);
        h->has_culprit = h->has_culprit_raw && h->stack && h->culprit_raw < h->stack->count;
        h->culprit = h->has_culprit ? h->culprit_raw : 0;
        if (h->has_culprit_raw && h->stack && !h->has_culprit)
            s->unknown_refs++; /* an index outside the stack */
    }
    return 0;
}

/* ---- reading the file ---- */

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int is_magic(const uint8_t *p, size_t avail)
{
    return avail >= WIRE_MAGIC_LEN && memcmp(p, WIRE_MAGIC, WIRE_MAGIC_LEN) == 0;
}

static int all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return n > 0;
}

/* Where the next recording's magic starts after at, or len when there is none. */
static size_t next_magic(const uint8_t *data, size_t len, size_t at)
{
    const void *m = at < len ? memmem(data + at, len - at, WIRE_MAGIC, WIRE_MAGIC_LEN) : NULL;
    return m ? (size_t)((const uint8_t *)m - data) : len;
}

static void bad_magic_message(const char *name, size_t len, char *err, size_t errlen)
{
    if (len == 0)
        snprintf(err, errlen, "%s: empty file, not a vtpin recording", name);
    else
        snprintf(err, errlen, "%s: not a vtpin recording (bad magic)", name);
}

/* A frame that cannot be read at `at`: the file is damaged there. What came
 * before stays; reading goes on at the next recording's magic, if any. */
static size_t note_damage(struct recording *r, struct recording_session *cur, const uint8_t *data, size_t len,
                          size_t at, int rc)
{
    if (cur && !cur->damaged) { /* the session it cuts short */
        cur->damaged = 1;
        cur->damaged_at = at;
    }
    if (r->damaged++ == 0) {
        r->damaged_at = at;
        if (rc == -EMSGSIZE)
            snprintf(r->damage, sizeof(r->damage),
                     "the frame at byte offset %zu announces %" PRIu32 " bytes, over the %u MiB limit", at,
                     le32(data + at), RECORDING_MAX_FRAME >> 20);
        else
            snprintf(r->damage, sizeof(r->damage), "the frame at byte offset %zu is not a vtpin event", at);
    }
    size_t next = next_magic(data, len, at + 1);
    r->damaged_bytes += next - at;
    return next;
}

/* Gives back the pages of a mapped file that are read: the model keeps copies of what it needs,
 * so memory follows the model, not the file's size. */
static void release_read(const uint8_t *data, size_t pos, size_t *released)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t upto = pos / page * page;
    if (upto < *released + RELEASE_STEP)
        return;
    madvise((void *)(uintptr_t)(data + *released), upto - *released, MADV_DONTNEED);
    *released = upto;
}

/* data[len] into *out, keeping the sessions keep says; mapped: data is a private file mapping
 * whose read pages may be given back. On RECORDING_WINDOW_AGAIN, again_at is the number of the
 * session that reached back past a window. */
static int load_buffer_windowed(const uint8_t *data, size_t len, const char *name, const struct recording_plan *plan,
                                int mapped, struct recording **out, char *err, size_t errlen, size_t *again_at)
{
    struct recording *r = NULL;
    size_t released = 0;
    struct recording_session *cur = NULL;
    int rc = 0;

    *out = NULL;
    *again_at = 0;
    if (errlen)
        err[0] = '\0';
    if (!is_magic(data, len)) {
        bad_magic_message(name, len, err, errlen);
        return -EPROTO;
    }
    r = calloc(1, sizeof(*r));
    if (r)
        r->input_fd = -1; /* none yet: freed, nothing is closed */
    if (!r || !(r->path = strdup(name))) {
        rc = -ENOMEM;
        snprintf(err, errlen, "%s: out of memory", name);
        goto cleanup;
    }
    r->plan = *plan;
    r->length = len;
    size_t pos = 0;
    while (pos < len) {
        size_t at = pos, frame_len = 0;
        if (is_magic(data + at, len - at)) {
            /* a recording starts (again: cat a.vtp b.vtp); its events are a new session, Hello or not.
             * No frame can start with these bytes: "VTPI" as a length is over any limit. */
            r->segments++;
            /* a file that ended rotating out: the next one may go on with its session */
            r->goes_on = cur && cur->rotated_out && !cur->has_goodbye ? cur : NULL;
            cur = NULL;
            pos += WIRE_MAGIC_LEN;
            r->bytes = pos;
            continue;
        }
        rc = wire_frame_ready(data + at, len - at, RECORDING_MAX_FRAME, &frame_len);
        if (rc == 0) { /* cut in the middle of a frame: keep what came before */
            r->truncated = 1;
            r->truncated_at = at;
            break;
        }
        /* every frame is decoded, those a session does not read too (unread): a frame that does not
         * decode is damage, which skips to the next magic, so every read of the file, whatever it
         * keeps, finds the same sessions (--session N numbers them as a whole read does; the reads
         * of kernel_only, fold_kernel's and pin_stream's read the same ones again) */
        WireEvent *ev = NULL;
        if (rc == 1)
            rc = wire_decode(data + at, frame_len, &ev);
        if (rc < 0) { /* a damaged frame */
            wire_event_free(ev);
            if (all_zero(data + at, len - at)) {
                /* what a file system leaves when the writer died before its data reached the disk */
                r->truncated = 1;
                r->truncated_at = at;
                r->zero_tail = 1;
                break;
            }
            pos = note_damage(r, cur, data, len, at, rc);
            continue;
        }
        pos += frame_len;
        if (!ev) { /* wire_decode's 0: a newer schema's event, skipped */
            r->bytes = pos;
            continue;
        }
        rc = apply_event(r, &cur, ev);
        wire_event_free(ev);
        if (rc) {
            snprintf(err, errlen, "%s: %s", name, strerror(-rc));
            goto cleanup;
        }
        r->events++;
        r->bytes = pos;
        if (mapped)
            release_read(data, pos, &released);
    }
    rc = 0;
    if (r->n_sessions == 0) { /* only the magic: one empty session, so there is always one */
        rc = recording_add_session(r, &cur);
        if (rc) {
            snprintf(err, errlen, "%s: out of memory", name);
            goto cleanup;
        }
    }
    if (r->plan.each && (rc = hand_over(r, r->sessions[r->n_sessions - 1]))) {
        snprintf(err, errlen, "%s: %s", name, strerror(-rc));
        goto cleanup;
    }
    for (size_t i = 0; i < r->n_sessions; i++) {
        rc = session_resolve(r->sessions[i]);
        if (rc) {
            snprintf(err, errlen, "%s: out of memory", name);
            goto cleanup;
        }
    }
    r->plan.fold = NULL; /* the callbacks and their arguments were the load's */
    r->plan.fold_arg = r->plan.arg = NULL;
    r->plan.each = NULL;
    r->plan.whole = NULL;
    r->plan.n_whole = 0;
    *out = r;
    r = NULL;
cleanup:
    for (size_t i = 0; r && rc == RECORDING_WINDOW_AGAIN && i < r->n_sessions && !*again_at; i++)
        if (((struct session_private *)r->sessions[i])->reached_back)
            *again_at = i + 1;
    recording_free(r);
    return rc;
}

static int load_buffer(const uint8_t *data, size_t len, const char *name, const struct recording_plan *plan, int mapped,
                       struct recording **out, char *err, size_t errlen)
{
    size_t again_at;
    return load_buffer_windowed(data, len, name, plan, mapped, out, err, errlen, &again_at);
}

int recording_load_buffer(const uint8_t *data, size_t len, const char *name, struct recording **out, char *err,
                          size_t errlen)
{
    struct recording_plan all = {.keep = RECORDING_KEEP_ALL};
    return load_buffer(data, len, name, &all, 0, out, err, errlen);
}

/* Reads into buf[*n .. cap) until it is full or the stream ends: 0 or -errno. */
static int read_some(int fd, uint8_t *buf, size_t cap, size_t *n, int *eof)
{
    while (*n < cap) {
        ssize_t r = read(fd, buf + *n, cap - *n);
        if (r == 0) {
            *eof = 1;
            return 0;
        }
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        *n += (size_t)r;
    }
    return 0;
}

/* Everything fd holds after head[head_len], read into *data (malloc'ed): a pipe cannot be read
 * twice. The fallback when no file can take it (spool). */
static int slurp(int fd, const uint8_t *head, size_t head_len, uint8_t **data, size_t *len)
{
    size_t cap = head_len > (1 << 16) ? head_len : 1 << 16, n = head_len;
    int eof = 0;
    uint8_t *buf = malloc(cap);
    if (!buf)
        return -ENOMEM;
    if (head_len)
        memcpy(buf, head, head_len);
    while (!eof) {
        if (n == cap) {
            uint8_t *bigger = cap < SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
            if (!bigger) {
                free(buf);
                return -ENOMEM;
            }
            buf = bigger;
            cap *= 2;
        }
        int rc = read_some(fd, buf, cap, &n, &eof);
        if (rc) {
            free(buf);
            return rc;
        }
    }
    *data = buf;
    *len = n;
    return 0;
}

/* A pipe or device, copied after head[head_len] into an unlinked file of its own in TMPDIR (else
 * /tmp), so that it is mapped and read as a file is. Its descriptor; -errno before anything was
 * read when no such file can be made (the caller slurps instead); or -errno with *failed set,
 * what went wrong reading the stream or writing the copy said in err. */
static int spool(int fd, const char *name, const uint8_t *head, size_t head_len, int *failed, char *err, size_t errlen)
{
    const char *dir = getenv("TMPDIR");
    int tmp = dir && *dir ? open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600) : -1;
    if (tmp < 0)
        tmp = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (tmp < 0)
        return -errno;
    size_t cap = 1 << 20, n = head_len;
    uint8_t *chunk = malloc(cap);
    int eof = 0, rc = chunk ? 0 : -ENOMEM;
    if (chunk)
        memcpy(chunk, head, head_len);
    else
        snprintf(err, errlen, "%s: out of memory", name);
    while (!rc) {
        if ((rc = read_some(fd, chunk, cap, &n, &eof))) {
            snprintf(err, errlen, "%s: %s", name, strerror(-rc));
            break;
        }
        if ((rc = io_write_all(tmp, chunk, n))) {
            snprintf(err, errlen, "%s: cannot copy the stream to a temporary file in %s: %s", name,
                     dir && *dir ? dir : "/tmp", strerror(-rc));
            break;
        }
        n = 0;
        if (eof) {
            free(chunk);
            return tmp;
        }
    }
    *failed = 1;
    free(chunk);
    close(tmp);
    return rc;
}

/* load_buffer, twice for fold_kernel: the intervals first, so that the pins can be timed and joined as
 * they are summed up. */
static int load_intervals_first(const uint8_t *data, size_t len, const char *name, const struct recording_plan *plan,
                                int mapped, struct recording **out, char *err, size_t errlen, size_t *again_at)
{
    *again_at = 0;
    if (!plan->fold_kernel || !plan->fold || !plan->fold_pins || plan->kernel_only)
        return load_buffer_windowed(data, len, name, plan, mapped, out, err, errlen, again_at);
    /* once, as any file is read, unless a long session turns out to have the kernel view (-EAGAIN: a
     * session handed to each cannot be taken back, so such a load reads the intervals first always) */
    int rc = plan->each ? -EAGAIN : load_buffer_windowed(data, len, name, plan, mapped, out, err, errlen, again_at);
    if (rc != -EAGAIN)
        return rc;
    struct recording_plan intervals = {.keep = plan->keep, .skip_occupancy = 1, .kernel_only = 1};
    struct recording_plan pins = *plan;
    struct recording *first = NULL;
    rc = load_buffer(data, len, name, &intervals, mapped, &first, err, errlen);
    pins.kernel_from = first;
    if (!rc && !(rc = load_buffer_windowed(data, len, name, &pins, mapped, out, err, errlen, again_at)))
        (*out)->plan.kernel_from = NULL; /* freed here */
    recording_free(first);
    return rc;
}

/* Reads again after sessions that reached back past a window, at most: the last keeps the sessions after
 * the one that reached back whole too, so that a file of many such sessions is not read once for each. */
#define RECORDING_READS_AGAIN 4

/* load_intervals_first, and again each time a session after attach read in windows had a pin reach back
 * past a window's cut (RECORDING_WINDOW_AGAIN): that session kept whole too, the others read as before
 * (and those before it not handed to each again). Each read again goes further: the sessions before the
 * one that reached back read as they did. */
static int load_planned(const uint8_t *data, size_t len, const char *name, const struct recording_plan *plan,
                        int mapped, struct recording **out, char *err, size_t errlen)
{
    struct recording_plan again = *plan;
    size_t *whole = NULL, n_whole = 0, cap = 0, again_at = 0;
    int rc;
    while ((rc = load_intervals_first(data, len, name, &again, mapped, out, err, errlen, &again_at)) ==
               RECORDING_WINDOW_AGAIN &&
           plan->window && again_at && (!n_whole || again_at > whole[n_whole - 1])) {
        if (grow_array((void **)&whole, &cap, n_whole + 1, sizeof(*whole))) {
            rc = -ENOMEM;
            break;
        }
        whole[n_whole++] = again_at;
        again.whole = whole;
        again.n_whole = n_whole;
        again.whole_after = n_whole == RECORDING_READS_AGAIN;
        if (plan->each)
            again.handed_below = again_at;
    }
    free(whole);
    return rc;
}

static int load_mapped(int fd, const char *name, const struct recording_plan *plan, struct recording **out, char *err,
                       size_t errlen)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 || (uint64_t)st.st_size > SIZE_MAX)
        return -ENODATA;
    size_t len = (size_t)st.st_size;
    if (plan->max_bytes && plan->max_bytes < len)
        len = plan->max_bytes; /* the same bytes as an earlier read of a file still written */
    void *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED)
        return -ENODATA;
    int rc = load_planned(map, len, name, plan, 1, out, err, errlen);
    munmap(map, len);
    return rc;
}

static int load_fd_whole(int fd, const char *name, const uint8_t *head, size_t n, const struct recording_plan *plan,
                         struct recording **out, char *err, size_t errlen);

/* fd, a file or a stream, into *out. A stream that does not start with the magic is read no
 * further (load_buffer reports it): /dev/zero or an endless pipe of something else would
 * otherwise be read until memory or the disk runs out. */
static int load_fd(int fd, const char *name, const struct recording_plan *plan, struct recording **out, char *err,
                   size_t errlen)
{
    *out = NULL;
    int rc = load_mapped(fd, name, plan, out, err, errlen);
    if (rc == 0 && plan->keep_input && ((*out)->input_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0) {
        rc = -errno;
        snprintf(err, errlen, "%s: %s", name, strerror(-rc));
        recording_free(*out);
        *out = NULL;
    }
    if (rc != -ENODATA)
        return rc;
    uint8_t head[WIRE_MAGIC_LEN];
    size_t n = 0;
    int eof = 0;
    if ((rc = read_some(fd, head, sizeof(head), &n, &eof))) {
        snprintf(err, errlen, "%s: %s", name, strerror(-rc));
        return rc;
    }
    if (eof || !is_magic(head, n))
        return load_buffer(head, n, name, plan, 0, out, err, errlen);
    int failed = 0;
    int tmp = spool(fd, name, head, n, &failed, err, errlen);
    if (failed)
        return tmp;
    if (tmp >= 0) {
        rc = load_mapped(tmp, name, plan, out, err, errlen);
        if (rc == 0 && plan->keep_input) { /* read again from the copy */
            (*out)->input_fd = tmp;
            return 0;
        }
        if (rc == -ENODATA) /* cannot map it: read the copy whole */
            rc = lseek(tmp, 0, SEEK_SET) == 0 ? load_fd_whole(tmp, name, NULL, 0, plan, out, err, errlen) : -errno;
        close(tmp);
        return rc;
    }
    return load_fd_whole(fd, name, head, n, plan, out, err, errlen);
}

/* The fallback: what fd holds after head[head_len], read whole into memory. */
static int load_fd_whole(int fd, const char *name, const uint8_t *head, size_t n, const struct recording_plan *plan,
                         struct recording **out, char *err, size_t errlen)
{
    int rc;
    uint8_t *data = NULL;
    size_t len = 0;
    rc = slurp(fd, head, n, &data, &len);
    if (rc) {
        snprintf(err, errlen, "%s: %s", name, strerror(-rc));
        return rc;
    }
    rc = load_planned(data, len, name, plan, 0, out, err, errlen);
    free(data);
    return rc;
}

int recording_load_fd(int fd, const char *name, struct recording **out, char *err, size_t errlen)
{
    struct recording_plan all = {.keep = RECORDING_KEEP_ALL};
    return load_fd(fd, name, &all, out, err, errlen);
}

int recording_load_fd_session(int fd, const char *name, size_t keep, struct recording **out, char *err, size_t errlen)
{
    struct recording_plan plan = {.keep = keep};
    return load_fd(fd, name, &plan, out, err, errlen);
}

int recording_load_plan(const char *path, const struct recording_plan *plan, struct recording **out, char *err,
                        size_t errlen)
{
    *out = NULL;
    if (strcmp(path, "-") == 0)
        return load_fd(STDIN_FILENO, "<stdin>", plan, out, err, errlen);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        snprintf(err, errlen, "%s: %s", path, strerror(e));
        return -e;
    }
    int rc = load_fd(fd, path, plan, out, err, errlen);
    close(fd);
    return rc;
}

int recording_load(const char *path, struct recording **out, char *err, size_t errlen)
{
    struct recording_plan all = {.keep = RECORDING_KEEP_ALL};
    return recording_load_plan(path, &all, out, err, errlen);
}

void recording_free(struct recording *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n_sessions; i++)
        session_free(r->sessions[i]);
    free(r->sessions);
    free(r->path);
    if (r->input_fd >= 0)
        close(r->input_fd);
    free(r);
}

int recording_load_again(const struct recording *r, const struct recording_plan *plan, struct recording **out,
                         char *err, size_t errlen)
{
    *out = NULL;
    if (r->input_fd < 0) {
        snprintf(err, errlen, "%s: cannot be read twice (a stream that could not be copied to a temporary file)",
                 r->path);
        return -ESPIPE;
    }
    struct recording_plan again = *plan;
    again.keep_input = 0;
    /* the bytes read the first time, whatever was written since: all of them, not only up to the last
     * whole frame (r->bytes), for a frame that did not decode and announced more than that was damage
     * to skip, and would be a cut tail */
    again.max_bytes = r->length;
    int rc = load_mapped(r->input_fd, r->path, &again, out, err, errlen);
    if (rc == -ENODATA)
        snprintf(err, errlen, "%s: cannot be mapped a second time", r->path);
    return rc;
}

const char *recording_write_failed(const struct recording_session *s)
{
    for (size_t i = 0; i < s->n_notices; i++)
        if (s->notices[i].code && strcmp(s->notices[i].code, "output.record.write_failed") == 0)
            return s->notices[i].text ? s->notices[i].text : "";
    if (s->stats.has && s->stats.msg.has_events_unwritten && s->stats.msg.events_unwritten > 0)
        return "";
    return NULL;
}

int recording_rotated(const struct recording_session *s)
{
    /* with the Goodbye: the rotation failed and the file went on to the JVM's end */
    return s->rotated_out && !s->has_goodbye;
}

const char *recording_disk_nearly_full(const struct recording_session *s)
{
    for (size_t i = 0; i < s->n_notices; i++)
        if (s->notices[i].code && strcmp(s->notices[i].code, "output.record.disk_nearly_full") == 0)
            return s->notices[i].text ? s->notices[i].text : "";
    return NULL;
}

const char *recording_deadlock_kind(const struct recording_notice *n)
{
    return blocker_deadlock_kind(n->code);
}

size_t recording_deadlocks(const struct recording_session *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n_notices; i++)
        n += recording_deadlock_kind(&s->notices[i]) != NULL;
    return n;
}

int recording_write_failed_probably(const struct recording_session *s)
{
    return !recording_write_failed(s) && !s->has_goodbye && recording_disk_nearly_full(s) != NULL;
}
