/* The command of `vtpin run` as a job, the way a shell runs one: its own
 * process group (in the terminal's foreground when vtpin has it), SIGINT,
 * SIGTERM and SIGHUP to vtpin forwarded to that whole group, Ctrl-Z passed
 * through. After a stop signal the group has RUN_JOB_GRACE_MS (the command
 * and its stragglers alike: one deadline from the first signal), then the
 * whole group gets SIGKILL.
 *
 * Should vtpin itself be killed outright (SIGKILL, the OOM killer), a
 * watchman takes the group down: a small process forked before the command,
 * in a process group of its own, that blocks reading a pipe whose only write
 * end vtpin holds. The kernel closes that end whatever kills vtpin; on EOF
 * the watchman sends SIGKILL to the command's group and exits. A normal end
 * tells it "done" first. (PR_SET_PDEATHSIG reaches only the direct child, the
 * wrapper script, not the JVMs it started; the subreaper is vtpin itself,
 * which is what died; a watcher of a pipe needs no polling and no help from
 * the dying process.) */
#include "run_job.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/units.h"
#include "exit_codes.h"
#include "run_left.h"

/* The signal that stopped the run (0: none) and the command's process group
 * to forward it to (0: not started yet, or over). */
static volatile sig_atomic_t stop_signal;
static volatile sig_atomic_t command_pgid;

static void on_stop_signal(int sig)
{
    if (!stop_signal)
        stop_signal = sig;
    if (command_pgid > 0)
        kill(-(pid_t)command_pgid, sig);
}

static void set_stop_handler(void (*handler)(int))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

void run_job_catch_signals(void)
{
    stop_signal = 0;
    set_stop_handler(on_stop_signal);
}

void run_job_release_signals(void)
{
    set_stop_handler(SIG_DFL);
}

int run_job_stop_signal(void)
{
    return stop_signal;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The grace after a stop signal: RUN_JOB_GRACE_MS, or VTPIN_RUN_GRACE_MS. */
static long grace_ms(void)
{
    const char *v = getenv("VTPIN_RUN_GRACE_MS");
    char *end = NULL;
    long ms = v && *v ? strtol(v, &end, 10) : -1;
    return ms >= 0 && end && !*end ? ms : RUN_JOB_GRACE_MS;
}

/* When the first stop signal was seen (0: none yet) and whether the group got its SIGKILL. */
static long long stop_seen_ms;
static int group_killed;
/* should_end said to end the command: its group got SIGTERM, as after a stop signal */
static int ended;
static long long next_ask_ms;

int run_job_ended(void)
{
    return ended;
}

/* Past the grace: SIGKILL to the whole group, once. */
static void kill_group_if_due(pid_t pgid)
{
    if ((!stop_signal && !ended) || group_killed)
        return;
    if (!stop_seen_ms)
        stop_seen_ms = now_ms();
    long grace = grace_ms();
    if (now_ms() - stop_seen_ms < grace)
        return;
    if (kill(-pgid, 0) == 0) {
        fprintf(stderr, "vtpin run: processes of the command still running %ld.%ld s after the signal: killing them\n",
                grace / 1000, grace % 1000 / 100);
        kill(-pgid, SIGKILL);
    }
    group_killed = 1;
}

/* After a stop signal, once the command itself is over: the rest of its group
 * until the same deadline, then SIGKILL; reaped as they go (vtpin is their
 * subreaper). */
static void reap_group(pid_t pgid)
{
    for (int i = 0; kill(-pgid, 0) == 0 && i < 3000; i++) { /* 60 s at most after the SIGKILL too */
        /* our own children of the group, if any */
        while (waitpid(-pgid, NULL, WNOHANG) > 0)
            ;
        kill_group_if_due(pgid);
        if (kill(-pgid, 0) == 0)
            sleep_ms(20);
    }
}

/* At most once a second, and not once stopped or ended: should_end says to end the command's
 * group; it gets SIGTERM now, SIGKILL after the grace (kill_group_if_due). 1 when it was ended now. */
static int end_if_asked(const struct run_job_wait *w, pid_t pgid)
{
    if (!w->should_end || stop_signal || ended || now_ms() < next_ask_ms)
        return 0;
    next_ask_ms = now_ms() + 1000;
    if (!w->should_end(w->should_end_arg, pgid))
        return 0;
    ended = 1;
    stop_seen_ms = now_ms();
    kill(-pgid, SIGTERM);
    return 1;
}

/* ---- what the command left running ---- */

/* Its zombie children (orphans of the command come to vtpin, the subreaper). */
static void reap_zombies(const struct run_left *left)
{
    for (size_t i = 0; i < left->n_zombies; i++)
        waitpid(left->zombies[i], NULL, WNOHANG);
}

static pid_t watchman;

/* After the command itself exited: all it left running (its background
 * JVMs), until that ends, the timeout or a stop signal. What still runs at
 * the timeout stays in left, described; otherwise left is empty. */
static void wait_left(const struct run_job_wait *w, pid_t pgid, struct run_left *left)
{
    pid_t skip[] = {watchman, w->collector};
    long long deadline = now_ms() + w->background_ms;
    int said = 0;
    while (run_left_find(getpid(), skip, sizeof(skip) / sizeof(skip[0]), left) == 0) {
        reap_zombies(left);
        if (!left->n || stop_signal)
            break;
        /* ended: what it left (in its group or not) gets the group's signals, then is waited for */
        int end_now = end_if_asked(w, pgid);
        int kill_now = ended && !group_killed && now_ms() - stop_seen_ms >= grace_ms();
        for (size_t i = 0; (end_now || kill_now) && i < left->n && i < RUN_LEFT_MAX; i++)
            kill(left->procs[i].pid, end_now ? SIGTERM : SIGKILL);
        if (kill_now) {
            kill(-pgid, SIGKILL);
            group_killed = 1;
        }
        if (now_ms() >= deadline && (!ended || group_killed)) {
            run_left_describe(left);
            return;
        }
        char limit[64];
        if (!said)
            fprintf(stderr,
                    "vtpin run: the command exited; waiting up to %s for the %zu process(es) it left running "
                    "(--background-timeout)\n",
                    units_format_duration(w->background_ms * 1000000LL, limit, sizeof(limit)), left->n);
        said = 1;
        sleep_ms(50); /* a grandchild's end signals its parent, not us: look again */
    }
    left->n = left->jvms = left->n_zombies = 0;
}

/* ---- the watchman ---- */

static int watch_fd = -1; /* the pipe's write end: vtpin's alone (O_CLOEXEC) */

static void watchman_main(int fd, pid_t vtpin)
{
    prctl(PR_SET_NAME, "vtpin-watchman");
    setpgid(0, 0); /* out of vtpin's group: a kill of that group leaves it to do its job */
    static const int ignored[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP, SIGTTIN, SIGTTOU, SIGPIPE};
    for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
        signal(ignored[i], SIG_IGN);
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) { /* the terminal and vtpin's stdout are not held open; stderr is, for the one line */
        dup2(null, 0);
        dup2(null, 1);
        if (null > 2)
            close(null);
    }
    DIR *dir = opendir("/proc/self/fd");
    if (dir) { /* nothing else of vtpin's: a collector socket, a pipe a caller waits on */
        int self = dirfd(dir);
        for (struct dirent *e; (e = readdir(dir));) {
            int n = atoi(e->d_name);
            if (n > 2 && n != fd && n != self)
                close(n);
        }
        closedir(dir);
    }
    pid_t pgid = 0, msg;
    ssize_t r;
    while ((r = read(fd, &msg, sizeof(msg))) == (ssize_t)sizeof(msg) || (r < 0 && errno == EINTR)) {
        if (r < 0)
            continue;
        if (msg == 0)
            _exit(0); /* done: the run ended as it should */
        pgid = msg;
    }
    /* EOF: vtpin is gone without saying done */
    if (pgid > 0 && kill(-pgid, 0) == 0) {
        fprintf(stderr, "vtpin run: vtpin run (pid %d) was killed: killing its command (process group %d)\n",
                (int)vtpin, (int)pgid);
        for (int i = 0; i < 10 && kill(-pgid, SIGKILL) == 0; i++) /* again: a fork may race the first */
            sleep_ms(100);
    }
    _exit(0);
}

/* Starts the watchman; without one (no pipe, no fork) the run goes on and says so. */
static void watchman_start(void)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC)) {
        fprintf(stderr, "vtpin run: warning: no watchman (%s): should vtpin be killed, the command outlives it\n",
                strerror(errno));
        return;
    }
    pid_t vtpin = getpid(), pid = fork();
    if (pid == 0) {
        close(p[1]);
        watchman_main(p[0], vtpin);
    }
    close(p[0]);
    if (pid < 0) {
        fprintf(stderr, "vtpin run: warning: no watchman (%s): should vtpin be killed, the command outlives it\n",
                strerror(errno));
        close(p[1]);
        return;
    }
    watchman = pid;
    watch_fd = p[1];
}

static void watchman_tell(pid_t msg)
{
    if (watch_fd >= 0 && write(watch_fd, &msg, sizeof(msg)) < 0)
        fprintf(stderr, "vtpin run: warning: cannot reach the watchman: %s\n", strerror(errno));
}

/* The run ended as it should: the watchman leaves the group alone and exits. */
static void watchman_done(void)
{
    if (watch_fd < 0)
        return;
    watchman_tell(0);
    close(watch_fd);
    watch_fd = -1;
    while (waitpid(watchman, NULL, 0) < 0 && errno == EINTR)
        ;
    watchman = 0;
}

/* The terminal to the command's group (pgid) or back to ours (pgid 0). */
static void give_terminal(pid_t pgid)
{
    signal(SIGTTOU, SIG_IGN); /* a background group may not otherwise change it */
    tcsetpgrp(STDIN_FILENO, pgid ? pgid : getpgrp());
    signal(SIGTTOU, SIG_DFL);
}

static void on_child(int sig)
{
    (void)sig; /* only wakes ppoll in wait_command */
}

/* Waits for the command; when Ctrl-Z stops it, vtpin stops too (the shell
 * sees the job stopped) and continues it when continued itself. After a stop
 * signal, SIGKILL to the group once the grace is over. The signals are
 * blocked but in ppoll, so none comes between looking and sleeping. */
static int wait_command(pid_t pid, int tty, const struct run_job_wait *wait)
{
    struct sigaction sa, old_chld;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_child;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGCHLD, &sa, &old_chld);
    sigset_t block, orig;
    sigemptyset(&block);
    sigaddset(&block, SIGCHLD);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    sigprocmask(SIG_BLOCK, &block, &orig);
    int status = 0;
    for (;;) {
        pid_t w = waitpid(pid, &status, WUNTRACED | WNOHANG);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0) {
            status = -1;
            break;
        }
        if (w == 0) {
            end_if_asked(wait, pid);
            kill_group_if_due(pid);
            struct timespec tick = {0, 100 * 1000000L}; /* after a stop signal: look at the clock */
            struct timespec ask = {1, 0};               /* should_end, once a second */
            int stopping = (stop_signal || ended) && !group_killed;
            ppoll(NULL, 0, stopping ? &tick : wait->should_end && !ended ? &ask : NULL, &orig);
            continue;
        }
        if (!WIFSTOPPED(status))
            break;
        if (tty)
            give_terminal(0);
        raise(SIGSTOP); /* blocked signals do not hold back SIGSTOP */
        if (tty)
            give_terminal(pid);
        kill(-pid, SIGCONT);
    }
    sigprocmask(SIG_SETMASK, &orig, NULL);
    sigaction(SIGCHLD, &old_chld, NULL);
    return status;
}

/* Runs the command in its own process group (in the terminal's foreground
 * when vtpin has it): its exit status, or 128+N when signal N ended it. */
int run_job_exec(char **argv, const struct run_job_wait *wait, struct run_left *left)
{
    left->n = left->jvms = left->n_zombies = 0;
    int tty = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
    stop_seen_ms = 0;
    group_killed = 0;
    ended = 0;
    next_ask_ms = 0;
    watchman_start();
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        /* before exec closes the pipe: should vtpin die now, the group is known */
        watchman_tell(getpid());
        if (tty) /* also here: the command may read the terminal before the parent gets to it */
            give_terminal(getpid());
        execvp(argv[0], argv);
        fprintf(stderr, "vtpin run: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(CLI_EXIT_EXEC);
    }
    if (pid < 0) {
        fprintf(stderr, "vtpin run: cannot start the command: %s\n", strerror(errno));
        watchman_done();
        return CLI_EXIT_FAIL;
    }
    setpgid(pid, pid); /* also here: no race with a signal right after fork */
    watchman_tell(pid);
    command_pgid = pid;
    if (stop_signal) /* it came before the group existed */
        kill(-pid, stop_signal);
    if (tty) /* Ctrl-C and Ctrl-Z straight to the command, as a shell would */
        give_terminal(pid);
    int status = wait_command(pid, tty, wait);
    if (!stop_signal && status >= 0)
        wait_left(wait, pid, left);
    if (stop_signal || ended)
        reap_group(pid);
    command_pgid = 0;
    watchman_done();
    if (tty)
        give_terminal(0);
    if (status < 0)
        return CLI_EXIT_FAIL;
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    return CLI_EXIT_SIGNAL_BASE + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}
