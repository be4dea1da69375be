/* The JVM answers only peers with its own effective uid and gid (or root):
 * taking its ids for the attach and giving them back. */
#ifndef VTPIN_CLI_ATTACH_CREDS_H
#define VTPIN_CLI_ATTACH_CREDS_H

#include <stddef.h>
#include <sys/types.h>

#include "attach_protocol.h"

struct attach_creds {
    uid_t euid;
    gid_t egid;
    int switched;
};

/* Takes the target's effective uid/gid when we are root and it is not (so the
 * trigger file is its own and the JVM sees its own user at the socket);
 * -EPERM (err says why) when we are not root and ids differ. */
int attach_creds_become(const struct attach_target *t, struct attach_creds *saved, char *err, size_t cap);

/* Gives back the ids attach_creds_become took (aborts when it cannot: never
 * go on with the wrong identity). */
void attach_creds_restore(const struct attach_creds *saved);

#endif
