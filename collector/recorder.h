/* A session recording: the frames one agent connection sent, verbatim, after
 * WIRE_MAGIC, plus the Alert events the collector raised for it; the same
 * format as the agent's record=FILE, so `vtpin report` reads it.
 *
 * Named <pid>-<start_unix_ns>-<connection>.vtp in the recording directory
 * (with a -2, -3, ... suffix if that name is taken), created 0600 and never
 * overwritten. Writes are buffered and flushed by recorder_flush (every tick)
 * and recorder_close. A write error (disk full) is reported once; the
 * recording stops there and the collector goes on without it. */
#ifndef VTPIN_COLLECTOR_RECORDER_H
#define VTPIN_COLLECTOR_RECORDER_H

#include <stddef.h>
#include <stdint.h>

struct recorder;

/* Creates the file and writes the magic. 0 or -errno; err names the path. */
int recorder_open(struct recorder **out, const char *dir, int64_t pid, int64_t start_unix_ns, uint32_t connection,
                  char *err, size_t errlen);
/* Appends one whole frame (header included). 0, or the write error (reported
 * once, then every later write returns it without doing anything). */
int recorder_write(struct recorder *r, const uint8_t *frame, size_t len);
int recorder_flush(struct recorder *r);
/* Flushes, syncs and closes; NULL is fine. Returns the first error seen or 0. */
int recorder_close(struct recorder *r);

const char *recorder_path(const struct recorder *r);
uint64_t recorder_bytes(const struct recorder *r);
/* 0, or the error that stopped the recording. */
int recorder_error(const struct recorder *r);

#endif
