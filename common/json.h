/* A small streaming JSON writer: objects, arrays, strings, integers, bools,
 * null. Indents two spaces per level; a container opened "inline" (and all
 * it holds) is written on one line. Strings are escaped so the output is
 * valid JSON whatever the input: quotes, backslashes and control characters
 * (C0, DEL, C1; a NUL, modified UTF-8's C0 80, as \u0000) are escaped,
 * invalid UTF-8 becomes \ufffd, the JVM's modified UTF-8 (C0 80, surrogate
 * pairs) is decoded. The caller is trusted to nest correctly (keys inside
 * objects only); misuse is caught by assertions. */
#ifndef VTPIN_COMMON_JSON_H
#define VTPIN_COMMON_JSON_H

#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 32

struct json {
    FILE *out;
    unsigned opts; /* JSON_COMPACT, JSON_EMBED_HTML (json_init_opt) */
    int depth;
    int after_key;
    unsigned char is_inline[JSON_MAX_DEPTH];
    unsigned char nonempty[JSON_MAX_DEPTH];
    char kind[JSON_MAX_DEPTH]; /* '{' or '[' */
};

void json_init(struct json *j, FILE *out);
/* json_init with options: JSON_COMPACT, and JSON_EMBED_HTML for every key and string (both defined below). */
void json_init_opt(struct json *j, FILE *out, unsigned opts);
/* Ends the document with a newline (none when JSON_COMPACT) and flushes; returns 0 or -errno if a write failed. */
int json_finish(struct json *j);

void json_object_begin(struct json *j);
void json_object_begin_inline(struct json *j);
void json_object_end(struct json *j);
void json_array_begin(struct json *j);
void json_array_begin_inline(struct json *j);
void json_array_end(struct json *j);

void json_key(struct json *j, const char *key);
void json_string(struct json *j, const char *s); /* NULL writes null */
void json_int(struct json *j, int64_t v);
void json_uint(struct json *j, uint64_t v);
/* v / 1000 with exactly three decimals, e.g. 1234567 as 1234.567 (microseconds from nanoseconds). */
void json_milli(struct json *j, int64_t v);
void json_bool(struct json *j, int v);
void json_null(struct json *j);

/* key + value shorthands */
void json_kv_string(struct json *j, const char *key, const char *s);
void json_kv_int(struct json *j, const char *key, int64_t v);
void json_kv_uint(struct json *j, const char *key, uint64_t v);
void json_kv_bool(struct json *j, const char *key, int v);
void json_kv_null(struct json *j, const char *key);

/* Writes s as a JSON string literal (quotes included) to out. */
void json_write_string(FILE *out, const char *s);

/* An option of json_write_string_opt: also '<', '>' and '&' as \u003c, \u003e, \u0026: JSON inside an HTML <script>
 * element then cannot end it, open a comment or be parsed as markup. */
#define JSON_EMBED_HTML 1u
/* An option of json_init_opt: no space or newline anywhere (not even at the end), e.g. {"a":[1,2]}: for data
 * embedded in a page, whose size matters more than its looks. */
#define JSON_COMPACT 2u

/* json_write_string with options (JSON_EMBED_HTML). U+2028 and U+2029 are always
 * escaped (\u2028, \u2029): JavaScript before ES2019 ends a line there. */
void json_write_string_opt(FILE *out, const char *s, unsigned opts);

#endif
