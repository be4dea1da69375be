/* synth_recording PATH PINS CARRIERS [exact] [hogs] [quiet] [kernel] [long]: writes a
 * recording like the agent's, with PINS pins spread over CARRIERS carriers (varied reasons,
 * a few hundred distinct stacks, NATIVE_BLOCK pins with blocked_in, named
 * virtual threads, occupancy sampled every 10 ms or exact transitions) and
 * with hogs, after every 1000th pin, a carrier hog of 200-400 ms. quiet: a
 * carrier's pins 0-2 s apart, not 0-2 ms (a long session that seldom pins: mostly
 * occupancy). kernel: as a collector with the kernel view writes it, each pin's
 * sleep an off-CPU interval with one of a few kernel stacks of 11 frames, in
 * full. long: the first pin lasts until the end of the session, the second never ends
 * (a hang). For the tests of the report formats on a large recording; deterministic. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synth.h"

#define MS 1000000LL
#define N_STACKS 300
#define N_NAMES 1000

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint32_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

static const char *classes[] = {
    "com.example.orders.OrderService", "com.example.orders.Repository", "com.example.db.Pool",
    "com.example.http.Client",         "com.example.cache.Cache",       "com.example.native.Codec",
    "org.example.legacy.Ledger",       "org.example.legacy.Audit"};
static const char *methods[] = {"handle", "load", "save", "query", "get", "put", "encode", "settle", "flush", "call"};

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr,
                "usage: synth_recording PATH PINS CARRIERS [exact] [hogs] [quiet] [kernel] [long] [attach] [bare]\n");
        return 2;
    }
    long n_pins = strtol(argv[2], NULL, 10), n_carriers = strtol(argv[3], NULL, 10);
    int exact = 0, hogs = 0, quiet = 0, kernel = 0, lasting = 0, attach = 0, bare = 0;
    for (int i = 4; i < argc; i++) {
        exact |= strcmp(argv[i], "exact") == 0;
        hogs |= strcmp(argv[i], "hogs") == 0;
        quiet |= strcmp(argv[i], "quiet") == 0;
        kernel |= strcmp(argv[i], "kernel") == 0;
        lasting |= strcmp(argv[i], "long") == 0;
        attach |= strcmp(argv[i], "attach") == 0;
        bare |= strcmp(argv[i], "bare") == 0; /* no occupancy: a small file (a fuzz seed) */
    }
    if (n_pins < 0 || n_carriers < 1 || n_carriers > 1024)
        return 2;
    struct synth b = {0};
    int64_t mono0 = 5000 * MS;
    synth_hello_in(
        &b, 4242, exact ? VTPIN__V1__OCCUPANCY_SOURCE__OCCUPANCY_EXACT : VTPIN__V1__OCCUPANCY_SOURCE__OCCUPANCY_SAMPLED,
        1700000000000000000LL, mono0, attach ? VTPIN__V1__LOAD_MODE__ATTACH : VTPIN__V1__LOAD_MODE__STARTUP);

    /* strings: 1..8 classes, 11..20 methods, 21 source, 30.. JDK names, 100.. carriers, 2000.. vthreads */
    char text[128];
    for (size_t i = 0; i < 8; i++)
        synth_string(&b, 1 + (uint32_t)i, classes[i]);
    for (size_t i = 0; i < 10; i++)
        synth_string(&b, 11 + (uint32_t)i, methods[i]);
    synth_string(&b, 21, "Synth.java");
    synth_string(&b, 30, "java.lang.VirtualThread");
    synth_string(&b, 31, "run");
    synth_string(&b, 32, "jdk.internal.vm.Continuation");
    synth_string(&b, 33, "enter");
    synth_string(&b, 34, "parkOnCarrierThread");
    for (long c = 0; c < n_carriers; c++) {
        snprintf(text, sizeof(text), "ForkJoinPool-1-worker-%ld", c + 1);
        synth_string(&b, 100 + (uint32_t)c, text);
        synth_carrier(&b, 7000 + (int32_t)c, 100 + (uint32_t)c, mono0);
    }
    /* bare: a handful of names and stacks too */
    uint32_t n_names = bare ? 16 : N_NAMES, n_stacks = bare ? 10 : N_STACKS;
    for (uint32_t i = 0; i < n_names; i++) {
        snprintf(text, sizeof(text), "order-%u", i);
        synth_string(&b, 2000 + i, text);
    }
    /* methods: 1..80 application (class x method), 90 VirtualThread.run, 91 Continuation.enter, 92 park */
    for (uint32_t c = 0; c < 8; c++)
        for (uint32_t m = 0; m < 10; m++)
            synth_method(&b, 1 + c * 10 + m, 1 + c, 11 + m, 21, c == 5 && m == 6);
    synth_method(&b, 90, 30, 31, 0, 0);
    synth_method(&b, 91, 32, 33, 0, 0);
    synth_method(&b, 92, 30, 34, 0, 0);

    /* stacks: top frame first; park on top, then application frames, then run and enter at the bottom */
    int culprit_of[N_STACKS + 1];
    for (uint32_t s = 1; s <= n_stacks; s++) {
        uint32_t frames[48];
        size_t n = 0, depth = 4 + next_rand() % 30;
        int native = s % 10 == 0;
        frames[n++] = native ? 1 + 5 * 10 + 6 : 92; /* native: Codec.encode on top */
        for (size_t k = 0; k < depth; k++)
            frames[n++] = 1 + next_rand() % 80;
        frames[n++] = 90;
        frames[n++] = 91;
        culprit_of[s] = native ? 0 : 1 + (int)(next_rand() % depth);
        synth_stack(&b, s, frames, n, native ? -1 : culprit_of[s], s == n_stacks);
    }

    int64_t *cursor = calloc((size_t)n_carriers, sizeof(*cursor));
    int64_t *busy_until = calloc((size_t)n_carriers, sizeof(*busy_until));
    if (!cursor || !busy_until)
        return 2;
    int64_t end = mono0, first_start = mono0;
    for (long i = 0; i < n_pins; i++) {
        long c = i % n_carriers;
        for (long k = 0; attach && k < n_carriers; k++) /* after attach, the sampler's pins in start order */
            c = cursor[k] < cursor[c] ? k : c;
        int64_t start = mono0 + cursor[c] + (int64_t)(next_rand() % 2000) * (quiet ? MS : 1000); /* 0-2 ms apart */
        int64_t dur = (int64_t)(50 + next_rand() % 3000) * 1000;                                 /* 50 us - 3 ms */
        if (i % 500 == 7)
            dur = (int64_t)(50 + next_rand() % 150) * MS; /* now and then a long one */
        uint32_t stack = 1 + next_rand() % n_stacks;
        int reason;
        const char *blocked = NULL;
        if (stack % 10 == 0) {
            reason = i % 2 ? VTPIN__V1__PIN_REASON__NATIVE_BLOCK : VTPIN__V1__PIN_REASON__NATIVE;
            blocked = reason == VTPIN__V1__PIN_REASON__NATIVE_BLOCK ? "read (wchan anon_pipe_read)" : NULL;
        } else {
            static const int others[] = {VTPIN__V1__PIN_REASON__MONITOR, VTPIN__V1__PIN_REASON__MONITOR,
                                         VTPIN__V1__PIN_REASON__MONITOR, VTPIN__V1__PIN_REASON__MONITOR_ENTER,
                                         VTPIN__V1__PIN_REASON__OBJECT_WAIT};
            reason = others[next_rand() % 5];
        }
        synth_pin_start(&b, (uint64_t)i + 1, reason, start, 100000 + i, 2000 + (uint32_t)(i % n_names),
                        7000 + (int32_t)c, 100 + (uint32_t)c, stack, culprit_of[stack], blocked);
        if (lasting && i < 2) { /* the first ends at the end (below), the second never */
            first_start = i == 0 ? start : first_start;
            cursor[c] = start - mono0; /* its carrier's next pins begin after it (a file in start order) */
            continue;
        }
        /* after attach: the last sample that saw it asleep, up to a period (10 ms) before its end */
        int64_t asleep = attach ? start + dur - (int64_t)(next_rand() % 10000) * 1000 : 0;
        synth_pin_end_asleep(&b, (uint64_t)i + 1, start + dur, dur, attach && asleep < start ? start : asleep);
        if (kernel) { /* the carrier's sleep during the pin, the way one of 4 syscalls sleeps */
            static char *stacks[4][11] = {
                {"bpf_prog_offcpu_switch+0xa15", "bpf_trace_run4+0x10d", "__schedule+0x628", "schedule+0x23",
                 "futex_do_wait+0x46", "__futex_wait+0x8a", "futex_wait+0x9a", "do_futex+0xfd", "__x64_sys_futex+0x12d",
                 "do_syscall_64+0x71", "entry_SYSCALL_64_after_hwframe+0x76"},
                {"bpf_prog_offcpu_switch+0xa15", "bpf_trace_run4+0x10d", "__schedule+0x628", "schedule+0x23",
                 "do_nanosleep+0x6c", "hrtimer_nanosleep+0xc4", "common_nsleep+0x40", "__x64_sys_clock_nanosleep+0xd2",
                 "x64_sys_call+0x1b2e", "do_syscall_64+0x71", "entry_SYSCALL_64_after_hwframe+0x76"},
                {"bpf_prog_offcpu_switch+0xa15", "bpf_trace_run4+0x10d", "__schedule+0x628", "schedule+0x23",
                 "schedule_timeout+0x9d", "pipe_read+0x3c1", "vfs_read+0x2f6", "ksys_read+0x6d", "__x64_sys_read+0x19",
                 "do_syscall_64+0x71", "entry_SYSCALL_64_after_hwframe+0x76"},
                {"bpf_prog_offcpu_switch+0xa15", "bpf_trace_run4+0x10d", "__schedule+0x628", "schedule+0x23",
                 "schedule_hrtimeout_range+0xa8", "do_epoll_wait+0x4d0", "do_epoll_pwait.part.0+0xc",
                 "__x64_sys_epoll_pwait+0x73", "x64_sys_call+0x16a4", "do_syscall_64+0x71",
                 "entry_SYSCALL_64_after_hwframe+0x76"}};
            static const char *syscalls[4] = {"futex", "clock_nanosleep", "read", "epoll_pwait"};
            static const int32_t numbers[4] = {202, 230, 0, 281};
            int how = (int)(stack % 4);
            synth_kinterval(&b, 7000 + (int32_t)c, start + 1000, start + dur - 1000, numbers[how], syscalls[how],
                            stacks[how], 11, 100000 + i);
        }
        cursor[c] = start + dur - mono0;
        if (hogs && i % 1000 == 999) { /* a hog after it, on the same carrier: it runs where the pin had slept */
            int64_t hog_start = start + dur + MS, held = (int64_t)(200 + next_rand() % 200) * MS;
            uint64_t hog = (uint64_t)(i / 1000) + 1;
            synth_hog_start(&b, hog, hog_start, 200000 + i, 2000 + (uint32_t)(i % n_names), 7000 + (int32_t)c,
                            100 + (uint32_t)c, stack, culprit_of[stack]);
            synth_hog_end(&b, hog, hog_start + held, held, hog_start + held - 10 * MS);
            cursor[c] = hog_start + held - mono0;
        }
        if (mono0 + cursor[c] > end)
            end = mono0 + cursor[c];
    }

    /* occupancy over the whole span: busy in a pin and in 2 of every 3 slots between */
    int32_t *tids = calloc((size_t)n_carriers, sizeof(*tids));
    int64_t *vts = calloc((size_t)n_carriers, sizeof(*vts));
    if (!tids || !vts)
        return 2;
    for (long c = 0; c < n_carriers; c++)
        tids[c] = 7000 + (int32_t)c;
    if (bare) {
    } else if (!exact) {
        for (int64_t t = mono0; t <= end; t += 10 * MS) {
            for (long c = 0; c < n_carriers; c++)
                vts[c] = next_rand() % 3 ? 100000 + (next_rand() % 50000) : 0;
            synth_sample(&b, t, tids, vts, (size_t)n_carriers);
        }
    } else {
        for (long c = 0; c < n_carriers; c++) {
            int64_t times[64], ids[64];
            size_t n = 0;
            for (int64_t t = mono0; t <= end; t += 7 * MS) {
                times[n] = t;
                ids[n++] = (t / (7 * MS)) % 3 ? 100000 + c : 0;
                if (n == 64) {
                    synth_transitions(&b, tids[c], times, ids, n);
                    n = 0;
                }
            }
            if (n)
                synth_transitions(&b, tids[c], times, ids, n);
        }
    }
    if (lasting && n_pins > 0)
        synth_pin_end(&b, 1, end, end - first_start);
    synth_goodbye(&b, end, (uint64_t)n_pins);
    int rc = synth_write(&b, argv[1]);
    if (rc) {
        fprintf(stderr, "cannot write %s\n", argv[1]);
        return 1;
    }
    free(b.data);
    free(cursor);
    free(busy_until);
    free(tids);
    free(vts);
    return 0;
}
