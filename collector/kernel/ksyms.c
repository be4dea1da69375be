#include "ksyms.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct ksym {
    uint64_t addr;
    char *name; /* "func" or "func [mod]" */
};

struct ksyms {
    struct ksym *syms;
    size_t count;
};

static int by_addr(const void *a, const void *b)
{
    const struct ksym *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

void ksyms_free(struct ksyms *k)
{
    if (!k)
        return;
    for (size_t i = 0; i < k->count; i++)
        free(k->syms[i].name);
    free(k->syms);
    free(k);
}

size_t ksyms_count(const struct ksyms *k)
{
    return k ? k->count : 0;
}

/* Text symbols only: a stack holds code addresses. */
static int is_text(char type)
{
    return type == 't' || type == 'T' || type == 'w' || type == 'W';
}

int ksyms_load(struct ksyms **out, FILE *in)
{
    struct ksyms *k = calloc(1, sizeof(*k));
    if (!k)
        return -ENOMEM;
    size_t cap = 0;
    char line[512];
    int rc = 0;
    while (fgets(line, sizeof(line), in)) {
        char type, name[256], mod[128] = "";
        uint64_t addr;
        int n = sscanf(line, "%" SCNx64 " %c %255s %127s", &addr, &type, name, mod);
        if (n < 3 || addr == 0 || !is_text(type))
            continue;
        if (k->count == cap) {
            size_t ncap = cap ? cap * 2 : 4096;
            struct ksym *ns = realloc(k->syms, ncap * sizeof(*ns));
            if (!ns) {
                rc = -ENOMEM;
                break;
            }
            k->syms = ns;
            cap = ncap;
        }
        size_t len = strlen(name) + (n == 4 ? strlen(mod) + 1 : 0) + 1;
        char *s = malloc(len);
        if (!s) {
            rc = -ENOMEM;
            break;
        }
        if (n == 4)
            snprintf(s, len, "%s %s", name, mod);
        else
            memcpy(s, name, len);
        k->syms[k->count].addr = addr;
        k->syms[k->count].name = s;
        k->count++;
    }
    if (!rc && k->count == 0)
        rc = -ENOENT;
    if (rc) {
        ksyms_free(k);
        return rc;
    }
    qsort(k->syms, k->count, sizeof(*k->syms), by_addr);
    *out = k;
    return 0;
}

const char *ksyms_format(const struct ksyms *k, uint64_t addr, char *out, size_t cap)
{
    size_t lo = 0, hi = k ? k->count : 0;
    while (lo < hi) { /* first symbol above addr */
        size_t mid = lo + (hi - lo) / 2;
        if (k->syms[mid].addr <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0) {
        snprintf(out, cap, "0x%" PRIx64, addr);
        return out;
    }
    const struct ksym *s = &k->syms[lo - 1];
    const char *mod = strchr(s->name, ' ');
    if (mod)
        snprintf(out, cap, "%.*s+0x%" PRIx64 "%s", (int)(mod - s->name), s->name, addr - s->addr, mod);
    else
        snprintf(out, cap, "%s+0x%" PRIx64, s->name, addr - s->addr);
    return out;
}
