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

#include "clog.h"
#include "common/io.h"
#include "common/units.h"
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
                  char *err, size_t errlen)
{
    struct recorder *r = calloc(1, sizeof(*r));
    int rc;
    if (!r)
        return -ENOMEM;
    r->fd = -1;
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

int recorder_write(struct recorder *r, const uint8_t *frame, size_t len)
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
    Vtpin__V1__Notice n = VTPIN__V1__NOTICE__INIT;
    n.time_ns = r->st.stopped_mono_ns;
    n.severity = VTPIN__V1__SEVERITY__WARNING;
    n.code = (char *)"collector.recording_gap";
    n.text = text;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_NOTICE;
    ev.notice = &n;
    return wire_pack(&ev, out, cap, cap);
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
    if (r->good == 0) {
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
