#include "recorder.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "carry.h"
#include "clog.h"
#include "common/io.h"
#include "common/rotate.h"
#include "common/units.h"
#include "session_defs.h"
#include "wire.h"

#define RECORDER_BUF (64u * 1024)
#define NS_PER_SEC 1000000000LL

struct recorder {
    int fd;
    off_t good;         /* the file's length: whole frames only */
    size_t used;        /* bytes in buf */
    size_t used_frames; /* frames in buf (the magic is not one) */
    int buf_magic;      /* buf starts with the magic */
    uint8_t *head;      /* the Hello, to start an emptied file again */
    size_t head_len;
    uint64_t gap_frames; /* lost in the latest stop */
    uint64_t gap_bytes;
    int64_t next_try; /* CLOCK_MONOTONIC */
    struct rec_state st;
    char *path;
    struct recorder_config cfg;
    struct carry *carry; /* what a rotated file says again; NULL when it never rotates */
    off_t head_size;     /* the current file's head: the magic, the Hello and what was carried */
    off_t rotate_from;   /* rotate once the file passes this (cfg.max_bytes, or later after a failed rotation) */
    uint8_t buf[RECORDER_BUF];
};

static int64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * NS_PER_SEC + ts.tv_nsec;
}

/* "2026-12-02T01:55:48Z" into out[cap]. */
static const char *utc_text(int64_t unix_ns, char *out, size_t cap)
{
    time_t t = (time_t)(unix_ns / NS_PER_SEC);
    struct tm tm;
    if (!gmtime_r(&t, &tm) || strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        snprintf(out, cap, "?");
    return out;
}

static void lose(struct recorder *r, uint64_t frames, uint64_t bytes)
{
    r->st.frames_lost += frames;
    r->st.bytes_lost += bytes;
    r->gap_frames += frames;
    r->gap_bytes += bytes;
}

/* Cuts the file back to its last whole frame (a frame half written would end it for a reader). */
static void cut_back(struct recorder *r)
{
    if (r->fd < 0)
        return; /* not created yet */
    if (ftruncate(r->fd, r->good) != 0 || lseek(r->fd, r->good, SEEK_SET) < 0)
        clog_warn("%s: cannot cut the recording back to its last whole frame (%s)", r->path, strerror(errno));
}

/* A write failed with rc: the recording stops; frames, bytes were lost with it. */
static void stop(struct recorder *r, int rc, uint64_t frames, uint64_t bytes)
{
    cut_back(r);
    if (!r->st.error) {
        r->st.error = rc;
        r->st.last_error = rc;
        r->st.stopped_unix_ns = clock_ns(CLOCK_REALTIME);
        r->st.stopped_mono_ns = clock_ns(CLOCK_MONOTONIC);
        r->st.resumed_unix_ns = r->st.resumed_mono_ns = 0;
        r->st.stops++;
        r->gap_frames = r->gap_bytes = 0;
        r->next_try = r->st.stopped_mono_ns + RECORDER_RETRY_NS;
        clog_error("%s: %s the recording failed: %s; it stops here: the collector goes on, counts the frames it "
                   "cannot write and tries again every %llds",
                   r->path, r->fd < 0 ? "creating" : "writing", strerror(-rc),
                   (long long)(RECORDER_RETRY_NS / NS_PER_SEC));
    }
    lose(r, frames, bytes);
}

int recorder_open(struct recorder **out, const char *dir, int64_t pid, int64_t start_unix_ns, uint32_t connection,
                  const struct recorder_config *cfg, char *err, size_t errlen)
{
    struct recorder *r = calloc(1, sizeof(*r));
    int rc;
    if (!r)
        return -ENOMEM;
    r->fd = -1;
    if (cfg)
        r->cfg = *cfg;
    r->rotate_from = (off_t)r->cfg.max_bytes;
    if (r->cfg.max_bytes && !(r->carry = carry_new(r->cfg.budget))) {
        free(r);
        return -ENOMEM;
    }
    size_t cap = strlen(dir) + 96;
    r->path = malloc(cap);
    if (!r->path) {
        rc = -ENOMEM;
        goto cleanup;
    }
    for (unsigned n = 1; n <= 100; n++) {
        if (n == 1)
            snprintf(r->path, cap, "%s/%" PRId64 "-%" PRId64 "-%" PRIu32 ".vtp", dir, pid, start_unix_ns, connection);
        else
            snprintf(r->path, cap, "%s/%" PRId64 "-%" PRId64 "-%" PRIu32 "-%u.vtp", dir, pid, start_unix_ns, connection,
                     n);
        r->fd = open(r->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (r->fd >= 0 || errno != EEXIST)
            break;
    }
    if (r->fd < 0 && (errno == ENOSPC || errno == EDQUOT || errno == EIO || errno == EMFILE || errno == ENFILE)) {
        /* a full disk (or out of descriptors) now: a recording stopped from its start, created when it can be */
        stop(r, -errno, 0, 0);
    } else if (r->fd < 0) {
        rc = -errno;
        snprintf(err, errlen, "%s: cannot create the recording: %s", r->path, strerror(-rc));
        goto cleanup;
    }
    memcpy(r->buf, WIRE_MAGIC, WIRE_MAGIC_LEN);
    r->used = WIRE_MAGIC_LEN;
    r->buf_magic = 1;
    *out = r;
    return 0;
cleanup:
    if (r->fd >= 0)
        close(r->fd);
    carry_free(r->carry);
    free(r->path);
    free(r);
    return rc;
}

int recorder_flush(struct recorder *r)
{
    if (!r)
        return 0;
    if (r->st.error)
        return r->st.error;
    if (r->used == 0)
        return 0;
    int rc = io_write_all(r->fd, r->buf, r->used);
    size_t bytes = r->used - (r->buf_magic ? WIRE_MAGIC_LEN : 0), frames = r->used_frames, all = r->used;
    r->used = r->used_frames = 0;
    r->buf_magic = 0;
    if (rc) {
        stop(r, rc, frames, bytes);
        return rc;
    }
    r->good += (off_t)all;
    return 0;
}

/* Appends one whole frame to the buffer (a large one straight to the file). */
static int append(struct recorder *r, const uint8_t *frame, size_t len)
{
    if (r->st.error) {
        lose(r, 1, len);
        return r->st.error;
    }
    if (r->used + len > sizeof(r->buf)) {
        int rc = recorder_flush(r);
        if (rc) {
            lose(r, 1, len);
            return rc;
        }
    }
    if (len > sizeof(r->buf)) { /* a large frame goes straight to the file */
        int rc = io_write_all(r->fd, frame, len);
        if (rc) {
            stop(r, rc, 1, len);
            return rc;
        }
        r->good += (off_t)len;
    } else {
        memcpy(r->buf + r->used, frame, len);
        r->used += len;
        r->used_frames++;
    }
    return 0;
}

/* A Notice from the collector (the event into *ev, n), packed into out[cap]: its length, or -errno. */
static ssize_t pack_notice(int64_t time_ns, Vtpin__V1__Severity severity, const char *code, const char *text,
                           WireEvent *ev, Vtpin__V1__Notice *n, uint8_t *out, size_t cap)
{
    vtpin__v1__notice__init(n);
    n->time_ns = time_ns;
    n->severity = severity;
    n->code = (char *)code;
    n->text = (char *)text;
    vtpin__v1__event__init(ev);
    ev->body_case = VTPIN__V1__EVENT__BODY_NOTICE;
    ev->notice = n;
    return wire_pack(ev, out, cap, cap);
}

/* A Notice about the file itself: appended, never written again at a rotation. */
static void append_notice(struct recorder *r, Vtpin__V1__Severity severity, const char *code, const char *text)
{
    WireEvent ev;
    Vtpin__V1__Notice n;
    uint8_t buf[1024];
    ssize_t len = pack_notice(clock_ns(CLOCK_MONOTONIC), severity, code, text, &ev, &n, buf, sizeof(buf));
    if (len > 0)
        append(r, buf, (size_t)len);
}

int recorder_notice(struct recorder *r, Vtpin__V1__Severity severity, const char *code, const char *text)
{
    WireEvent ev;
    Vtpin__V1__Notice n;
    uint8_t buf[1024];
    ssize_t len = pack_notice(clock_ns(CLOCK_MONOTONIC), severity, code, text, &ev, &n, buf, sizeof(buf));
    return len > 0 ? recorder_write_event(r, &ev, buf, (size_t)len) : (int)len;
}

static int append_carried(void *arg, const uint8_t *frame, size_t len)
{
    return append(arg, frame, len);
}

/* What the session said that its later frames lean on: its definitions and what the carry kept (its
 * notices too unless the file holds them already). */
static void say_again(struct recorder *r, int notices)
{
    if (r->cfg.defs)
        session_defs_write(r->cfg.defs, append_carried, r);
    carry_each(r->carry, notices, append_carried, r);
    r->head_size = r->good + (off_t)r->used;
}

/* The head of a file that continues the recording: the magic, the Hello, what it continues and
 * everything carried (carry.h), so that it is read alone. */
static void start_again(struct recorder *r)
{
    append(r, (const uint8_t *)WIRE_MAGIC, WIRE_MAGIC_LEN);
    r->used_frames = 0; /* the magic is not a frame */
    r->buf_magic = 1;
    if (r->head)
        append(r, r->head, r->head_len);
    char text[768];
    snprintf(text, sizeof(text),
             "this file continues the recording rotated before it (--record-max=): %s.1 when this one is %s, "
             "PATH.N+1 when it is PATH.N; the definitions, notices, carriers, pins and hogs in progress and counters "
             "of the session are written again here",
             r->path, r->path);
    append_notice(r, VTPIN__V1__SEVERITY__INFO, "collector.recording_rotated", text);
    uint64_t missed = carry_missed(r->carry);
    if (missed) {
        snprintf(text, sizeof(text),
                 "%" PRIu64 " frames of this session could not be kept to write again here (the collector's memory "
                 "budget, or more than %d pins and hogs in progress): a pin that began before this file may end "
                 "here without its start",
                 missed, CARRY_MAX_PINS);
        append_notice(r, VTPIN__V1__SEVERITY__WARNING, "collector.recording_rotated_incomplete", text);
    }
    say_again(r, 1);
}

/* The file passed --record-max: it becomes PATH.1 (and so on), ends with a notice saying so, and
 * a new PATH goes on. A rotation that fails leaves the recording in its file, which then says
 * nothing of it (tried again after as many bytes more). */
static void rotate(struct recorder *r)
{
    if (recorder_flush(r) != 0)
        return; /* stopped: the retries take it from here */
    r->rotate_from = r->good + (off_t)r->cfg.max_bytes;
    int rc = rotate_names(r->path, r->cfg.keep);
    if (rc) {
        clog_warn("%s: cannot rotate the recording (%s): it goes on in this file", r->path, strerror(-rc));
        return;
    }
    int fd = open(r->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        rc = -errno;
        int back = rotate_back(r->path) == 0;
        clog_warn("%s: cannot create the rotated recording's next file (%s): it goes on in %s%s", r->path,
                  strerror(-rc), back ? "this file" : r->path, back ? "" : ".1");
        return;
    }
    char text[768];
    snprintf(text, sizeof(text), "the recording goes on in %s (--record-max=, rotated; this file becomes %s.1)",
             r->path, r->path);
    append_notice(r, VTPIN__V1__SEVERITY__INFO, "collector.recording_rotated_out", text);
    if (recorder_flush(r) == 0 && fdatasync(r->fd) != 0 && errno != EINVAL) {
        /* what was written stays written; the sync is only for a crash */
    }
    close(r->fd);
    r->fd = fd;
    r->good = 0;
    r->st.rotations++;
    r->rotate_from = (off_t)r->cfg.max_bytes;
    if (!r->st.error) /* else the retry starts it, with the Hello and the gap's notice */
        start_again(r);
    clog_debug("%s: rotated (%" PRIu64 " so far); %zu frames written again", r->path, r->st.rotations,
               carry_count(r->carry));
}

/* Rotates first when the next len bytes would pass --record-max. */
static void rotate_if_due(struct recorder *r, size_t len)
{
    off_t size = r->good + (off_t)r->used;
    /* a file holds at least half a --record-max beyond its head, so a large head cannot make it rotate at each frame */
    if (r->cfg.max_bytes && !r->st.error && size + (off_t)len > r->rotate_from &&
        size - r->head_size >= (off_t)(r->cfg.max_bytes / 2))
        rotate(r);
}

int recorder_write(struct recorder *r, const uint8_t *frame, size_t len)
{
    rotate_if_due(r, len);
    return append(r, frame, len);
}

int recorder_write_event(struct recorder *r, const WireEvent *ev, const uint8_t *frame, size_t len)
{
    rotate_if_due(r, len); /* before the carry lets a start go: its end then finds it in the new file */
    carry_note(r->carry, ev, frame, len);
    return append(r, frame, len);
}

int recorder_write_head(struct recorder *r, const uint8_t *frame, size_t len)
{
    free(r->head);
    r->head_len = 0;
    r->head = len + WIRE_MAGIC_LEN <= RECORDER_BUF ? malloc(len) : NULL;
    if (r->head) {
        memcpy(r->head, frame, len);
        r->head_len = len;
    }
    int rc = recorder_write(r, frame, len);
    return rc ? rc : len + WIRE_MAGIC_LEN <= RECORDER_BUF && !r->head ? -ENOMEM : 0;
}

/* The Notice that says what the stop lost, packed into out[cap]: its length, or -errno. */
static ssize_t gap_notice(const struct recorder *r, int64_t now_mono, uint8_t *out, size_t cap)
{
    char text[512], when[32], lasted[32];
    snprintf(text, sizeof(text),
             "the collector could not write this recording from %s for %s (%s): %" PRIu64 " frames (%" PRIu64
             " bytes) meant for it then (the agent's, and the collector's alerts and kernel intervals) are missing "
             "here; pins that ended then have no end here, and what refers to definitions sent then shows as "
             "unknown",
             utc_text(r->st.stopped_unix_ns, when, sizeof(when)),
             units_format_duration(now_mono - r->st.stopped_mono_ns, lasted, sizeof(lasted)), strerror(-r->st.error),
             r->gap_frames, r->gap_bytes);
    WireEvent ev;
    Vtpin__V1__Notice n;
    return pack_notice(r->st.stopped_mono_ns, VTPIN__V1__SEVERITY__WARNING, "collector.recording_gap", text, &ev, &n,
                       out, cap);
}

int recorder_retry(struct recorder *r)
{
    if (!r || !r->st.error)
        return 0;
    int64_t now = clock_ns(CLOCK_MONOTONIC);
    if (now < r->next_try)
        return 0;
    r->next_try = now + RECORDER_RETRY_NS;
    struct statvfs v;
    if (r->st.error == -ENOSPC && r->fd >= 0 && fstatvfs(r->fd, &v) == 0 &&
        (uint64_t)v.f_bavail * v.f_frsize < 2 * RECORDER_BUF)
        return 0;    /* no room yet: a try would only stop it again */
    if (r->fd < 0) { /* it could not be created: now? */
        r->fd = open(r->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (r->fd < 0)
            return -errno;
    }
    /* what buf held was lost with the stop: the magic and the Hello when the file is empty, then the notice */
    r->used = r->used_frames = 0;
    r->buf_magic = 0;
    size_t n = 0;
    int empty = r->good == 0;
    if (empty) {
        memcpy(r->buf, WIRE_MAGIC, WIRE_MAGIC_LEN);
        n = WIRE_MAGIC_LEN;
        if (r->head) {
            memcpy(r->buf + n, r->head, r->head_len);
            n += r->head_len;
        }
    }
    ssize_t len = gap_notice(r, now, r->buf + n, sizeof(r->buf) - n);
    if (len > 0)
        n += (size_t)len;
    int rc = io_write_all(r->fd, r->buf, n);
    if (rc) {
        cut_back(r);
        return rc;
    }
    r->good += (off_t)n;
    char lasted[32];
    clog_info("%s: the recording resumes after %s stopped (%s): %" PRIu64 " frames (%" PRIu64
              " bytes) were not written; a notice in it says so",
              r->path, units_format_duration(now - r->st.stopped_mono_ns, lasted, sizeof(lasted)),
              strerror(-r->st.error), r->gap_frames, r->gap_bytes);
    r->st.error = 0;
    r->st.resumed_unix_ns = clock_ns(CLOCK_REALTIME);
    r->st.resumed_mono_ns = now;
    if (r->carry) /* what the session said so far, as at a rotation: what comes after the gap reads whole */
        say_again(r, empty);
    return 1;
}

int recorder_close(struct recorder *r)
{
    if (!r)
        return 0;
    recorder_flush(r);
    int rc = r->st.error;
    if (!rc && fdatasync(r->fd) != 0 && errno != EINVAL)
        stop(r, rc = -errno, 0, 0);
    if (r->fd >= 0 && close(r->fd) != 0 && !rc)
        rc = -errno;
    free(r->head);
    carry_free(r->carry);
    free(r->path);
    free(r);
    return rc;
}

const char *recorder_path(const struct recorder *r)
{
    return r->path;
}

int recorder_error(const struct recorder *r)
{
    return r->st.error;
}

const struct rec_state *recorder_state(const struct recorder *r)
{
    return &r->st;
}

uint64_t recorder_budget_refused(const struct recorder *r)
{
    return carry_refused(r->carry);
}
