/* Kernel symbols from /proc/kallsyms, to name the addresses of kernel stacks.
 * Loaded once into a sorted array; lookups are a binary search. */
#ifndef VTPIN_KERNEL_KSYMS_H
#define VTPIN_KERNEL_KSYMS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct ksyms;

/* Reads a kallsyms-format file ("ffffffff81000000 T _stext [module]").
 * 0 with *out, -ENOENT when it has no usable address (all zero: the reader
 * lacks privileges), -errno. */
int ksyms_load(struct ksyms **out, FILE *in);
void ksyms_free(struct ksyms *k);
size_t ksyms_count(const struct ksyms *k);
/* "func+0x1f" (or "func+0x1f [mod]") for addr into out[cap]; "0x..." when no
 * symbol is at or below addr. Returns out. */
const char *ksyms_format(const struct ksyms *k, uint64_t addr, char *out, size_t cap);

#endif
