#include "bytecode.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int32_t read_s4(const unsigned char *p)
{
    return (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3]);
}

/* Fixed lengths per opcode (JVMS chapter 6); 0 marks variable or invalid. */
static int fixed_length(unsigned char op)
{
    if (op <= 0x0f)
        return 1; /* nop .. dconst_1 */
    if (op == 0x10 || op == 0x12)
        return 2; /* bipush, ldc */
    if (op == 0x11 || op == 0x13 || op == 0x14)
        return 3; /* sipush, ldc_w, ldc2_w */
    if (op >= 0x15 && op <= 0x19)
        return 2; /* xload index */
    if (op >= 0x1a && op <= 0x35)
        return 1;
    if (op >= 0x36 && op <= 0x3a)
        return 2; /* xstore index */
    if (op >= 0x3b && op <= 0x83)
        return 1;
    if (op == 0x84)
        return 3; /* iinc */
    if (op >= 0x85 && op <= 0x98)
        return 1;
    if (op >= 0x99 && op <= 0xa8)
        return 3; /* if*, goto, jsr */
    if (op == 0xa9)
        return 2; /* ret */
    if (op >= 0xac && op <= 0xb1)
        return 1; /* returns */
    if (op >= 0xb2 && op <= 0xb8)
        return 3; /* field access, invokevirtual/special/static */
    if (op == 0xb9 || op == 0xba)
        return 5; /* invokeinterface, invokedynamic */
    if (op == 0xbb || op == 0xbd || op == 0xc0 || op == 0xc1)
        return 3; /* new, anewarray, checkcast, instanceof */
    if (op == 0xbc)
        return 2; /* newarray */
    if (op == 0xbe || op == 0xbf || op == 0xc2 || op == 0xc3 || op == 0xca)
        return 1;
    if (op == 0xc5)
        return 4; /* multianewarray */
    if (op == 0xc6 || op == 0xc7)
        return 3; /* ifnull, ifnonnull */
    if (op == 0xc8 || op == 0xc9)
        return 5; /* goto_w, jsr_w */
    return 0;
}

int bytecode_length(const unsigned char *code, size_t len, size_t pc)
{
    if (pc >= len)
        return -EINVAL;
    unsigned char op = code[pc];
    int n = fixed_length(op);
    if (op == 0xaa || op == 0xab) { /* tableswitch, lookupswitch: padded to 4 */
        size_t p = (pc + 4) & ~(size_t)3;
        if (p + (op == 0xaa ? 12 : 8) > len)
            return -EINVAL;
        int64_t count;
        if (op == 0xaa) {
            int64_t low = read_s4(code + p + 4), high = read_s4(code + p + 8);
            if (high < low)
                return -EINVAL;
            count = high - low + 1;
            p += 12 + (size_t)count * 4;
        } else {
            count = read_s4(code + p + 4);
            if (count < 0)
                return -EINVAL;
            p += 8 + (size_t)count * 8;
        }
        return p <= len ? (int)(p - pc) : -EINVAL;
    }
    if (op == 0xc4) { /* wide: only before local-variable loads, stores, ret and iinc */
        if (pc + 1 >= len)
            return -EINVAL;
        unsigned char target = code[pc + 1];
        if (target == 0x84)
            n = 6;
        else if ((target >= 0x15 && target <= 0x19) || (target >= 0x36 && target <= 0x3a) || target == 0xa9)
            n = 4;
        else
            return -EINVAL;
    }
    if (n == 0 || pc + (size_t)n > len)
        return -EINVAL;
    return n;
}

int bytecode_is_exit(unsigned char op)
{
    return (op >= 0xac && op <= 0xb1) || op == 0xbf;
}

static int is_handler_exit(const unsigned char *code, size_t len, size_t next)
{
    /* aload_<n> or aload idx, then athrow: rethrowing after releasing the monitor */
    int n = bytecode_length(code, len, next);
    if (n <= 0 || !(code[next] == 0x19 || (code[next] >= 0x2a && code[next] <= 0x2d)))
        return 0;
    size_t after = next + (size_t)n;
    return after < len && code[after] == 0xbf;
}

int bytecode_monitor_depth(const unsigned char *code, size_t len, size_t bci)
{
    int depth = 0;
    for (size_t pc = 0; pc < bci && pc < len;) {
        int n = bytecode_length(code, len, pc);
        if (n <= 0)
            return -EINVAL;
        if (code[pc] == BC_MONITORENTER)
            depth++;
        else if (code[pc] == BC_MONITOREXIT && !is_handler_exit(code, len, pc + 1) && depth > 0)
            depth--;
        pc += (size_t)n;
    }
    return depth;
}

/* Offsets of constant-pool entries 1..count-1 into off[] (SIZE_MAX for the
 * unusable second slot of a long or double). 0, or -EINVAL when cp is malformed. */
static int cp_index(const unsigned char *cp, size_t len, int count, size_t *off)
{
    size_t p = 0;
    for (int i = 1; i < count; i++) {
        if (p >= len)
            return -EINVAL;
        off[i] = p;
        size_t size;
        switch (cp[p]) {
        case 1: /* Utf8 */
            if (p + 3 > len)
                return -EINVAL;
            size = 3 + ((size_t)cp[p + 1] << 8 | cp[p + 2]);
            break;
        case 3:
        case 4:
        case 9:
        case 10:
        case 11:
        case 12:
        case 17:
        case 18:
            size = 5;
            break;
        case 5:
        case 6: /* Long, Double: two slots */
            size = 9;
            if (i + 1 < count)
                off[++i] = SIZE_MAX;
            break;
        case 7:
        case 8:
        case 16:
        case 19:
        case 20:
            size = 3;
            break;
        case 15:
            size = 4;
            break;
        default:
            return -EINVAL;
        }
        p += size;
    }
    return p <= len ? 0 : -EINVAL;
}

static unsigned u2(const unsigned char *b)
{
    return (unsigned)b[0] << 8 | b[1];
}

static int class_at(unsigned char op, const unsigned char *insn, const unsigned char *cp, size_t cp_len, int cp_count,
                    size_t *off, char *out, size_t cap);

int bytecode_class_at(const unsigned char *code, size_t len, size_t bci, const unsigned char *cp, size_t cp_len,
                      int cp_count, char *out, size_t cap)
{
    if (bci + 3 > len || cap == 0 || cp_count <= 1 || cp_count > 65535)
        return -EINVAL;
    unsigned char op = code[bci];
    if (op != BC_NEW && op != BC_GETSTATIC && op != BC_PUTSTATIC && op != BC_INVOKESTATIC)
        return 0;
    size_t *off = malloc((size_t)cp_count * sizeof(*off));
    if (!off)
        return -EINVAL;
    int rc = class_at(op, code + bci, cp, cp_len, cp_count, off, out, cap);
    free(off);
    return rc;
}

static int class_at(unsigned char op, const unsigned char *insn, const unsigned char *cp, size_t cp_len, int cp_count,
                    size_t *off, char *out, size_t cap)
{
    if (cp_index(cp, cp_len, cp_count, off) != 0)
        return -EINVAL;
    unsigned idx = u2(insn + 1);
    if (idx == 0 || idx >= (unsigned)cp_count)
        return -EINVAL;
    if (off[idx] == SIZE_MAX)
        return -EINVAL;
    const unsigned char *e = cp + off[idx];
    if (op != BC_NEW) { /* Fieldref / Methodref / InterfaceMethodref -> class_index */
        if (off[idx] == SIZE_MAX || (e[0] != 9 && e[0] != 10 && e[0] != 11))
            return -EINVAL;
        idx = u2(e + 1);
        if (idx == 0 || idx >= (unsigned)cp_count)
            return -EINVAL;
        if (off[idx] == SIZE_MAX)
            return -EINVAL;
        e = cp + off[idx];
    } else if (off[idx] == SIZE_MAX) {
        return -EINVAL;
    }
    if (e[0] != 7)
        return -EINVAL;
    idx = u2(e + 1);
    if (idx == 0 || idx >= (unsigned)cp_count || off[idx] == SIZE_MAX || cp[off[idx]] != 1)
        return -EINVAL;
    e = cp + off[idx];
    size_t n = u2(e + 1);
    if (n >= cap)
        n = cap - 1;
    for (size_t i = 0; i < n; i++)
        out[i] = e[3 + i] == '/' ? '.' : (char)e[3 + i];
    out[n] = '\0';
    return op;
}

void bytecode_class_name(const char *sig, char *out, size_t cap)
{
    size_t len = strlen(sig);
    if (len >= 2 && sig[0] == 'L' && sig[len - 1] == ';') {
        sig++;
        len -= 2;
    }
    if (len >= cap)
        len = cap - 1;
    /* Hidden classes ("LFoo$$Lambda.0x1234;") print as Foo$$Lambda/0x1234 in Java. */
    for (size_t i = 0; i < len; i++)
        out[i] = sig[i] == '/' ? '.' : sig[i] == '.' ? '/' : sig[i];
    out[len] = '\0';
}
