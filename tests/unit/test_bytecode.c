/* Unit tests for agent/jvm/bytecode.c over hand-assembled methods: every opcode's
 * length against an independent JVMS table, switch padding at each alignment,
 * wide forms, truncation, invalid opcodes, and whole-method walks. */
#include "bytecode.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* Fixed instruction lengths from JVMS 17 chapter 6, written out per opcode.
 * 0: invalid or reserved; 'V': variable (tableswitch, lookupswitch, wide). */
static int jvms_length(unsigned op)
{
    static const char *const rows[16] = {
        /*        0 1 2 3 4 5 6 7 8 9 a b c d e f */
        /* 0x00 */ "1111111111111111", /* nop .. dconst_1 */
        /* 0x10 */ "2323322222111111", /* bipush sipush ldc ldc_w ldc2_w iload..aload iload_0.. */
        /* 0x20 */ "1111111111111111", /* lload_2 .. laload */
        /* 0x30 */ "1111112222211111", /* faload..saload istore..astore istore_0.. */
        /* 0x40 */ "1111111111111111",
        /* 0x50 */ "1111111111111111",
        /* 0x60 */ "1111111111111111",
        /* 0x70 */ "1111111111111111",
        /* 0x80 */ "1111311111111111", /* iinc at 0x84 */
        /* 0x90 */ "1111111113333333", /* i2b.. dcmpg; ifeq.. */
        /* 0xa0 */ "3333333332VV1111", /* if_icmpne..jsr ret tableswitch lookupswitch ireturn.. */
        /* 0xb0 */ "1133333335532311", /* areturn return getstatic..invokestatic invokeinterface
                                          invokedynamic new newarray anewarray arraylength athrow */
        /* 0xc0 */ "3311V43355000000", /* checkcast instanceof monitorenter monitorexit wide
                                          multianewarray ifnull ifnonnull goto_w jsr_w; 0xca
                                          breakpoint is reserved */
        /* 0xd0 */ "0000000000000000",
        /* 0xe0 */ "0000000000000000",
        /* 0xf0 */ "0000000000000000", /* 0xfe impdep1, 0xff impdep2: reserved */
    };
    char c = rows[op >> 4][op & 15];
    return c == 'V' ? 'V' : c - '0';
}

static void test_fixed_lengths(void)
{
    for (unsigned op = 0; op < 256; op++) {
        int want = jvms_length(op);
        if (want == 'V' || op == 0xca) /* breakpoint never appears in class files */
            continue;
        /* Exactly enough bytes, operands zero. */
        size_t len = want ? (size_t)want : 1;
        unsigned char *code = calloc(1, len);
        code[0] = (unsigned char)op;
        int got = bytecode_length(code, len, 0);
        if (!CHECK_INT(got, want ? want : -EINVAL))
            fprintf(stderr, "    opcode 0x%02x\n", op);
        /* One byte short is truncated. */
        if (want > 1 && !CHECK_INT(bytecode_length(code, len - 1, 0), -EINVAL))
            fprintf(stderr, "    opcode 0x%02x truncated\n", op);
        free(code);
        /* The same instruction at a later pc. */
        if (want) {
            unsigned char at5[16] = {0};
            at5[5] = (unsigned char)op;
            if (!CHECK_INT(bytecode_length(at5, 5 + (size_t)want, 5), want))
                fprintf(stderr, "    opcode 0x%02x at pc 5\n", op);
        }
    }
}

static void test_invalid_opcodes(void)
{
    unsigned char code[8] = {0};
    for (unsigned op = 0xcb; op <= 0xff; op++) {
        code[0] = (unsigned char)op;
        if (!CHECK_INT(bytecode_length(code, sizeof(code), 0), -EINVAL))
            fprintf(stderr, "    opcode 0x%02x\n", op);
    }
    code[0] = 0xfe;
    CHECK_INT(bytecode_length(code, sizeof(code), 0), -EINVAL);
}

static void test_out_of_range_pc(void)
{
    unsigned char code[] = {0x2a, 0xb1}; /* aload_0; return */
    CHECK_INT(bytecode_length(code, sizeof(code), 0), 1);
    CHECK_INT(bytecode_length(code, sizeof(code), 1), 1);
    CHECK_INT(bytecode_length(code, sizeof(code), 2), -EINVAL);
    CHECK_INT(bytecode_length(code, sizeof(code), 1000), -EINVAL);
    CHECK_INT(bytecode_length(code, 0, 0), -EINVAL);
}

static void test_simple_sequence(void)
{
    /* static int f(int x) { return x + 1000; } plus a call:
     *  0 iload_0; 1 sipush 1000; 4 iadd; 5 invokestatic #2; 8 ldc2_w #3; 11 pop2; 12 ireturn */
    unsigned char code[] = {0x1a, 0x11, 0x03, 0xe8, 0x60, 0xb8, 0x00, 0x02, 0x14, 0x00, 0x03, 0x58, 0xac};
    size_t want_pcs[] = {0, 1, 4, 5, 8, 11, 12};
    size_t pc = 0, i = 0;
    while (pc < sizeof(code)) {
        int n = bytecode_length(code, sizeof(code), pc);
        if (!CHECK(n > 0) || !CHECK(i < sizeof(want_pcs) / sizeof(want_pcs[0])))
            return;
        CHECK_UINT(pc, want_pcs[i]);
        pc += (size_t)n;
        i++;
    }
    CHECK_UINT(pc, sizeof(code));
    CHECK_UINT(i, sizeof(want_pcs) / sizeof(want_pcs[0]));
}

static void put_s4(unsigned char *p, int32_t v)
{
    uint32_t u = (uint32_t)v;
    p[0] = (unsigned char)(u >> 24);
    p[1] = (unsigned char)(u >> 16);
    p[2] = (unsigned char)(u >> 8);
    p[3] = (unsigned char)u;
}

/* Writes a tableswitch at pc (opcode, padding, default, low, high, offsets) and returns its length. */
static size_t put_tableswitch(unsigned char *code, size_t pc, int32_t low, int32_t high)
{
    code[pc] = 0xaa;
    size_t p = pc + 1;
    while (p % 4)
        code[p++] = 0;
    put_s4(code + p, 100);
    put_s4(code + p + 4, low);
    put_s4(code + p + 8, high);
    p += 12;
    for (int64_t k = low; k <= high; k++, p += 4)
        put_s4(code + p, (int32_t)(k * 3));
    return p - pc;
}

static size_t put_lookupswitch(unsigned char *code, size_t pc, int32_t npairs)
{
    code[pc] = 0xab;
    size_t p = pc + 1;
    while (p % 4)
        code[p++] = 0;
    put_s4(code + p, 100);
    put_s4(code + p + 4, npairs);
    p += 8;
    for (int32_t k = 0; k < npairs; k++, p += 8) {
        put_s4(code + p, k * 10 - 5);
        put_s4(code + p + 4, 40);
    }
    return p - pc;
}

static void test_tableswitch_padding(void)
{
    /* low 0, high 2: 3 offsets. Padding makes the operands start at a multiple of 4
     * counted from the start of the method: 3 bytes at pc 0, 2 at pc 1, 0 at pc 3, 3 at pc 4. */
    static const struct {
        size_t pc;
        int want;
    } cases[] = {{0, 1 + 3 + 12 + 12}, {1, 1 + 2 + 12 + 12}, {2, 1 + 1 + 12 + 12},
                 {3, 1 + 0 + 12 + 12}, {4, 1 + 3 + 12 + 12}, {7, 1 + 0 + 12 + 12}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        unsigned char code[64];
        memset(code, 0, sizeof(code)); /* nops before the switch */
        size_t n = put_tableswitch(code, cases[i].pc, 0, 2);
        CHECK_INT((int)n, cases[i].want);
        size_t end = cases[i].pc + n;
        if (!CHECK_INT(bytecode_length(code, end, cases[i].pc), cases[i].want))
            fprintf(stderr, "    tableswitch at pc %zu\n", cases[i].pc);
        /* Every shorter buffer is truncated. */
        for (size_t cut = cases[i].pc + 1; cut < end; cut++)
            if (!CHECK_INT(bytecode_length(code, cut, cases[i].pc), -EINVAL))
                fprintf(stderr, "    tableswitch at pc %zu cut at %zu\n", cases[i].pc, cut);
    }
}

static void test_tableswitch_ranges(void)
{
    unsigned char code[128];
    /* Negative bounds, single entry. */
    memset(code, 0, sizeof(code));
    size_t n = put_tableswitch(code, 1, -2, 1);
    CHECK_INT(bytecode_length(code, sizeof(code), 1), (int)n);
    CHECK_INT((int)n, 1 + 2 + 12 + 4 * 4);
    n = put_tableswitch(code, 1, 5, 5);
    CHECK_INT(bytecode_length(code, sizeof(code), 1), 1 + 2 + 12 + 4);
    /* high < low is malformed. */
    memset(code, 0, sizeof(code));
    code[0] = 0xaa;
    put_s4(code + 8, 3);
    put_s4(code + 12, 2);
    CHECK_INT(bytecode_length(code, sizeof(code), 0), -EINVAL);
    /* A huge range in a small method is truncated, not an overflow. */
    put_s4(code + 8, INT32_MIN);
    put_s4(code + 12, INT32_MAX);
    CHECK_INT(bytecode_length(code, sizeof(code), 0), -EINVAL);
    put_s4(code + 8, 0);
    put_s4(code + 12, INT32_MAX);
    CHECK_INT(bytecode_length(code, sizeof(code), 0), -EINVAL);
}

static void test_lookupswitch(void)
{
    unsigned char code[128];
    memset(code, 0, sizeof(code));
    size_t n = put_lookupswitch(code, 1, 2);
    CHECK_INT((int)n, 1 + 2 + 8 + 2 * 8);
    CHECK_INT(bytecode_length(code, 1 + n, 1), (int)n);
    CHECK_INT(bytecode_length(code, n, 1), -EINVAL); /* one byte short */

    memset(code, 0, sizeof(code));
    n = put_lookupswitch(code, 3, 2);
    CHECK_INT((int)n, 1 + 0 + 8 + 2 * 8);
    CHECK_INT(bytecode_length(code, 3 + n, 3), (int)n);

    /* npairs 0 followed by more code. */
    memset(code, 0, sizeof(code));
    n = put_lookupswitch(code, 0, 0);
    CHECK_INT((int)n, 1 + 3 + 8);
    CHECK_INT(bytecode_length(code, sizeof(code), 0), (int)n);

    /* Negative npairs is malformed; a huge one is truncated. */
    memset(code, 0, sizeof(code));
    put_lookupswitch(code, 0, 0);
    put_s4(code + 8, -EINVAL);
    CHECK_INT(bytecode_length(code, sizeof(code), 0), -EINVAL);
    put_s4(code + 8, INT32_MAX);
    CHECK_INT(bytecode_length(code, sizeof(code), 0), -EINVAL);
}

/* A lookupswitch with no pairs is 9 bytes plus padding; as the last instruction
 * of a method nothing follows it (it is an unconditional branch). */
static void test_lookupswitch_empty_at_end(void)
{
    for (size_t pc = 0; pc < 4; pc++) {
        unsigned char *code = calloc(1, 16);
        size_t n = put_lookupswitch(code, pc, 0);
        int got = bytecode_length(code, pc + n, pc);
        if (!CHECK_INT(got, (int)n))
            fprintf(stderr, "    empty lookupswitch at pc %zu ending the method (len %zu)\n", pc, pc + n);
        free(code);
    }
}

static void test_wide(void)
{
    unsigned char iinc[] = {0xc4, 0x84, 0x01, 0x00, 0xff, 0xfe}; /* wide iinc 256, -2 */
    unsigned char iload[] = {0xc4, 0x15, 0x01, 0x00};            /* wide iload 256 */
    unsigned char ret[] = {0xc4, 0xa9, 0x01, 0x00};              /* wide ret 256 */
    CHECK_INT(bytecode_length(iinc, sizeof(iinc), 0), 6);
    CHECK_INT(bytecode_length(iload, sizeof(iload), 0), 4);
    CHECK_INT(bytecode_length(ret, sizeof(ret), 0), 4);
    static const unsigned char loads_stores[] = {0x15, 0x16, 0x17, 0x18, 0x19, 0x36, 0x37, 0x38, 0x39, 0x3a};
    for (size_t i = 0; i < sizeof(loads_stores); i++) {
        unsigned char code[] = {0xc4, loads_stores[i], 0x00, 0x05};
        if (!CHECK_INT(bytecode_length(code, sizeof(code), 0), 4))
            fprintf(stderr, "    wide 0x%02x\n", loads_stores[i]);
    }
    /* Truncated. */
    for (size_t cut = 0; cut < sizeof(iinc); cut++)
        if (!CHECK_INT(bytecode_length(iinc, cut, 0), -EINVAL))
            fprintf(stderr, "    wide iinc cut at %zu\n", cut);
    for (size_t cut = 0; cut < sizeof(iload); cut++)
        if (!CHECK_INT(bytecode_length(iload, cut, 0), -EINVAL))
            fprintf(stderr, "    wide iload cut at %zu\n", cut);
    /* Wide at an odd pc. */
    unsigned char mid[] = {0x00, 0x00, 0x00, 0xc4, 0x84, 0x00, 0x01, 0x00, 0x01, 0xb1};
    CHECK_INT(bytecode_length(mid, sizeof(mid), 3), 6);
    CHECK_INT(bytecode_length(mid, sizeof(mid), 9), 1);
}

/* wide only modifies the local-variable instructions and iinc (JVMS 6.5.wide). */
static void test_wide_invalid_target(void)
{
    static const unsigned char bad[] = {0x00, 0x10, 0x1a, 0x60, 0xb1, 0xc4, 0xfe};
    for (size_t i = 0; i < sizeof(bad); i++) {
        unsigned char code[] = {0xc4, bad[i], 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
        if (!CHECK_INT(bytecode_length(code, sizeof(code), 0), -EINVAL))
            fprintf(stderr, "    wide followed by 0x%02x\n", bad[i]);
    }
}

static void test_is_exit(void)
{
    for (unsigned op = 0; op < 256; op++) {
        int want = (op >= 0xac && op <= 0xb1) || op == 0xbf;
        if (!CHECK_INT(bytecode_is_exit((unsigned char)op), want))
            fprintf(stderr, "    opcode 0x%02x\n", op);
    }
    CHECK_INT(BC_MONITORENTER, 0xc2);
    CHECK_INT(BC_MONITOREXIT, 0xc3);
}

/* A method shaped like javac's output for
 *   synchronized (lock) { switch (x) { case 0..2 -> ...; } } with an exception handler:
 * walk it and collect instruction starts, exits and monitor operations. */
static void test_walk_method(void)
{
    unsigned char code[256];
    size_t pcs[64], npcs = 0, pc = 0;
    size_t exits[8], nexits = 0;
    memset(code, 0, sizeof(code));
#define EMIT(...)                                                                                                      \
    do {                                                                                                               \
        const unsigned char bytes_[] = {__VA_ARGS__};                                                                  \
        pcs[npcs++] = pc;                                                                                              \
        if (bytecode_is_exit(bytes_[0]))                                                                               \
            exits[nexits++] = pc;                                                                                      \
        memcpy(code + pc, bytes_, sizeof(bytes_));                                                                     \
        pc += sizeof(bytes_);                                                                                          \
    } while (0)
    EMIT(0x2a);             /* 0 aload_0 */
    EMIT(0xb4, 0x00, 0x07); /* 1 getfield #7 */
    EMIT(0x59);             /* 4 dup */
    EMIT(0x4d);             /* 5 astore_2 */
    EMIT(0xc2);             /* 6 monitorenter */
    EMIT(0x1b);             /* 7 iload_1 */
    pcs[npcs++] = pc;       /* 8 tableswitch: 3 bytes of padding */
    pc += put_tableswitch(code, pc, 0, 2);
    EMIT(0xc4, 0x84, 0x01, 0x00, 0x00, 0x02); /* wide iinc */
    EMIT(0x2c);                               /* aload_2 */
    EMIT(0xc3);                               /* monitorexit */
    EMIT(0xb1);                               /* return */
    EMIT(0x1b);                               /* iload_1 */
    pcs[npcs++] = pc;                         /* lookupswitch */
    pc += put_lookupswitch(code, pc, 2);
    EMIT(0xc4, 0x15, 0x01, 0x00); /* wide iload */
    EMIT(0xac);                   /* ireturn */
    EMIT(0x4e);                   /* astore_3 (handler) */
    EMIT(0x2c);                   /* aload_2 */
    EMIT(0xc3);                   /* monitorexit */
    EMIT(0x2d);                   /* aload_3 */
    EMIT(0xbf);                   /* athrow */
#undef EMIT
    size_t len = pc;

    size_t got_pcs[64], ngot = 0, got_exits[8], ngot_exits = 0, enters = 0, exits_mon = 0;
    for (pc = 0; pc < len;) {
        int n = bytecode_length(code, len, pc);
        if (!CHECK(n > 0)) {
            fprintf(stderr, "    walk stopped at pc %zu\n", pc);
            return;
        }
        if (ngot < 64)
            got_pcs[ngot++] = pc;
        if (bytecode_is_exit(code[pc]) && ngot_exits < 8)
            got_exits[ngot_exits++] = pc;
        enters += code[pc] == BC_MONITORENTER;
        exits_mon += code[pc] == BC_MONITOREXIT;
        pc += (size_t)n;
    }
    CHECK_UINT(pc, len);
    if (CHECK_UINT(ngot, npcs))
        CHECK_MEM(got_pcs, pcs, npcs * sizeof(pcs[0]));
    if (CHECK_UINT(ngot_exits, 3))
        CHECK_MEM(got_exits, exits, nexits * sizeof(exits[0]));
    CHECK_UINT(enters, 1);
    CHECK_UINT(exits_mon, 2);
}

/* Deterministic xorshift so failures reproduce. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}

/* Random well-formed instruction streams: the walk finds exactly the emitted starts. */
static void test_random_methods(void)
{
    enum { MAXLEN = 4096 };
    unsigned failures = 0;
    for (int iter = 0; iter < 500 && failures < 5; iter++) {
        unsigned char *code = malloc(MAXLEN);
        unsigned char *is_start = calloc(MAXLEN, 1);
        size_t pc = 0;
        while (pc < MAXLEN - 1200) {
            is_start[pc] = 1;
            uint32_t kind = rnd() % 20;
            if (kind == 0) {
                int32_t low = (int32_t)(rnd() % 41) - 20;
                pc += put_tableswitch(code, pc, low, low + (int32_t)(rnd() % 30));
            } else if (kind == 1) {
                pc += put_lookupswitch(code, pc, (int32_t)(rnd() % 30));
            } else if (kind == 2) {
                static const unsigned char targets[] = {0x15, 0x16, 0x17, 0x18, 0x19, 0x36,
                                                        0x37, 0x38, 0x39, 0x3a, 0xa9, 0x84};
                unsigned char t = targets[rnd() % sizeof(targets)];
                code[pc] = 0xc4;
                code[pc + 1] = t;
                size_t n = t == 0x84 ? 6 : 4;
                for (size_t k = 2; k < n; k++)
                    code[pc + k] = (unsigned char)rnd();
                pc += n;
            } else {
                unsigned op;
                int n;
                do {
                    op = rnd() % 256;
                    n = jvms_length(op);
                } while (n == 0 || n == 'V');
                code[pc] = (unsigned char)op;
                for (int k = 1; k < n; k++)
                    code[pc + (size_t)k] = (unsigned char)rnd(); /* operands may look like anything */
                pc += (size_t)n;
            }
        }
        size_t len = pc;
        /* Exact-size copy so a read past the end is caught by ASan. */
        unsigned char *exact = malloc(len);
        memcpy(exact, code, len);
        for (pc = 0; pc < len;) {
            int n = bytecode_length(exact, len, pc);
            if (!is_start[pc] || n <= 0) {
                CHECK(is_start[pc] && n > 0);
                fprintf(stderr, "    iteration %d: pc %zu opcode 0x%02x length %d\n", iter, pc, exact[pc], n);
                failures++;
                break;
            }
            is_start[pc] = 0;
            pc += (size_t)n;
        }
        if (pc == len) {
            size_t left = 0;
            for (size_t k = 0; k < len; k++)
                left += is_start[k];
            if (!CHECK_UINT(left, 0))
                failures++;
        }
        free(exact);
        free(code);
        free(is_start);
    }
    CHECK_UINT(failures, 0);
}

/* Arbitrary bytes: never a length that runs past the end, never a read past it. */
static void test_random_garbage(void)
{
    for (int iter = 0; iter < 2000; iter++) {
        size_t len = 1 + rnd() % 64;
        unsigned char *code = malloc(len);
        for (size_t k = 0; k < len; k++)
            code[k] = (unsigned char)rnd();
        if (iter % 3 == 0)
            code[rnd() % len] = (unsigned char)(0xaa + rnd() % 2); /* more switches */
        for (size_t pc = 0; pc < len; pc++) {
            int n = bytecode_length(code, len, pc);
            if (!CHECK(n == -EINVAL || (n >= 1 && (size_t)n <= len - pc))) {
                fprintf(stderr, "    pc %zu len %zu opcode 0x%02x -> %d\n", pc, len, code[pc], n);
                free(code);
                return;
            }
        }
        free(code);
    }
}

/* javac's shape for: synchronized (lock) { call(); } return;
 *  0 aload_1  1 dup  2 astore_2  3 monitorenter  4 invokestatic #2  7 aload_2  8 monitorexit
 *  9 goto 17  12 astore_3  13 aload_2  14 monitorexit  15 aload_3  16 athrow  17 return */
static void test_monitor_depth(void)
{
    static const unsigned char code[] = {0x2b, 0x59, 0x4d, 0xc2, 0xb8, 0x00, 0x02, 0x2c, 0xc3,
                                         0xa7, 0x00, 0x08, 0x4e, 0x2c, 0xc3, 0x2d, 0xbf, 0xb1};
    size_t len = sizeof(code);
    CHECK_INT(bytecode_monitor_depth(code, len, 0), 0);
    CHECK_INT(bytecode_monitor_depth(code, len, 3), 0);  /* at the monitorenter: not held yet */
    CHECK_INT(bytecode_monitor_depth(code, len, 4), 1);  /* the call inside the block */
    CHECK_INT(bytecode_monitor_depth(code, len, 9), 0);  /* after the normal exit */
    CHECK_INT(bytecode_monitor_depth(code, len, 17), 0); /* the handler's exit does not count twice */
    /* nested: enter, enter, call, exit, call, exit */
    static const unsigned char nested[] = {0x2b, 0xc2, 0x2c, 0xc2, 0xb8, 0x00, 0x02, 0x2c,
                                           0xc3, 0xb8, 0x00, 0x02, 0x2b, 0xc3, 0xb1};
    CHECK_INT(bytecode_monitor_depth(nested, sizeof(nested), 4), 2);
    CHECK_INT(bytecode_monitor_depth(nested, sizeof(nested), 9), 1);
    CHECK_INT(bytecode_monitor_depth(nested, sizeof(nested), 14), 0);
    static const unsigned char bad[] = {0xfe, 0x00};
    CHECK_INT(bytecode_monitor_depth(bad, sizeof(bad), 1), -EINVAL);
}

/* bytecode_class_at over a hand-made constant pool (class-file layout, no count):
 * #1 Utf8 "pkg/Slow", #2 Class #1, #3 Utf8 "VALUE", #4 Utf8 "J", #5 NameAndType #3 #4,
 * #6 Fieldref #2 #5, #7-#8 Long, #9 Methodref #2 #5, #10 String #3. */
static void test_class_at(void)
{
    static const unsigned char cp[] = {
        1,  0, 8, 'p', 'k', 'g', '/', 'S', 'l', 'o', 'w', /* #1 */
        7,  0, 1,                                         /* #2 */
        1,  0, 5, 'V', 'A', 'L', 'U', 'E',                /* #3 */
        1,  0, 1, 'J',                                    /* #4 */
        12, 0, 3, 0,   4,                                 /* #5 */
        9,  0, 2, 0,   5,                                 /* #6 */
        5,  0, 0, 0,   0,   0,   0,   0,   42,            /* #7, #8 */
        10, 0, 2, 0,   5,                                 /* #9 */
        8,  0, 3,                                         /* #10 */
    };
    const int count = 11;
    static const unsigned char code[] = {
        BC_GETSTATIC,
        0,
        6, /* 0 */
        BC_NEW,
        0,
        2, /* 3 */
        BC_INVOKESTATIC,
        0,
        9, /* 6 */
        BC_PUTSTATIC,
        0,
        6, /* 9 */
        0x12,
        10,
        0x00, /* 12: ldc #10, nop */
        BC_GETSTATIC,
        0,
        8, /* 15: the second slot of a long */
        BC_GETSTATIC,
        0,
        2, /* 18: a Class where a Fieldref belongs */
        BC_NEW,
        0,
        99, /* 21: out of the pool */
    };
    char out[64];
    CHECK_INT(bytecode_class_at(code, sizeof(code), 0, cp, sizeof(cp), count, out, sizeof(out)), BC_GETSTATIC);
    CHECK_STR(out, "pkg.Slow");
    CHECK_INT(bytecode_class_at(code, sizeof(code), 3, cp, sizeof(cp), count, out, sizeof(out)), BC_NEW);
    CHECK_STR(out, "pkg.Slow");
    CHECK_INT(bytecode_class_at(code, sizeof(code), 6, cp, sizeof(cp), count, out, sizeof(out)), BC_INVOKESTATIC);
    CHECK_INT(bytecode_class_at(code, sizeof(code), 9, cp, sizeof(cp), count, out, sizeof(out)), BC_PUTSTATIC);
    CHECK_INT(bytecode_class_at(code, sizeof(code), 12, cp, sizeof(cp), count, out, sizeof(out)), 0);
    CHECK_INT(bytecode_class_at(code, sizeof(code), 15, cp, sizeof(cp), count, out, sizeof(out)), -EINVAL);
    CHECK_INT(bytecode_class_at(code, sizeof(code), 18, cp, sizeof(cp), count, out, sizeof(out)), -EINVAL);
    CHECK_INT(bytecode_class_at(code, sizeof(code), 21, cp, sizeof(cp), count, out, sizeof(out)), -EINVAL);
    CHECK_INT(bytecode_class_at(code, sizeof(code), 22, cp, sizeof(cp), count, out, sizeof(out)), -EINVAL); /* cut */
    /* a name longer than out is cut, still terminated */
    char small[4];
    CHECK_INT(bytecode_class_at(code, sizeof(code), 0, cp, sizeof(cp), count, small, sizeof(small)), BC_GETSTATIC);
    CHECK_STR(small, "pkg");
    /* a pool cut short or with an unknown tag is refused */
    CHECK_INT(bytecode_class_at(code, sizeof(code), 0, cp, 20, count, out, sizeof(out)), -EINVAL);
    unsigned char bad[sizeof(cp)];
    memcpy(bad, cp, sizeof(cp));
    bad[11] = 2; /* no tag 2 */
    CHECK_INT(bytecode_class_at(code, sizeof(code), 0, bad, sizeof(bad), count, out, sizeof(out)), -EINVAL);
}

int main(void)
{
    CHECK_RUN(test_class_at);
    CHECK_RUN(test_fixed_lengths);
    CHECK_RUN(test_invalid_opcodes);
    CHECK_RUN(test_out_of_range_pc);
    CHECK_RUN(test_simple_sequence);
    CHECK_RUN(test_tableswitch_padding);
    CHECK_RUN(test_tableswitch_ranges);
    CHECK_RUN(test_lookupswitch);
    CHECK_RUN(test_lookupswitch_empty_at_end);
    CHECK_RUN(test_wide);
    CHECK_RUN(test_wide_invalid_target);
    CHECK_RUN(test_is_exit);
    CHECK_RUN(test_walk_method);
    CHECK_RUN(test_random_methods);
    CHECK_RUN(test_random_garbage);
    CHECK_RUN(test_monitor_depth);
    CHECK_MAIN_RETURN();
}
