/* What became of a session recording's writes: kept by the recorder
 * (recorder.h), shown per JVM by status, top and the metrics (jvms.h). */
#ifndef VTPIN_COLLECTOR_RECSTATE_H
#define VTPIN_COLLECTOR_RECSTATE_H

#include <stdint.h>

struct rec_state {
    int error;               /* -errno that stops the recording now; 0 while it is written */
    int last_error;          /* the error of the latest stop, kept after it resumed; 0: it never stopped */
    int64_t stopped_unix_ns; /* when the latest stop began (CLOCK_REALTIME) */
    int64_t stopped_mono_ns; /* the same, CLOCK_MONOTONIC */
    int64_t resumed_unix_ns; /* when the recording resumed after it; 0 while stopped (or never stopped) */
    int64_t resumed_mono_ns; /* the same, CLOCK_MONOTONIC */
    uint64_t stops;          /* times it stopped */
    uint64_t frames_lost;    /* frames not written because of the stops, over all of them */
    uint64_t bytes_lost;     /* their bytes */
    uint64_t rotations;      /* times it rotated (--record-max) */
};

#endif
