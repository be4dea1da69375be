/* What `vtpin status` and `vtpin top` share: asking the collector and
 * saying so clearly when there is none. */
#ifndef VTPIN_CLI_ASK_H
#define VTPIN_CLI_ASK_H

#include <stdint.h>

#include "jsonread.h"

/* Asks the collector at socket_arg (NULL: the default path) for kind
 * (vtpin.v1.Query.Kind). 0 with *json (malloc'ed) and, when tree is not NULL,
 * *tree parsed from it; or prints one line to stderr prefixed "vtpin CMD: "
 * (or the "no collector at PATH" line) and returns 1. */
int ask_collector(const char *cmd, const char *socket_arg, int kind, int64_t pid, char **json, struct jsonread **tree);

/* Parses a pid option: 0 or -EINVAL. */
int ask_parse_pid(const char *text, int64_t *pid);

#endif
