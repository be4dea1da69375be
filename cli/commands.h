/* The subcommands of vtpin. Each lives in its room, cli/<room>/<name>.c
 * (collector_cmd.c here), and has the shape of main: argv[0] is the
 * subcommand's name; it returns the exit status (exit_codes.h; usage errors
 * through cli_usage_error in usage.h). To add one, declare it here and list
 * it in the table in vtpin.c. The rooms include this header; it includes
 * none of theirs (tests/layers.py). */
#ifndef VTPIN_CLI_COMMANDS_H
#define VTPIN_CLI_COMMANDS_H

#include "exit_codes.h"
#include "usage.h"

int report_main(int argc, char **argv);    /* report/report.c */
int collector_main(int argc, char **argv); /* collector_cmd.c */
int status_main(int argc, char **argv);    /* live/status.c */
int top_main(int argc, char **argv);       /* live/top.c */
int attach_main(int argc, char **argv);    /* attach/attach.c */
int run_main(int argc, char **argv);       /* run/run.c */

#endif
