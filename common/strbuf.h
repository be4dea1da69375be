/* A growing string, printf-appended, for answers built in memory (the collector's metrics page,
 * its alert lines). Out of memory sticks: later appends do nothing and oom stays set, so a
 * builder checks once at the end. */
#ifndef VTPIN_COMMON_STRBUF_H
#define VTPIN_COMMON_STRBUF_H

#include <stddef.h>

struct strbuf {
    char *s; /* NUL-terminated once anything was appended; NULL before */
    size_t len, cap;
    int oom;
};

void strbuf_printf(struct strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Frees the string and empties b. */
void strbuf_fini(struct strbuf *b);

#endif
