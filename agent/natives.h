/* Where each native method is implemented: jmethodID -> bound address,
 * filled by the NativeMethodBind event, read by the writer to name the
 * library (dladdr). Fixed-size, lock-free; full means "unknown library". */
#ifndef VTPIN_NATIVES_H
#define VTPIN_NATIVES_H

#include <stddef.h>

int natives_init(unsigned capacity);
void natives_fini(void);
void natives_put(const void *method, void *address);
void *natives_get(const void *method);
/* Library path for a bound address, or NULL. */
const char *natives_library(void *address);

#endif
