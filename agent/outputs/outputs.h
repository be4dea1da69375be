/* The writer's outputs and the fan-out to them: the recording (record=), the
 * collector connection (collector=) and the trace (trace=). An event goes to
 * a set of sinks; a failed write is said once, naming the file. Writer
 * thread only. */
#ifndef VTPIN_OUTPUTS_H
#define VTPIN_OUTPUTS_H

#include <stddef.h>
#include <stdint.h>

#include "options.h"
#include "wire.h"

#define SINK_RECORD 1u
#define SINK_LINK 2u

/* An optional uint32 field of a wire message, set only when nonzero. */
#define OPT_U32(msg, field, value)                                                                                     \
    do {                                                                                                               \
        if (value) {                                                                                                   \
            (msg).has_##field = 1;                                                                                     \
            (msg).field = (value);                                                                                     \
        }                                                                                                              \
    } while (0)

/* Opens what o asks for and is not open yet (an error names the file in
 * err). Returns 0 or -errno. A file that cannot be written for lack of
 * space (ENOSPC, EDQUOT) is said in one line and left out: the JVM runs on. */
int outputs_open(const struct options *o, char *err, size_t errlen);
/* Why a file of vtpin's own (record=, tracefile=, log=) could not be opened (common/path_trust.h). */
const char *outputs_file_refused(int rc);
/* ENOSPC or EDQUOT when the recording is open but its disk was nearly full
 * (no room for the reserve that keeps the last notice and counters), else 0. */
int outputs_record_reserve_error(void);
const char *outputs_record_file(void);
/* The recording reached record_max= (and rotation has not failed before). */
int outputs_record_due(void);
/* Rotates it (record_file_rotate): 0, and the caller puts the session's start to SINK_RECORD again;
 * else -errno, said in the log, and it is not tried again. */
int outputs_record_rotate(void);
int outputs_has_record(void);
void outputs_close(void);

unsigned outputs_connected(void); /* sinks that take events now: the recording, a connected collector */
unsigned outputs_all(void);       /* the recording, and the collector even while away (counted as dropped) */
unsigned outputs_put(unsigned sinks, const WireEvent *ev); /* returns the sinks that took it */
void outputs_put_all(const WireEvent *ev);
void outputs_notice(unsigned sinks, int severity, const char *code, const char *text);
/* A notice that the trace shows too ("note: ..." / "warning: ..."). */
void outputs_say(unsigned sinks, int severity, const char *code, const char *text);

struct trace *outputs_trace(void); /* NULL without trace= */
int outputs_has_collector(void);
/* 1 when a new collector connection came up (it must be told the session). */
int outputs_poll_connect(int64_t now);
uint32_t outputs_connections(void);

struct outputs_counts {
    uint64_t record_lost, collector_dropped, write_failures, events_unwritten;
    uint32_t connections;
};
void outputs_counts(struct outputs_counts *out);

/* Writes what is buffered; a first failed write is said on stderr, in the
 * log and in the outputs, and record_counters then puts the counters to the
 * recording after its last whole frame. */
void outputs_flush(int64_t now, void (*record_counters)(void));
/* At exit: gives the collector up to timeout_ns to take what is left. */
void outputs_drain(int64_t timeout_ns);

#endif
