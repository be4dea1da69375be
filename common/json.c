#include "json.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "utf8.h"

void json_init(struct json *j, FILE *out)
{
    json_init_opt(j, out, 0);
}

void json_init_opt(struct json *j, FILE *out, unsigned opts)
{
    memset(j, 0, sizeof(*j));
    j->out = out;
    j->opts = opts;
}

int json_finish(struct json *j)
{
    assert(j->depth == 0 && !j->after_key);
    if (!(j->opts & JSON_COMPACT))
        fputc('\n', j->out);
    if (fflush(j->out) != 0 || ferror(j->out))
        return errno ? -errno : -EIO;
    return 0;
}

static void newline_indent(struct json *j, int depth)
{
    fputc('\n', j->out);
    for (int i = 0; i < depth; i++)
        fputs("  ", j->out);
}

/* Separator and indentation before a value or a key. */
static void before_value(struct json *j, int is_key)
{
    if (j->after_key) {
        assert(!is_key);
        j->after_key = 0;
        return;
    }
    if (j->depth == 0)
        return;
    int d = j->depth - 1;
    assert(is_key == (j->kind[d] == '{'));
    (void)is_key;
    if (j->nonempty[d])
        fputc(',', j->out);
    if (j->opts & JSON_COMPACT) {
        /* nothing between values */
    } else if (j->is_inline[d]) {
        if (j->nonempty[d])
            fputc(' ', j->out);
    } else {
        newline_indent(j, j->depth);
    }
    j->nonempty[d] = 1;
}

static void open_container(struct json *j, char kind, int is_inline)
{
    before_value(j, 0);
    assert(j->depth < JSON_MAX_DEPTH);
    int parent_inline = j->depth > 0 && j->is_inline[j->depth - 1];
    j->kind[j->depth] = kind;
    j->is_inline[j->depth] = (unsigned char)(is_inline || parent_inline);
    j->nonempty[j->depth] = 0;
    j->depth++;
    fputc(kind, j->out);
}

static void close_container(struct json *j, char kind)
{
    assert(j->depth > 0 && j->kind[j->depth - 1] == kind && !j->after_key);
    j->depth--;
    if (j->nonempty[j->depth] && !j->is_inline[j->depth] && !(j->opts & JSON_COMPACT))
        newline_indent(j, j->depth);
    fputc(kind == '{' ? '}' : ']', j->out);
}

void json_object_begin(struct json *j)
{
    open_container(j, '{', 0);
}

void json_object_begin_inline(struct json *j)
{
    open_container(j, '{', 1);
}

void json_object_end(struct json *j)
{
    close_container(j, '{');
}

void json_array_begin(struct json *j)
{
    open_container(j, '[', 0);
}

void json_array_begin_inline(struct json *j)
{
    open_container(j, '[', 1);
}

void json_array_end(struct json *j)
{
    close_container(j, '[');
}

/* An ASCII byte written as it is. */
static int json_plain(unsigned char c, unsigned opts)
{
    if (c < 0x20 || c >= 0x7F || c == '"' || c == '\\')
        return 0;
    return !(opts & JSON_EMBED_HTML) || (c != '<' && c != '>' && c != '&');
}

void json_write_string(FILE *out, const char *s)
{
    json_write_string_opt(out, s, 0);
}

void json_write_string_opt(FILE *out, const char *s, unsigned opts)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    fputc('"', out);
    while (n > 0) {
        size_t plain = 0; /* a run of printable ASCII needing no escape goes out in one write */
        while (plain < n && json_plain(p[plain], opts))
            plain++;
        if (plain > 0) {
            fwrite(p, 1, plain, out);
            p += plain;
            n -= plain;
            continue;
        }
        uint32_t cp;
        int valid;
        size_t used = utf8_decode(p, n, &cp, &valid);
        if (!valid) {
            fputs("\\ufffd", out);
        } else if (cp == '"') {
            fputs("\\\"", out);
        } else if (cp == '\\') {
            fputs("\\\\", out);
        } else if (cp == '\n') {
            fputs("\\n", out);
        } else if (cp == '\r') {
            fputs("\\r", out);
        } else if (cp == '\t') {
            fputs("\\t", out);
        } else if (cp == '\b') {
            fputs("\\b", out);
        } else if (cp == '\f') {
            fputs("\\f", out);
        } else if (cp < 0x20 || (cp >= 0x7F && cp < 0xA0) || cp == 0x2028 || cp == 0x2029 ||
                   ((opts & JSON_EMBED_HTML) && (cp == '<' || cp == '>' || cp == '&'))) {
            fprintf(out, "\\u%04x", (unsigned)cp);
        } else {
            char buf[4];
            fwrite(buf, 1, utf8_encode(cp, buf), out);
        }
        p += used;
        n -= used;
    }
    fputc('"', out);
}

void json_key(struct json *j, const char *key)
{
    before_value(j, 1);
    json_write_string_opt(j->out, key, j->opts & JSON_EMBED_HTML);
    fputs(j->opts & JSON_COMPACT ? ":" : ": ", j->out);
    j->after_key = 1;
}

void json_string(struct json *j, const char *s)
{
    before_value(j, 0);
    if (s)
        json_write_string_opt(j->out, s, j->opts & JSON_EMBED_HTML);
    else
        fputs("null", j->out);
}

void json_int(struct json *j, int64_t v)
{
    before_value(j, 0);
    fprintf(j->out, "%" PRId64, v);
}

void json_uint(struct json *j, uint64_t v)
{
    before_value(j, 0);
    fprintf(j->out, "%" PRIu64, v);
}

void json_milli(struct json *j, int64_t v)
{
    before_value(j, 0);
    if (v < 0) {
        fputc('-', j->out);
        v = v == INT64_MIN ? INT64_MAX : -v;
    }
    fprintf(j->out, "%" PRId64 ".%03" PRId64, v / 1000, v % 1000);
}

void json_bool(struct json *j, int v)
{
    before_value(j, 0);
    fputs(v ? "true" : "false", j->out);
}

void json_null(struct json *j)
{
    before_value(j, 0);
    fputs("null", j->out);
}

void json_kv_string(struct json *j, const char *key, const char *s)
{
    json_key(j, key);
    json_string(j, s);
}

void json_kv_int(struct json *j, const char *key, int64_t v)
{
    json_key(j, key);
    json_int(j, v);
}

void json_kv_uint(struct json *j, const char *key, uint64_t v)
{
    json_key(j, key);
    json_uint(j, v);
}

void json_kv_bool(struct json *j, const char *key, int v)
{
    json_key(j, key);
    json_bool(j, v);
}

void json_kv_null(struct json *j, const char *key)
{
    json_key(j, key);
    json_null(j);
}
