/* A small JSON reader for what the collector answers (docs/collector.md):
 * parses a whole document into a tree; accessors are NULL-safe so a missing
 * field reads as its default. Integers keep all 64 bits. Depth is limited
 * (JSONREAD_MAX_DEPTH); strings are unescaped to UTF-8 (\u0000 becomes
 * C0 80, modified UTF-8's NUL as the JVM names it, so C strings stay whole and
 * utf8_write_printable shows it as \x00). */
#ifndef VTPIN_COMMON_JSONREAD_H
#define VTPIN_COMMON_JSONREAD_H

#include <stddef.h>
#include <stdint.h>

#define JSONREAD_MAX_DEPTH 64

enum jsonread_type { JSONREAD_NULL, JSONREAD_BOOL, JSONREAD_NUMBER, JSONREAD_STRING, JSONREAD_ARRAY, JSONREAD_OBJECT };

struct jsonread {
    enum jsonread_type type;
    int boolean;
    int is_int; /* a number written without fraction or exponent that fits int64 */
    int64_t integer;
    double number;
    char *string;
    size_t count; /* array items or object members */
    struct jsonread *items;
    char **keys; /* objects */
};

/* Parses text[len]. 0 with *out, or -EINVAL with err[] naming the offset, or -ENOMEM. */
int jsonread_parse(const char *text, size_t len, struct jsonread **out, char *err, size_t errlen);
void jsonread_free(struct jsonread *v);

const struct jsonread *jsonread_get(const struct jsonread *obj, const char *key); /* NULL if absent */
const struct jsonread *jsonread_at(const struct jsonread *arr, size_t i);
size_t jsonread_len(const struct jsonread *arr);
int jsonread_is_null(const struct jsonread *v); /* absent counts as null */

const char *jsonread_str(const struct jsonread *v, const char *dflt);
int64_t jsonread_int(const struct jsonread *v, int64_t dflt);
double jsonread_num(const struct jsonread *v, double dflt);
int jsonread_bool(const struct jsonread *v, int dflt);

#endif
