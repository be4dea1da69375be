/* Framing of vtpin events: shared by the agent, the collector and the CLI.
 *
 * A frame is a 4-byte little-endian payload length followed by one packed
 * vtpin.v1.Event. Recording files start with WIRE_MAGIC. Frames larger than
 * the reader's limit are refused rather than buffered. */
#ifndef VTPIN_WIRE_H
#define VTPIN_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "vtpin.pb-c.h"
#include "wire_names.h"

#define WIRE_MAGIC "VTPIN\0\0\1"
#define WIRE_MAGIC_LEN 8
#define WIRE_HEADER_LEN 4
#define WIRE_MAX_FRAME_DEFAULT (1u << 20)
#define WIRE_SCHEMA_VERSION 2 /* 2: kernel view events; version 1 agents are still accepted */
#define WIRE_SCHEMA_MIN 1

typedef Vtpin__V1__Event WireEvent;

/* Packs ev as one frame into buf. Returns the frame length (header included),
 * -ENOSPC when cap is too small, -EMSGSIZE when the payload exceeds max. */
ssize_t wire_pack(const WireEvent *ev, uint8_t *buf, size_t cap, size_t max);

/* Size the frame for ev will take, header included. */
size_t wire_packed_size(const WireEvent *ev);

/* Looks at the bytes buffered so far. Returns 1 and sets *frame_len
 * (header included) when a whole frame is there, 0 when more bytes are
 * needed, -EMSGSIZE when the announced payload exceeds max. */
int wire_frame_ready(const uint8_t *buf, size_t avail, size_t max, size_t *frame_len);

/* The one decoder of wire events, used by every reader (collector, CLI, bench, fuzz targets).
 * frame points at the header of a complete frame of frame_len bytes (header included).
 * Returns 1 with *out set; 0 with *out NULL for a well-formed event of a kind this reader
 * does not know (a newer schema's: skip it); -EPROTO for an empty frame (nobody's event: a
 * zero-filled tail, say) or a payload that is not an Event. Free *out with wire_event_free. */
int wire_decode(const uint8_t *frame, size_t frame_len, WireEvent **out);
void wire_event_free(WireEvent *ev);

/* Sequential reader over a file descriptor (a recording or a socket). */
typedef struct WireReader WireReader;

WireReader *wire_reader_new(int fd, size_t max_frame);
void wire_reader_free(WireReader *r);
/* Reads and checks the file magic. Returns 0 or -EPROTO. */
int wire_reader_expect_magic(WireReader *r);
/* Next event: 1 with *out set, 0 at a clean end of input, -EPROTO on a
 * malformed frame, -EMSGSIZE on an oversized one, -ENODATA when the input
 * ends in the middle of a frame (a recording cut short), or -errno. */
int wire_reader_next(WireReader *r, WireEvent **out);
/* Bytes consumed so far (for error messages). */
uint64_t wire_reader_offset(const WireReader *r);

#endif
