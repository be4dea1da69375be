#include "ztattach.h"

#include <errno.h>
#include <fnmatch.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#define MINUTE_NS (60 * 1000000000LL)

extern char **environ;

int ztattach_allowed(const struct ztattach_config *c, struct ztattach_limiter *l, const char *cmdline, int64_t now,
                     char *why, size_t whylen)
{
    static const char *const refusing[] = {"-XX:-EnableDynamicAgentLoading", "-XX:+DisableAttachMechanism"};
    for (size_t i = 0; i < sizeof(refusing) / sizeof(refusing[0]); i++) {
        const char *at = strstr(cmdline, refusing[i]);
        size_t len = strlen(refusing[i]);
        if (at && (at == cmdline || at[-1] == ' ') && (at[len] == '\0' || at[len] == ' ')) {
            snprintf(why, whylen, "it refuses dynamic agents (%s): not attached", refusing[i]);
            return -EPERM;
        }
    }
    if (c->deny && fnmatch(c->deny, cmdline, 0) == 0) {
        snprintf(why, whylen, "its command line matches --attach-deny: not attached");
        return -EPERM;
    }
    if (c->only && fnmatch(c->only, cmdline, 0) != 0) {
        snprintf(why, whylen, "its command line does not match --attach-only: not attached");
        return -EPERM;
    }
    unsigned kept = 0; /* the attaches of the last minute */
    for (unsigned i = 0; i < l->n; i++)
        if (now - l->at[i] < MINUTE_NS)
            l->at[kept++] = l->at[i];
    l->n = kept;
    unsigned cap = c->per_minute < 1                         ? 1
                   : c->per_minute > ZTATTACH_PER_MINUTE_MAX ? ZTATTACH_PER_MINUTE_MAX
                                                             : c->per_minute;
    if (l->n >= cap) {
        snprintf(why, whylen, "%u attaches in the last minute already (at most %u): later", l->n, cap);
        return -EBUSY;
    }
    l->at[l->n++] = now;
    return 0;
}

pid_t ztattach_spawn(const struct ztattach_config *c, int32_t pid)
{
    char pid_text[16], options[4200];
    snprintf(pid_text, sizeof(pid_text), "%d", pid);
    if ((size_t)snprintf(options, sizeof(options), "collector=%s", c->socket) >= sizeof(options))
        return -ENAMETOOLONG;
    char *argv[] = {"vtpin", "attach", pid_text, options, "--timeout", "10s", NULL};
    posix_spawnattr_t attr;
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    int rc = posix_spawnattr_init(&attr);
    if (rc)
        return -rc;
    /* the collector blocks its signals for its signalfd: the child gets a clean mask and defaults */
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    pid_t child;
    rc = posix_spawn(&child, c->exe, NULL, &attr, argv, environ);
    posix_spawnattr_destroy(&attr);
    return rc ? -rc : child;
}

int ztattach_reap(pid_t child, int *status)
{
    pid_t r = waitpid(child, status, WNOHANG);
    if (r < 0)
        return -errno;
    return r == child;
}
