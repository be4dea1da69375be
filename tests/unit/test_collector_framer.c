/* Unit tests for collector/framer.c: a connection's input buffer under
 * hostile input: frames split anywhere, oversized announcements, empty and
 * garbage payloads, and the bound on the buffer. */
#include "framer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "common/budget.h"
#include "wire.h"

#define MAX 4096

static void put_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/* A stream of n frames with payloads of sizes[i] bytes, filled with a pattern. */
static uint8_t *make_stream(const size_t *sizes, size_t n, size_t *total)
{
    size_t len = 0;
    for (size_t i = 0; i < n; i++)
        len += WIRE_HEADER_LEN + sizes[i];
    uint8_t *s = malloc(len ? len : 1), *p = s;
    for (size_t i = 0; i < n; i++) {
        put_le32(p, (uint32_t)sizes[i]);
        for (size_t k = 0; k < sizes[i]; k++)
            p[WIRE_HEADER_LEN + k] = (uint8_t)(i * 31 + k);
        p += WIRE_HEADER_LEN + sizes[i];
    }
    *total = len;
    return s;
}

/* Feeds data in chunks of at most chunk bytes (as reads would), checking each
 * frame against the stream. Returns the number of frames, or a negative error. */
static long feed(struct framer *f, const uint8_t *data, size_t len, size_t chunk, const uint8_t *expect)
{
    size_t off = 0, checked = 0;
    long frames = 0;
    while (off < len) {
        uint8_t *room;
        size_t room_len;
        int rc = framer_space(f, &room, &room_len);
        if (rc)
            return rc;
        if (!CHECK(room_len > 0))
            return -EIO;
        size_t n = len - off;
        if (n > chunk)
            n = chunk;
        if (n > room_len)
            n = room_len;
        memcpy(room, data + off, n);
        framer_commit(f, n);
        off += n;
        const uint8_t *fr;
        size_t fl;
        while ((rc = framer_next(f, &fr, &fl)) == 1) {
            if (!CHECK_MEM(fr, expect + checked, fl))
                return -EIO;
            checked += fl;
            frames++;
        }
        if (rc < 0)
            return rc;
        if (!CHECK(f->cap <= WIRE_HEADER_LEN + f->max_frame))
            return -EIO;
    }
    return frames;
}

static void test_split_anywhere(void)
{
    size_t sizes[] = {0, 1, 5, 100, 3000, MAX, 7, 2049, 16};
    size_t n = sizeof(sizes) / sizeof(sizes[0]), total;
    uint8_t *stream = make_stream(sizes, n, &total);
    size_t chunks[] = {1, 2, 3, 4, 5, 7, 64, 1000, 4099, 100000};
    for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
        struct framer f;
        CHECK_INT(framer_init(&f, MAX), 0);
        CHECK_INT(feed(&f, stream, total, chunks[c], stream), (long)n);
        CHECK_UINT(framer_pending(&f), 0);
        CHECK_UINT(f.consumed, total);
        framer_fini(&f);
    }
    free(stream);
}

static void test_partial_header_and_frame(void)
{
    struct framer f;
    CHECK_INT(framer_init(&f, MAX), 0);
    uint8_t *room;
    size_t room_len;
    const uint8_t *fr;
    size_t fl;
    CHECK_INT(framer_next(&f, &fr, &fl), 0); /* empty */
    CHECK_INT(framer_space(&f, &room, &room_len), 0);
    put_le32(room, 10);
    framer_commit(&f, 3); /* three bytes of the header */
    CHECK_INT(framer_next(&f, &fr, &fl), 0);
    CHECK_INT(framer_space(&f, &room, &room_len), 0);
    room[0] = 0; /* the fourth header byte, then 9 of 10 payload bytes */
    memset(room + 1, 'x', 9);
    framer_commit(&f, 10);
    CHECK_INT(framer_next(&f, &fr, &fl), 0);
    CHECK_UINT(framer_pending(&f), 13);
    CHECK_INT(framer_space(&f, &room, &room_len), 0);
    room[0] = 'y';
    framer_commit(&f, 1);
    CHECK_INT(framer_next(&f, &fr, &fl), 1);
    CHECK_UINT(fl, 14);
    CHECK_INT(fr[13], 'y');
    CHECK_UINT(framer_pending(&f), 0);
    framer_fini(&f);
}

static void test_oversized(void)
{
    uint32_t lengths[] = {MAX + 1, 0x7FFFFFFFu, 0xFFFFFFFFu, 0x20544547u /* "GET " */};
    for (size_t i = 0; i < sizeof(lengths) / sizeof(lengths[0]); i++) {
        struct framer f;
        CHECK_INT(framer_init(&f, MAX), 0);
        uint8_t *room;
        size_t room_len;
        CHECK_INT(framer_space(&f, &room, &room_len), 0);
        put_le32(room, lengths[i]);
        framer_commit(&f, 4);
        const uint8_t *fr;
        size_t fl = 0;
        CHECK_INT(framer_next(&f, &fr, &fl), -EMSGSIZE);
        CHECK_UINT(fl, lengths[i]);
        CHECK_INT(framer_space(&f, &room, &room_len), -EMSGSIZE);
        CHECK(f.cap <= WIRE_HEADER_LEN + MAX); /* nothing was allocated for it */
        framer_fini(&f);
    }
    /* a good frame, then an oversized header in the same read */
    struct framer f;
    CHECK_INT(framer_init(&f, MAX), 0);
    uint8_t *room;
    size_t room_len;
    CHECK_INT(framer_space(&f, &room, &room_len), 0);
    put_le32(room, 2);
    room[4] = 1;
    room[5] = 2;
    put_le32(room + 6, MAX + 100);
    framer_commit(&f, 10);
    const uint8_t *fr;
    size_t fl;
    CHECK_INT(framer_next(&f, &fr, &fl), 1);
    CHECK_UINT(fl, 6);
    CHECK_INT(framer_next(&f, &fr, &fl), -EMSGSIZE);
    framer_fini(&f);
}

static void test_exact_max_and_bound(void)
{
    size_t sizes[] = {MAX, MAX, 1, MAX};
    size_t total;
    uint8_t *stream = make_stream(sizes, 4, &total);
    struct framer f;
    CHECK_INT(framer_init(&f, MAX), 0);
    CHECK_INT(feed(&f, stream, total, 3333, stream), 4);
    CHECK_UINT(f.cap, WIRE_HEADER_LEN + MAX);
    framer_fini(&f);
    /* a limit below the initial buffer size: the buffer is header + limit */
    CHECK_INT(framer_init(&f, 100), 0);
    CHECK_UINT(f.cap, WIRE_HEADER_LEN + 100);
    framer_fini(&f);
    free(stream);
}

static void test_whole_frame_buffered(void)
{
    struct framer f;
    CHECK_INT(framer_init(&f, 12), 0); /* cap 16 */
    uint8_t *room;
    size_t room_len;
    CHECK_INT(framer_space(&f, &room, &room_len), 0);
    CHECK_UINT(room_len, 16);
    put_le32(room, 12);
    memset(room + 4, 'z', 12);
    framer_commit(&f, 16);
    CHECK_INT(framer_space(&f, &room, &room_len), -ENOBUFS); /* take the frame first */
    const uint8_t *fr;
    size_t fl;
    CHECK_INT(framer_next(&f, &fr, &fl), 1);
    CHECK_INT(framer_space(&f, &room, &room_len), 0);
    CHECK_UINT(room_len, 16);
    framer_fini(&f);
}

static void test_garbage_payloads(void)
{
    /* what the framer hands out must still be refused by wire_decode */
    WireEvent *ev = NULL;
    uint8_t empty[4] = {0, 0, 0, 0};
    CHECK_INT(wire_decode(empty, sizeof(empty), &ev), -EPROTO); /* an empty frame */
    uint8_t junk[10] = {6, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    CHECK_INT(wire_decode(junk, sizeof(junk), &ev), -EPROTO);
    uint8_t zero_tag[6] = {2, 0, 0, 0, 0x00, 0x01}; /* field 0 */
    CHECK_INT(wire_decode(zero_tag, sizeof(zero_tag), &ev), -EPROTO);
    uint8_t cut_string[8] = {4, 0, 0, 0, 0x0a, 0x10, 'a', 'b'}; /* Hello of 16 bytes, 2 present */
    CHECK_INT(wire_decode(cut_string, sizeof(cut_string), &ev), -EPROTO);
    CHECK(ev == NULL);
    uint8_t http[] = "GET / HTTP/1.1\r\n";
    struct framer f;
    CHECK_INT(framer_init(&f, WIRE_MAX_FRAME_DEFAULT), 0);
    uint8_t *room;
    size_t room_len;
    CHECK_INT(framer_space(&f, &room, &room_len), 0);
    memcpy(room, http, sizeof(http) - 1);
    framer_commit(&f, sizeof(http) - 1);
    const uint8_t *fr;
    size_t fl;
    CHECK_INT(framer_next(&f, &fr, &fl), -EMSGSIZE);
    framer_fini(&f);
}

/* Random streams, random chunking (deterministic seed). */
static void test_random(void)
{
    unsigned seed = 12345;
    for (int round = 0; round < 50; round++) {
        size_t sizes[20];
        for (size_t i = 0; i < 20; i++)
            sizes[i] = (size_t)(rand_r(&seed) % (MAX + 1));
        size_t total;
        uint8_t *stream = make_stream(sizes, 20, &total);
        struct framer f;
        CHECK_INT(framer_init(&f, MAX), 0);
        CHECK_INT(feed(&f, stream, total, 1 + (size_t)(rand_r(&seed) % 9000), stream), 20);
        framer_fini(&f);
        free(stream);
    }
}

/* Feeds data in chunks; the payload sizes of the frames handed out go to sizes[] (at most cap). */
static size_t feed_sizes(struct framer *f, const uint8_t *data, size_t len, size_t chunk, size_t *sizes, size_t cap)
{
    size_t off = 0, n = 0;
    while (off < len) {
        uint8_t *room;
        size_t room_len;
        if (!CHECK_INT(framer_space(f, &room, &room_len), 0) || !CHECK(room_len > 0))
            return n;
        size_t k = len - off < chunk ? len - off : chunk;
        if (k > room_len)
            k = room_len;
        memcpy(room, data + off, k);
        framer_commit(f, k);
        off += k;
        const uint8_t *fr;
        size_t fl;
        while (framer_next(f, &fr, &fl) == 1) {
            /* the payload is the pattern make_stream wrote: intact */
            if (n < cap)
                sizes[n] = fl - WIRE_HEADER_LEN;
            n++;
        }
    }
    return n;
}

/* Two connections share a budget: growth it refuses drops that frame (read
 * and thrown away, the stream stays in step); the budget comes back when a
 * large frame is through and when a connection ends. */
static void test_budget(void)
{
    enum { BIG = 100 * 1024 };
    struct budget b;
    budget_init(&b, 150 * 1024);
    struct framer a, c;
    CHECK_INT(framer_init(&a, 256 * 1024), 0);
    CHECK_INT(framer_init(&c, 256 * 1024), 0);
    framer_set_budget(&a, &b);
    framer_set_budget(&c, &b);
    size_t got[8] = {0}, total;

    size_t a1[] = {BIG};
    uint8_t *s = make_stream(a1, 1, &total);
    CHECK_UINT(feed_sizes(&a, s, total, 4096, got, 8), 1);
    CHECK_UINT(got[0], BIG);
    CHECK(b.used > 0 && b.used <= b.limit);
    size_t a_charge = b.used;
    free(s);

    size_t c1[] = {BIG, 5, BIG, 7}; /* the budget cannot hold a second large buffer */
    s = make_stream(c1, 4, &total);
    for (size_t chunk = 1000; chunk <= 200000; chunk *= 200) {
        uint64_t skipped = c.skipped_frames;
        CHECK_UINT(feed_sizes(&c, s, total, chunk, got, 8), 2);
        CHECK_UINT(got[0], 5);
        CHECK_UINT(got[1], 7);
        CHECK_UINT(c.skipped_frames - skipped, 2);
        CHECK_UINT(framer_pending(&c), 0);
    }
    CHECK_UINT(c.consumed, 2 * total);
    CHECK_UINT(b.used, a_charge); /* nothing taken for the dropped frames */
    CHECK_UINT(b.refused, 4);
    free(s);

    size_t a2[] = {10, 20}; /* small frames after the large one: a shrinks back */
    s = make_stream(a2, 2, &total);
    CHECK_UINT(feed_sizes(&a, s, total, 4096, got, 8), 2);
    CHECK_UINT(b.used, 0);
    free(s);

    s = make_stream(c1, 1, &total); /* now there is room for c */
    CHECK_UINT(feed_sizes(&c, s, total, 65536, got, 8), 1);
    CHECK_UINT(got[0], BIG);
    CHECK(b.used > 0);
    free(s);
    framer_fini(&a);
    framer_fini(&c);
    CHECK_UINT(b.used, 0);
    CHECK(b.peak <= b.limit);
}

int main(void)
{
    CHECK_RUN(test_budget);
    CHECK_RUN(test_split_anywhere);
    CHECK_RUN(test_partial_header_and_frame);
    CHECK_RUN(test_oversized);
    CHECK_RUN(test_exact_max_and_bound);
    CHECK_RUN(test_whole_frame_buffered);
    CHECK_RUN(test_garbage_payloads);
    CHECK_RUN(test_random);
    CHECK_MAIN_RETURN();
}
