#include "native_awake.h"

enum native_awake_verdict native_awake_sample(struct native_awake *a, int64_t now, int64_t cpu_ns,
                                              const struct native_awake_rule *rule)
{
    if (a->samples++ == 0) {
        a->since = now;
        a->cpu_ns = cpu_ns;
        return NATIVE_AWAKE_SAME;
    }
    if (a->cpu_ns && cpu_ns)
        return cpu_ns - a->cpu_ns > rule->cpu_budget_ns ? NATIVE_AWAKE_ENDED : NATIVE_AWAKE_SAME;
    return a->samples > rule->max_samples ? NATIVE_AWAKE_ENDED : NATIVE_AWAKE_SAME;
}

void native_awake_reset(struct native_awake *a)
{
    a->samples = 0;
    a->since = a->cpu_ns = 0;
}
