#include "natives.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"

struct entry {
    _Atomic uintptr_t method;
    _Atomic uintptr_t address;
};

static struct entry *table;
static size_t mask;

int natives_init(unsigned capacity)
{
    if (table)
        return 0;
    size_t n = 1;
    while (n < capacity)
        n <<= 1;
    table = calloc(n, sizeof(*table));
    if (!table)
        return -ENOMEM;
    mask = n - 1;
    return 0;
}

static size_t hash_ptr(uintptr_t p)
{
    return (size_t)hash_u64(p);
}

void natives_put(const void *method, void *address)
{
    if (!table || !method)
        return;
    uintptr_t key = (uintptr_t)method;
    size_t i = hash_ptr(key) & mask;
    for (size_t probes = 0; probes <= mask; probes++, i = (i + 1) & mask) {
        uintptr_t cur = atomic_load_explicit(&table[i].method, memory_order_acquire);
        if (cur == 0) {
            uintptr_t expected = 0;
            if (!atomic_compare_exchange_strong(&table[i].method, &expected, key) && expected != key)
                continue;
            cur = key;
        }
        if (cur == key) {
            atomic_store_explicit(&table[i].address, (uintptr_t)address, memory_order_release);
            return;
        }
    }
}

void *natives_get(const void *method)
{
    if (!table || !method)
        return NULL;
    uintptr_t key = (uintptr_t)method;
    size_t i = hash_ptr(key) & mask;
    for (size_t probes = 0; probes <= mask; probes++, i = (i + 1) & mask) {
        uintptr_t cur = atomic_load_explicit(&table[i].method, memory_order_acquire);
        if (cur == 0)
            return NULL;
        if (cur == key)
            return (void *)atomic_load_explicit(&table[i].address, memory_order_acquire);
    }
    return NULL;
}

const char *natives_library(void *address)
{
    Dl_info info;
    if (!address || !dladdr(address, &info) || !info.dli_fname)
        return NULL;
    return info.dli_fname;
}

/* JNI name mangling (JNI spec, "Resolving Native Method Names"). */
static int mangle(const char *in, char *out, size_t cap, size_t *len)
{
    for (const unsigned char *p = (const unsigned char *)in; *p; p++) {
        char esc[8];
        const char *add = esc;
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')) {
            esc[0] = (char)*p;
            esc[1] = '\0';
        } else if (*p == '.' || *p == '/') {
            add = "_";
        } else if (*p == '_') {
            add = "_1";
        } else if (*p == ';') {
            add = "_2";
        } else if (*p == '[') {
            add = "_3";
        } else {
            /* non-ASCII would need the UTF-16 unit; JNI names of such classes are rare */
            snprintf(esc, sizeof(esc), "_0%04x", *p);
        }
        size_t n = strlen(add);
        if (*len + n + 1 > cap)
            return -ENAMETOOLONG;
        memcpy(out + *len, add, n);
        *len += n;
    }
    out[*len] = '\0';
    return 0;
}

int natives_jni_name(const char *dotted_class, const char *method, char *out, size_t cap)
{
    size_t len = 0;
    if (cap < 6)
        return -ENAMETOOLONG;
    len = (size_t)snprintf(out, cap, "Java_");
    if (mangle(dotted_class, out, cap, &len))
        return -ENAMETOOLONG;
    if (len + 2 > cap)
        return -ENAMETOOLONG;
    out[len++] = '_';
    return mangle(method, out, cap, &len);
}

struct lookup {
    const char *symbol;
    const char *found;
};

static int lookup_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct lookup *l = data;
    if (!info->dlpi_name || !*info->dlpi_name)
        return 0;
    void *h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
    if (!h)
        return 0;
    void *sym = dlsym(h, l->symbol);
    dlclose(h);
    if (!sym)
        return 0;
    l->found = natives_library(sym);
    return l->found != NULL;
}

const char *natives_library_by_name(const char *dotted_class, const char *method)
{
    char symbol[1024];
    if (!dotted_class || !method || natives_jni_name(dotted_class, method, symbol, sizeof(symbol)))
        return NULL;
    struct lookup l = {symbol, NULL};
    dl_iterate_phdr(lookup_object, &l);
    return l.found;
}
