#include "io.h"

#include <errno.h>
#include <unistd.h>

int io_write_all(int fd, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (w == 0)
            return -ENOSPC;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}
