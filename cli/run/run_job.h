/* The command of `vtpin run`, run as a shell runs a job: its own process
 * group, the stop signals (SIGINT, SIGTERM, SIGHUP) forwarded to it, Ctrl-Z
 * passed through; then what it left running, waited for. */
#ifndef VTPIN_CLI_RUN_JOB_H
#define VTPIN_CLI_RUN_JOB_H

#include <sys/types.h>

#include "run_left.h"

/* Catches the stop signals from now on: the first one is remembered
 * (run_job_stop_signal) and each is sent to the command's group once it runs. */
void run_job_catch_signals(void);

/* The default dispositions back. */
void run_job_release_signals(void);

/* The first stop signal caught, 0 when none. */
int run_job_stop_signal(void);

/* How long the command's group has after the first stop signal before SIGKILL
 * (the command and what it started alike). VTPIN_RUN_GRACE_MS overrides it. */
#define RUN_JOB_GRACE_MS 10000

/* How long the run waits, after the command exited, for what it left running
 * (JVMs started in the background): --background-timeout. */
#define RUN_JOB_BACKGROUND_MS 60000

struct run_job_wait {
    long long background_ms; /* for what the command left running; 0: not at all */
    pid_t collector;         /* the run's collector (0: none): not the command's */
    /* Asked about once a second while the command, or what it left, runs (pgid: the command's
     * group): 1 ends them, SIGTERM and SIGKILL after the grace, as a stop signal would, though
     * the run was not stopped. NULL: never. */
    int (*should_end)(void *arg, pid_t pgid);
    void *should_end_arg;
};

/* Whether should_end ended the command (and what it left) in the last run_job_exec. */
int run_job_ended(void);

/* Runs argv (PATH searched) in its own process group and waits for it, then
 * for all it left running (its descendants, in the group or not) up to
 * wait->background_ms; what still runs then goes into left (described: JVM
 * or not, command line), the rest is left be. After a stop signal the group
 * gets RUN_JOB_GRACE_MS, then SIGKILL. Should vtpin be killed outright, a
 * watchman process kills the group. The command's exit status, 128+N when
 * signal N ended it, CLI_EXIT_EXEC when it could not be executed,
 * CLI_EXIT_FAIL when it could not be started or waited for. */
int run_job_exec(char **argv, const struct run_job_wait *wait, struct run_left *left);

#endif
