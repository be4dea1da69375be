/* What COMMAND left running when it exited: the JVMs it started in the
 * background, a shell that may still start one. vtpin run is the child
 * subreaper of the command, so all it started stays a descendant of vtpin
 * however it re-parents or leaves the process group: the run can wait for all
 * of it, and name what it did not wait for. */
#ifndef VTPIN_CLI_RUN_LEFT_H
#define VTPIN_CLI_RUN_LEFT_H

#include <stddef.h>
#include <sys/types.h>

/* One process as /proc/PID/stat says: state 'Z' is a zombie (not running). */
struct run_proc {
    pid_t pid, ppid;
    char state;
};

/* The running descendants of root among procs[n] into out[cap], leaving out
 * the subtrees of skip[n_skip] (the run's own helpers): how many there are
 * (more than cap: out holds cap of them). */
size_t run_left_descendants(const struct run_proc *procs, size_t n, pid_t root, const pid_t *skip, size_t n_skip,
                            pid_t *out, size_t cap);

/* The zombie children of root among procs[n], but skip[n_skip], into out[cap]: theirs to reap. */
size_t run_left_zombies(const struct run_proc *procs, size_t n, pid_t root, const pid_t *skip, size_t n_skip,
                        pid_t *out, size_t cap);

/* Named one by one; more are counted. */
#define RUN_LEFT_MAX 128

struct run_left_proc {
    pid_t pid;
    int jvm;            /* libjvm.so is mapped: a JVM */
    char cmdline[1024]; /* a java command line is long: its main class comes last */
};

struct run_left {
    size_t n;    /* still running (procs holds the first RUN_LEFT_MAX) */
    size_t jvms; /* of procs, the JVMs (after run_left_describe) */
    size_t n_zombies;
    pid_t zombies[RUN_LEFT_MAX]; /* children of ours to reap */
    struct run_left_proc procs[RUN_LEFT_MAX];
};

/* /proc now: the running descendants of self but skip's subtrees, and self's
 * zombie children, into left (pids only). 0 or -errno. */
int run_left_find(pid_t self, const pid_t *skip, size_t n_skip, struct run_left *left);

/* Each of left's processes: is it a JVM, and its command line. */
void run_left_describe(struct run_left *left);

#endif
