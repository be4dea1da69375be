/* A connection's input buffer: bytes in, whole wire frames out.
 *
 * The buffer starts small and grows only as far as the frame being read
 * needs, never past header + max_frame: a peer announcing a larger frame is
 * refused before any of it is buffered. Growth past the first
 * FRAMER_INITIAL_CAP bytes is taken from a budget (framer_set_budget); when
 * the budget refuses, that frame is read and thrown away (skipped_frames)
 * rather than buffered, and the buffer shrinks back once a large frame is
 * through. Pure: no I/O. */
#ifndef VTPIN_COLLECTOR_FRAMER_H
#define VTPIN_COLLECTOR_FRAMER_H

#include <stddef.h>
#include <stdint.h>

#define FRAMER_INITIAL_CAP (16u * 1024)

struct budget;

struct framer {
    uint8_t *buf;
    size_t cap, start, end; /* unread bytes are buf[start, end) */
    size_t max_frame;       /* payload limit */
    uint64_t consumed;      /* bytes handed out as frames (or skipped) so far */
    struct budget *budget;  /* NULL: none */
    size_t charged;         /* cap beyond FRAMER_INITIAL_CAP, taken from budget */
    size_t skip;            /* bytes of a dropped frame still to throw away */
    uint64_t skipped_frames;
};

int framer_init(struct framer *f, size_t max_frame);
/* Growth past FRAMER_INITIAL_CAP is taken from b from now on. */
void framer_set_budget(struct framer *f, struct budget *b);
void framer_fini(struct framer *f);

/* Where the next read should go: at least one byte of room, sized so the
 * frame in progress fits (header + payload). Take the buffered frames with
 * framer_next first. 0 with *room, *len (> 0) set, -EMSGSIZE when the buffered
 * header announces a frame over max_frame, -ENOBUFS when a whole frame is
 * still buffered, or -ENOMEM. */
int framer_space(struct framer *f, uint8_t **room, size_t *len);
/* n bytes were read into the room framer_space gave. */
void framer_commit(struct framer *f, size_t n);

/* The next whole frame (header included), valid until the next call on f:
 * 1 with *frame, *len, 0 when more bytes are needed, -EMSGSIZE when the
 * announced payload exceeds max_frame (then *len holds the announced payload). */
int framer_next(struct framer *f, const uint8_t **frame, size_t *len);

/* Bytes buffered that are not part of a returned frame. */
size_t framer_pending(const struct framer *f);

#endif
