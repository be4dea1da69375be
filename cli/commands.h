/* The subcommands of vtpin. Each lives in cli/<name>.c and has the shape of
 * main: argv[0] is the subcommand's name; it returns the exit status
 * (0 ok, 1 failure, 2 usage error). To add one, declare it here and list it
 * in the table in vtpin.c. */
#ifndef VTPIN_CLI_COMMANDS_H
#define VTPIN_CLI_COMMANDS_H

#define CLI_EXIT_USAGE 2

/* "vtpin CMD: <fmt with arg>" and a pointer to --help on stderr; returns CLI_EXIT_USAGE. */
int cli_usage_error(const char *command, const char *fmt, const char *arg)
    __attribute__((format(printf, 2, 0)));

int report_main(int argc, char **argv);
int collector_main(int argc, char **argv); /* collector_cmd.c */
int status_main(int argc, char **argv);
int top_main(int argc, char **argv);
int attach_main(int argc, char **argv);
int run_main(int argc, char **argv);

#endif
