#include "natives.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

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
        return -1;
    mask = n - 1;
    return 0;
}

void natives_fini(void)
{
    /* Kept: a late NativeMethodBind may still run while the VM shuts down. */
}

static size_t hash_ptr(uintptr_t p)
{
    p ^= p >> 33;
    p *= 0xff51afd7ed558ccdULL;
    p ^= p >> 33;
    return (size_t)p;
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
