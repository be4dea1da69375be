/* A session recording: the frames one agent connection sent, verbatim, after
 * WIRE_MAGIC, plus the Alert events the collector raised for it; the same
 * format as the agent's record=FILE, so `vtpin report` reads it.
 *
 * Named <pid>-<start_unix_ns>-<connection>.vtp in the recording directory
 * (pid: the JVM's name, its host pid; with a -2, -3, ... suffix if that name
 * is taken), created 0600 and never overwritten. Writes are buffered and
 * flushed by recorder_flush (every tick) and recorder_close.
 *
 * A write error (a full disk) stops the recording: logged once, the file cut
 * back to its last whole frame, and every frame from then on dropped and
 * counted (recorder_state). recorder_retry tries again at most every
 * RECORDER_RETRY_NS (on a full disk only once there is room for two buffers);
 * when the write goes through, the recording resumes with a Notice
 * (collector.recording_gap) saying when it stopped, for how long, why, and
 * how many frames and bytes are missing there. A file left empty by the stop
 * starts again with WIRE_MAGIC and the connection's Hello (recorder_write_head).
 * A file that cannot be created for want of space (ENOSPC, EDQUOT, EIO,
 * EMFILE, ENFILE) is a recording stopped from its start: created by the
 * first retry that can. */
#ifndef VTPIN_COLLECTOR_RECORDER_H
#define VTPIN_COLLECTOR_RECORDER_H

#include <stddef.h>
#include <stdint.h>

#include "recstate.h"

#define RECORDER_RETRY_NS (1000000000LL)

struct recorder;

/* Creates the file and writes the magic (or a recording stopped from its
 * start, see above). 0 or -errno; err names the path. */
int recorder_open(struct recorder **out, const char *dir, int64_t pid, int64_t start_unix_ns, uint32_t connection,
                  char *err, size_t errlen);
/* Appends one whole frame (header included). 0, or the error that stopped the
 * recording (the frame is dropped and counted). */
int recorder_write(struct recorder *r, const uint8_t *frame, size_t len);
/* recorder_write of the connection's first frame (its Hello), kept to start
 * the file again after a stop that left it empty. -ENOMEM too. */
int recorder_write_head(struct recorder *r, const uint8_t *frame, size_t len);
int recorder_flush(struct recorder *r);
/* While stopped, tries to resume (see above): 1 when it resumed now, 0 when
 * it is not stopped or it is not time yet, -errno when it failed again. */
int recorder_retry(struct recorder *r);
/* Flushes, syncs and closes; NULL is fine. Returns the first error seen or 0. */
int recorder_close(struct recorder *r);

const char *recorder_path(const struct recorder *r);
/* 0, or the error that stops the recording now. */
int recorder_error(const struct recorder *r);
const struct rec_state *recorder_state(const struct recorder *r);

#endif
