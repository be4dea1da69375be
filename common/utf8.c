#include "utf8.h"

#include <string.h>

static int is_cont(unsigned char c)
{
    return (c & 0xC0) == 0x80;
}

/* A 3-byte encoded surrogate (ED A0..BF xx): returns it, or 0. */
static uint32_t surrogate_at(const unsigned char *s, size_t n)
{
    if (n < 3 || s[0] != 0xED || s[1] < 0xA0 || s[1] > 0xBF || !is_cont(s[2]))
        return 0;
    return 0xD000u | (uint32_t)(s[1] & 0x3F) << 6 | (uint32_t)(s[2] & 0x3F);
}

size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp, int *valid)
{
    unsigned char c = s[0];
    *valid = 1;
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if (c == 0xC0 && n >= 2 && s[1] == 0x80) { /* modified UTF-8 NUL */
        *cp = 0;
        return 2;
    }
    uint32_t hi = surrogate_at(s, n);
    if (hi) {
        uint32_t lo = surrogate_at(s + 3, n - 3);
        if (hi < 0xDC00 && lo >= 0xDC00) {
            *cp = 0x10000u + ((hi - 0xD800u) << 10) + (lo - 0xDC00u);
            return 6;
        }
        *valid = 0; /* a lone surrogate */
        *cp = UTF8_REPLACEMENT;
        return 3;
    }
    size_t len;
    unsigned char lo = 0x80, hi_b = 0xBF; /* allowed range of the second byte */
    uint32_t v;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
        v = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        v = c & 0x0F;
        if (c == 0xE0)
            lo = 0xA0;
        else if (c == 0xED)
            hi_b = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        v = c & 0x07;
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi_b = 0x8F;
    } else {
        *valid = 0;
        *cp = UTF8_REPLACEMENT;
        return 1;
    }
    size_t i = 1;
    for (; i < len; i++) {
        if (i >= n)
            break;
        unsigned char b = s[i];
        if (i == 1 ? (b < lo || b > hi_b) : !is_cont(b))
            break;
        v = v << 6 | (b & 0x3F);
    }
    if (i < len) {
        *valid = 0;
        *cp = UTF8_REPLACEMENT;
        return i;
    }
    *cp = v;
    return len;
}

size_t utf8_encode(uint32_t cp, char out[4])
{
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        cp = UTF8_REPLACEMENT;
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* The printable form of the character at p (n > 0 bytes) into buf; returns
 * its length and sets *used to the bytes of p it stands for. */
static size_t printable_at(const unsigned char *p, size_t n, size_t *used, char buf[8])
{
    uint32_t cp;
    int valid;
    *used = utf8_decode(p, n, &cp, &valid);
    if (valid && (cp < 0x20 || (cp >= 0x7F && cp < 0xA0)))
        return (size_t)snprintf(buf, 8, "\\x%02x", (unsigned)cp);
    /* line and paragraph separators end a line in some viewers; bidirectional overrides reorder what follows */
    if (valid && (cp == 0x2028 || cp == 0x2029 || (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069)))
        return (size_t)snprintf(buf, 8, "\\u%04x", (unsigned)cp);
    return utf8_encode(valid ? cp : UTF8_REPLACEMENT, buf);
}

void utf8_write_printable(FILE *out, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    while (n > 0) {
        char buf[8];
        size_t used, len = printable_at(p, n, &used, buf);
        fwrite(buf, 1, len, out);
        p += used;
        n -= used;
    }
}

char *utf8_printable(const char *s, char *out, size_t cap)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s), o = 0;
    while (n > 0) {
        char buf[8];
        size_t used, len = printable_at(p, n, &used, buf);
        if (o + len >= cap)
            break;
        memcpy(out + o, buf, len);
        o += len;
        p += used;
        n -= used;
    }
    out[o] = '\0';
    return out;
}
