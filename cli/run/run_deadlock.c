#include "run_deadlock.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "ask.h"
#include "wire.h"

int run_deadlock_should_end(void *arg, pid_t pgid)
{
    struct run_deadlock_watch *w = arg;
    if (w->silent)
        return 0;
    char *json = NULL;
    struct jsonread *tree = NULL;
    if (ask_collector("run", w->socket, VTPIN__V1__QUERY__KIND__STATUS, 0, 2000, &json, &tree) != 0) {
        fprintf(stderr, "vtpin run: the collector did not answer: a deadlock will not end COMMAND\n");
        w->silent = 1;
        return 0;
    }
    int end = 0;
    const struct jsonread *jvms = jsonread_get(tree, "jvms");
    for (size_t i = 0; !end && i < jsonread_len(jvms); i++) {
        const struct jsonread *jvm = jsonread_at(jvms, i);
        const struct jsonread *deadlock = jsonread_get(jvm, "deadlock");
        pid_t pid = (pid_t)jsonread_int(jsonread_get(jvm, "pid"), 0);
        /* a shared collector (--socket) lists other JVMs too: only those of the command's group */
        if (jsonread_is_null(deadlock) || pid <= 0 || (!w->own_collector && getpgid(pid) != pgid))
            continue;
        fprintf(stderr,
                "vtpin run: JVM %d: DEADLOCK (%s) found live, which never ends by itself: ending COMMAND (SIGTERM, "
                "SIGKILL after the grace); --no-end-on-deadlock lets it run\n",
                (int)pid, jsonread_str(jsonread_get(deadlock, "kind"), "?"));
        end = 1;
    }
    jsonread_free(tree);
    free(json);
    return end;
}
