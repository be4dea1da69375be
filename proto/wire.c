#include "wire.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void put_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static uint32_t get_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

size_t wire_packed_size(const WireEvent *ev)
{
    return WIRE_HEADER_LEN + vtpin__v1__event__get_packed_size(ev);
}

ssize_t wire_pack(const WireEvent *ev, uint8_t *buf, size_t cap, size_t max)
{
    size_t payload = vtpin__v1__event__get_packed_size(ev);
    if (payload > max || payload > UINT32_MAX)
        return -EMSGSIZE;
    if (WIRE_HEADER_LEN + payload > cap)
        return -ENOSPC;
    put_le32(buf, (uint32_t)payload);
    size_t packed = vtpin__v1__event__pack(ev, buf + WIRE_HEADER_LEN);
    if (packed != payload)
        return -EPROTO;
    return (ssize_t)(WIRE_HEADER_LEN + payload);
}

int wire_frame_ready(const uint8_t *buf, size_t avail, size_t max, size_t *frame_len)
{
    if (avail < WIRE_HEADER_LEN)
        return 0;
    uint32_t payload = get_le32(buf);
    if (payload > max)
        return -EMSGSIZE;
    if (avail < WIRE_HEADER_LEN + (size_t)payload)
        return 0;
    *frame_len = WIRE_HEADER_LEN + (size_t)payload;
    return 1;
}

int wire_decode(const uint8_t *frame, size_t frame_len, WireEvent **out)
{
    *out = NULL;
    if (frame_len <= WIRE_HEADER_LEN)
        return -EPROTO;
    WireEvent *ev = vtpin__v1__event__unpack(NULL, frame_len - WIRE_HEADER_LEN, frame + WIRE_HEADER_LEN);
    if (!ev)
        return -EPROTO;
    if (ev->body_case == VTPIN__V1__EVENT__BODY__NOT_SET) {
        /* Well-formed, but none of the bodies this reader knows: a newer schema's event. */
        vtpin__v1__event__free_unpacked(ev, NULL);
        return 0;
    }
    *out = ev;
    return 1;
}

void wire_event_free(WireEvent *ev)
{
    if (ev)
        vtpin__v1__event__free_unpacked(ev, NULL);
}

struct WireReader {
    int fd;
    size_t max_frame;
    uint8_t *buf;
    size_t cap, start, end;
    uint64_t offset;
    int eof;
};

WireReader *wire_reader_new(int fd, size_t max_frame)
{
    WireReader *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    r->fd = fd;
    r->max_frame = max_frame ? max_frame : WIRE_MAX_FRAME_DEFAULT;
    r->cap = 64 * 1024;
    r->buf = malloc(r->cap);
    if (!r->buf) {
        free(r);
        return NULL;
    }
    return r;
}

void wire_reader_free(WireReader *r)
{
    if (!r)
        return;
    free(r->buf);
    free(r);
}

/* Makes sure at least want bytes are buffered. Returns 1, 0 at EOF, or -errno. */
static int reader_fill(WireReader *r, size_t want)
{
    while (r->end - r->start < want) {
        if (r->eof)
            return 0;
        if (r->start > 0) {
            memmove(r->buf, r->buf + r->start, r->end - r->start);
            r->end -= r->start;
            r->start = 0;
        }
        if (want > r->cap) {
            size_t ncap = r->cap;
            while (ncap < want)
                ncap *= 2;
            uint8_t *nbuf = realloc(r->buf, ncap);
            if (!nbuf)
                return -ENOMEM;
            r->buf = nbuf;
            r->cap = ncap;
        }
        ssize_t n = read(r->fd, r->buf + r->end, r->cap - r->end);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (n == 0)
            r->eof = 1;
        r->end += (size_t)n;
    }
    return 1;
}

int wire_reader_expect_magic(WireReader *r)
{
    int rc = reader_fill(r, WIRE_MAGIC_LEN);
    if (rc < 0)
        return rc;
    if (rc == 0 || memcmp(r->buf + r->start, WIRE_MAGIC, WIRE_MAGIC_LEN) != 0)
        return -EPROTO;
    r->start += WIRE_MAGIC_LEN;
    r->offset += WIRE_MAGIC_LEN;
    return 0;
}

/* One frame: 1 with *out set (NULL for an event of a newer schema), or as wire_reader_next. */
static int reader_frame(WireReader *r, WireEvent **out)
{
    *out = NULL;
    int rc = reader_fill(r, WIRE_HEADER_LEN);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return r->end == r->start ? 0 : -ENODATA;
    size_t frame_len = 0;
    rc = wire_frame_ready(r->buf + r->start, r->end - r->start, r->max_frame, &frame_len);
    if (rc < 0)
        return rc;
    if (rc == 0) {
        size_t need = WIRE_HEADER_LEN + get_le32(r->buf + r->start);
        rc = reader_fill(r, need);
        if (rc < 0)
            return rc;
        if (rc == 0)
            return -ENODATA;
        frame_len = need;
    }
    rc = wire_decode(r->buf + r->start, frame_len, out);
    r->start += frame_len;
    r->offset += frame_len;
    return rc < 0 ? rc : 1;
}

int wire_reader_next(WireReader *r, WireEvent **out)
{
    int rc;
    /* Well-formed events of a newer schema are skipped: read on. */
    while ((rc = reader_frame(r, out)) == 1 && !*out)
        ;
    return rc;
}

uint64_t wire_reader_offset(const WireReader *r)
{
    return r->offset;
}
