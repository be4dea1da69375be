/* Offsets read from HotSpot's own machine code (jvmcode.h). */
#include "jvmcode.h"

#include <capstone/capstone.h>
#include <errno.h>

/* A memory operand [base + disp] with no index, segment or scale, of size bytes. */
static int plain_mem(const cs_x86_op *op, x86_reg base, uint8_t size)
{
    return op->type == X86_OP_MEM && op->mem.base == base && op->mem.index == X86_REG_INVALID &&
           op->mem.segment == X86_REG_INVALID && op->size == size && op->mem.disp >= 0 && op->mem.disp < 1 << 20;
}

/* The 64-bit register a general-purpose register is part of (eax, ax, al: rax), else r itself. */
static x86_reg whole(x86_reg r)
{
    static const x86_reg parts[][5] = {
        {X86_REG_RAX, X86_REG_EAX, X86_REG_AX, X86_REG_AL, X86_REG_AH},
        {X86_REG_RBX, X86_REG_EBX, X86_REG_BX, X86_REG_BL, X86_REG_BH},
        {X86_REG_RCX, X86_REG_ECX, X86_REG_CX, X86_REG_CL, X86_REG_CH},
        {X86_REG_RDX, X86_REG_EDX, X86_REG_DX, X86_REG_DL, X86_REG_DH},
        {X86_REG_RSI, X86_REG_ESI, X86_REG_SI, X86_REG_SIL, X86_REG_SIL},
        {X86_REG_RDI, X86_REG_EDI, X86_REG_DI, X86_REG_DIL, X86_REG_DIL},
        {X86_REG_RBP, X86_REG_EBP, X86_REG_BP, X86_REG_BPL, X86_REG_BPL},
        {X86_REG_R8, X86_REG_R8D, X86_REG_R8W, X86_REG_R8B, X86_REG_R8B},
        {X86_REG_R9, X86_REG_R9D, X86_REG_R9W, X86_REG_R9B, X86_REG_R9B},
        {X86_REG_R10, X86_REG_R10D, X86_REG_R10W, X86_REG_R10B, X86_REG_R10B},
        {X86_REG_R11, X86_REG_R11D, X86_REG_R11W, X86_REG_R11B, X86_REG_R11B},
        {X86_REG_R12, X86_REG_R12D, X86_REG_R12W, X86_REG_R12B, X86_REG_R12B},
        {X86_REG_R13, X86_REG_R13D, X86_REG_R13W, X86_REG_R13B, X86_REG_R13B},
        {X86_REG_R14, X86_REG_R14D, X86_REG_R14W, X86_REG_R14B, X86_REG_R14B},
        {X86_REG_R15, X86_REG_R15D, X86_REG_R15W, X86_REG_R15B, X86_REG_R15B},
    };
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
        for (size_t k = 0; k < 5; k++)
            if (parts[i][k] == r)
                return parts[i][0];
    return r;
}

/* Does instruction x write any part of register r (as capstone lists what it writes, implicit ones too). */
static int writes(csh cs, const cs_insn *x, x86_reg r)
{
    cs_regs rd, wr;
    uint8_t n_rd = 0, n_wr = 0;
    if (cs_regs_access(cs, x, rd, &n_rd, wr, &n_wr) != CS_ERR_OK)
        return 1; /* not known: taken as written */
    for (uint8_t i = 0; i < n_wr; i++)
        if (whole((x86_reg)wr[i]) == whole(r))
            return 1;
    return 0;
}

int jvmcode_pin_offsets(const uint8_t *code, size_t len, uint32_t *cont_entry, uint32_t *pin_count)
{
    csh cs;
    if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
        return -ENOMEM;
    cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
    cs_insn *insn = NULL;
    size_t n = cs_disasm(cs, code, len, 0, 0, &insn);
    enum { ENTRY, COUNT, LIMIT, STORE, RET } want = ENTRY;
    x86_reg entry = X86_REG_INVALID, count = X86_REG_INVALID;
    int64_t entry_off = 0, count_off = 0;
    for (size_t i = 0; i < n && want != RET; i++) {
        const cs_insn *x = &insn[i];
        const cs_x86 *d = &x->detail->x86;
        const cs_x86_op *op = d->operands;
        if (x->id == X86_INS_RET)
            break; /* before the whole shape was seen */
        switch (want) {
        case ENTRY: /* only a branch-target marker comes before the thread's first use */
            if (x->id == X86_INS_MOV && d->op_count == 2 && op[0].type == X86_OP_REG && op[0].size == 8 &&
                plain_mem(&op[1], X86_REG_RDI, 8)) {
                entry = op[0].reg;
                entry_off = op[1].mem.disp;
                want = COUNT;
            } else if (x->id != X86_INS_ENDBR64 && x->id != X86_INS_NOP) {
                goto out;
            }
            break;
        case COUNT:
            if (x->id == X86_INS_MOV && d->op_count == 2 && op[0].type == X86_OP_REG && op[0].size == 4 &&
                plain_mem(&op[1], entry, 4)) {
                count = op[0].reg;
                count_off = op[1].mem.disp;
                want = LIMIT;
            } else if (writes(cs, x, entry)) {
                goto out;
            }
            break;
        case LIMIT:
            if (x->id == X86_INS_CMP && d->op_count == 2 && op[0].type == X86_OP_REG && op[0].reg == count &&
                op[1].type == X86_OP_IMM && (uint32_t)op[1].imm == UINT32_MAX)
                want = STORE;
            else if (writes(cs, x, entry) || writes(cs, x, count))
                goto out;
            break;
        case STORE:
            if (x->id == X86_INS_MOV && d->op_count == 2 && plain_mem(&op[0], entry, 4) &&
                op[0].mem.disp == count_off && op[1].type == X86_OP_REG)
                want = RET;
            else if (writes(cs, x, entry))
                goto out;
            break;
        case RET:
            break;
        }
    }
out:
    cs_free(insn, n);
    cs_close(&cs);
    if (want != RET)
        return -ENOTSUP;
    *cont_entry = (uint32_t)entry_off;
    *pin_count = (uint32_t)count_off;
    return 0;
}
