/* Definitions before use: a string, method or stack is put to each output
 * once, before the first event that names it by id (symbols.c remembers
 * which outputs have it). Writer thread only. */
#ifndef VTPIN_DEFS_H
#define VTPIN_DEFS_H

#include <stdint.h>

#include "symbols.h"

void defs_send_string(struct symbols *symbols, uint32_t sid);
void defs_send_method(struct symbols *symbols, uint32_t mid);
void defs_send_stack(struct symbols *symbols, const struct stack_info *stack); /* with its methods */

#endif
