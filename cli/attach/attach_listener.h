/* The target JVM's attach listener: starting it, connecting to it, one
 * request and its reply (the bytes come from attach_protocol.h). Functions
 * return an fd, 0 or -errno; err[cap] gets one line saying what failed. */
#ifndef VTPIN_CLI_ATTACH_LISTENER_H
#define VTPIN_CLI_ATTACH_LISTENER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "attach_protocol.h"

/* Connects to the target's attach listener, starting it first when its socket
 * is missing (trigger file + SIGQUIT, polled for up to timeout_ns, the trigger
 * removed afterwards). The fd, or -errno with err saying what failed. Progress
 * lines go to log when it is not NULL. */
int attach_listener_connect(const struct attach_target *t, int64_t timeout_ns, FILE *log, char *err, size_t cap);

/* Sends one request on fd and reads the whole reply (until EOF, at most
 * ATTACH_REPLY_MAX bytes, within timeout_ns) into *reply (malloc'ed,
 * NUL-terminated; *len without the NUL). 0 or -errno with err. */
int attach_listener_execute(int fd, const char *cmd, const char *const *args, size_t nargs, int64_t timeout_ns,
                            char **reply, size_t *len, char *err, size_t cap);

#endif
