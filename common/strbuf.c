#include "strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void strbuf_printf(struct strbuf *b, const char *fmt, ...)
{
    while (!b->oom) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->oom = 1;
            return;
        }
        if (b->s && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t ncap = b->cap ? b->cap : 256;
        while (ncap <= b->len + (size_t)n)
            ncap *= 2;
        char *ns = realloc(b->s, ncap);
        if (!ns) {
            b->oom = 1;
            return;
        }
        b->s = ns;
        b->cap = ncap;
    }
}

void strbuf_fini(struct strbuf *b)
{
    free(b->s);
    b->s = NULL;
    b->len = b->cap = 0;
    b->oom = 0;
}
