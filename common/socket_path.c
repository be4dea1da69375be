#include "socket_path.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

#define SUN_PATH_CAP sizeof(((struct sockaddr_un *)0)->sun_path)

size_t socket_path_max(void)
{
    return SUN_PATH_CAP - 1;
}

int socket_path_fits(const char *path)
{
    return strlen(path) < SUN_PATH_CAP ? 0 : -ENAMETOOLONG;
}

int socket_path_default(char *out, size_t cap)
{
    const char *runtime = getenv("XDG_RUNTIME_DIR");
    int n;
    if (runtime && runtime[0] == '/')
        n = snprintf(out, cap, "%s/vtpin/%s", runtime, SOCKET_PATH_NAME);
    else
        n = snprintf(out, cap, "/tmp/vtpin-%u/%s", (unsigned)geteuid(), SOCKET_PATH_NAME);
    if (n < 0 || (size_t)n >= cap || (size_t)n >= SUN_PATH_CAP)
        return -ENAMETOOLONG;
    return 0;
}
