/* The watchdog's /proc readers (agent/jvm/vmblock.c) on this process's own
 * threads: sleeping or running (stat) and voluntary context switches
 * (status), with the files kept open across reads, and where a blocked
 * thread sleeps (syscall, wchan). */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "vmblock.h"

static int pipe_fds[2];
static volatile int worker_tid;

/* Blocks in read until the main thread writes, once per byte, then ends at EOF. */
static void *worker(void *arg)
{
    (void)arg;
    worker_tid = gettid();
    char c;
    while (read(pipe_fds[0], &c, 1) == 1)
        ;
    return NULL;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = 0, .tv_nsec = ms * 1000000L};
    nanosleep(&ts, NULL);
}

/* Until tid sleeps (blocked in read), at most 5 s. */
static int wait_asleep(int tid, int *fd1, int *fd_tid)
{
    for (int i = 0; i < 5000; i++) {
        if (vmblock_thread_sleeps(tid, fd1, fd_tid) == 1)
            return 1;
        sleep_ms(1);
    }
    return 0;
}

int main(void)
{
    int fd1 = 0, fd_tid = 0, sfd1 = 0, sfd_tid = 0;
    uint64_t a = 0, b = 0;
    /* this thread runs while it reads its own stat */
    CHECK_INT(vmblock_thread_sleeps(gettid(), &fd1, &fd_tid), 0);
    CHECK(fd1 > 0 && fd_tid == gettid());
    /* a sleep is one voluntary switch at least; the file stays open */
    CHECK_INT(vmblock_thread_switches(gettid(), &sfd1, &sfd_tid, &a), 0);
    int kept = sfd1;
    sleep_ms(2);
    CHECK_INT(vmblock_thread_switches(gettid(), &sfd1, &sfd_tid, &b), 0);
    CHECK(b > a);
    CHECK_INT(sfd1, kept);

    /* another thread, blocked: asleep; each wakeup and block again is a new switch */
    if (!CHECK_INT(pipe(pipe_fds), 0))
        return 1;
    pthread_t t;
    if (!CHECK_INT(pthread_create(&t, NULL, worker, NULL), 0))
        return 1;
    while (!worker_tid)
        sleep_ms(1);
    CHECK(wait_asleep(worker_tid, &fd1, &fd_tid));
    CHECK_INT(fd_tid, worker_tid); /* reopened for the other tid */
    /* where it sleeps: read(2), named by this architecture's <sys/syscall.h> number */
    char where[96];
    vmblock_blocked_in(worker_tid, where, sizeof(where));
    if (!CHECK(strncmp(where, "read", 4) == 0 && (where[4] == '\0' || where[4] == ' ')))
        fprintf(stderr, "    blocked in '%s'\n", where);
    vmblock_blocked_in(0, where, sizeof(where));
    CHECK_INT(where[0], '\0');
    CHECK_INT(vmblock_thread_switches(worker_tid, &sfd1, &sfd_tid, &a), 0);
    CHECK_INT(vmblock_thread_switches(worker_tid, &sfd1, &sfd_tid, &b), 0);
    CHECK_INT(b, a); /* still in the same sleep */
    for (int i = 0; i < 3; i++) {
        /* woken by a byte, it reads it and blocks again: the count rises (within 5 s) */
        uint64_t before = b, now = b;
        CHECK_INT(write(pipe_fds[1], "x", 1), 1);
        for (int w = 0; w < 5000 && now == before; w++) {
            sleep_ms(1);
            CHECK_INT(vmblock_thread_switches(worker_tid, &sfd1, &sfd_tid, &now), 0);
        }
        CHECK(now > before);
        b = now;
    }
    CHECK(b >= a + 3);
    close(pipe_fds[1]);
    pthread_join(t, NULL);
    /* gone: unknown, and the file is closed. pthread_join returns when the kernel clears
     * the thread's tid, a moment before the task leaves /proc/self/task: wait for that */
    int rc = 0;
    for (int w = 0; w < 5000 && (rc = vmblock_thread_switches(worker_tid, &sfd1, &sfd_tid, &b)) == 0; w++)
        sleep_ms(1);
    CHECK(rc < 0);
    CHECK_INT(sfd1, 0);
    CHECK(vmblock_thread_sleeps(worker_tid, &fd1, &fd_tid) < 0);
    CHECK_INT(vmblock_thread_switches(0, &sfd1, &sfd_tid, &b), -ESRCH);
    CHECK_MAIN_RETURN();
}
