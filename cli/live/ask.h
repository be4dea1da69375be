/* What `vtpin status` and `vtpin top` share: asking the collector and
 * saying so clearly when there is none. */
#ifndef VTPIN_CLI_ASK_H
#define VTPIN_CLI_ASK_H

#include <stdint.h>
#include <stdio.h>

#include "common/jsonread.h"

#define ASK_TIMEOUT_MS_DEFAULT 5000

/* Asks the collector at socket_arg (NULL: the default path) for kind
 * (vtpin.v1.Query.Kind), all within timeout_ms. The answer is checked
 * (answer.h: the collector's JSON, each JVM's fields of the types the text
 * views read) even when only the text is wanted.
 * 0 with *json (malloc'ed) and, when tree is not NULL, *tree parsed from it;
 * or prints one line to stderr prefixed "vtpin CMD: " (or the "no collector
 * at PATH" line) and returns 1. */
int ask_collector(const char *cmd, const char *socket_arg, int kind, int64_t pid, int timeout_ms, char **json,
                  struct jsonread **tree);

/* Parses a --timeout option (a duration from 1ms to 1h): 0 or -EINVAL. */
int ask_parse_timeout(const char *text, int *timeout_ms);

/* Parses a pid option: 0 or -EINVAL. */
int ask_parse_pid(const char *text, int64_t *pid);

/* A JVM of an answer by its name (its host pid): "12345", "12345 (pid 1 in
 * its namespace)", or "1 (pid from its Hello: why)" when the collector could
 * not learn the host pid. */
void ask_print_jvm_name(FILE *out, const struct jsonread *jvm);

/* One line per JVM whose recording at the collector stopped (STATUS
 * recording_error) to out: "vtpin CMD: warning: the collector's recording of
 * JVM 123 stopped at T: No space left on device; resumed after 2.2s, 459 frames
 * (51.8 KiB) not written (PATH)". Nothing when none did or no answer. */
void ask_say_recording_stops(const char *cmd, const char *socket_path, FILE *out);

/* The JVM's deadlock (STATUS and TOP deadlock, docs/deadlocks.md) as one line to out:
 * "  DEADLOCK (carrier_starvation, found live 2.1 s ago): TEXT". Nothing when it has none. */
void ask_print_deadlock(FILE *out, const struct jsonread *jvm);

/* unix_ns as "2026-12-02T01:55:48Z" into out[cap]; returns out. */
const char *ask_utc_text(int64_t unix_ns, char *out, size_t cap);

#endif
