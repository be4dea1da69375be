/* Just enough of the JVM bytecode format to walk a method's instructions. */
#ifndef VTPIN_BYTECODE_H
#define VTPIN_BYTECODE_H

#include <stddef.h>

/* Length of the instruction at pc, or -1 when it is malformed or runs past len. */
int bytecode_length(const unsigned char *code, size_t len, size_t pc);

/* 1 for the instructions that leave a method: *return and athrow. */
int bytecode_is_exit(unsigned char opcode);

#define BC_MONITORENTER 0xc2
#define BC_MONITOREXIT 0xc3

#endif
