#include "ustack.h"

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hotspot.h"

enum { X86_64_RBP = 6, X86_64_RSP = 7 }; /* DWARF register numbers */

#define USTACK_MAX_CODE 512 /* executable file mappings kept (a JVM has about 60) */

/* An executable mapping of a file: where a frame of a module may be. */
struct code_map {
    uint64_t start, end;
};

struct ustack_ctx {
    int mem; /* proc_root/pid/mem */
    struct code_map code[USTACK_MAX_CODE];
    int n_code;
    pid_t tid;
    uint64_t sp, pc, bp;
    struct ustack_frame *out;
    int cap, n;
};

/* The syscall file's line: "NR ARG0..ARG5 SP PC" while it sleeps in a system call. 0 with sp and pc, or -EAGAIN. */
static int read_syscall(const char *path, char *line, size_t cap, uint64_t *sp, uint64_t *pc)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? -ESRCH : -errno;
    ssize_t n = read(fd, line, cap - 1);
    close(fd);
    if (n <= 0)
        return -EAGAIN;
    line[n] = '\0';
    long nr;
    unsigned long long a[6], s, p;
    if (sscanf(line, "%ld %llx %llx %llx %llx %llx %llx %llx %llx", &nr, &a[0], &a[1], &a[2], &a[3], &a[4], &a[5], &s,
               &p) != 9 ||
        nr < 0)
        return -EAGAIN; /* "running", or blocked outside a system call */
    *sp = s;
    *pc = p;
    return 0;
}

/* proc_root/PID/root of the process unwound: libdw's find_elf has no argument of its own, and the
 * collector unwinds on one thread. */
static char root_prefix[300];

/* A module's file as the process sees it (through its root: a container's own), parsed only when
 * hotspot_trusted_file says so (a module another user can write is not read: the unwind ends there). */
static int find_elf(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base, char **file_name, Elf **elfp)
{
    (void)mod;
    (void)userdata;
    (void)base;
    *elfp = NULL;
    if (name[0] != '/')
        return -1; /* [vdso], [heap], anonymous */
    char path[4096];
    snprintf(path, sizeof(path), "%s%s", root_prefix, name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    uid_t owner;
    if (fd < 0)
        return -1;
    if (hotspot_trusted_file(fd, &owner) != 0) {
        close(fd);
        return -1;
    }
    *file_name = strdup(path);
    return fd;
}

/* The process's executable mappings of files, from proc_root/pid/maps: libdw gives a module the range from
 * its first mapping to its last, which can hold the JVM's code cache (seen: JIT frames named libnio.so). */
static void read_code_maps(const char *proc_root, int32_t pid, struct ustack_ctx *c)
{
    char path[512], line[1024];
    snprintf(path, sizeof(path), "%s/%ld/maps", proc_root, (long)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return;
    while (c->n_code < USTACK_MAX_CODE && fgets(line, sizeof(line), f)) {
        unsigned long long start, end;
        char perms[8];
        int name = 0;
        if (sscanf(line, "%llx-%llx %7s %*s %*s %*s %n", &start, &end, perms, &name) == 3 && name && perms[2] == 'x' &&
            line[name] == '/')
            c->code[c->n_code++] = (struct code_map){start, end};
    }
    fclose(f);
}

static int in_code(const struct ustack_ctx *c, uint64_t at)
{
    for (int i = 0; i < c->n_code; i++)
        if (at >= c->code[i].start && at < c->code[i].end)
            return 1;
    return 0;
}

static pid_t next_thread(Dwfl *dwfl, void *dwfl_arg, void **thread_argp)
{
    (void)dwfl;
    if (*thread_argp)
        return 0;
    *thread_argp = dwfl_arg;
    return ((struct ustack_ctx *)dwfl_arg)->tid;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *dwfl_arg)
{
    (void)dwfl;
    const struct ustack_ctx *c = dwfl_arg;
    return pread(c->mem, result, sizeof(*result), (off_t)addr) == (ssize_t)sizeof(*result);
}

static bool set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
    const struct ustack_ctx *c = thread_arg;
    Dwarf_Word bp_sp[2] = {c->bp, c->sp};
    if (c->bp ? !dwfl_thread_state_registers(thread, X86_64_RBP, 2, bp_sp)
              : !dwfl_thread_state_registers(thread, X86_64_RSP, 1, &bp_sp[1]))
        return false;
    dwfl_thread_state_register_pc(thread, c->pc);
    return true;
}

static int on_frame(Dwfl_Frame *state, void *arg)
{
    struct ustack_ctx *c = arg;
    Dwarf_Addr pc;
    bool activation;
    if (c->n >= c->cap || !dwfl_frame_pc(state, &pc, &activation))
        return DWARF_CB_ABORT;
    Dwarf_Addr at = activation ? pc : pc - 1; /* a return address: the call is the byte before */
    Dwfl_Module *mod = in_code(c, at) ? dwfl_addrmodule(dwfl_thread_dwfl(dwfl_frame_thread(state)), at) : NULL;
    if (!mod)
        return DWARF_CB_ABORT; /* generated code: no module describes it, the unwind ends here */
    struct ustack_frame *f = &c->out[c->n++];
    f->pc = pc;
    const char *sym = dwfl_module_addrname(mod, at);
    Dwarf_Addr start = 0;
    const char *name = dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, NULL, NULL);
    snprintf(f->symbol, sizeof(f->symbol), "%s", sym ? sym : "");
    snprintf(f->module, sizeof(f->module), "%s", name ? name : "");
    f->offset = pc - start;
    return DWARF_CB_OK;
}

int ustack_read(const char *proc_root, int32_t pid, int32_t tid, uint64_t bp, struct ustack_frame *out, int cap)
{
    char path[512], before[512], after[512];
    struct ustack_ctx c = {.tid = tid, .bp = bp, .out = out, .cap = cap < USTACK_MAX_FRAMES ? cap : USTACK_MAX_FRAMES};
    uint64_t sp2, pc2;
    snprintf(path, sizeof(path), "%s/%ld/task/%ld/syscall", proc_root, (long)pid, (long)tid);
    int rc = read_syscall(path, before, sizeof(before), &c.sp, &c.pc);
    if (rc)
        return rc;
    char mem[512];
    snprintf(mem, sizeof(mem), "%s/%ld/mem", proc_root, (long)pid);
    snprintf(root_prefix, sizeof(root_prefix), "%s/%ld/root", proc_root, (long)pid);
    read_code_maps(proc_root, pid, &c);
    c.mem = open(mem, O_RDONLY | O_CLOEXEC);
    if (c.mem < 0)
        return -errno;
    static const Dwfl_Callbacks callbacks = {
        .find_elf = find_elf,
        .find_debuginfo = dwfl_standard_find_debuginfo,
    };
    static const Dwfl_Thread_Callbacks thread_callbacks = {
        .next_thread = next_thread,
        .memory_read = memory_read,
        .set_initial_registers = set_initial_registers,
    };
    Dwfl *dwfl = dwfl_begin(&callbacks);
    rc = -ENOMEM;
    if (!dwfl)
        goto out;
    rc = -EPROTO;
    if (dwfl_linux_proc_report(dwfl, pid) != 0 || dwfl_report_end(dwfl, NULL, NULL) != 0 ||
        !dwfl_attach_state(dwfl, NULL, pid, &thread_callbacks, &c))
        goto out;
    dwfl_getthread_frames(dwfl, tid, on_frame, &c); /* ends at the first frame it cannot unwind */
    /* the same system call, at the same place: the stack read is the one it sleeps on */
    rc = read_syscall(path, after, sizeof(after), &sp2, &pc2);
    if (rc == 0 && strcmp(before, after) != 0)
        rc = -EAGAIN;
    if (rc == 0)
        rc = c.n;
out:
    if (dwfl)
        dwfl_end(dwfl);
    close(c.mem);
    return rc;
}
