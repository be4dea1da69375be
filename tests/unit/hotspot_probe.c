/* hotspot_probe PID: what collector/kernel/hotspot.c reads from a running
 * HotSpot JVM from outside (run as root): one line with the layout it read,
 * one line per Java thread, and a last line with the thread count and what
 * open and one walk took. On an error, why on stderr and exit status 2. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hotspot.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: hotspot_probe PID\n");
        return 2;
    }
    char *end;
    errno = 0;
    long pid = strtol(argv[1], &end, 10);
    if (errno || end == argv[1] || *end || pid <= 0 || pid > INT32_MAX) {
        fprintf(stderr, "hotspot_probe: not a pid: %s\n", argv[1]);
        return 2;
    }
    char why[512] = "";
    struct hotspot *h = NULL;
    double t0 = now_ms();
    int rc = hotspot_open(&h, "/proc", (int32_t)pid, why, sizeof(why));
    double open_ms = now_ms() - t0;
    if (rc) {
        fprintf(stderr, "hotspot_probe: %s: %s\n", strerror(-rc), why[0] ? why : "(no reason given)");
        return 2;
    }
    const struct hotspot_info *in = hotspot_info(h);
    printf("feature=%" PRIu32 " release=%s thread_obj=%" PRIu32 " vthread=%" PRIu32 " pending_monitor=%" PRIu32
           " waiting_monitor=%" PRIu32 " thread_state=%" PRIu32 " tid=%" PRIu32 " vt_state=%" PRIu32 " blocked=%" PRId32
           " in_native=%" PRId32 " libjvm=%s vm_name=\"%s\"\n",
           in->feature, in->release, in->thread_obj, in->vthread, in->pending_monitor, in->waiting_monitor,
           in->thread_state, in->tid, in->vt_state, in->state_blocked, in->state_in_native, in->libjvm, in->vm_name);
    size_t cap = 4096;
    struct hotspot_thread *threads = calloc(cap, sizeof(*threads));
    if (!threads) {
        hotspot_close(h);
        return 2;
    }
    uint64_t list = 0;
    t0 = now_ms();
    int n = hotspot_threads(h, threads, cap);
    double walk_ms = now_ms() - t0;
    if (n < 0 || (rc = hotspot_thread_list(h, &list))) {
        rc = n < 0 ? n : rc;
        fprintf(stderr, "hotspot_probe: reading the threads: %s\n", strerror(-rc));
        free(threads);
        hotspot_close(h);
        return 2;
    }
    for (size_t i = 0; i < (size_t)n && i < cap; i++) {
        const struct hotspot_thread *t = &threads[i];
        printf("thread java_thread=0x%" PRIx64 " ns_tid=%" PRId32 " java_tid=%" PRId64 " vthread_id=%" PRId64
               " vthread_state=%" PRId32 " thread_state=%" PRId32 " pending_monitor=0x%" PRIx64
               " waiting_monitor=0x%" PRIx64 "\n",
               t->java_thread, t->ns_tid, t->java_tid, t->vthread_id, t->vthread_state, t->thread_state,
               t->pending_monitor, t->waiting_monitor);
    }
    printf("threads=%d list=0x%" PRIx64 " open_ms=%.1f walk_us=%.0f\n", n, list, open_ms, walk_ms * 1e3);
    free(threads);
    hotspot_close(h);
    return 0;
}
