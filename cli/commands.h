/* The subcommands of vtpin. Each lives in cli/<name>.c and has the shape of
 * main: argv[0] is the subcommand's name; it returns the exit status
 * (exit_codes.h; usage errors through cli_usage_error in usage.h). To add
 * one, declare it here and list it in the table in vtpin.c. */
#ifndef VTPIN_CLI_COMMANDS_H
#define VTPIN_CLI_COMMANDS_H

#include "exit_codes.h"
#include "usage.h"

int report_main(int argc, char **argv);
int collector_main(int argc, char **argv); /* collector_cmd.c */
int status_main(int argc, char **argv);
int top_main(int argc, char **argv);
int attach_main(int argc, char **argv);
int run_main(int argc, char **argv);

#endif
