/* Just enough of the JVM bytecode format to walk a method's instructions. */
#ifndef VTPIN_BYTECODE_H
#define VTPIN_BYTECODE_H

#include <stddef.h>

/* Length of the instruction at pc, or -1 when it is malformed or runs past len. */
int bytecode_length(const unsigned char *code, size_t len, size_t pc);

/* 1 for the instructions that leave a method: *return and athrow. */
int bytecode_is_exit(unsigned char opcode);

/* Monitors a frame of this method holds at bci through synchronized blocks
 * (javac's shape: the catch-all handler's monitorexit, the one followed by
 * aload + athrow, is not an exit of the normal path). A synchronized method
 * holds one more. Returns -1 for malformed code. */
int bytecode_monitor_depth(const unsigned char *code, size_t len, size_t bci);

#define BC_MONITORENTER 0xc2
#define BC_MONITOREXIT 0xc3

#endif
