#include "record.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct record {
    int fd;
    uint8_t *buf;
    size_t len, cap;
    uint64_t lost;
    int failed; /* last write error, reported once */
};

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

struct record *record_open(const char *path, int *err)
{
    struct record *r = calloc(1, sizeof(*r));
    if (!r) {
        *err = -ENOMEM;
        return NULL;
    }
    r->cap = 256 * 1024;
    r->buf = malloc(r->cap);
    r->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (!r->buf || r->fd < 0) {
        *err = r->fd < 0 ? -errno : -ENOMEM;
        if (r->fd >= 0)
            close(r->fd);
        free(r->buf);
        free(r);
        return NULL;
    }
    int rc = write_all(r->fd, (const uint8_t *)WIRE_MAGIC, WIRE_MAGIC_LEN);
    if (rc) {
        *err = rc;
        record_close(r);
        return NULL;
    }
    return r;
}

int record_put(struct record *r, const WireEvent *ev)
{
    size_t need = wire_packed_size(ev);
    if (need > r->cap - r->len) {
        int rc = record_flush(r);
        if (rc == 0 && need > r->cap) {
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
    return 0;
}

int record_flush(struct record *r)
{
    if (!r || r->len == 0)
        return 0;
    int rc = write_all(r->fd, r->buf, r->len);
    if (rc)
        r->lost++;
    r->failed = rc;
    r->len = 0;
    return rc;
}

uint64_t record_lost(const struct record *r)
{
    return r ? r->lost : 0;
}

void record_close(struct record *r)
{
    if (!r)
        return;
    record_flush(r);
    close(r->fd);
    free(r->buf);
    free(r);
}
