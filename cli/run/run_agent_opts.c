#include "run_agent_opts.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int run_agent_option(const char *options, const char *key, char *value, size_t cap)
{
    size_t klen = strlen(key);
    int found = 0;
    for (const char *o = options; *o;) {
        size_t n = strcspn(o, ",");
        if (n >= klen && strncmp(o, key, klen) == 0 && (n == klen || o[klen] == '=' || o[klen] == ':')) {
            snprintf(value, cap, "%.*s", n > klen ? (int)(n - klen - 1) : 0, o + klen + 1);
            found = 1; /* and on: the agent keeps the last one */
        }
        o += n + (o[n] == ',');
    }
    return found;
}

int run_agent_opts_check(const char *extra, char *why, size_t cap)
{
    static const struct {
        const char *key, *instead;
    } outputs[] = {{"record", "the run records each JVM into --dir DIR"},
                   {"record_max", "the run keeps each JVM's recording whole, to judge every pin"},
                   {"record_keep", "the run keeps each JVM's recording whole, to judge every pin"},
                   {"collector", "--socket PATH streams the run to a collector of yours"}};
    char value[1024];
    if (!extra)
        return 0;
    if (strpbrk(extra, " \t\n")) {
        snprintf(why, cap,
                 "--agent-options: white space in '%s': JAVA_TOOL_OPTIONS is split there, and the rest would "
                 "reach the JVM as options of its own",
                 extra);
        return -EINVAL;
    }
    for (size_t i = 0; i < sizeof(outputs) / sizeof(outputs[0]); i++) {
        const char *key = outputs[i].key;
        if (!run_agent_option(extra, key, value, sizeof(value)))
            continue;
        snprintf(why, cap,
                 "--agent-options: %s%s%s would replace the run's own (the agent keeps one %s, the last given), "
                 "and the run would not see what its JVMs do; %s",
                 key, value[0] ? "=" : "", value, key, outputs[i].instead);
        return -EINVAL;
    }
    return 0;
}
