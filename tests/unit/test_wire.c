/* Unit tests for proto/wire.c: framing agrees byte for byte with protobuf-c,
 * events round-trip, frame_ready and unpack refuse what they should, and
 * WireReader handles magic, truncation, oversized frames and short reads. */
#include "wire.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

#define MAX_FRAME WIRE_MAX_FRAME_DEFAULT

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/* ---- sample events ---------------------------------------------------- */

/* The event of a whole frame, NULL unless wire_decode returns 1. */
static WireEvent *decoded(const uint8_t *frame, size_t len)
{
    WireEvent *ev = NULL;
    return wire_decode(frame, len, &ev) == 1 ? ev : NULL;
}

static char *capabilities[] = {"can_support_virtual_threads", "can_generate_monitor_events", ""};

static Vtpin__V1__Hello hello = {
    PROTOBUF_C_MESSAGE_INIT(&vtpin__v1__hello__descriptor),
    .schema_version = WIRE_SCHEMA_VERSION,
    .pid = 4242424242,
    .java_version = "21.0.5",
    .vm_name = "OpenJDK 64-Bit Server VM",
    .vm_version = "21.0.5+11-LTS",
    .vm_vendor = "Eclipse Adoptium",
    .host = "h\xc3\xa4st.example", /* UTF-8 */
    .agent_version = "0.1.0",
    .options = "threshold=1ms,trace:short",
    .has_mode = 1,
    .mode = VTPIN__V1__LOAD_MODE__ATTACH,
    .has_start_unix_ns = 1,
    .start_unix_ns = 1700000000123456789,
    .has_start_mono_ns = 1,
    .start_mono_ns = 987654321,
    .has_threshold_ns = 1,
    .threshold_ns = 1000000,
    .has_jdk_feature = 1,
    .jdk_feature = 21,
    .has_parallelism = 1,
    .parallelism = 8,
    .n_capabilities_missing = 3,
    .capabilities_missing = capabilities,
};

static Vtpin__V1__Frame frame0 = {PROTOBUF_C_MESSAGE_INIT(&vtpin__v1__frame__descriptor),
                                  .method = 1,
                                  .has_line = 1,
                                  .line = 42,
                                  .has_bci = 1,
                                  .bci = 7,
                                  .has_monitors = 1,
                                  .monitors = 1};
static Vtpin__V1__Frame frame1 = {PROTOBUF_C_MESSAGE_INIT(&vtpin__v1__frame__descriptor),
                                  .method = 2,
                                  .has_line = 1,
                                  .line = -1,
                                  .has_bci = 1,
                                  .bci = -1};
static Vtpin__V1__Frame frame2 = {PROTOBUF_C_MESSAGE_INIT(&vtpin__v1__frame__descriptor), .method = 300000};
static Vtpin__V1__Frame *frames[] = {&frame0, &frame1, &frame2};
static Vtpin__V1__StackDef stack = {PROTOBUF_C_MESSAGE_INIT(&vtpin__v1__stack_def__descriptor),
                                    .id = 17,
                                    .n_frames = 3,
                                    .frames = frames,
                                    .has_truncated = 1,
                                    .truncated = 1};

static Vtpin__V1__PinStart pin_start = {
    PROTOBUF_C_MESSAGE_INIT(&vtpin__v1__pin_start__descriptor),
    .pin_id = UINT64_MAX,
    .start_ns = -5,
    .reason = VTPIN__V1__PIN_REASON__NATIVE_BLOCK,
    .has_vthread_id = 1,
    .vthread_id = 31,
    .has_vthread_name = 1,
    .vthread_name = 4,
    .has_carrier_tid = 1,
    .carrier_tid = 123456,
    .has_carrier_name = 1,
    .carrier_name = 5,
    .has_stack = 1,
    .stack = 17,
    .has_culprit_frame = 1,
    .culprit_frame = 0,
};

static Vtpin__V1__Notice notice = {PROTOBUF_C_MESSAGE_INIT(&vtpin__v1__notice__descriptor), .time_ns = 1234,
                                   .severity = VTPIN__V1__SEVERITY__WARNING, .code = "capability.breakpoints",
                                   .text = "can_generate_breakpoint_events is missing: no culprit frames"};

static Vtpin__V1__StringDef string_def = {PROTOBUF_C_MESSAGE_INIT(&vtpin__v1__string_def__descriptor), .id = 9,
                                          .value = ""};

static Vtpin__V1__MethodDef method_def = {PROTOBUF_C_MESSAGE_INIT(&vtpin__v1__method_def__descriptor),
                                          .id = 1,
                                          .class_name = 2,
                                          .method_name = 3,
                                          .has_signature = 1,
                                          .signature = 4,
                                          .has_is_native = 1,
                                          .is_native = 1,
                                          .has_library = 1,
                                          .library = 6};

static Vtpin__V1__PinEnd pin_end = {PROTOBUF_C_MESSAGE_INIT(&vtpin__v1__pin_end__descriptor), .pin_id = 77,
                                    .end_ns = INT64_MAX, .duration_ns = 0};

static Vtpin__V1__Stats stats = {PROTOBUF_C_MESSAGE_INIT(&vtpin__v1__stats__descriptor),
                                 .time_ns = 5,
                                 .has_pins = 1,
                                 .pins = 10,
                                 .has_pins_below_threshold = 1,
                                 .pins_below_threshold = 3,
                                 .has_events_dropped = 1,
                                 .events_dropped = 1,
                                 .has_stacks_dropped = 1,
                                 .stacks_dropped = 0,
                                 .has_pins_reported = 1,
                                 .pins_reported = 7,
                                 .has_carriers_started = 1,
                                 .carriers_started = 9,
                                 .has_compensations = 1,
                                 .compensations = 2};

static Vtpin__V1__Goodbye goodbye = {PROTOBUF_C_MESSAGE_INIT(&vtpin__v1__goodbye__descriptor), .time_ns = 99,
                                     .stats = &stats};

enum { NKINDS = 9 };

/* Event i of the sample set (every body kind once). */
static WireEvent sample(int i)
{
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    switch (i) {
    case 0:
        ev.body_case = VTPIN__V1__EVENT__BODY_HELLO;
        ev.hello = &hello;
        break;
    case 1:
        ev.body_case = VTPIN__V1__EVENT__BODY_STACK;
        ev.stack = &stack;
        break;
    case 2:
        ev.body_case = VTPIN__V1__EVENT__BODY_PIN_START;
        ev.pin_start = &pin_start;
        break;
    case 3:
        ev.body_case = VTPIN__V1__EVENT__BODY_NOTICE;
        ev.notice = &notice;
        break;
    case 4:
        ev.body_case = VTPIN__V1__EVENT__BODY_STRING;
        ev.string = &string_def;
        break;
    case 5:
        ev.body_case = VTPIN__V1__EVENT__BODY_METHOD;
        ev.method = &method_def;
        break;
    case 6:
        ev.body_case = VTPIN__V1__EVENT__BODY_PIN_END;
        ev.pin_end = &pin_end;
        break;
    case 7:
        ev.body_case = VTPIN__V1__EVENT__BODY_STATS;
        ev.stats = &stats;
        break;
    default:
        ev.body_case = VTPIN__V1__EVENT__BODY_GOODBYE;
        ev.goodbye = &goodbye;
        break;
    }
    return ev;
}

/* ---- a growable byte buffer for building recordings ------------------- */

struct bytes {
    uint8_t *p;
    size_t len, cap;
};

static void bytes_add(struct bytes *b, const void *data, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n)
            cap *= 2;
        b->p = realloc(b->p, cap);
        b->cap = cap;
    }
    memcpy(b->p + b->len, data, n);
    b->len += n;
}

/* Appends ev as one frame; returns the frame length. */
static size_t bytes_add_event(struct bytes *b, const WireEvent *ev)
{
    size_t n = wire_packed_size(ev);
    uint8_t *frame = malloc(n);
    ssize_t got = wire_pack(ev, frame, n, SIZE_MAX);
    CHECK_INT(got, (ssize_t)n);
    bytes_add(b, frame, n);
    free(frame);
    return n;
}

static void bytes_add_raw_frame(struct bytes *b, const void *payload, uint32_t n)
{
    uint8_t h[4];
    put_le32(h, n);
    bytes_add(b, h, 4);
    if (n)
        bytes_add(b, payload, n);
}

/* ---- packing ------------------------------------------------------------ */

static void check_pack_agrees(const WireEvent *ev, int kind)
{
    size_t payload = vtpin__v1__event__get_packed_size(ev);
    size_t size = wire_packed_size(ev);
    if (!CHECK_UINT(size, payload + WIRE_HEADER_LEN))
        return;
    CHECK(payload > 0);

    /* One byte of slack on each side to catch writes outside the frame. */
    uint8_t *mem = malloc(size + 2);
    memset(mem, 0xee, size + 2);
    uint8_t *frame = mem + 1;
    ssize_t n = wire_pack(ev, frame, size, MAX_FRAME);
    if (!CHECK_INT(n, (ssize_t)size)) {
        fprintf(stderr, "    event kind %d\n", kind);
        free(mem);
        return;
    }
    CHECK(mem[0] == 0xee && mem[size + 1] == 0xee);
    CHECK_UINT(le32(frame), payload);

    uint8_t *direct = malloc(payload ? payload : 1);
    CHECK_UINT(vtpin__v1__event__pack(ev, direct), payload);
    CHECK_MEM(frame + WIRE_HEADER_LEN, direct, payload);

    uint8_t small[8];
    ProtobufCBufferSimple sb = PROTOBUF_C_BUFFER_SIMPLE_INIT(small);
    CHECK_UINT(vtpin__v1__event__pack_to_buffer(ev, &sb.base), payload);
    if (CHECK_UINT(sb.len, payload))
        CHECK_MEM(sb.data, direct, payload);
    PROTOBUF_C_BUFFER_SIMPLE_CLEAR(&sb);

    /* Capacity and size limits. */
    CHECK_INT(wire_pack(ev, frame, size - 1, MAX_FRAME), -ENOSPC);
    CHECK_INT(wire_pack(ev, frame, 0, MAX_FRAME), -ENOSPC);
    CHECK_INT(wire_pack(ev, frame, size, payload - 1), -EMSGSIZE);
    CHECK_INT(wire_pack(ev, frame, size, payload), (ssize_t)size);
    uint8_t *roomy = malloc(size + 100);
    CHECK_INT(wire_pack(ev, roomy, size + 100, MAX_FRAME), (ssize_t)size);
    CHECK_MEM(roomy, frame, size);
    free(roomy);

    /* The frame is complete exactly at its length. */
    size_t flen = 0;
    CHECK_INT(wire_frame_ready(frame, size, MAX_FRAME, &flen), 1);
    CHECK_UINT(flen, size);
    CHECK_INT(wire_frame_ready(frame, size - 1, MAX_FRAME, &flen), 0);

    /* Round trip: unpack and pack again gives the same bytes. */
    WireEvent *back = decoded(frame, size);
    if (CHECK(back != NULL)) {
        CHECK_INT(back->body_case, ev->body_case);
        size_t again = vtpin__v1__event__get_packed_size(back);
        if (CHECK_UINT(again, payload)) {
            uint8_t *re = malloc(again);
            vtpin__v1__event__pack(back, re);
            if (!CHECK_MEM(re, direct, payload))
                fprintf(stderr, "    event kind %d\n", kind);
            free(re);
        }
        wire_event_free(back);
    }
    free(direct);
    free(mem);
}

static void test_pack_agrees_with_protobuf_c(void)
{
    for (int i = 0; i < NKINDS; i++) {
        WireEvent ev = sample(i);
        check_pack_agrees(&ev, i);
    }
    /* A Notice with a long text (multi-byte length varints). */
    char *text = malloc(70000);
    memset(text, 'n', 69999);
    text[69999] = '\0';
    Vtpin__V1__Notice big = notice;
    big.text = text;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_NOTICE;
    ev.notice = &big;
    check_pack_agrees(&ev, 100);
    free(text);
}

static void test_round_trip_fields(void)
{
    for (int i = 0; i < NKINDS; i++) {
        WireEvent ev = sample(i);
        size_t size = wire_packed_size(&ev);
        uint8_t *frame = malloc(size);
        CHECK_INT(wire_pack(&ev, frame, size, MAX_FRAME), (ssize_t)size);
        WireEvent *b = decoded(frame, size);
        free(frame);
        if (!CHECK(b != NULL))
            continue;
        if (!CHECK_INT(b->body_case, ev.body_case)) {
            wire_event_free(b);
            continue;
        }
        switch (b->body_case) {
        case VTPIN__V1__EVENT__BODY_HELLO:
            CHECK_UINT(b->hello->schema_version, WIRE_SCHEMA_VERSION);
            CHECK_INT(b->hello->pid, 4242424242);
            CHECK_STR(b->hello->java_version, "21.0.5");
            CHECK_STR(b->hello->vm_name, hello.vm_name);
            CHECK_STR(b->hello->host, "h\xc3\xa4st.example");
            CHECK_STR(b->hello->options, "threshold=1ms,trace:short");
            CHECK(b->hello->has_mode && b->hello->mode == VTPIN__V1__LOAD_MODE__ATTACH);
            CHECK(b->hello->has_start_unix_ns);
            CHECK_INT(b->hello->start_unix_ns, 1700000000123456789);
            CHECK_UINT(b->hello->jdk_feature, 21);
            if (CHECK_UINT(b->hello->n_capabilities_missing, 3)) {
                CHECK_STR(b->hello->capabilities_missing[0], capabilities[0]);
                CHECK_STR(b->hello->capabilities_missing[1], capabilities[1]);
                CHECK_STR(b->hello->capabilities_missing[2], "");
            }
            break;
        case VTPIN__V1__EVENT__BODY_STACK:
            CHECK_UINT(b->stack->id, 17);
            CHECK(b->stack->has_truncated && b->stack->truncated);
            if (CHECK_UINT(b->stack->n_frames, 3)) {
                CHECK_UINT(b->stack->frames[0]->method, 1);
                CHECK_INT(b->stack->frames[0]->line, 42);
                CHECK_INT(b->stack->frames[0]->bci, 7);
                CHECK_UINT(b->stack->frames[0]->monitors, 1);
                CHECK(b->stack->frames[1]->has_line && b->stack->frames[1]->has_bci);
                CHECK_INT(b->stack->frames[1]->line, -1);
                CHECK_INT(b->stack->frames[1]->bci, -1);
                CHECK(!b->stack->frames[1]->has_monitors);
                CHECK_UINT(b->stack->frames[2]->method, 300000);
                CHECK(!b->stack->frames[2]->has_line);
            }
            break;
        case VTPIN__V1__EVENT__BODY_PIN_START:
            CHECK_UINT(b->pin_start->pin_id, UINT64_MAX);
            CHECK_INT(b->pin_start->start_ns, -5);
            CHECK_INT(b->pin_start->reason, VTPIN__V1__PIN_REASON__NATIVE_BLOCK);
            CHECK_INT(b->pin_start->carrier_tid, 123456);
            CHECK(b->pin_start->has_culprit_frame && b->pin_start->culprit_frame == 0);
            break;
        case VTPIN__V1__EVENT__BODY_NOTICE:
            CHECK_INT(b->notice->severity, VTPIN__V1__SEVERITY__WARNING);
            CHECK_STR(b->notice->code, notice.code);
            CHECK_STR(b->notice->text, notice.text);
            break;
        case VTPIN__V1__EVENT__BODY_STRING:
            CHECK_UINT(b->string->id, 9);
            CHECK_STR(b->string->value, "");
            break;
        case VTPIN__V1__EVENT__BODY_METHOD:
            CHECK(b->method->has_is_native && b->method->is_native);
            CHECK(!b->method->has_source_file);
            CHECK_UINT(b->method->library, 6);
            break;
        case VTPIN__V1__EVENT__BODY_PIN_END:
            CHECK_INT(b->pin_end->end_ns, INT64_MAX);
            CHECK_INT(b->pin_end->duration_ns, 0);
            break;
        case VTPIN__V1__EVENT__BODY_STATS:
            CHECK_UINT(b->stats->pins, 10);
            CHECK_UINT(b->stats->compensations, 2);
            break;
        case VTPIN__V1__EVENT__BODY_GOODBYE:
            CHECK_INT(b->goodbye->time_ns, 99);
            if (CHECK(b->goodbye->stats != NULL))
                CHECK_UINT(b->goodbye->stats->pins_reported, 7);
            break;
        default:
            CHECK_INT(b->body_case, -1); /* unexpected body */
        }
        wire_event_free(b);
    }
    wire_event_free(NULL);
}

/* ---- wire_frame_ready / wire_decode --------------------------------- */

static void test_frame_ready(void)
{
    WireEvent ev = sample(2);
    size_t size = wire_packed_size(&ev);
    uint8_t buf[512];
    if (!CHECK(2 * size <= sizeof(buf)))
        return;
    CHECK_INT(wire_pack(&ev, buf, sizeof(buf), MAX_FRAME), (ssize_t)size);
    CHECK_INT(wire_pack(&ev, buf + size, sizeof(buf) - size, MAX_FRAME), (ssize_t)size);
    size_t flen = 12345;
    for (size_t avail = 0; avail < size; avail++) {
        if (!CHECK_INT(wire_frame_ready(buf, avail, MAX_FRAME, &flen), 0))
            fprintf(stderr, "    avail %zu of %zu\n", avail, size);
    }
    CHECK_UINT(flen, 12345); /* untouched while incomplete */
    CHECK_INT(wire_frame_ready(buf, size, MAX_FRAME, &flen), 1);
    CHECK_UINT(flen, size);
    /* More than one frame buffered: the first one's length. */
    flen = 0;
    CHECK_INT(wire_frame_ready(buf, 2 * size, MAX_FRAME, &flen), 1);
    CHECK_UINT(flen, size);
    flen = 0;
    CHECK_INT(wire_frame_ready(buf, size + 3, MAX_FRAME, &flen), 1);
    CHECK_UINT(flen, size);

    /* Limits: payload == max is fine, max + 1 is refused even before it arrives. */
    uint8_t h[8] = {0};
    put_le32(h, 100);
    CHECK_INT(wire_frame_ready(h, 4, 100, &flen), 0);
    CHECK_INT(wire_frame_ready(h, 4, 99, &flen), -EMSGSIZE);
    CHECK_INT(wire_frame_ready(h, 8, 99, &flen), -EMSGSIZE);
    put_le32(h, UINT32_MAX);
    CHECK_INT(wire_frame_ready(h, 4, MAX_FRAME, &flen), -EMSGSIZE);
    put_le32(h, MAX_FRAME + 1);
    CHECK_INT(wire_frame_ready(h, 4, MAX_FRAME, &flen), -EMSGSIZE);
    /* Fewer than 4 bytes never decide anything, whatever they hold. */
    for (size_t avail = 0; avail < 4; avail++)
        CHECK_INT(wire_frame_ready(h, avail, 0, &flen), 0);
    /* An empty payload is a complete (if useless) frame. */
    put_le32(h, 0);
    CHECK_INT(wire_frame_ready(h, 4, MAX_FRAME, &flen), 1);
    CHECK_UINT(flen, 4);
}

/* wire_decode's answer for a frame of this payload (the event, if any, freed). */
static int decode_payload(const void *payload, size_t n)
{
    uint8_t *frame = malloc(n + 4);
    put_le32(frame, (uint32_t)n);
    if (n)
        memcpy(frame + 4, payload, n);
    WireEvent *ev = (WireEvent *)1;
    int rc = wire_decode(frame, n + 4, &ev);
    CHECK(rc == 1 ? ev != NULL : ev == NULL);
    wire_event_free(ev);
    free(frame);
    return rc;
}

static void test_unpack_rejects(void)
{
    static const uint8_t garbage1[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    static const uint8_t bad_length[] = {0x0a, 0x10, 0x08};             /* hello, 16 bytes announced, 1 given */
    static const uint8_t group[] = {0x0b, 0x0c};                        /* field 1 as a (deprecated) group */
    static const uint8_t hello_no_required[] = {0x0a, 0x00};            /* Hello without schema_version/pid */
    static const uint8_t string_no_value[] = {0x12, 0x02, 0x08, 0x05};  /* StringDef without value */
    static const uint8_t wrong_wire_type[] = {0x50, 0x01};              /* field 10 (Carrier) as a varint */
    static const uint8_t unknown_only[] = {0xa0, 0x06, 0x01};           /* field 100 (no such body yet) only */
    static const uint8_t truncated_varint[] = {0x32, 0x04, 0x08, 0x80}; /* pin_end cut inside a varint */
    CHECK_INT(decode_payload(garbage1, sizeof(garbage1)), -EPROTO);
    CHECK_INT(decode_payload(bad_length, sizeof(bad_length)), -EPROTO);
    CHECK_INT(decode_payload(group, sizeof(group)), -EPROTO);
    CHECK_INT(decode_payload(hello_no_required, sizeof(hello_no_required)), -EPROTO);
    CHECK_INT(decode_payload(string_no_value, sizeof(string_no_value)), -EPROTO);
    CHECK_INT(decode_payload(truncated_varint, sizeof(truncated_varint)), -EPROTO);
    CHECK_INT(decode_payload(wrong_wire_type, sizeof(wrong_wire_type)), -EPROTO);
    /* The one rule: an empty frame is refused, an event of a kind this reader does not know
     * (only fields of a newer schema) is skipped. */
    CHECK_INT(decode_payload(NULL, 0), -EPROTO);
    CHECK_INT(decode_payload(unknown_only, sizeof(unknown_only)), 0);
    /* Shorter than a header. */
    uint8_t three[3] = {0};
    WireEvent *none = NULL;
    CHECK_INT(wire_decode(three, 3, &none), -EPROTO);
    CHECK_INT(wire_decode(three, 0, &none), -EPROTO);
    CHECK(none == NULL);

    /* A valid frame cut anywhere inside its payload does not unpack. */
    WireEvent ev = sample(0);
    size_t size = wire_packed_size(&ev);
    uint8_t *frame = malloc(size);
    CHECK_INT(wire_pack(&ev, frame, size, MAX_FRAME), (ssize_t)size);
    unsigned unpacked = 0;
    for (size_t cut = 4; cut < size; cut++) {
        uint8_t *exact = malloc(cut);
        memcpy(exact, frame, cut);
        WireEvent *e = decoded(exact, cut);
        if (e) {
            /* A cut at a field boundary may still be a valid Hello only if all required
             * fields came first; the outer length prefix of the Hello makes that impossible. */
            unpacked++;
            wire_event_free(e);
        }
        free(exact);
    }
    CHECK_UINT(unpacked, 0);
    free(frame);
}

static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}

/* Random payloads and bit flips of real ones: an event, a skip or a refusal, never a crash. */
static void test_unpack_fuzz(void)
{
    for (int iter = 0; iter < 3000; iter++) {
        uint8_t payload[600];
        size_t n;
        if (iter % 2) {
            n = rnd() % 64;
            for (size_t k = 0; k < n; k++)
                payload[k] = (uint8_t)rnd();
        } else {
            WireEvent ev = sample(iter / 2 % NKINDS);
            n = vtpin__v1__event__get_packed_size(&ev);
            if (n > sizeof(payload))
                continue;
            vtpin__v1__event__pack(&ev, payload);
            for (int flips = 1 + rnd() % 3; flips > 0; flips--)
                payload[rnd() % n] ^= (uint8_t)(1u << (rnd() % 8));
        }
        /* decode_payload checks that 1 always comes with an event, 0 and -EPROTO never */
        int rc = decode_payload(payload, n);
        CHECK(rc == 1 || rc == 0 || rc == -EPROTO);
    }
}

/* ---- WireReader --------------------------------------------------------- */

/* A temporary file holding data, positioned at its start. */
static int temp_fd(const struct bytes *b)
{
    char path[] = "/tmp/vtpin-test-wire-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    unlink(path);
    size_t off = 0;
    while (off < b->len) {
        ssize_t n = write(fd, b->p + off, b->len - off);
        if (n <= 0) {
            close(fd);
            return -1;
        }
        off += (size_t)n;
    }
    lseek(fd, 0, SEEK_SET);
    return fd;
}

/* A recording: magic then every sample kind twice. Fills ends[] with frame end offsets. */
static struct bytes sample_recording(size_t *ends, int *nframes)
{
    struct bytes b = {0};
    bytes_add(&b, WIRE_MAGIC, WIRE_MAGIC_LEN);
    *nframes = 0;
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < NKINDS; i++) {
            WireEvent ev = sample(i);
            bytes_add_event(&b, &ev);
            ends[(*nframes)++] = b.len;
        }
    return b;
}

static void test_reader_file(void)
{
    size_t ends[2 * NKINDS];
    int nframes;
    struct bytes b = sample_recording(ends, &nframes);
    int fd = temp_fd(&b);
    if (!CHECK(fd >= 0))
        return;
    WireReader *r = wire_reader_new(fd, 0);
    if (!CHECK(r != NULL))
        return;
    CHECK_INT(wire_reader_expect_magic(r), 0);
    CHECK_UINT(wire_reader_offset(r), WIRE_MAGIC_LEN);
    for (int k = 0; k < nframes; k++) {
        WireEvent *ev = (WireEvent *)1;
        if (!CHECK_INT(wire_reader_next(r, &ev), 1))
            break;
        WireEvent want = sample(k % NKINDS);
        if (CHECK(ev != NULL))
            CHECK_INT(ev->body_case, want.body_case);
        CHECK_UINT(wire_reader_offset(r), ends[k]);
        wire_event_free(ev);
    }
    WireEvent *ev = (WireEvent *)1;
    CHECK_INT(wire_reader_next(r, &ev), 0);
    CHECK(ev == NULL);
    CHECK_INT(wire_reader_next(r, &ev), 0); /* stays at the end */
    CHECK_UINT(wire_reader_offset(r), b.len);
    wire_reader_free(r);
    wire_reader_free(NULL);
    close(fd);
    free(b.p);
}

static int magic_result(const void *data, size_t n)
{
    struct bytes b = {0};
    if (n)
        bytes_add(&b, data, n);
    int fd = temp_fd(&b);
    WireReader *r = wire_reader_new(fd, 0);
    int rc = wire_reader_expect_magic(r);
    wire_reader_free(r);
    close(fd);
    free(b.p);
    return rc;
}

static void test_reader_magic(void)
{
    CHECK_INT(magic_result(WIRE_MAGIC, WIRE_MAGIC_LEN), 0);
    CHECK_INT(magic_result(WIRE_MAGIC "\x04\0\0\0", WIRE_MAGIC_LEN + 4), 0);
    CHECK_INT(magic_result("VTPIN\0\0\2", 8), -EPROTO); /* another framing version */
    CHECK_INT(magic_result("XTPIN\0\0\1", 8), -EPROTO);
    CHECK_INT(magic_result("\x04\0\0\0\x08\x01\x10\x02", 8), -EPROTO); /* a stream without magic */
    for (size_t n = 0; n < WIRE_MAGIC_LEN; n++)
        if (!CHECK_INT(magic_result(WIRE_MAGIC, n), -EPROTO))
            fprintf(stderr, "    magic cut at %zu\n", n);
}

/* Reads a whole stream from a pipe filled up front; returns the last rc and the frame count. */
static int read_all(const struct bytes *b, size_t max_frame, int with_magic, int *frames)
{
    int p[2];
    *frames = 0;
    if (pipe(p) != 0 || b->len > 65536)
        return -999;
    if (b->len && write(p[1], b->p, b->len) != (ssize_t)b->len)
        return -998;
    close(p[1]);
    WireReader *r = wire_reader_new(p[0], max_frame);
    int rc = with_magic ? wire_reader_expect_magic(r) : 0;
    if (rc == 0) {
        WireEvent *ev;
        while ((rc = wire_reader_next(r, &ev)) == 1) {
            (*frames)++;
            wire_event_free(ev);
        }
    }
    wire_reader_free(r);
    close(p[0]);
    return rc;
}

static void test_reader_truncated(void)
{
    size_t ends[2 * NKINDS];
    int nframes;
    struct bytes full = sample_recording(ends, &nframes);
    /* Cut the recording at every offset after the magic. */
    for (size_t cut = WIRE_MAGIC_LEN; cut <= full.len; cut++) {
        int complete = 0, boundary = cut == WIRE_MAGIC_LEN;
        for (int k = 0; k < nframes; k++) {
            if (ends[k] <= cut)
                complete++;
            if (ends[k] == cut)
                boundary = 1;
        }
        struct bytes b = {full.p, cut, cut};
        int frames = 0;
        int rc = read_all(&b, 0, 1, &frames);
        int want = boundary ? 0 : -ENODATA;
        if (!CHECK_INT(rc, want) || !CHECK_INT(frames, complete)) {
            fprintf(stderr, "    cut at %zu of %zu\n", cut, full.len);
            break;
        }
    }
    free(full.p);
}

static void test_reader_oversized(void)
{
    WireEvent small = sample(6); /* PinEnd: well under 64 bytes */
    uint8_t big_payload[100];
    memset(big_payload, 0, sizeof(big_payload));
    struct bytes b = {0};
    bytes_add(&b, WIRE_MAGIC, WIRE_MAGIC_LEN);
    bytes_add_event(&b, &small);
    bytes_add_event(&b, &small);
    bytes_add_raw_frame(&b, big_payload, sizeof(big_payload));
    bytes_add_event(&b, &small);
    int frames = 0;
    CHECK_INT(read_all(&b, 64, 1, &frames), -EMSGSIZE);
    CHECK_INT(frames, 2);
    /* Only the header of the oversized frame needs to be there. */
    b.len = WIRE_MAGIC_LEN + 2 * wire_packed_size(&small) + 4;
    CHECK_INT(read_all(&b, 64, 1, &frames), -EMSGSIZE);
    CHECK_INT(frames, 2);
    free(b.p);

    /* The default limit (max_frame 0) is WIRE_MAX_FRAME_DEFAULT. */
    uint8_t h[4];
    put_le32(h, WIRE_MAX_FRAME_DEFAULT + 1);
    struct bytes hb = {h, 4, 4};
    CHECK_INT(read_all(&hb, 0, 0, &frames), -EMSGSIZE);
    put_le32(h, UINT32_MAX);
    CHECK_INT(read_all(&hb, 0, 0, &frames), -EMSGSIZE);
    put_le32(h, WIRE_MAX_FRAME_DEFAULT); /* allowed, but the input ends */
    CHECK_INT(read_all(&hb, 0, 0, &frames), -ENODATA);
}

static void test_reader_bad_frames(void)
{
    WireEvent ev = sample(3);
    static const uint8_t garbage[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    struct bytes b = {0};
    bytes_add_event(&b, &ev);
    bytes_add_raw_frame(&b, garbage, sizeof(garbage));
    int frames = 0;
    CHECK_INT(read_all(&b, 0, 0, &frames), -EPROTO);
    CHECK_INT(frames, 1);
    free(b.p);

    struct bytes e = {0};
    bytes_add_event(&e, &ev);
    bytes_add_raw_frame(&e, NULL, 0); /* an empty Event: nobody writes one */
    CHECK_INT(read_all(&e, 0, 0, &frames), -EPROTO);
    CHECK_INT(frames, 1);
    free(e.p);

    /* An Event whose only field is unknown (a newer schema's body) is skipped. */
    static const uint8_t future[] = {0xa2, 0x06, 0x01, 0x00}; /* field 100, length 1 */
    memset(&e, 0, sizeof(e));
    bytes_add_event(&e, &ev);
    bytes_add_raw_frame(&e, future, sizeof(future));
    bytes_add_event(&e, &ev);
    CHECK_INT(read_all(&e, 0, 0, &frames), 0);
    CHECK_INT(frames, 2);
    free(e.p);

    /* An empty stream (no magic expected) is a clean end. */
    struct bytes none = {0};
    CHECK_INT(read_all(&none, 0, 0, &frames), 0);
    CHECK_INT(frames, 0);

    /* Read errors come back as -errno. */
    WireReader *r = wire_reader_new(-1, 0);
    WireEvent *out;
    CHECK_INT(wire_reader_next(r, &out), -EBADF);
    CHECK(out == NULL);
    CHECK_INT(wire_reader_expect_magic(r), -EBADF);
    wire_reader_free(r);
}

/* A writer thread that feeds a pipe in small chunks. */
struct feeder {
    int fd;
    const struct bytes *b;
    size_t max_chunk; /* 1: one byte per write; otherwise sizes cycle 1..max_chunk */
};

static void *feeder_main(void *arg)
{
    struct feeder *f = arg;
    size_t off = 0, chunk = 1;
    while (off < f->b->len) {
        size_t n = f->max_chunk == 1 ? 1 : chunk;
        if (n > f->b->len - off)
            n = f->b->len - off;
        ssize_t w = write(f->fd, f->b->p + off, n);
        if (w <= 0)
            break; /* the reader gave up (EPIPE) */
        off += (size_t)w;
        chunk = chunk % f->max_chunk + 1;
    }
    close(f->fd);
    return NULL;
}

/* Streams b through a pipe in chunks and reads it back; checks every frame's kind. */
static void read_through_pipe(const struct bytes *b, size_t max_chunk, int nframes,
                              const Vtpin__V1__Event__BodyCase *kinds)
{
    int p[2];
    if (!CHECK_INT(pipe(p), 0))
        return;
    struct feeder f = {p[1], b, max_chunk};
    pthread_t t;
    if (!CHECK_INT(pthread_create(&t, NULL, feeder_main, &f), 0))
        return;
    WireReader *r = wire_reader_new(p[0], 0);
    CHECK_INT(wire_reader_expect_magic(r), 0);
    int got = 0, rc;
    WireEvent *ev;
    while ((rc = wire_reader_next(r, &ev)) == 1) {
        if (got < nframes)
            CHECK_INT(ev->body_case, kinds[got]);
        got++;
        wire_event_free(ev);
    }
    CHECK_INT(rc, 0);
    CHECK_INT(got, nframes);
    CHECK_UINT(wire_reader_offset(r), b->len);
    wire_reader_free(r);
    close(p[0]); /* unblocks the feeder if the reader stopped early */
    pthread_join(t, NULL);
}

static void test_reader_short_reads(void)
{
    enum { N = 60 };
    Vtpin__V1__Event__BodyCase kinds[N + 3];
    struct bytes b = {0};
    bytes_add(&b, WIRE_MAGIC, WIRE_MAGIC_LEN);
    for (int k = 0; k < N; k++) {
        WireEvent ev = sample(k % NKINDS);
        bytes_add_event(&b, &ev);
        kinds[k] = ev.body_case;
    }
    read_through_pipe(&b, 1, N, kinds);
    read_through_pipe(&b, 7, N, kinds);

    /* Frames larger than the reader's initial buffer, between small ones. */
    size_t big_len = 300000;
    char *text = malloc(big_len + 1);
    for (size_t k = 0; k < big_len; k++)
        text[k] = (char)('a' + k % 26);
    text[big_len] = '\0';
    Vtpin__V1__Notice big = notice;
    big.text = text;
    WireEvent bev = VTPIN__V1__EVENT__INIT;
    bev.body_case = VTPIN__V1__EVENT__BODY_NOTICE;
    bev.notice = &big;
    bytes_add_event(&b, &bev);
    kinds[N] = VTPIN__V1__EVENT__BODY_NOTICE;
    WireEvent small = sample(6);
    bytes_add_event(&b, &small);
    kinds[N + 1] = VTPIN__V1__EVENT__BODY_PIN_END;
    bytes_add_event(&b, &bev);
    kinds[N + 2] = VTPIN__V1__EVENT__BODY_NOTICE;
    read_through_pipe(&b, 4093, N + 3, kinds);

    /* The same from a file, with the text checked. */
    int fd = temp_fd(&b);
    WireReader *r = wire_reader_new(fd, 0);
    CHECK_INT(wire_reader_expect_magic(r), 0);
    WireEvent *ev;
    int got = 0, rc;
    while ((rc = wire_reader_next(r, &ev)) == 1) {
        if (got == N || got == N + 2) {
            if (CHECK_INT(ev->body_case, VTPIN__V1__EVENT__BODY_NOTICE))
                CHECK(strcmp(ev->notice->text, text) == 0);
        }
        got++;
        wire_event_free(ev);
    }
    CHECK_INT(rc, 0);
    CHECK_INT(got, N + 3);
    wire_reader_free(r);
    close(fd);
    free(text);
    free(b.p);
}

static void test_reason_names(void)
{
    CHECK_STR(wire_reason_name(VTPIN__V1__PIN_REASON__MONITOR), "MONITOR");
    CHECK_STR(wire_reason_name(VTPIN__V1__PIN_REASON__NATIVE), "NATIVE");
    CHECK_STR(wire_reason_name(VTPIN__V1__PIN_REASON__CRITICAL_SECTION), "CRITICAL_SECTION");
    CHECK_STR(wire_reason_name(VTPIN__V1__PIN_REASON__MONITOR_ENTER), "MONITOR_ENTER");
    CHECK_STR(wire_reason_name(VTPIN__V1__PIN_REASON__OBJECT_WAIT), "OBJECT_WAIT");
    CHECK_STR(wire_reason_name(VTPIN__V1__PIN_REASON__NATIVE_BLOCK), "NATIVE_BLOCK");
    CHECK_STR(wire_reason_name(VTPIN__V1__PIN_REASON__VM_BLOCK), "VM_BLOCK");
    /* every table indexed by reason (HTML page, metrics) is WIRE_REASON_COUNT long */
    CHECK_INT(WIRE_REASON_COUNT, (int)vtpin__v1__pin_reason__descriptor.n_values);
    for (unsigned i = 0; i < vtpin__v1__pin_reason__descriptor.n_values; i++)
        CHECK(vtpin__v1__pin_reason__descriptor.values[i].value < WIRE_REASON_COUNT);
    CHECK_STR(wire_reason_name(VTPIN__V1__PIN_REASON__PIN_REASON_UNKNOWN), "UNKNOWN");
    CHECK_STR(wire_reason_name(99), "UNKNOWN");
    CHECK_STR(wire_reason_name(-1), "UNKNOWN");
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    CHECK_RUN(test_pack_agrees_with_protobuf_c);
    CHECK_RUN(test_round_trip_fields);
    CHECK_RUN(test_frame_ready);
    CHECK_RUN(test_unpack_rejects);
    CHECK_RUN(test_unpack_fuzz);
    CHECK_RUN(test_reader_file);
    CHECK_RUN(test_reader_magic);
    CHECK_RUN(test_reader_truncated);
    CHECK_RUN(test_reader_oversized);
    CHECK_RUN(test_reader_bad_frames);
    CHECK_RUN(test_reader_short_reads);
    CHECK_RUN(test_reason_names);
    CHECK_MAIN_RETURN();
}
