/* The command of `vtpin run` as a job, the way a shell runs one: its own
 * process group (in the terminal's foreground when vtpin has it), SIGINT,
 * SIGTERM and SIGHUP to vtpin forwarded to that whole group, Ctrl-Z passed
 * through, and what is left of the group reaped after a stop signal. */
#include "run_job.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exit_codes.h"

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

/* After the command was stopped by a signal: the rest of its group gets
 * up to 10 s to finish its recordings, then SIGKILL. */
static void reap_group(pid_t pgid)
{
    for (int i = 0; i < 500 && kill(-pgid, 0) == 0; i++) {
        while (waitpid(-pgid, NULL, WNOHANG) > 0) /* our own children of the group, if any */
            ;
        sleep_ms(20);
    }
    if (kill(-pgid, 0) == 0) {
        fprintf(stderr, "vtpin run: processes of the command still running 10 s after the signal: killing them\n");
        kill(-pgid, SIGKILL);
    }
}

/* The terminal to the command's group (pgid) or back to ours (pgid 0). */
static void give_terminal(pid_t pgid)
{
    signal(SIGTTOU, SIG_IGN); /* a background group may not otherwise change it */
    tcsetpgrp(STDIN_FILENO, pgid ? pgid : getpgrp());
    signal(SIGTTOU, SIG_DFL);
}

/* Waits for the command; when Ctrl-Z stops it, vtpin stops too (the shell
 * sees the job stopped) and continues it when continued itself. */
static int wait_command(pid_t pid, int tty)
{
    int status = 0;
    for (;;) {
        if (waitpid(pid, &status, WUNTRACED) < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (!WIFSTOPPED(status))
            return status;
        if (tty)
            give_terminal(0);
        raise(SIGSTOP);
        if (tty)
            give_terminal(pid);
        kill(-pid, SIGCONT);
    }
}

/* Runs the command in its own process group (in the terminal's foreground
 * when vtpin has it): its exit status, or 128+N when signal N ended it. */
int run_job_exec(char **argv)
{
    int tty = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        if (tty) /* also here: the command may read the terminal before the parent gets to it */
            give_terminal(getpid());
        execvp(argv[0], argv);
        fprintf(stderr, "vtpin run: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(CLI_EXIT_EXEC);
    }
    if (pid < 0) {
        fprintf(stderr, "vtpin run: cannot start the command: %s\n", strerror(errno));
        return CLI_EXIT_FAIL;
    }
    setpgid(pid, pid); /* also here: no race with a signal right after fork */
    command_pgid = pid;
    if (stop_signal) /* it came before the group existed */
        kill(-pid, stop_signal);
    if (tty) /* Ctrl-C and Ctrl-Z straight to the command, as a shell would */
        give_terminal(pid);
    int status = wait_command(pid, tty);
    if (stop_signal)
        reap_group(pid);
    command_pgid = 0;
    if (tty)
        give_terminal(0);
    if (status < 0)
        return CLI_EXIT_FAIL;
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    return CLI_EXIT_SIGNAL_BASE + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}
