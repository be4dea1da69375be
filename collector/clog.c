#include "clog.h"

#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "common/utf8.h"

static int verbose;
static FILE *output;

void clog_set_verbose(int v)
{
    verbose = v;
}

int clog_verbose(void)
{
    return verbose;
}

void clog_set_output(FILE *out)
{
    output = out;
}

static void clog_line(const char *level, const char *fmt, va_list ap)
{
    FILE *out = output ? output : stderr;
    struct timespec ts;
    struct tm tm;
    char when[32] = "";
    if (clock_gettime(CLOCK_REALTIME, &ts) == 0 && gmtime_r(&ts.tv_sec, &tm)) {
        size_t k = strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
        snprintf(when + k, sizeof(when) - k, ".%03ldZ", ts.tv_nsec / 1000000);
    }
    char text[2048];
    vsnprintf(text, sizeof(text), fmt, ap);
    fprintf(out, "%s vtpin collector: %s%s%s\n", when, level, *level ? ": " : "", text);
    fflush(out);
}

#define CLOG_FN(name, level, cond)                                                                                     \
    void name(const char *fmt, ...)                                                                                    \
    {                                                                                                                  \
        if (!(cond))                                                                                                   \
            return;                                                                                                    \
        va_list ap;                                                                                                    \
        va_start(ap, fmt);                                                                                             \
        clog_line(level, fmt, ap);                                                                                     \
        va_end(ap);                                                                                                    \
    }

CLOG_FN(clog_debug, "debug", verbose)
CLOG_FN(clog_info, "", 1)
CLOG_FN(clog_warn, "warning", 1)
CLOG_FN(clog_error, "error", 1)

char *clog_printable(const char *s, char *out, size_t cap)
{
    if (cap == 0)
        return out;
    if (!s)
        s = "-";
    size_t o = 0, n = strlen(s);
    const unsigned char *p = (const unsigned char *)s;
    while (n > 0) {
        uint32_t cp;
        int valid;
        size_t used = utf8_decode(p, n, &cp, &valid);
        char piece[16];
        size_t len;
        if (!valid) {
            len = (size_t)snprintf(piece, sizeof(piece), "\\x%02x", p[0]);
            used = 1;
        } else if (cp == '\\') {
            len = (size_t)snprintf(piece, sizeof(piece), "\\\\");
        } else if (cp == '\n') {
            len = (size_t)snprintf(piece, sizeof(piece), "\\n");
        } else if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA0) || (cp >= 0x202A && cp <= 0x202E) ||
                   (cp >= 0x2066 && cp <= 0x2069)) {
            len = (size_t)snprintf(piece, sizeof(piece), cp < 0x100 ? "\\x%02x" : "\\u%04x", (unsigned)cp);
        } else {
            len = utf8_encode(cp, piece);
        }
        if (o + len + 4 > cap) { /* room for "..." and the NUL */
            if (cap >= 4) {
                memcpy(out + (o <= cap - 4 ? o : cap - 4), "...", 4);
            } else {
                out[0] = '\0';
            }
            return out;
        }
        memcpy(out + o, piece, len);
        o += len;
        p += used;
        n -= used;
    }
    out[o] = '\0';
    return out;
}
