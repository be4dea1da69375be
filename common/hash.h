/* The one hash of vtpin's tables (the agent's, the collector's, the CLI's): FNV-1a for strings,
 * MurmurHash3's 64-bit finalizer to spread integer keys (ids, pointers, tids) and string hashes
 * over a power-of-two table, and one combine step for keys of several parts (a stack's frames).
 * Pure and inline: the agent's hot paths use it too. */
#ifndef VTPIN_COMMON_HASH_H
#define VTPIN_COMMON_HASH_H

#include <stdint.h>

static inline uint64_t hash_u64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

/* h with v folded in (order matters). */
static inline uint64_t hash_combine(uint64_t h, uint64_t v)
{
    return hash_u64(h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)));
}

static inline uint64_t hash_string(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return hash_u64(h);
}

#endif
