#include "record_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/io.h"
#include "common/path_trust.h"
#include "common/rotate.h"

/* Disk space held aside in an unnamed file beside the recording: when the
 * disk fills, it is given back so that the notice, counters and end marker
 * that say why the recording stops still fit. */
#define RESERVE_BYTES (8 * 1024)
#define TAIL_FRAME_MAX 4096
#define TAIL_STATS_MAX 32 /* counters written after a failure, then only the end marker */

struct record_file {
    int fd;
    uint8_t *buf;
    size_t len, cap;
    size_t frames;       /* frames in buf */
    uint64_t lost;       /* frames that could not be packed */
    off_t good;          /* bytes of whole frames in the file */
    int reserve_fd;      /* -1: none (no O_TMPFILE, or no room even for it) */
    int reserve_error;   /* ENOSPC or EDQUOT: no room for the reserve (the disk is nearly full), else 0 */
    unsigned tail_stats; /* Stats written after the failure */
    int error;           /* first write error (errno); from then on only counters go out */
    uint64_t write_failures, unwritten;
};

static void reserve_open(struct record_file *r, const char *path)
{
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, sizeof(dir), ".");
    else
        snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
    r->reserve_fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
    int e = r->reserve_fd < 0 ? errno : 0;
    if (r->reserve_fd >= 0 && fallocate(r->reserve_fd, 0, 0, RESERVE_BYTES) != 0) {
        e = errno;
        close(r->reserve_fd);
        r->reserve_fd = -1;
    }
    /* no O_TMPFILE or no fallocate here is no news about the disk; no room is */
    r->reserve_error = e == ENOSPC || e == EDQUOT ? e : 0;
}

static void reserve_release(struct record_file *r)
{
    if (r->reserve_fd >= 0)
        close(r->reserve_fd);
    r->reserve_fd = -1;
}

/* A failed write may have left part of a frame: cut the file back to the
 * last whole one. */
static void cut_back(struct record_file *r)
{
    if (ftruncate(r->fd, r->good) != 0) {
        /* a device or pipe: nothing to cut */
    }
    if (lseek(r->fd, r->good, SEEK_SET) < 0) {
        /* a pipe or device: nothing to cut */
    }
}

static void failed(struct record_file *r, int rc, uint64_t frames)
{
    r->write_failures++;
    r->unwritten += frames;
    if (!r->error)
        r->error = -rc;
    cut_back(r);
    reserve_release(r);
}

struct record_file *record_file_open(const char *path, unsigned mode, int *err)
{
    struct record_file *r = calloc(1, sizeof(*r));
    if (!r) {
        *err = -ENOMEM;
        return NULL;
    }
    r->cap = 256 * 1024;
    r->reserve_fd = -1;
    r->buf = malloc(r->cap);
    r->fd = path_trust_open_own_file(path, O_TRUNC, (mode_t)mode); /* never through a link, never another's */
    if (!r->buf || r->fd < 0) {
        *err = r->fd < 0 ? r->fd : -ENOMEM;
        if (r->fd >= 0)
            close(r->fd);
        free(r->buf);
        free(r);
        return NULL;
    }
    int rc = io_write_all(r->fd, (const uint8_t *)WIRE_MAGIC, WIRE_MAGIC_LEN);
    if (rc) {
        *err = rc;
        /* not even the magic: the empty file we made is no recording; a device stays */
        struct stat st;
        if (fstat(r->fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < WIRE_MAGIC_LEN)
            (void)unlink(path); /* may be gone already: nothing else to do */
        close(r->fd);
        free(r->buf);
        free(r);
        return NULL;
    }
    r->good = WIRE_MAGIC_LEN;
    reserve_open(r, path);
    return r;
}

/* After a failed write only self-contained events are tried: they say why
 * the file stops and what was lost, and reference no definition. */
static int put_tail(struct record_file *r, const WireEvent *ev)
{
    int self_contained = ev->body_case == VTPIN__V1__EVENT__BODY_STATS ||
                         ev->body_case == VTPIN__V1__EVENT__BODY_NOTICE ||
                         ev->body_case == VTPIN__V1__EVENT__BODY_GOODBYE;
    if (!self_contained || (ev->body_case == VTPIN__V1__EVENT__BODY_STATS && r->tail_stats >= TAIL_STATS_MAX)) {
        r->unwritten++;
        return -r->error;
    }
    uint8_t frame[TAIL_FRAME_MAX];
    ssize_t n = wire_pack(ev, frame, sizeof(frame), sizeof(frame));
    if (n < 0) {
        r->unwritten++;
        return (int)n;
    }
    int rc = io_write_all(r->fd, frame, (size_t)n);
    if (rc) {
        failed(r, rc, 1);
        return rc;
    }
    r->good += n;
    if (ev->body_case == VTPIN__V1__EVENT__BODY_STATS)
        r->tail_stats++;
    return 0;
}

int record_file_put(struct record_file *r, const WireEvent *ev)
{
    if (r->error)
        return put_tail(r, ev);
    size_t need = wire_packed_size(ev);
    if (need > r->cap - r->len) {
        int rc = record_file_flush(r);
        if (rc)
            return put_tail(r, ev);
        if (need > r->cap) {
            r->lost++;
            return -EMSGSIZE;
        }
    }
    ssize_t n = wire_pack(ev, r->buf + r->len, r->cap - r->len, r->cap);
    if (n < 0) {
        r->lost++;
        return (int)n;
    }
    r->len += (size_t)n;
    r->frames++;
    return 0;
}

int record_file_flush(struct record_file *r)
{
    if (!r || r->len == 0)
        return 0;
    int rc = io_write_all(r->fd, r->buf, r->len);
    if (rc)
        failed(r, rc, r->frames);
    else
        r->good += (off_t)r->len;
    r->len = 0;
    r->frames = 0;
    return rc;
}

int record_file_reserve_error(const struct record_file *r)
{
    return r ? r->reserve_error : 0;
}

uint64_t record_file_lost(const struct record_file *r)
{
    return r ? r->lost : 0;
}

int record_file_error(const struct record_file *r)
{
    return r ? r->error : 0;
}

uint64_t record_file_write_failures(const struct record_file *r)
{
    return r ? r->write_failures : 0;
}

uint64_t record_file_unwritten(const struct record_file *r)
{
    return r ? r->unwritten : 0;
}

uint64_t record_file_size(const struct record_file *r)
{
    return r ? (uint64_t)r->good + r->len : 0;
}

int record_file_rotate(struct record_file *r, const char *path, unsigned keep, unsigned mode)
{
    int rc = record_file_flush(r);
    if (rc)
        return rc;
    if ((rc = rotate_names(path, keep)) != 0)
        return rc;
    int fd = path_trust_open_own_file(path, O_TRUNC, (mode_t)mode); /* as record_open: never a link, never another's */
    if (fd < 0)
        return fd; /* the caller goes on in PATH.1 */
    rc = io_write_all(fd, (const uint8_t *)WIRE_MAGIC, WIRE_MAGIC_LEN);
    if (rc) {
        close(fd);
        (void)unlink(path); /* no recording without its magic; goes on in PATH.1 */
        return rc;
    }
    close(r->fd);
    r->fd = fd;
    r->good = WIRE_MAGIC_LEN;
    reserve_release(r);
    reserve_open(r, path);
    return 0;
}

void record_file_close(struct record_file *r)
{
    if (!r)
        return;
    record_file_flush(r);
    reserve_release(r);
    close(r->fd);
    free(r->buf);
    free(r);
}
