/* A hash map from 64-bit ids to pointers: the id tables of a recording
 * (strings, methods, stacks, pins), whose ids come from the file and so can
 * be anything. Its items in the order first put, indexed by common/table.h. */
#ifndef VTPIN_COMMON_IDMAP_H
#define VTPIN_COMMON_IDMAP_H

#include <stddef.h>
#include <stdint.h>

struct idmap;

struct idmap *idmap_new(void);
/* Frees the map, and each value with free_value when it is not NULL. */
void idmap_free(struct idmap *m, void (*free_value)(void *));

void *idmap_get(const struct idmap *m, uint64_t key);
/* Sets key to value (not NULL). The value it replaces, if any, goes to *old
 * (which may be NULL when the caller knows there is none). 0 or -ENOMEM. */
int idmap_put(struct idmap *m, uint64_t key, void *value, void **old);
size_t idmap_count(const struct idmap *m);
/* Iteration in the order keys were first put: start with *pos = 0; returns 0 at the end. */
int idmap_next(const struct idmap *m, size_t *pos, uint64_t *key, void **value);

#endif
