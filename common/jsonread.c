#include "jsonread.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

struct parser {
    const char *p, *end, *start;
    char *err;
    size_t errlen;
    int failed;
};

static int fail(struct parser *ps, const char *what)
{
    if (!ps->failed)
        snprintf(ps->err, ps->errlen, "invalid JSON at offset %zu: %s", (size_t)(ps->p - ps->start), what);
    ps->failed = 1;
    return -EINVAL;
}

static void skip_ws(struct parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

static int literal(struct parser *ps, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0)
        return fail(ps, "unexpected character");
    ps->p += n;
    return 0;
}

static int hex4(struct parser *ps, uint32_t *out)
{
    if (ps->end - ps->p < 4)
        return fail(ps, "short \\u escape");
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        char c = *ps->p++;
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (uint32_t)(c - 'A' + 10);
        else
            return fail(ps, "bad \\u escape");
    }
    *out = v;
    return 0;
}

static int parse_string(struct parser *ps, char **out)
{
    ps->p++; /* the opening quote */
    size_t cap = 16, len = 0;
    char *s = malloc(cap);
    if (!s)
        return -ENOMEM;
    for (;;) {
        if (ps->p >= ps->end) {
            free(s);
            return fail(ps, "unterminated string");
        }
        char piece[4];
        size_t n = 0;
        unsigned char c = (unsigned char)*ps->p;
        if (c == '"') {
            ps->p++;
            break;
        }
        if (c < 0x20) {
            free(s);
            return fail(ps, "control character in a string");
        }
        if (c != '\\') {
            piece[0] = (char)c;
            n = 1;
            ps->p++;
        } else {
            ps->p++;
            if (ps->p >= ps->end) {
                free(s);
                return fail(ps, "unterminated escape");
            }
            char e = *ps->p++;
            uint32_t cp = 0;
            switch (e) {
            case '"':
            case '\\':
            case '/':
                cp = (uint32_t)e;
                break;
            case 'b':
                cp = '\b';
                break;
            case 'f':
                cp = '\f';
                break;
            case 'n':
                cp = '\n';
                break;
            case 'r':
                cp = '\r';
                break;
            case 't':
                cp = '\t';
                break;
            case 'u':
                if (hex4(ps, &cp)) {
                    free(s);
                    return -EINVAL;
                }
                if (cp >= 0xD800 && cp < 0xDC00 && ps->end - ps->p >= 6 && ps->p[0] == '\\' && ps->p[1] == 'u') {
                    const char *save = ps->p;
                    uint32_t lo;
                    ps->p += 2;
                    if (hex4(ps, &lo)) {
                        free(s);
                        return -EINVAL;
                    }
                    if (lo >= 0xDC00 && lo < 0xE000)
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    else
                        ps->p = save;
                }
                if (cp >= 0xD800 && cp < 0xE000)
                    cp = UTF8_REPLACEMENT;
                break;
            default:
                free(s);
                return fail(ps, "bad escape");
            }
            if (cp == 0) { /* modified UTF-8, as the JVM names it: the C string stays whole, the NUL shows as \x00 */
                piece[0] = (char)0xC0;
                piece[1] = (char)0x80;
                n = 2;
            } else {
                n = utf8_encode(cp, piece);
            }
        }
        if (len + n + 1 > cap) {
            while (len + n + 1 > cap)
                cap *= 2;
            char *ns = realloc(s, cap);
            if (!ns) {
                free(s);
                return -ENOMEM;
            }
            s = ns;
        }
        memcpy(s + len, piece, n);
        len += n;
    }
    s[len] = '\0';
    *out = s;
    return 0;
}

static int parse_number(struct parser *ps, struct jsonread *v)
{
    const char *q = ps->p;
    int integral = 1;
    if (q < ps->end && *q == '-')
        q++;
    if (q >= ps->end || *q < '0' || *q > '9')
        return fail(ps, "bad number");
    while (q < ps->end && ((*q >= '0' && *q <= '9') || *q == '.' || *q == 'e' || *q == 'E' || *q == '+' || *q == '-')) {
        if (*q == '.' || *q == 'e' || *q == 'E')
            integral = 0;
        q++;
    }
    char buf[64];
    size_t n = (size_t)(q - ps->p);
    if (n >= sizeof(buf))
        return fail(ps, "number too long");
    memcpy(buf, ps->p, n);
    buf[n] = '\0';
    char *endp;
    errno = 0;
    v->type = JSONREAD_NUMBER;
    v->number = strtod(buf, &endp);
    if (*endp)
        return fail(ps, "bad number");
    if (integral) {
        errno = 0;
        long long i = strtoll(buf, &endp, 10);
        if (!errno && !*endp) {
            v->is_int = 1;
            v->integer = i;
        }
    }
    ps->p = q;
    return 0;
}

static int parse_value(struct parser *ps, struct jsonread *v, int depth);

static int add_item(struct jsonread *v, size_t *cap, int with_key)
{
    if (v->count < *cap)
        return 0;
    size_t ncap = *cap ? *cap * 2 : 4;
    struct jsonread *items = realloc(v->items, ncap * sizeof(*items));
    if (!items)
        return -ENOMEM;
    v->items = items;
    if (with_key) {
        char **keys = realloc(v->keys, ncap * sizeof(*keys));
        if (!keys)
            return -ENOMEM;
        v->keys = keys;
    }
    *cap = ncap;
    return 0;
}

static int parse_container(struct parser *ps, struct jsonread *v, int depth, int is_object)
{
    char close = is_object ? '}' : ']';
    size_t cap = 0;
    int rc;
    v->type = is_object ? JSONREAD_OBJECT : JSONREAD_ARRAY;
    ps->p++;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == close) {
        ps->p++;
        return 0;
    }
    for (;;) {
        if ((rc = add_item(v, &cap, is_object)) != 0)
            return rc;
        char *key = NULL;
        if (is_object) {
            skip_ws(ps);
            if (ps->p >= ps->end || *ps->p != '"')
                return fail(ps, "expected a key");
            if ((rc = parse_string(ps, &key)) != 0)
                return rc;
            skip_ws(ps);
            if (ps->p >= ps->end || *ps->p != ':') {
                free(key);
                return fail(ps, "expected ':'");
            }
            ps->p++;
        }
        struct jsonread *item = &v->items[v->count];
        memset(item, 0, sizeof(*item));
        if (is_object)
            v->keys[v->count] = key;
        v->count++; /* counted now so that it is freed on failure */
        if ((rc = parse_value(ps, item, depth + 1)) != 0)
            return rc;
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            continue;
        }
        if (ps->p < ps->end && *ps->p == close) {
            ps->p++;
            return 0;
        }
        return fail(ps, is_object ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static int parse_value(struct parser *ps, struct jsonread *v, int depth)
{
    if (depth > JSONREAD_MAX_DEPTH)
        return fail(ps, "nested too deeply");
    skip_ws(ps);
    if (ps->p >= ps->end)
        return fail(ps, "unexpected end");
    switch (*ps->p) {
    case '{':
        return parse_container(ps, v, depth, 1);
    case '[':
        return parse_container(ps, v, depth, 0);
    case '"':
        v->type = JSONREAD_STRING;
        return parse_string(ps, &v->string);
    case 't':
        v->type = JSONREAD_BOOL;
        v->boolean = 1;
        return literal(ps, "true");
    case 'f':
        v->type = JSONREAD_BOOL;
        return literal(ps, "false");
    case 'n':
        v->type = JSONREAD_NULL;
        return literal(ps, "null");
    default:
        return parse_number(ps, v);
    }
}

static void value_fini(struct jsonread *v)
{
    for (size_t i = 0; i < v->count; i++) {
        value_fini(&v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->string);
}

void jsonread_free(struct jsonread *v)
{
    if (!v)
        return;
    value_fini(v);
    free(v);
}

int jsonread_parse(const char *text, size_t len, struct jsonread **out, char *err, size_t errlen)
{
    struct parser ps = {.p = text, .end = text + len, .start = text, .err = err, .errlen = errlen};
    struct jsonread *v = calloc(1, sizeof(*v));
    if (!v)
        return -ENOMEM;
    int rc = parse_value(&ps, v, 0);
    if (!rc) {
        skip_ws(&ps);
        if (ps.p != ps.end)
            rc = fail(&ps, "trailing characters");
    }
    if (rc) {
        if (rc == -ENOMEM)
            snprintf(err, errlen, "out of memory");
        jsonread_free(v);
        return rc;
    }
    *out = v;
    return 0;
}

const struct jsonread *jsonread_get(const struct jsonread *obj, const char *key)
{
    if (!obj || obj->type != JSONREAD_OBJECT)
        return NULL;
    for (size_t i = 0; i < obj->count; i++)
        if (strcmp(obj->keys[i], key) == 0)
            return &obj->items[i];
    return NULL;
}

const struct jsonread *jsonread_at(const struct jsonread *arr, size_t i)
{
    if (!arr || arr->type != JSONREAD_ARRAY || i >= arr->count)
        return NULL;
    return &arr->items[i];
}

size_t jsonread_len(const struct jsonread *arr)
{
    return arr && arr->type == JSONREAD_ARRAY ? arr->count : 0;
}

int jsonread_is_null(const struct jsonread *v)
{
    return !v || v->type == JSONREAD_NULL;
}

const char *jsonread_str(const struct jsonread *v, const char *dflt)
{
    return v && v->type == JSONREAD_STRING ? v->string : dflt;
}

int64_t jsonread_int(const struct jsonread *v, int64_t dflt)
{
    if (!v || v->type != JSONREAD_NUMBER)
        return dflt;
    if (v->is_int)
        return v->integer;
    if (v->number >= -9.2e18 && v->number <= 9.2e18)
        return (int64_t)v->number;
    return dflt;
}

double jsonread_num(const struct jsonread *v, double dflt)
{
    return v && v->type == JSONREAD_NUMBER ? v->number : dflt;
}

int jsonread_bool(const struct jsonread *v, int dflt)
{
    return v && v->type == JSONREAD_BOOL ? v->boolean : dflt;
}
