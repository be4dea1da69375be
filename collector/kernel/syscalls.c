#include "syscalls.h"

#include <stddef.h>

struct syscall_name {
    long nr;
    const char *name;
};

/* {nr, "name"}, ... from the build's <asm/unistd_64.h> (CMake writes it) */
static const struct syscall_name names[] = {
#include "syscall_names.inc"
    {-1, NULL},
};

const char *syscalls_name(long nr)
{
    if (nr < 0)
        return NULL;
    for (size_t i = 0; names[i].name; i++)
        if (names[i].nr == nr)
            return names[i].name;
    return NULL;
}
