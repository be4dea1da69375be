#include "rotate.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

int rotate_names(const char *path, unsigned keep)
{
    char from[4096 + 16], to[4096 + 16];
    snprintf(to, sizeof(to), "%s.%u", path, keep);
    if (unlink(to) != 0) {
        /* none yet, or not ours to remove: the rename below then fails too and the chain stops there */
    }
    for (unsigned i = keep; i > 1; i--) {
        snprintf(from, sizeof(from), "%s.%u", path, i - 1);
        snprintf(to, sizeof(to), "%s.%u", path, i);
        if (rename(from, to) != 0) {
            /* not there (fewer rotations so far), or not ours */
        }
    }
    snprintf(to, sizeof(to), "%s.1", path);
    return rename(path, to) == 0 ? 0 : -errno;
}

int rotate_back(const char *path)
{
    char first[4096 + 16];
    snprintf(first, sizeof(first), "%s.1", path);
    return rename(first, path) == 0 ? 0 : -errno;
}
