#include "recording.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "idmap.h"
#include "wire.h"

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

const char *recording_mode_name(int mode)
{
    switch (mode) {
    case VTPIN__V1__LOAD_MODE__STARTUP:
        return "startup";
    case VTPIN__V1__LOAD_MODE__ATTACH:
        return "attach";
    default:
        return NULL;
    }
}

const char *recording_severity_name(int severity)
{
    switch (severity) {
    case VTPIN__V1__SEVERITY__INFO:
        return "info";
    case VTPIN__V1__SEVERITY__ERROR:
        return "error";
    default:
        return "warning";
    }
}

int recording_unix_ns(const struct recording_session *s, int64_t mono_ns, int64_t *unix_ns)
{
    int64_t delta, r;
    if (!s->has_clock)
        return -ENOENT;
    if (__builtin_sub_overflow(mono_ns, s->start_mono_ns, &delta) ||
        __builtin_add_overflow(s->start_unix_ns, delta, &r))
        return -ERANGE;
    *unix_ns = r;
    return 0;
}

int64_t recording_pin_duration(const struct recording_session *s, const struct recording_pin *p)
{
    if (p->ended)
        return p->duration_ns;
    int64_t d = recording_sat_sub(s->last_ns, p->start_ns);
    return d > 0 ? d : 0;
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

static int grow_array(void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t ncap = *cap ? *cap : 16;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2 / elem)
            return -ENOMEM;
        ncap *= 2;
    }
    void *n = realloc(*arr, ncap * elem);
    if (!n)
        return -ENOMEM;
    *arr = n;
    *cap = ncap;
    return 0;
}

/* ---- sessions ---- */

struct session_private {
    struct recording_session pub;
    size_t pins_cap, notices_cap;
};

static void stack_free(void *p)
{
    struct recording_stack *st = p;
    free(st->frames);
    free(st);
}

static void session_free(struct recording_session *s)
{
    if (!s)
        return;
    free(s->java_version);
    free(s->vm_name);
    free(s->vm_version);
    free(s->vm_vendor);
    free(s->host);
    free(s->agent_version);
    free(s->options);
    for (size_t i = 0; i < s->n_capabilities_missing; i++)
        free(s->capabilities_missing[i]);
    free(s->capabilities_missing);
    for (size_t i = 0; i < s->n_pins; i++)
        free(s->pins[i].blocked_in);
    free(s->pins);
    for (size_t i = 0; i < s->n_notices; i++) {
        free(s->notices[i].code);
        free(s->notices[i].text);
    }
    free(s->notices);
    if (s->strings)
        idmap_free(s->strings, free);
    if (s->methods)
        idmap_free(s->methods, free);
    if (s->stacks)
        idmap_free(s->stacks, stack_free);
    if (s->pin_index)
        idmap_free(s->pin_index, NULL);
    free(s);
}

static struct recording_session *session_new(void)
{
    struct session_private *sp = calloc(1, sizeof(*sp));
    if (!sp)
        return NULL;
    struct recording_session *s = &sp->pub;
    s->strings = idmap_new();
    s->methods = idmap_new();
    s->stacks = idmap_new();
    s->pin_index = idmap_new();
    if (!s->strings || !s->methods || !s->stacks || !s->pin_index) {
        session_free(s);
        return NULL;
    }
    return s;
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
    *out = s;
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

static int apply_hello(struct recording *r, struct recording_session **cur, const Vtpin__V1__Hello *h)
{
    struct recording_session *s = *cur;
    int rc;
    if (!s || s->has_hello || s->events > 0) {
        rc = recording_add_session(r, &s);
        if (rc)
            return rc;
        *cur = s;
    }
    s->has_hello = 1;
    s->schema_version = h->schema_version;
    s->pid = h->pid;
    if ((rc = dup_str(h->java_version, &s->java_version)) || (rc = dup_str(h->vm_name, &s->vm_name)) ||
        (rc = dup_str(h->vm_version, &s->vm_version)) || (rc = dup_str(h->vm_vendor, &s->vm_vendor)) ||
        (rc = dup_str(h->host, &s->host)) || (rc = dup_str(h->agent_version, &s->agent_version)) ||
        (rc = dup_str(h->options, &s->options)))
        return rc;
    s->mode = h->has_mode ? (int)h->mode : 0;
    if (h->has_start_unix_ns && h->has_start_mono_ns) {
        s->has_clock = 1;
        s->start_unix_ns = h->start_unix_ns;
        s->start_mono_ns = h->start_mono_ns;
        note_time(s, h->start_mono_ns);
    }
    s->has_threshold = h->has_threshold_ns;
    s->threshold_ns = h->threshold_ns;
    s->jdk_feature = h->has_jdk_feature ? h->jdk_feature : 0;
    s->parallelism = h->has_parallelism ? h->parallelism : 0;
    if (h->n_capabilities_missing > 0) {
        s->capabilities_missing = calloc(h->n_capabilities_missing, sizeof(char *));
        if (!s->capabilities_missing)
            return -ENOMEM;
        for (size_t i = 0; i < h->n_capabilities_missing; i++) {
            if ((rc = dup_str(h->capabilities_missing[i] ? h->capabilities_missing[i] : "",
                              &s->capabilities_missing[i])))
                return rc;
            s->n_capabilities_missing++;
        }
    }
    return 0;
}

static int apply_string(struct recording_session *s, const Vtpin__V1__StringDef *d)
{
    char *copy = strdup(d->value ? d->value : "");
    if (!copy)
        return -ENOMEM;
    void *old = NULL;
    int rc = idmap_put(s->strings, d->id, copy, &old);
    if (rc) {
        free(copy);
        return rc;
    }
    free(old); /* redefined: the last definition wins */
    return 0;
}

static int apply_method(struct recording_session *s, const Vtpin__V1__MethodDef *d)
{
    struct recording_method *m = calloc(1, sizeof(*m));
    if (!m)
        return -ENOMEM;
    m->id = d->id;
    m->defined = 1;
    m->class_sid = d->class_name;
    m->name_sid = d->method_name;
    m->signature_sid = d->has_signature ? d->signature : 0;
    m->source_sid = d->has_source_file ? d->source_file : 0;
    m->library_sid = d->has_library ? d->library : 0;
    m->module_sid = d->has_module ? d->module : 0;
    m->is_native = d->has_is_native && d->is_native;
    void *old = NULL;
    int rc = idmap_put(s->methods, d->id, m, &old);
    if (rc) {
        free(m);
        return rc;
    }
    free(old);
    return 0;
}

static int apply_stack(struct recording_session *s, const Vtpin__V1__StackDef *d)
{
    struct recording_stack *st = calloc(1, sizeof(*st));
    if (!st)
        return -ENOMEM;
    size_t n = d->n_frames < RECORDING_MAX_FRAMES ? d->n_frames : RECORDING_MAX_FRAMES;
    st->id = d->id;
    st->truncated = (d->has_truncated && d->truncated) || d->n_frames > n;
    st->frames = calloc(n ? n : 1, sizeof(*st->frames));
    if (!st->frames) {
        free(st);
        return -ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        const Vtpin__V1__Frame *f = d->frames[i];
        if (!f)
            continue;
        struct recording_frame *out = &st->frames[st->count++];
        out->method_id = f->method;
        out->line = f->has_line && f->line >= 0 ? f->line : -1;
        out->bci = f->has_bci && f->bci >= 0 ? f->bci : -1;
        out->monitors = f->has_monitors ? f->monitors : 0;
    }
    void *old = NULL;
    int rc = idmap_put(s->stacks, d->id, st, &old);
    if (rc) {
        stack_free(st);
        return rc;
    }
    if (old)
        stack_free(old);
    return 0;
}

static int apply_pin_start(struct recording_session *s, const Vtpin__V1__PinStart *d)
{
    struct session_private *sp = (struct session_private *)s;
    note_time(s, d->start_ns);
    if (idmap_get(s->pin_index, d->pin_id)) {
        s->duplicates++;
        return 0;
    }
    int rc = grow_array((void **)&s->pins, &sp->pins_cap, s->n_pins + 1, sizeof(*s->pins));
    if (rc)
        return rc;
    struct recording_pin *p = &s->pins[s->n_pins];
    memset(p, 0, sizeof(*p));
    p->id = d->pin_id;
    p->reason = (int)d->reason;
    p->start_ns = d->start_ns;
    p->has_vthread_id = d->has_vthread_id;
    p->vthread_id = d->vthread_id;
    p->vthread_sid = d->has_vthread_name ? d->vthread_name : 0;
    p->has_carrier_tid = d->has_carrier_tid;
    p->carrier_tid = d->carrier_tid;
    p->carrier_sid = d->has_carrier_name ? d->carrier_name : 0;
    p->stack_id = d->has_stack ? d->stack : 0;
    p->has_culprit_raw = d->has_culprit_frame;
    p->culprit_raw = d->culprit_frame;
    if (d->blocked_in && *d->blocked_in && !(p->blocked_in = strdup(d->blocked_in)))
        return -ENOMEM;
    rc = idmap_put(s->pin_index, d->pin_id, (void *)(uintptr_t)(s->n_pins + 1), NULL);
    if (rc)
        return rc;
    s->n_pins++;
    return 0;
}

static void apply_pin_end(struct recording_session *s, const Vtpin__V1__PinEnd *d)
{
    note_time(s, d->end_ns);
    uintptr_t idx = (uintptr_t)idmap_get(s->pin_index, d->pin_id);
    if (!idx) {
        s->unmatched_ends++;
        return;
    }
    struct recording_pin *p = &s->pins[idx - 1];
    if (p->ended) {
        s->duplicates++;
        return;
    }
    p->ended = 1;
    p->end_ns = d->end_ns;
    p->duration_ns = d->duration_ns > 0 ? d->duration_ns : 0;
}

static void copy_stats(struct recording_session *s, const Vtpin__V1__Stats *d)
{
    struct recording_stats *st = &s->stats;
    note_time(s, d->time_ns);
    s->has_stats = 1;
    st->time_ns = d->time_ns;
#define COPY(f)                                                                                                        \
    do {                                                                                                               \
        st->has_##f = d->has_##f;                                                                                      \
        st->f = d->f;                                                                                                  \
    } while (0)
    COPY(pins);
    COPY(pins_reported);
    COPY(pins_below_threshold);
    COPY(events_dropped);
    COPY(stacks_dropped);
    COPY(carriers_started);
    COPY(compensations);
    COPY(pins_without_stack);
#undef COPY
}

static int apply_notice(struct recording_session *s, const Vtpin__V1__Notice *d)
{
    struct session_private *sp = (struct session_private *)s;
    note_time(s, d->time_ns);
    int rc = grow_array((void **)&s->notices, &sp->notices_cap, s->n_notices + 1, sizeof(*s->notices));
    if (rc)
        return rc;
    struct recording_notice *n = &s->notices[s->n_notices];
    memset(n, 0, sizeof(*n));
    n->time_ns = d->time_ns;
    n->severity = (int)d->severity;
    if ((rc = dup_str(d->code ? d->code : "", &n->code)) || (rc = dup_str(d->text ? d->text : "", &n->text))) {
        free(n->code);
        return rc;
    }
    s->n_notices++;
    return 0;
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
    switch (ev->body_case) {
    case VTPIN__V1__EVENT__BODY_STRING:
        return apply_string(s, ev->string);
    case VTPIN__V1__EVENT__BODY_METHOD:
        return apply_method(s, ev->method);
    case VTPIN__V1__EVENT__BODY_STACK:
        return apply_stack(s, ev->stack);
    case VTPIN__V1__EVENT__BODY_PIN_START:
        return apply_pin_start(s, ev->pin_start);
    case VTPIN__V1__EVENT__BODY_PIN_END:
        apply_pin_end(s, ev->pin_end);
        return 0;
    case VTPIN__V1__EVENT__BODY_STATS:
        copy_stats(s, ev->stats);
        return 0;
    case VTPIN__V1__EVENT__BODY_NOTICE:
        return apply_notice(s, ev->notice);
    case VTPIN__V1__EVENT__BODY_GOODBYE:
        s->has_goodbye = 1;
        note_time(s, ev->goodbye->time_ns);
        if (ev->goodbye->stats)
            copy_stats(s, ev->goodbye->stats);
        return 0;
    default:
        return 0;
    }
}

/* ---- resolving ids once everything is read ---- */

/* A required name: the string, or the placeholder (counted). */
static const char *name_of(struct recording_session *s, uint32_t sid)
{
    const char *text = idmap_get(s->strings, sid);
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

static int session_resolve(struct recording_session *s)
{
    size_t pos = 0;
    void *value;
    while (idmap_next(s->methods, &pos, NULL, &value)) {
        struct recording_method *m = value;
        m->class_name = name_of(s, m->class_sid);
        m->name = name_of(s, m->name_sid);
        m->signature = optional_of(s, m->signature_sid);
        m->source_file = optional_of(s, m->source_sid);
        m->library = optional_of(s, m->library_sid);
        m->module = optional_of(s, m->module_sid);
    }
    pos = 0;
    while (idmap_next(s->stacks, &pos, NULL, &value)) {
        struct recording_stack *st = value;
        for (uint32_t i = 0; i < st->count; i++) {
            struct recording_frame *f = &st->frames[i];
            struct recording_method *m = idmap_get(s->methods, f->method_id);
            if (!m) { /* a placeholder, shared by every frame naming this id */
                s->unknown_refs++;
                m = calloc(1, sizeof(*m));
                if (!m)
                    return -ENOMEM;
                m->id = f->method_id;
                m->class_name = RECORDING_UNKNOWN;
                m->name = RECORDING_UNKNOWN;
                int rc = idmap_put(s->methods, f->method_id, m, NULL);
                if (rc) {
                    free(m);
                    return rc;
                }
            }
            f->method = m;
        }
    }
    for (size_t i = 0; i < s->n_pins; i++) {
        struct recording_pin *p = &s->pins[i];
        p->stack = p->stack_id ? idmap_get(s->stacks, p->stack_id) : NULL;
        if (p->stack_id && !p->stack)
            s->unknown_refs++;
        p->vthread_name = optional_of(s, p->vthread_sid);
        p->carrier_name = optional_of(s, p->carrier_sid);
        p->has_culprit = p->has_culprit_raw && p->stack && p->culprit_raw < p->stack->count;
        p->culprit = p->has_culprit ? p->culprit_raw : 0;
        if (p->has_culprit_raw && p->stack && !p->has_culprit)
            s->unknown_refs++; /* an index outside the stack */
    }
    return 0;
}

/* ---- reading the file ---- */

static int probe_magic(int fd, uint64_t at)
{
    char buf[WIRE_MAGIC_LEN];
    return pread(fd, buf, sizeof(buf), (off_t)at) == (ssize_t)sizeof(buf) &&
           memcmp(buf, WIRE_MAGIC, WIRE_MAGIC_LEN) == 0;
}

/* 1 when every byte from at to the end of the file is zero. */
static int probe_zero_tail(int fd, uint64_t at)
{
    unsigned char buf[64 * 1024];
    uint64_t off = at;
    for (;;) {
        ssize_t n = pread(fd, buf, sizeof(buf), (off_t)off);
        if (n < 0)
            return 0;
        if (n == 0)
            return off > at;
        for (ssize_t i = 0; i < n; i++)
            if (buf[i])
                return 0;
        off += (uint64_t)n;
    }
}

static uint32_t announced_size(int fd, uint64_t at)
{
    unsigned char h[WIRE_HEADER_LEN];
    if (pread(fd, h, sizeof(h), (off_t)at) != (ssize_t)sizeof(h))
        return 0;
    return (uint32_t)h[0] | (uint32_t)h[1] << 8 | (uint32_t)h[2] << 16 | (uint32_t)h[3] << 24;
}

static int open_segment(int fd, const char *name, uint64_t at, WireReader **out, char *err, size_t errlen)
{
    *out = wire_reader_new(fd, RECORDING_MAX_FRAME);
    if (!*out) {
        snprintf(err, errlen, "%s: out of memory", name);
        return -ENOMEM;
    }
    int rc = wire_reader_expect_magic(*out);
    if (rc == -EPROTO) {
        struct stat st;
        if (at == 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0)
            snprintf(err, errlen, "%s: empty file, not a vtpin recording", name);
        else if (at == 0)
            snprintf(err, errlen, "%s: not a vtpin recording (bad magic)", name);
        else
            snprintf(err, errlen, "%s: not a vtpin recording (bad magic at byte offset %" PRIu64 ")", name, at);
    } else if (rc < 0) {
        snprintf(err, errlen, "%s: %s", name, strerror(-rc));
    }
    return rc;
}

int recording_load_fd(int fd, const char *name, struct recording **out, char *err, size_t errlen)
{
    struct recording *r = NULL;
    struct recording_session *cur = NULL;
    WireReader *reader = NULL;
    WireEvent *ev = NULL;
    uint64_t base = 0; /* file offset where the current segment's magic starts */
    int rc;

    *out = NULL;
    if (errlen)
        err[0] = '\0';
    r = calloc(1, sizeof(*r));
    if (!r || !(r->path = strdup(name))) {
        rc = -ENOMEM;
        snprintf(err, errlen, "%s: out of memory", name);
        goto cleanup;
    }
    rc = open_segment(fd, name, 0, &reader, err, errlen);
    if (rc)
        goto cleanup;
    r->segments = 1;
    r->bytes = WIRE_MAGIC_LEN;
    for (;;) {
        uint64_t at = base + wire_reader_offset(reader);
        rc = wire_reader_next(reader, &ev);
        if (rc == 1) {
            rc = apply_event(r, &cur, ev);
            wire_event_free(ev);
            ev = NULL;
            if (rc) {
                snprintf(err, errlen, "%s: %s", name, strerror(-rc));
                goto cleanup;
            }
            r->events++;
            r->bytes = base + wire_reader_offset(reader);
            continue;
        }
        if (rc == 0)
            break;
        if (rc == -ENODATA) { /* cut in the middle of a frame: keep what came before */
            r->truncated = 1;
            r->truncated_at = at;
            rc = 0;
            break;
        }
        if ((rc == -EPROTO || rc == -EMSGSIZE) && probe_magic(fd, at)) {
            /* another recording appended to this one (cat a.vtp b.vtp) */
            wire_reader_free(reader);
            reader = NULL;
            if (lseek(fd, (off_t)at, SEEK_SET) < 0) {
                rc = -errno;
                snprintf(err, errlen, "%s: %s", name, strerror(errno));
                goto cleanup;
            }
            base = at;
            rc = open_segment(fd, name, at, &reader, err, errlen);
            if (rc)
                goto cleanup;
            r->segments++;
            r->bytes = at + WIRE_MAGIC_LEN;
            cur = NULL; /* the next events belong to a new session, Hello or not */
            continue;
        }
        if ((rc == -EPROTO || rc == -EMSGSIZE) && probe_zero_tail(fd, at)) {
            /* what a file system leaves when the writer died before its data reached the disk */
            r->truncated = 1;
            r->truncated_at = at;
            r->zero_tail = 1;
            rc = 0;
            break;
        }
        if (rc == -EMSGSIZE)
            snprintf(err, errlen,
                     "%s: frame at byte offset %" PRIu64 " announces %" PRIu32 " bytes, over the %u MiB limit "
                     "(damaged file?)",
                     name, at, announced_size(fd, at), RECORDING_MAX_FRAME >> 20);
        else if (rc == -EPROTO)
            snprintf(err, errlen,
                     "%s: malformed frame at byte offset %" PRIu64
                     " (not a vtpin event: a damaged file, or written by a newer vtpin)",
                     name, at);
        else
            snprintf(err, errlen, "%s: read error at byte offset %" PRIu64 ": %s", name, at, strerror(-rc));
        goto cleanup;
    }
    if (r->n_sessions == 0) { /* only the magic: one empty session, so there is always one */
        rc = recording_add_session(r, &cur);
        if (rc) {
            snprintf(err, errlen, "%s: out of memory", name);
            goto cleanup;
        }
    }
    for (size_t i = 0; i < r->n_sessions; i++) {
        rc = session_resolve(r->sessions[i]);
        if (rc) {
            snprintf(err, errlen, "%s: out of memory", name);
            goto cleanup;
        }
    }
    *out = r;
    r = NULL;
cleanup:
    wire_event_free(ev);
    wire_reader_free(reader);
    recording_free(r);
    return rc;
}

int recording_load(const char *path, struct recording **out, char *err, size_t errlen)
{
    *out = NULL;
    if (strcmp(path, "-") == 0)
        return recording_load_fd(STDIN_FILENO, "<stdin>", out, err, errlen);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        snprintf(err, errlen, "%s: %s", path, strerror(e));
        return -e;
    }
    int rc = recording_load_fd(fd, path, out, err, errlen);
    close(fd);
    return rc;
}

void recording_free(struct recording *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n_sessions; i++)
        session_free(r->sessions[i]);
    free(r->sessions);
    free(r->path);
    free(r);
}
