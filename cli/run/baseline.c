#include "baseline.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/jsonread.h"
#include "report.h"
#include "wire_names.h"

#define NO_STACK "(no stack)"

/* Past the digits s starts with. */
static const char *skip_digits(const char *s)
{
    while (isdigit((unsigned char)*s))
        s++;
    return s;
}

void baseline_class_name(const char *in, char *out, size_t cap)
{
    static const char *const numbered[] = {"$$Lambda$", "$Proxy", "jdk.proxy"};
    size_t o = 0;
    for (const char *p = in; *p && o + 1 < cap;) {
        if (strncmp(p, "/0x", 3) == 0) /* a hidden class's address: Foo$$Lambda/0x0000..., LambdaForm$MH/0x... */
            break;
        size_t matched = 0;
        for (size_t i = 0; i < sizeof(numbered) / sizeof(numbered[0]) && !matched; i++) {
            size_t len = strlen(numbered[i]);
            if (strncmp(p, numbered[i], len) == 0 && isdigit((unsigned char)p[len]))
                matched = len;
        }
        if (matched) {
            /* "$$Lambda$12" keeps "$$Lambda"; "$Proxy12" "$Proxy"; "jdk.proxy3" "jdk.proxy" */
            size_t keep = p[matched - 1] == '$' ? matched - 1 : matched;
            for (size_t k = 0; k < keep && o + 1 < cap; k++)
                out[o++] = p[k];
            p = skip_digits(p + matched);
            continue;
        }
        out[o++] = *p++;
    }
    out[o] = '\0';
}

static const char *base_name(const char *path)
{
    const char *slash = path ? strrchr(path, '/') : NULL;
    return slash ? slash + 1 : path;
}

/* Pin p's site, in the caller's buffers (class_name[512]). */
static void site_of(const struct recording_pin *p, char *class_name, const char **method, const char **library)
{
    const struct recording_method *m =
        p->stack && p->has_culprit && p->culprit < p->stack->count ? p->stack->frames[p->culprit].method : NULL;
    if (m) {
        baseline_class_name(m->class_name, class_name, 512);
        *method = m->name;
    } else {
        snprintf(class_name, 512, "%s", NO_STACK);
        *method = "";
    }
    const struct recording_downcall *dc = recording_pin_downcall(p);
    const char *lib = dc && dc->library ? dc->library : m ? m->library : NULL;
    *library = lib ? base_name(lib) : "";
}

static int by_site(const void *a, const void *b)
{
    const struct baseline_site *x = a, *y = b;
    int c = strcmp(x->class_name, y->class_name);
    if (!c)
        c = strcmp(x->method, y->method);
    if (!c)
        c = strcmp(x->reason, y->reason);
    return c ? c : strcmp(x->library, y->library);
}

static struct baseline_site *lookup(const struct baseline *b, const char *class_name, const char *method,
                                    const char *reason, const char *library)
{
    struct baseline_site key = {.class_name = (char *)class_name,
                                .method = (char *)method,
                                .reason = (char *)reason,
                                .library = (char *)library};
    if (b->sorted)
        return b->n ? bsearch(&key, b->sites, b->n, sizeof(*b->sites), by_site) : NULL;
    for (size_t i = 0; i < b->n; i++)
        if (by_site(&b->sites[i], &key) == 0)
            return &b->sites[i];
    return NULL;
}

/* A new site of b, its strings copied; NULL when out of memory. */
static struct baseline_site *append(struct baseline *b, const char *class_name, const char *method, const char *reason,
                                    const char *library)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 16;
        struct baseline_site *grown = realloc(b->sites, cap * sizeof(*grown));
        if (!grown)
            return NULL;
        b->sites = grown;
        b->cap = cap;
    }
    struct baseline_site *s = &b->sites[b->n];
    *s = (struct baseline_site){.class_name = strdup(class_name),
                                .method = strdup(method),
                                .reason = strdup(reason),
                                .library = strdup(library)};
    if (!s->class_name || !s->method || !s->reason || !s->library) {
        free(s->class_name);
        free(s->method);
        free(s->reason);
        free(s->library);
        return NULL;
    }
    b->n++;
    b->sorted = 0;
    return s;
}

int baseline_add_pins(struct baseline *b, const struct recording_pin *p, uint64_t n)
{
    char class_name[512];
    const char *method, *library, *reason = wire_reason_name(p->reason);
    site_of(p, class_name, &method, &library);
    struct baseline_site *s = lookup(b, class_name, method, reason, library);
    if (!s && !(s = append(b, class_name, method, reason, library)))
        return -ENOMEM;
    if (!s->example_at && p->stack && p->has_culprit && p->culprit < p->stack->count) {
        char at[512];
        if (!(s->example_at = strdup(report_format_frame(&p->stack->frames[p->culprit], at, sizeof(at)))))
            return -ENOMEM;
    }
    s->pins += n;
    return 0;
}

void baseline_sort(struct baseline *b)
{
    if (b->n > 1)
        qsort(b->sites, b->n, sizeof(*b->sites), by_site);
    b->sorted = 1;
}

const struct baseline_site *baseline_find(const struct baseline *b, const struct baseline_site *s)
{
    return lookup(b, s->class_name, s->method, s->reason, s->library);
}

const struct baseline_site *baseline_site_of(const struct baseline *b, const struct recording_pin *p)
{
    char class_name[512];
    const char *method, *library;
    site_of(p, class_name, &method, &library);
    return lookup(b, class_name, method, wire_reason_name(p->reason), library);
}

int baseline_write(FILE *out, const struct baseline *b)
{
    struct json j;
    json_init(&j, out);
    json_object_begin(&j);
    json_kv_string(&j, "format", BASELINE_FORMAT);
    json_key(&j, "sites");
    json_array_begin(&j);
    for (size_t i = 0; i < b->n; i++) {
        const struct baseline_site *s = &b->sites[i];
        json_object_begin_inline(&j);
        json_kv_string(&j, "class", s->class_name);
        json_kv_string(&j, "method", s->method);
        json_kv_string(&j, "reason", s->reason);
        json_kv_string(&j, "library", s->library[0] ? s->library : NULL);
        json_kv_uint(&j, "pins", s->pins);
        json_object_end(&j);
    }
    json_array_end(&j);
    json_object_end(&j);
    return json_finish(&j);
}

/* A string member of site i, or NULL with err said. */
static const char *member(const struct jsonread *site, size_t i, const char *key, int may_be_null, char *err,
                          size_t errlen)
{
    const struct jsonread *v = jsonread_get(site, key);
    if (may_be_null && jsonread_is_null(v))
        return "";
    const char *s = jsonread_str(v, NULL);
    if (!s)
        snprintf(err, errlen, "site %zu: \"%s\" is not a string", i + 1, key);
    return s;
}

int baseline_parse(const char *text, size_t len, struct baseline *b, char *err, size_t errlen)
{
    struct jsonread *doc = NULL;
    char why[200];
    if (jsonread_parse(text, len, &doc, why, sizeof(why))) {
        snprintf(err, errlen, "not JSON: %s", why);
        return -EINVAL;
    }
    int rc = -EINVAL;
    const struct jsonread *sites = jsonread_get(doc, "sites");
    const char *format = jsonread_str(jsonread_get(doc, "format"), "");
    if (strcmp(format, BASELINE_FORMAT) != 0) {
        snprintf(err, errlen, "\"format\" is \"%.60s\", not \"%s\" (written by vtpin run --write-baseline)", format,
                 BASELINE_FORMAT);
        goto out;
    }
    if (!sites || jsonread_is_null(sites)) {
        snprintf(err, errlen, "no \"sites\" list");
        goto out;
    }
    for (size_t i = 0; i < jsonread_len(sites); i++) {
        const struct jsonread *site = jsonread_at(sites, i);
        const char *class_name = member(site, i, "class", 0, err, errlen), *method, *reason, *library;
        if (!class_name || !(method = member(site, i, "method", 0, err, errlen)) ||
            !(reason = member(site, i, "reason", 0, err, errlen)) ||
            !(library = member(site, i, "library", 1, err, errlen)))
            goto out;
        int64_t pins = jsonread_int(jsonread_get(site, "pins"), -1);
        if (pins < 0) {
            snprintf(err, errlen, "site %zu: \"pins\" is not a count", i + 1);
            goto out;
        }
        if (lookup(b, class_name, method, reason, library)) {
            snprintf(err, errlen, "site %zu (%.200s.%.100s %.30s) is listed twice", i + 1, class_name, method, reason);
            goto out;
        }
        struct baseline_site *s = append(b, class_name, method, reason, library);
        if (!s) {
            rc = -ENOMEM;
            snprintf(err, errlen, "out of memory");
            goto out;
        }
        s->pins = (uint64_t)pins;
    }
    baseline_sort(b);
    rc = 0;
out:
    jsonread_free(doc);
    return rc;
}

int baseline_site_fails(const struct baseline *base, const struct baseline_site *now, int tolerance_pct)
{
    const struct baseline_site *known = baseline_find(base, now);
    if (!known)
        return 1;
    if (tolerance_pct < 0)
        return 0;
    uint64_t limit = known->pins + known->pins * (uint64_t)tolerance_pct / 100;
    return now->pins > limit;
}

void baseline_free(struct baseline *b)
{
    for (size_t i = 0; i < b->n; i++) {
        free(b->sites[i].class_name);
        free(b->sites[i].method);
        free(b->sites[i].reason);
        free(b->sites[i].library);
        free(b->sites[i].example_at);
    }
    free(b->sites);
    memset(b, 0, sizeof(*b));
}
