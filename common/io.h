/* Writing a whole buffer to a descriptor. Pure (no allocation, no locks):
 * the agent's recording writer and the collector's recorder share it. */
#ifndef VTPIN_COMMON_IO_H
#define VTPIN_COMMON_IO_H

#include <stddef.h>
#include <stdint.h>

/* Writes p[n] to fd, again after EINTR and short writes. 0, -errno, or
 * -ENOSPC when write(2) wrote nothing (so a full file system cannot loop). */
int io_write_all(int fd, const uint8_t *p, size_t n);

#endif
