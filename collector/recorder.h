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
 * starts again with WIRE_MAGIC and the connection's Hello (recorder_write_head). When it
 * rotates (cfg.max_bytes), the notice is followed by what a rotated file starts with (below;
 * the notices only in a file the stop emptied), so that what comes after the gap reads whole.
 * A file that cannot be created for want of space (ENOSPC, EDQUOT, EIO,
 * EMFILE, ENFILE) is a recording stopped from its start: created by the
 * first retry that can.
 *
 * Rotation (cfg.max_bytes, --record-max): a file that would pass max_bytes ends with a Notice
 * (collector.recording_rotated_out) and becomes PATH.1 (PATH.1 becomes PATH.2, ...; PATH.keep, the
 * oldest, goes: common/rotate.h); a new PATH goes on. It starts as a recording does: the magic, the
 * Hello, a Notice (collector.recording_rotated), the session's definitions as the collector keeps
 * them (cfg.defs: proto/session_defs.h), then everything carry.h kept of the session, so
 * that `vtpin report` reads each file alone. A file holds at least half of max_bytes beyond that
 * head, so passes max_bytes by at most one frame unless its head alone is that large. */
#ifndef VTPIN_COLLECTOR_RECORDER_H
#define VTPIN_COLLECTOR_RECORDER_H

#include <stddef.h>
#include <stdint.h>

#include "recstate.h"
#include "wire.h"

#define RECORDER_RETRY_NS (1000000000LL)

struct budget;
struct recorder;
struct session_defs;

struct recorder_config {
    uint64_t max_bytes;              /* rotate past this; 0: never */
    unsigned keep;                   /* rotated files kept (PATH.1 .. PATH.keep) */
    struct budget *budget;           /* what is kept to write again at a rotation is charged here; NULL: none */
    const struct session_defs *defs; /* the connection's definitions, written again at a rotation; NULL: none */
};

/* Creates the file and writes the magic (or a recording stopped from its
 * start, see above). 0 or -errno; err names the path. */
int recorder_open(struct recorder **out, const char *dir, int64_t pid, int64_t start_unix_ns, uint32_t connection,
                  const struct recorder_config *cfg, char *err, size_t errlen);
/* Appends one whole frame (header included). 0, or the error that stopped the
 * recording (the frame is dropped and counted). */
int recorder_write(struct recorder *r, const uint8_t *frame, size_t len);
/* recorder_write of an agent's frame, ev decoded (NULL: of a newer schema), which a rotation may
 * need to write again (carry.h). */
int recorder_write_event(struct recorder *r, const WireEvent *ev, const uint8_t *frame, size_t len);
/* A Notice from the collector about the session (written again at a rotation, as the agent's are). */
int recorder_notice(struct recorder *r, Vtpin__V1__Severity severity, const char *code, const char *text);
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
/* Frames the memory budget did not let it keep to write again at a rotation (carry.h). */
uint64_t recorder_budget_refused(const struct recorder *r);

#endif
