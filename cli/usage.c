#include "usage.h"

#include <stdarg.h>
#include <stdio.h>

int cli_usage_error(const char *command, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "vtpin %s: ", command);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nTry 'vtpin %s --help'.\n", command);
    va_end(ap);
    return CLI_EXIT_USAGE;
}
