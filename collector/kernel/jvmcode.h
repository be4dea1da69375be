/* Field offsets HotSpot compiled into its own machine code, for a build whose
 * tables do not list them (27's Debian build has no JVMCI VM structs).
 *
 * The code read is a small function whose whole job is the field, named in
 * libjvm.so's .symtab on every build (21 to 27). It is decoded with capstone,
 * and accepted only in its whole known shape, so a compiler that laid it out
 * otherwise gives no offset, never a wrong one. x86-64 only. */
#ifndef VTPIN_KERNEL_JVMCODE_H
#define VTPIN_KERNEL_JVMCODE_H

#include <stddef.h>
#include <stdint.h>

/* The symbol read (Continuation::pin(JavaThread*)) and how many bytes of it are enough. */
#define JVMCODE_PIN_SYMBOL "_ZN12Continuation3pinEP10JavaThread"
#define JVMCODE_PIN_BYTES 64

/* Continuation::pin(JavaThread* t) is
 *     ContinuationEntry* e = t->_cont_entry;
 *     if (e == NULL) return false;
 *     if (e->_pin_count == UINT32_MAX) return false;
 *     e->_pin_count++; return true;
 * Its first 64-bit load through the argument register (rdi) gives JavaThread::_cont_entry's offset;
 * the 32-bit load through that pointer, compared with UINT32_MAX and stored back, gives
 * ContinuationEntry::_pin_count's. 0 with both set, -ENOTSUP when the code is not that shape,
 * -ENOMEM when capstone cannot start. */
int jvmcode_pin_offsets(const uint8_t *code, size_t len, uint32_t *cont_entry, uint32_t *pin_count);

#endif
