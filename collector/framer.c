#include "framer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/budget.h"
#include "wire.h"

static uint32_t get_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int framer_init(struct framer *f, size_t max_frame)
{
    memset(f, 0, sizeof(*f));
    f->max_frame = max_frame;
    f->cap = FRAMER_INITIAL_CAP;
    if (f->cap > WIRE_HEADER_LEN + max_frame)
        f->cap = WIRE_HEADER_LEN + max_frame;
    f->buf = malloc(f->cap);
    return f->buf ? 0 : -ENOMEM;
}

void framer_set_budget(struct framer *f, struct budget *b)
{
    f->budget = b;
}

void framer_fini(struct framer *f)
{
    budget_give(f->budget, f->charged);
    f->charged = 0;
    free(f->buf);
    f->buf = NULL;
    f->cap = f->start = f->end = 0;
}

size_t framer_pending(const struct framer *f)
{
    return f->end - f->start;
}

/* Bytes the frame in progress needs in all (header + payload), at least a header. */
static int frame_need(const struct framer *f, size_t *need)
{
    size_t avail = f->end - f->start;
    if (avail < WIRE_HEADER_LEN) {
        *need = WIRE_HEADER_LEN;
        return 0;
    }
    uint32_t payload = get_le32(f->buf + f->start);
    if (payload > f->max_frame)
        return -EMSGSIZE;
    *need = WIRE_HEADER_LEN + (size_t)payload;
    return 0;
}

/* Back to the first capacity once a large frame is through. */
static void shrink(struct framer *f, size_t need)
{
    size_t avail = f->end - f->start, small = f->cap - f->charged;
    if (!f->charged || avail > small || need > small)
        return;
    memmove(f->buf, f->buf + f->start, avail);
    f->start = 0;
    f->end = avail;
    uint8_t *nbuf = realloc(f->buf, small);
    if (nbuf)
        f->buf = nbuf;
    f->cap = small;
    budget_give(f->budget, f->charged);
    f->charged = 0;
}

/* The budget refused room for the frame in progress: it is thrown away as it arrives. */
static void skip_frame(struct framer *f, size_t need)
{
    size_t buffered = f->end - f->start;
    f->consumed += buffered;
    f->skip = need - buffered;
    f->start = f->end = 0;
    f->skipped_frames++;
}

int framer_space(struct framer *f, uint8_t **room, size_t *len)
{
    size_t need;
    if (f->skip) { /* throwing a frame away: read into the whole buffer */
        f->start = f->end = 0;
        *room = f->buf;
        *len = f->cap;
        return 0;
    }
    int rc = frame_need(f, &need);
    if (rc)
        return rc;
    shrink(f, need);
    if (f->start > 0 && (f->start == f->end || f->start + need > f->cap)) {
        memmove(f->buf, f->buf + f->start, f->end - f->start);
        f->end -= f->start;
        f->start = 0;
    }
    if (f->start + need > f->cap) { /* only when the frame needs it; need <= header + max */
        size_t ncap = f->cap;
        while (ncap < need)
            ncap *= 2;
        if (ncap > WIRE_HEADER_LEN + f->max_frame)
            ncap = WIRE_HEADER_LEN + f->max_frame;
        if (budget_take(f->budget, ncap - f->cap) != 0) {
            skip_frame(f, need);
            *room = f->buf;
            *len = f->cap;
            return 0;
        }
        uint8_t *nbuf = realloc(f->buf, ncap);
        if (!nbuf) {
            budget_give(f->budget, ncap - f->cap);
            return -ENOMEM;
        }
        f->charged += ncap - f->cap;
        f->buf = nbuf;
        f->cap = ncap;
    }
    if (f->end == f->cap) { /* a frame fits but the tail is full: make room */
        memmove(f->buf, f->buf + f->start, f->end - f->start);
        f->end -= f->start;
        f->start = 0;
    }
    if (f->end == f->cap)
        return -ENOBUFS; /* a whole frame is buffered: take it with framer_next first */
    *room = f->buf + f->end;
    *len = f->cap - f->end;
    return 0;
}

void framer_commit(struct framer *f, size_t n)
{
    if (f->skip) { /* the room was the whole buffer (start = end = 0) */
        size_t drop = n < f->skip ? n : f->skip;
        f->skip -= drop;
        f->consumed += drop;
        memmove(f->buf, f->buf + drop, n - drop); /* what follows is the next frame's */
        f->end = n - drop;
        return;
    }
    f->end += n;
}

int framer_next(struct framer *f, const uint8_t **frame, size_t *len)
{
    size_t avail = f->end - f->start;
    if (avail < WIRE_HEADER_LEN)
        return 0;
    uint32_t payload = get_le32(f->buf + f->start);
    if (payload > f->max_frame) {
        *len = payload;
        return -EMSGSIZE;
    }
    size_t need = WIRE_HEADER_LEN + (size_t)payload;
    if (avail < need)
        return 0;
    *frame = f->buf + f->start;
    *len = need;
    f->start += need;
    f->consumed += need;
    return 1;
}
