#include "kview.h"

#include <errno.h>
#include <linux/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "offcpu.h"
#include "offcpu.skel.h"

struct kview {
    struct offcpu *skel;
    struct ring_buffer *rb;
    int tracked_fd, stacks_fd, java_fd, watched_fd, seeds_fd;
    int seeded;     /* kview_seed_java was called: only then can a seed be there to look up */
    int finds_jvms; /* the exec hook is attached (kview_find_jvms) */
    kview_cb cb;
    void *cb_arg;
};

/* libbpf prints to stderr by default: the collector says why in one line instead (VTPIN_BPF_DEBUG set:
 * libbpf's own words too, to see why the kernel refused a program). */
static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
    (void)level;
    if (getenv("VTPIN_BPF_DEBUG"))
        vfprintf(stderr, fmt, ap);
    return 0;
}

/* CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN) in the effective set, read from
 * /proc/self/status (no libcap needed). */
#define KV_CAP_SYS_ADMIN 21
#define KV_CAP_PERFMON 38
#define KV_CAP_BPF 39
static int has_caps(char *why, size_t whylen)
{
    FILE *f = fopen("/proc/self/status", "re");
    unsigned long long eff = 0;
    int found = 0;
    char line[256];
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "CapEff: %llx", &eff) == 1) {
            found = 1;
            break;
        }
    if (f)
        fclose(f);
    if (!found) {
        snprintf(why, whylen, "cannot read this process's capabilities (/proc/self/status)");
        return 0;
    }
    int admin = (eff >> KV_CAP_SYS_ADMIN) & 1, bpf = (eff >> KV_CAP_BPF) & 1, perfmon = (eff >> KV_CAP_PERFMON) & 1;
    if (admin || (bpf && perfmon))
        return 1;
    snprintf(why, whylen, "no %s%s%s (run the collector as root or give it these capabilities)", bpf ? "" : "CAP_BPF",
             bpf || perfmon ? "" : " and ", perfmon ? "" : "CAP_PERFMON");
    return 0;
}

static int on_event(void *ctx, void *data, size_t size)
{
    struct kview *kv = ctx;
    if (size < sizeof(struct offcpu_event) || !kv->cb)
        return 0;
    const struct offcpu_event *e = data;
    struct kview_interval iv = {
        .tid = (int32_t)e->tid,
        .state = (int)e->state,
        .start_ns = (int64_t)e->start_ns,
        .end_ns = (int64_t)e->end_ns,
        .rq_ns = (int64_t)e->rq_ns,
        .syscall = e->syscall,
        .stack_id = e->stack_id,
        .vthread_id = e->vthread_id,
        .java_wait = (int)e->java_wait,
        .park_why = (int)e->park_why,
        .born = e->kind == OFFCPU_BORN,
        .jvm = e->kind == OFFCPU_JVM,
        .tgid = (int32_t)e->tgid,
    };
    kv->cb(kv->cb_arg, &iv);
    return 0;
}

int kview_open(struct kview **out, uint64_t kernel_min_ns, char *why, size_t whylen)
{
    if (!has_caps(why, whylen))
        return -EPERM;
    if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
        snprintf(why, whylen, "the kernel has no BTF (/sys/kernel/btf/vmlinux: %s)", strerror(errno));
        return -ENOTSUP;
    }
    struct kview *kv = calloc(1, sizeof(*kv));
    if (!kv) {
        snprintf(why, whylen, "out of memory");
        return -ENOMEM;
    }
    libbpf_set_print(quiet);
    int rc;
    /* first with the hook that finds starting JVMs; a kernel that refuses it keeps the rest */
    for (int with_exec = 1; with_exec >= 0; with_exec--) {
        offcpu__destroy(kv->skel);
        kv->skel = offcpu__open();
        if (!kv->skel) {
            rc = -errno;
            snprintf(why, whylen, "cannot open the BPF program: %s", strerror(-rc));
            goto fail;
        }
        kv->skel->rodata->kernel_min = kernel_min_ns;
        if (!with_exec)
            bpf_program__set_autoload(kv->skel->progs.offcpu_exec, false);
        if ((rc = offcpu__load(kv->skel)) != 0) {
            snprintf(why, whylen, "the kernel refused the BPF program: %s", strerror(rc < 0 ? -rc : rc));
            continue;
        }
        if ((rc = offcpu__attach(kv->skel)) != 0) {
            snprintf(why, whylen, "cannot attach to the sched_switch tracepoint: %s", strerror(rc < 0 ? -rc : rc));
            continue;
        }
        kv->finds_jvms = with_exec;
        break;
    }
    if (rc != 0)
        goto fail;
    kv->tracked_fd = bpf_map__fd(kv->skel->maps.tracked);
    kv->stacks_fd = bpf_map__fd(kv->skel->maps.stacks);
    kv->java_fd = bpf_map__fd(kv->skel->maps.java);
    kv->watched_fd = bpf_map__fd(kv->skel->maps.watched);
    kv->seeds_fd = bpf_map__fd(kv->skel->maps.seeds);
    kv->rb = ring_buffer__new(bpf_map__fd(kv->skel->maps.events), on_event, kv, NULL);
    if (!kv->rb) {
        rc = -errno;
        snprintf(why, whylen, "cannot map the ring buffer: %s", strerror(-rc));
        goto fail;
    }
    *out = kv;
    return 0;
fail:
    kview_close(kv);
    return rc < 0 ? rc : -rc;
}

void kview_close(struct kview *kv)
{
    if (!kv)
        return;
    ring_buffer__free(kv->rb);
    offcpu__destroy(kv->skel);
    free(kv);
}

int kview_fd(const struct kview *kv)
{
    return ring_buffer__epoll_fd(kv->rb);
}

int kview_track(struct kview *kv, int32_t tid, const struct kview_seed *asleep)
{
    __u32 key = (__u32)tid;
    struct offcpu_carrier zero = {.syscall = -1, .stack_id = -1, .vthread_id = -1};
    if (asleep && asleep->off_since > 0) {
        zero.off_since = (__u64)asleep->off_since;
        zero.state = (__u32)asleep->state;
        zero.syscall = asleep->syscall;
        zero.stack_id = KVIEW_STACK_PROC;
        zero.vthread_id = asleep->vthread_id;
        zero.java_wait = (__u32)asleep->java_wait;
    }
    if (bpf_map_update_elem(kv->tracked_fd, &key, &zero, BPF_NOEXIST) != 0)
        return errno == EEXIST ? 1 : -errno;
    return 0;
}

int kview_watch_process(struct kview *kv, int32_t tgid, int on)
{
    __u32 key = (__u32)tgid;
    __u8 one = 1;
    if (on)
        return bpf_map_update_elem(kv->watched_fd, &key, &one, BPF_ANY) == 0 ? 0 : -errno;
    return bpf_map_delete_elem(kv->watched_fd, &key) == 0 || errno == ENOENT ? 0 : -errno;
}

int kview_find_jvms(struct kview *kv, int on)
{
    if (!kv->finds_jvms)
        return -ENOTSUP;
    kv->skel->bss->find_jvms = on != 0;
    return 0;
}

int kview_seed_java(struct kview *kv, int32_t tid, int64_t off_since, int64_t vthread_id, int java_wait, int park_why)
{
    __u32 key = (__u32)tid;
    struct offcpu_seed seed = {.off_since = (__u64)off_since,
                               .vthread_id = vthread_id,
                               .java_wait = (__u32)java_wait,
                               .park_why = (__u32)park_why};
    kv->seeded = 1;
    return bpf_map_update_elem(kv->seeds_fd, &key, &seed, BPF_ANY) == 0 ? 0 : -errno;
}

int kview_untrack(struct kview *kv, int32_t tid)
{
    __u32 key = (__u32)tid;
    bpf_map_delete_elem(kv->java_fd, &key); /* ENOENT when the agent gave none */
    bpf_map_delete_elem(kv->seeds_fd, &key);
    return bpf_map_delete_elem(kv->tracked_fd, &key) == 0 ? 0 : -errno;
}

int kview_java(struct kview *kv, int32_t tid, uint64_t java_thread, const struct kview_java_layout *l)
{
    __u32 key = (__u32)tid;
    struct offcpu_java j = {
        .java_thread = java_thread,
        .thread_obj = l->thread_obj,
        .vthread = l->vthread,
        .pending_monitor = l->pending_monitor,
        .waiting_monitor = l->waiting_monitor,
        .thread_state = l->thread_state,
        .tid = l->tid,
        .state_blocked = l->state_blocked,
        .state_in_native = l->state_in_native,
        .vt_state = l->vt_state,
        .held_monitors = l->held_monitors,
        .cont_entry = l->cont_entry,
        .pin_count = l->pin_count,
        .park_rule = l->park_rule,
    };
    return bpf_map_update_elem(kv->java_fd, &key, &j, BPF_ANY) == 0 ? 0 : -errno;
}

int kview_times(struct kview *kv, int32_t tid, int64_t now, struct kview_times *out)
{
    __u32 key = (__u32)tid;
    struct offcpu_carrier c;
    if (bpf_map_lookup_elem(kv->tracked_fd, &key, &c) != 0)
        return -errno;
    memset(out, 0, sizeof(*out));
    out->on_ns = c.on_ns;
    out->off_ns = c.off_ns;
    out->rq_ns = c.rq_ns;
    out->preempt_ns = c.preempt_ns;
    out->switches = c.switches;
    out->syscall = -1;
    out->stack_id = -1;
    if (c.off_since && (int64_t)c.off_since <= now) {
        uint64_t off = (uint64_t)now - c.off_since;
        out->off_ns += off;
        if (c.state == KSTATE_RUNNABLE) {
            out->rq_ns += off;
            out->preempt_ns += off;
        } else if (c.woken_at && (int64_t)c.woken_at <= now)
            out->rq_ns += (uint64_t)now - c.woken_at;
        out->off_since = (int64_t)c.off_since;
        out->state = (int)c.state;
        out->syscall = c.syscall;
        out->stack_id = c.stack_id;
        out->vthread_id = c.vthread_id;
        out->java_wait = (int)c.java_wait;
        out->park_why = (int)c.park_why;
        out->user_bp = c.user_bp;
        struct offcpu_seed seed;
        if (c.java_wait == JAVA_WAIT_UNKNOWN && kv->seeded && bpf_map_lookup_elem(kv->seeds_fd, &key, &seed) == 0 &&
            seed.off_since == c.off_since) { /* as the program will say when it ends */
            out->vthread_id = seed.vthread_id;
            out->java_wait = (int)seed.java_wait;
            out->park_why = (int)seed.park_why;
        }
    } else if (c.on_since && (int64_t)c.on_since <= now) {
        out->on_ns += (uint64_t)now - c.on_since;
    }
    return 0;
}

int kview_consume(struct kview *kv, kview_cb cb, void *arg)
{
    kv->cb = cb;
    kv->cb_arg = arg;
    int n = ring_buffer__consume(kv->rb);
    kv->cb = NULL;
    return n;
}

int kview_stack(struct kview *kv, int stack_id, uint64_t *ips, int cap)
{
    if (stack_id < 0 || cap <= 0)
        return 0;
    __u64 buf[OFFCPU_STACK_DEPTH];
    __u32 key = (__u32)stack_id;
    if (bpf_map_lookup_elem(kv->stacks_fd, &key, buf) != 0)
        return 0;
    int n = 0;
    for (int i = 0; i < OFFCPU_STACK_DEPTH && n < cap && buf[i]; i++)
        ips[n++] = buf[i];
    return n;
}

void kview_wake_each(struct kview *kv, int on)
{
    kv->skel->data->wake_each = on ? 1 : 0;
}

uint64_t kview_lost(struct kview *kv)
{
    return kv->skel->bss->events_lost;
}
