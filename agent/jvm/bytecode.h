/* Just enough of the JVM bytecode format to walk a method's instructions. */
#ifndef VTPIN_BYTECODE_H
#define VTPIN_BYTECODE_H

#include <stddef.h>

/* Length of the instruction at pc, or -EINVAL when it is malformed or runs past len. */
int bytecode_length(const unsigned char *code, size_t len, size_t pc);

/* 1 for the instructions that leave a method: *return and athrow. */
int bytecode_is_exit(unsigned char opcode);

/* Monitors a frame of this method holds at bci through synchronized blocks
 * (javac's shape: the catch-all handler's monitorexit, the one followed by
 * aload + athrow, is not an exit of the normal path). A synchronized method
 * holds one more. Returns -EINVAL for malformed code. */
int bytecode_monitor_depth(const unsigned char *code, size_t len, size_t bci);

/* The class an instruction makes the JVM initialize: for new, getstatic,
 * putstatic and invokestatic at bci, the class its constant-pool operand
 * names, resolved through cp (JVMTI GetConstantPool's bytes: the class-file
 * constant pool without its count; cp_count entries, slot 0 unused). Writes
 * the dotted name to out[cap] and returns the opcode; 0 when the instruction
 * is none of these, -EINVAL when code or cp is malformed. */
int bytecode_class_at(const unsigned char *code, size_t len, size_t bci, const unsigned char *cp, size_t cp_len,
                      int cp_count, char *out, size_t cap);

#define BC_NEW 0xbb
#define BC_GETSTATIC 0xb2
#define BC_PUTSTATIC 0xb3
#define BC_INVOKESTATIC 0xb8
#define BC_MONITORENTER 0xc2
#define BC_MONITOREXIT 0xc3

/* A class signature ("Lcom/example/Slow;") as the name Java prints ("com.example.Slow") into out[cap]. */
void bytecode_class_name(const char *sig, char *out, size_t cap);

#endif
