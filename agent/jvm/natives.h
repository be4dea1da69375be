/* Where each native method is implemented: jmethodID -> bound address,
 * filled by the NativeMethodBind event, read by the writer to name the
 * library (dladdr). Fixed-size, lock-free; full means "unknown library". */
#ifndef VTPIN_NATIVES_H
#define VTPIN_NATIVES_H

#include <stddef.h>

int natives_init(unsigned capacity);
void natives_put(const void *method, void *address);
void *natives_get(const void *method);
/* Library path for a bound address, or NULL. */
const char *natives_library(void *address);
/* Library exporting the JNI symbol of class.method (dotted class name), found
 * among the loaded objects: for methods bound before vtpin saw the bind
 * (dynamic attach) or whose bind event it missed. NULL when none does. */
const char *natives_library_by_name(const char *dotted_class, const char *method);
/* JNI short name: "Java_" + mangled class + "_" + mangled method. Returns 0 or -ENAMETOOLONG. */
int natives_jni_name(const char *dotted_class, const char *method, char *out, size_t cap);

#endif
