/* What the outputs are told about the session itself: the Hello (the JVM,
 * the options, what is missing), the notices collected before the writer
 * started, the counters (Stats) and the Goodbye. A collector that connects
 * late gets them again. Writer thread only, except session_add_notice
 * (before the writer starts). */
#ifndef VTPIN_SESSION_FRAMES_H
#define VTPIN_SESSION_FRAMES_H

#include <stdint.h>

#include "symbols.h"
#include "writer_config.h"

void session_init(const struct writer_config *cfg, struct symbols *symbols);
void session_fini(void); /* forgets the notices and the session's start time */

void session_add_notice(int severity, const char *code, const char *text);
void session_hello(unsigned sinks, uint32_t connection);
void session_notices(unsigned sinks); /* the notices added so far */
void session_stats(unsigned sinks);
void session_goodbye(void); /* to every output, with the last counters */

#endif
