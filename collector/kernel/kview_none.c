/* kview.h for builds without libbpf, clang, bpftool or BTF: never available. */
#include "kview.h"

#include <errno.h>
#include <stdio.h>

int kview_open(struct kview **out, uint64_t kernel_min_ns, char *why, size_t whylen)
{
    (void)out;
    (void)kernel_min_ns;
    snprintf(why, whylen, "this vtpin was built without the kernel view (VTPIN_KERNEL_VIEW=OFF)");
    return -ENOTSUP;
}

void kview_close(struct kview *kv)
{
    (void)kv;
}
int kview_fd(const struct kview *kv)
{
    (void)kv;
    return -1;
}
int kview_track(struct kview *kv, int32_t tid, const struct kview_seed *asleep)
{
    (void)kv;
    (void)tid;
    (void)asleep;
    return -ENOTSUP;
}
int kview_watch_process(struct kview *kv, int32_t tgid, int on)
{
    (void)kv;
    (void)tgid;
    (void)on;
    return -ENOTSUP;
}
int kview_find_jvms(struct kview *kv, int on)
{
    (void)kv;
    (void)on;
    return -ENOTSUP;
}
int kview_seed_java(struct kview *kv, int32_t tid, int64_t off_since, int64_t vthread_id, int java_wait, int park_why)
{
    (void)park_why;
    (void)kv;
    (void)tid;
    (void)off_since;
    (void)vthread_id;
    (void)java_wait;
    return -ENOTSUP;
}
void kview_wake_each(struct kview *kv, int on)
{
    (void)kv;
    (void)on;
}
int kview_untrack(struct kview *kv, int32_t tid)
{
    (void)kv;
    (void)tid;
    return -ENOTSUP;
}
int kview_java(struct kview *kv, int32_t tid, uint64_t java_thread, const struct kview_java_layout *l)
{
    (void)kv;
    (void)tid;
    (void)java_thread;
    (void)l;
    return -ENOTSUP;
}
int kview_times(struct kview *kv, int32_t tid, int64_t now, struct kview_times *out)
{
    (void)kv;
    (void)tid;
    (void)now;
    (void)out;
    return -ENOTSUP;
}
int kview_consume(struct kview *kv, kview_cb cb, void *arg)
{
    (void)kv;
    (void)cb;
    (void)arg;
    return 0;
}
int kview_stack(struct kview *kv, int stack_id, uint64_t *ips, int cap)
{
    (void)kv;
    (void)stack_id;
    (void)ips;
    (void)cap;
    return 0;
}
uint64_t kview_lost(struct kview *kv)
{
    (void)kv;
    return 0;
}
