/* The exit statuses of every vtpin command, in one place: scripts and CI
 * gates depend on them (README.md, each command's --help). */
#ifndef VTPIN_CLI_EXIT_CODES_H
#define VTPIN_CLI_EXIT_CODES_H

enum cli_exit {
    CLI_EXIT_OK = 0,
    CLI_EXIT_FAIL = 1,           /* did not do it (report: the recording is unreadable, damaged or not written) */
    CLI_EXIT_USAGE = 2,          /* bad arguments: nothing was done */
    CLI_EXIT_GATE = 3,           /* run: a gate failed, or JVMs of the command could not be judged */
    CLI_EXIT_NOTHING_JUDGED = 4, /* run: no JVM ran with vtpin, and the command exited 0 */
    CLI_EXIT_EXEC = 127,         /* run: the command could not be started (as a shell says) */
    CLI_EXIT_SIGNAL_BASE = 128   /* run: 128+N when signal N stopped it */
};

#endif
