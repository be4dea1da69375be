#include <stdio.h>

#include "commands.h"

int cli_usage_error(const char *command, const char *fmt, const char *arg)
{
    fprintf(stderr, "vtpin %s: ", command);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'vtpin %s --help'.\n", command);
    return CLI_EXIT_USAGE;
}
