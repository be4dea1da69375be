#include "recorder.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clog.h"
#include "common/io.h"
#include "wire.h"

#define RECORDER_BUF (64u * 1024)

struct recorder {
    int fd;
    int error;
    uint64_t bytes;
    size_t used;
    char *path;
    uint8_t buf[RECORDER_BUF];
};

static void fail(struct recorder *r, int rc)
{
    if (r->error)
        return;
    r->error = rc;
    clog_error("%s: writing the recording failed: %s; it stops here (the collector goes on without it)", r->path,
               strerror(-rc));
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
    if (r->fd < 0) {
        rc = -errno;
        snprintf(err, errlen, "%s: cannot create the recording: %s", r->path, strerror(-rc));
        goto cleanup;
    }
    memcpy(r->buf, WIRE_MAGIC, WIRE_MAGIC_LEN);
    r->used = WIRE_MAGIC_LEN;
    r->bytes = WIRE_MAGIC_LEN;
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
    if (r->error)
        return r->error;
    if (r->used == 0)
        return 0;
    int rc = io_write_all(r->fd, r->buf, r->used);
    r->used = 0;
    if (rc)
        fail(r, rc);
    return rc;
}

int recorder_write(struct recorder *r, const uint8_t *frame, size_t len)
{
    if (r->error)
        return r->error;
    if (r->used + len > sizeof(r->buf)) {
        int rc = recorder_flush(r);
        if (rc)
            return rc;
    }
    if (len > sizeof(r->buf)) { /* a large frame goes straight to the file */
        int rc = io_write_all(r->fd, frame, len);
        if (rc) {
            fail(r, rc);
            return rc;
        }
    } else {
        memcpy(r->buf + r->used, frame, len);
        r->used += len;
    }
    r->bytes += len;
    return 0;
}

int recorder_close(struct recorder *r)
{
    if (!r)
        return 0;
    recorder_flush(r);
    if (!r->error && fdatasync(r->fd) != 0 && errno != EINVAL)
        fail(r, -errno);
    if (close(r->fd) != 0 && !r->error)
        fail(r, -errno);
    int rc = r->error;
    free(r->path);
    free(r);
    return rc;
}

const char *recorder_path(const struct recorder *r)
{
    return r->path;
}

uint64_t recorder_bytes(const struct recorder *r)
{
    return r->bytes;
}

int recorder_error(const struct recorder *r)
{
    return r->error;
}
