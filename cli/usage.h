/* What every vtpin command says on a usage error. */
#ifndef VTPIN_CLI_USAGE_H
#define VTPIN_CLI_USAGE_H

#include "exit_codes.h"

/* "vtpin CMD: <message>" and "Try 'vtpin CMD --help'." on stderr; returns
 * CLI_EXIT_USAGE, for `return cli_usage_error(...)` in a command's main. */
int cli_usage_error(const char *command, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
