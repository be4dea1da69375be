/* Taking the target JVM's identity for the attach, and giving it back. */
#include "attach_creds.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int attach_creds_become(const struct attach_target *t, struct attach_creds *saved, char *err, size_t cap)
{
    saved->euid = geteuid();
    saved->egid = getegid();
    saved->switched = 0;
    if (saved->euid == 0 && t->euid == 0)
        return 0; /* the JVM accepts root whatever its group */
    if (saved->euid == t->euid && saved->egid == t->egid)
        return 0;
    if (saved->euid != 0) {
        if (saved->euid != t->euid && t->euid == 0)
            attach_say(err, cap,
                       "permission: process %d runs as root and we are uid %u; a JVM answers only its own user "
                       "(or root): run vtpin attach as root",
                       (int)t->pid, (unsigned)saved->euid);
        else if (saved->euid != t->euid)
            attach_say(err, cap,
                       "permission: process %d runs as uid %u and we are uid %u; a JVM answers only its own user "
                       "(or root): run vtpin attach as uid %u or as root",
                       (int)t->pid, (unsigned)t->euid, (unsigned)saved->euid, (unsigned)t->euid);
        else
            attach_say(err, cap,
                       "permission: process %d runs with gid %u and we have gid %u; a JVM answers only its own uid "
                       "and gid (or root): run vtpin attach with gid %u or as root",
                       (int)t->pid, (unsigned)t->egid, (unsigned)saved->egid, (unsigned)t->egid);
        return -EPERM;
    }
    /* Like jattach: group first, while we still may. */
    if (saved->egid != t->egid && setegid(t->egid) != 0) {
        int e = errno;
        attach_say(err, cap, "permission: cannot take the JVM's gid %u: %s", (unsigned)t->egid, strerror(e));
        return -e;
    }
    if (seteuid(t->euid) != 0) {
        int e = errno;
        if (setegid(saved->egid) != 0)
            abort(); /* cannot happen: we are still root here; never go on with the wrong identity */
        attach_say(err, cap, "permission: cannot take the JVM's uid %u: %s", (unsigned)t->euid, strerror(e));
        return -e;
    }
    saved->switched = 1;
    return 0;
}

void attach_creds_restore(const struct attach_creds *saved)
{
    if (!saved->switched)
        return;
    /* Back to root first: only root may take its group back. */
    if (seteuid(saved->euid) != 0 || setegid(saved->egid) != 0) {
        fprintf(stderr, "vtpin attach: cannot take back uid %u / gid %u: %s\n", (unsigned)saved->euid,
                (unsigned)saved->egid, strerror(errno));
        abort(); /* never go on with the wrong identity */
    }
}
