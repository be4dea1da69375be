#include "hotspot.h"

#include "jvmcode.h"
#include "kstate.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum {
    MAX_THREADS = 65536,  /* a ThreadsList longer than this is a torn read */
    MAX_ENTRIES = 100000, /* VMStructs holds about 3,000 entries, IntConstants about 1,000 */
    NAME_LEN = 128,       /* longest string read from the JVM, with its NUL */
    TRIES = 5,            /* walks tried before -EAGAIN */
    TORN_AT_OPEN = 50,    /* torn walks open puts up with (a JVM collecting hundreds of times a second) */
    SETTLE_POLLS = 200,   /* polls of an odd safepoint counter, 100 us apart, before a walk */
    SPAN_MAX = 4096,      /* JavaThread bytes read in one pread per thread */
    VERIFY_ROWS = 1024,   /* threads checked at open */
    MAX_STATE = 32,       /* JavaThreadState values are 0..11 on every JDK 21-27 */
};

struct hotspot {
    int mem; /* proc_root/pid/mem, open for the handle's life */
    int32_t pid;
    int own_pidns; /* the JVM numbers its threads in a pid namespace of its own */
    char *proc_root;
    struct hotspot_info info;
    uint64_t list_addr;                 /* &ThreadsSMRSupport::_java_thread_list */
    uint64_t safepoint_addr;            /* &SafepointSynchronize::_safepoint_counter */
    uint32_t list_length, list_threads; /* in ThreadsList */
    uint32_t osthread, os_thread_id;    /* JavaThread (Thread from 25) -> OSThread -> its tid */
    uint32_t eetop;                     /* java.lang.Thread.eetop: the JavaThread*, checked at open */
    uint32_t span_lo, span_len;         /* the JavaThread bytes that hold every field a walk reads */
    uint64_t *slots;                    /* the ThreadsList's _threads, read each walk */
    size_t slots_cap;
};

/* ---- the symbols of libjvm.so ---- */

enum sym {
    S_STRUCTS,
    S_S_TYPE,
    S_S_FIELD,
    S_S_STATIC,
    S_S_OFFSET,
    S_S_ADDRESS,
    S_S_STRIDE,
    S_INTS,
    S_I_NAME,
    S_I_VALUE,
    S_I_STRIDE,
    S_TID,
    S_EETOP,
    S_VT_STATE,
    S_SAFEPOINT,
    S_ZHEAP, /* optional, to recognise ZGC's heaps */
    S_XHEAP,
    S_JVMCI,    /* optional: JVMCI's VM structs, for why a park could not unmount */
    S_CONT_PIN, /* optional: Continuation::pin, whose code gives the pin count's offsets (jvmcode.h) */
    S_HELD_ASM, /* optional: the generator of code that counts monitors held (21 to 25) */
    S_COUNT
};
static const char *const sym_names[S_COUNT] = {
    [S_STRUCTS] = "gHotSpotVMStructs",
    [S_S_TYPE] = "gHotSpotVMStructEntryTypeNameOffset",
    [S_S_FIELD] = "gHotSpotVMStructEntryFieldNameOffset",
    [S_S_STATIC] = "gHotSpotVMStructEntryIsStaticOffset",
    [S_S_OFFSET] = "gHotSpotVMStructEntryOffsetOffset",
    [S_S_ADDRESS] = "gHotSpotVMStructEntryAddressOffset",
    [S_S_STRIDE] = "gHotSpotVMStructEntryArrayStride",
    [S_INTS] = "gHotSpotVMIntConstants",
    [S_I_NAME] = "gHotSpotVMIntConstantEntryNameOffset",
    [S_I_VALUE] = "gHotSpotVMIntConstantEntryValueOffset",
    [S_I_STRIDE] = "gHotSpotVMIntConstantEntryArrayStride",
    /* .symtab only (same mangling on 17, 21, 25, 26, 27) */
    [S_TID] = "_ZN16java_lang_Thread11_tid_offsetE",
    [S_EETOP] = "_ZN16java_lang_Thread13_eetop_offsetE",
    [S_VT_STATE] = "_ZN23java_lang_VirtualThread13_state_offsetE",
    [S_SAFEPOINT] = "_ZN20SafepointSynchronize18_safepoint_counterE",
    [S_ZHEAP] = "_ZTV14ZCollectedHeap", /* generational ZGC's heap */
    [S_XHEAP] = "_ZTV14XCollectedHeap", /* 21's single-generation ZGC (-XX:-ZGenerational) */
    /* the array itself, entries laid out as gHotSpotVMStructs' (the same VMStructEntry) */
    [S_JVMCI] = "_ZN14JVMCIVMStructs21localHotSpotVMStructsE",
    [S_CONT_PIN] = JVMCODE_PIN_SYMBOL,
    [S_HELD_ASM] = "_ZN14MacroAssembler22inc_held_monitor_countEv",
};
/* Their C++ names, for why[]. */
static const char *const sym_words[S_COUNT] = {
    [S_TID] = "java_lang_Thread::_tid_offset",
    [S_EETOP] = "java_lang_Thread::_eetop_offset",
    [S_VT_STATE] = "java_lang_VirtualThread::_state_offset",
    [S_SAFEPOINT] = "SafepointSynchronize::_safepoint_counter",
};

/* ---- the VMStructs entries and int constants it needs ---- */

enum field {
    F_LIST,
    F_LENGTH,
    F_THREADS,
    F_THREAD_OBJ,
    F_VTHREAD,
    F_STATE,
    F_PENDING,
    F_WAITING,
    F_OSTHREAD,
    F_THREAD_ID,
    F_MAJOR,
    F_RELEASE,
    F_HEAP,
    F_HELD, /* JVMCI's table lists these three (kstate.h park_why_of) */
    F_CONT_ENTRY,
    F_PIN_COUNT,
    F_COUNT
};
static const struct {
    const char *type, *type2, *name;
    int is_static; /* 1: the entry's address, 0: its offset */
    int optional;
} fields[F_COUNT] = {
    [F_LIST] = {"ThreadsSMRSupport", NULL, "_java_thread_list", 1, 0},
    [F_LENGTH] = {"ThreadsList", NULL, "_length", 0, 0},
    [F_THREADS] = {"ThreadsList", NULL, "_threads", 0, 0},
    [F_THREAD_OBJ] = {"JavaThread", NULL, "_threadObj", 0, 0},
    [F_VTHREAD] = {"JavaThread", NULL, "_vthread", 0, 0},
    [F_STATE] = {"JavaThread", NULL, "_thread_state", 0, 0},
    [F_PENDING] = {"JavaThread", NULL, "_current_pending_monitor", 0, 0},
    [F_WAITING] = {"JavaThread", NULL, "_current_waiting_monitor", 0, 0},
    [F_OSTHREAD] = {"JavaThread", "Thread", "_osthread", 0, 0}, /* JavaThread's up to 24, Thread's from 25 */
    [F_THREAD_ID] = {"OSThread", NULL, "_thread_id", 0, 0},
    [F_MAJOR] = {"Abstract_VM_Version", NULL, "_vm_major_version", 1, 0},
    [F_RELEASE] = {"Abstract_VM_Version", NULL, "_s_vm_release", 1, 0},
    [F_HEAP] = {"Universe", NULL, "_collectedHeap", 1, 1},
    [F_HELD] = {"JavaThread", NULL, "_held_monitor_count", 0, 1},
    [F_CONT_ENTRY] = {"JavaThread", NULL, "_cont_entry", 0, 1},
    [F_PIN_COUNT] = {"ContinuationEntry", NULL, "_pin_count", 0, 1},
};

enum constant { C_BLOCKED, C_IN_NATIVE, C_COUNT };
static const char *const constant_names[C_COUNT] = {"_thread_blocked", "_thread_in_native"};

static int fail(char *why, size_t whylen, int rc, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail(char *why, size_t whylen, int rc, const char *fmt, ...)
{
    if (why && whylen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, whylen, fmt, ap);
        va_end(ap);
    }
    return rc;
}

/* ---- reading the JVM's memory ---- */

/* len bytes at addr: 0; -ESRCH when the address space is gone (the JVM
 * exited: /proc/PID/mem then reads nothing); -EIO for an address that is not
 * mapped (a torn or wrong pointer). */
static int mem_read(const struct hotspot *h, uint64_t addr, void *buf, size_t len)
{
    if (addr == 0 || addr > (uint64_t)INT64_MAX - len)
        return -EIO;
    ssize_t n = pread(h->mem, buf, len, (off_t)addr);
    if (n == (ssize_t)len)
        return 0;
    if (n == 0)
        return -ESRCH;
    if (n < 0)
        return errno == ESRCH ? -ESRCH : -EIO;
    return -EIO;
}

static int mem_u64(const struct hotspot *h, uint64_t addr, uint64_t *v)
{
    return mem_read(h, addr, v, sizeof(*v));
}

static int mem_i32(const struct hotspot *h, uint64_t addr, int32_t *v)
{
    return mem_read(h, addr, v, sizeof(*v));
}

/* A C string at addr, cut at len - 1 bytes (a read may stop short at the end of a mapping). */
static int mem_str(const struct hotspot *h, uint64_t addr, char *buf, size_t len)
{
    buf[0] = '\0';
    if (addr == 0 || addr > (uint64_t)INT64_MAX - len)
        return -EIO;
    ssize_t n = pread(h->mem, buf, len - 1, (off_t)addr);
    if (n <= 0)
        return n == 0 ? -ESRCH : (errno == ESRCH ? -ESRCH : -EIO);
    buf[n] = '\0';
    return 0;
}

/* ---- finding libjvm.so ---- */

struct jvm_map {
    uint64_t start, end; /* the mapping at file offset 0 */
    unsigned long inode;
    int deleted; /* maps says "(deleted)": the file on disk is not the one mapped */
    char path[512];
};

/* A process with no mappings is a kernel thread, or one that has exited (a zombie) */
static int exited(const char *proc_root, int32_t pid)
{
    char path[4096], buf[512];
    snprintf(path, sizeof(path), "%s/%ld/stat", proc_root, (long)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return 1;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *paren = strrchr(buf, ')');
    return paren && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X');
}

/* The mapping of libjvm.so at file offset 0: 0, -ENOENT when there is none,
 * -ESRCH when the process is gone. */
static int find_libjvm(const char *proc_root, int32_t pid, struct jvm_map *m)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%ld/maps", proc_root, (long)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return errno == ENOENT ? -ESRCH : -errno;
    char *line = NULL;
    size_t cap = 0;
    int rc = -ENOENT, lines = 0;
    while (getline(&line, &cap, f) > 0) {
        lines++;
        uint64_t start, end, off;
        unsigned long inode;
        int pos = 0;
        if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %*x:%*x %lu %n", &start, &end, &off, &inode, &pos) !=
                4 ||
            pos == 0 || off != 0)
            continue;
        char *p = line + pos;
        p[strcspn(p, "\n")] = '\0';
        size_t len = strlen(p);
        const char *deleted = " (deleted)";
        int del = len > strlen(deleted) && strcmp(p + len - strlen(deleted), deleted) == 0;
        if (del)
            p[len -= strlen(deleted)] = '\0';
        const char *base = strrchr(p, '/');
        if (p[0] != '/' || !base || strcmp(base + 1, "libjvm.so") != 0 || len >= sizeof(m->path))
            continue;
        *m = (struct jvm_map){.start = start, .end = end, .inode = inode, .deleted = del};
        memcpy(m->path, p, len + 1);
        rc = 0;
        break;
    }
    free(line);
    fclose(f);
    return rc == -ENOENT && !lines && exited(proc_root, pid) ? -ESRCH : rc;
}

/* The collector runs as root: it parses only a libjvm.so that root (or its own user) owns and no
 * one else can write. Another user's file could be changed while it is mapped and parsed (a
 * truncation is a SIGBUS), or made to lead libelf astray. 0, or -EPERM. */
int hotspot_trusted_file(int fd, uid_t *owner)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return -errno;
    *owner = st.st_uid;
    if ((st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & (S_IWGRP | S_IWOTH)) || !S_ISREG(st.st_mode))
        return -EPERM;
    return 0;
}

/* libjvm.so as mapped: through the JVM's root (its mount namespace), else the
 * mapping itself when the file there is another one (replaced, deleted, or not
 * reachable). A descriptor, or -errno. */
static int open_libjvm(const char *proc_root, int32_t pid, const struct jvm_map *m)
{
    char path[4096];
    int fd = -1, err = ENOENT;
    if (!m->deleted) {
        snprintf(path, sizeof(path), "%s/%ld/root%s", proc_root, (long)pid, m->path);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd >= 0 && fstat(fd, &st) == 0 && st.st_ino == m->inode)
            return fd;
        if (fd < 0)
            err = errno;
    }
    snprintf(path, sizeof(path), "%s/%ld/map_files/%" PRIx64 "-%" PRIx64, proc_root, (long)pid, m->start, m->end);
    int mfd = open(path, O_RDONLY | O_CLOEXEC);
    if (mfd >= 0) {
        if (fd >= 0)
            close(fd);
        return mfd;
    }
    /* an overlay may number the inode differently: the file by its path, checked at open like any other */
    return fd >= 0 ? fd : -err;
}

/* The load address of the segment at file offset 0 (its p_vaddr, page-aligned)
 * and the symbols of sym_names, from .symtab and .dynsym. */
static int read_symbols(int fd, uint64_t *vaddr0, uint64_t *value, char *why, size_t whylen)
{
    if (elf_version(EV_CURRENT) == EV_NONE)
        return fail(why, whylen, -ENOTSUP, "libelf: %s", elf_errmsg(-1));
    Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    if (!e)
        return fail(why, whylen, -ENOTSUP, "libjvm.so: %s", elf_errmsg(-1));
    int rc = 0, has_symtab = 0, has_load = 0;
    size_t nph = 0;
    if (elf_kind(e) != ELF_K_ELF || gelf_getclass(e) != ELFCLASS64 || elf_getphdrnum(e, &nph) != 0) {
        rc = fail(why, whylen, -ENOTSUP, "libjvm.so is not a 64-bit ELF file");
        goto cleanup;
    }
    for (size_t i = 0; i < nph && !has_load; i++) {
        GElf_Phdr ph;
        if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_offset == 0) {
            *vaddr0 = ph.p_vaddr & ~(uint64_t)0xfff;
            has_load = 1;
        }
    }
    if (!has_load) {
        rc = fail(why, whylen, -ENOTSUP, "libjvm.so has no loadable segment at file offset 0");
        goto cleanup;
    }
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) || !sh.sh_entsize)
            continue;
        has_symtab |= sh.sh_type == SHT_SYMTAB;
        Elf_Data *d = elf_getdata(scn, NULL);
        size_t n = sh.sh_size / sh.sh_entsize;
        for (size_t i = 0; d && i < n; i++) {
            GElf_Sym s;
            if (!gelf_getsym(d, (int)i, &s) || s.st_value == 0 || s.st_shndx == SHN_UNDEF)
                continue;
            const char *name = elf_strptr(e, sh.sh_link, s.st_name);
            if (!name || (name[0] != 'g' && name[0] != '_'))
                continue;
            for (int k = 0; k < S_COUNT; k++)
                if (!value[k] && strcmp(name, sym_names[k]) == 0) {
                    value[k] = s.st_value;
                    break;
                }
        }
    }
    if (!has_symtab)
        rc = fail(why, whylen, -ENOTSUP,
                  "libjvm.so has no .symtab (stripped): zero-touch needs a JDK build that keeps its symbols");
cleanup:
    elf_end(e);
    return rc;
}

/* ---- the serviceability agent's tables ---- */

struct tables {
    uint64_t field[F_COUNT];
    int have_field[F_COUNT];
    int32_t constant[C_COUNT];
    int have_constant[C_COUNT];
    int jvmci; /* JVMCI's table was read whole: a field it does not list, this VM does not have */
};

/* The companion value (an offset or stride, a uint64) of symbol k. */
static int companion(const struct hotspot *h, uint64_t bias, const uint64_t *sym, int k, uint64_t *v)
{
    int rc = mem_u64(h, bias + sym[k], v);
    if (rc == 0 && *v > SPAN_MAX)
        rc = -EIO;
    return rc;
}

/* Does the type string at type_ptr name type a or b: one read per distinct pointer. */
static int type_is(const struct hotspot *h, uint64_t type_ptr, uint64_t *last_ptr, char *last, const char *a,
                   const char *b)
{
    if (type_ptr != *last_ptr) {
        *last_ptr = type_ptr;
        if (mem_str(h, type_ptr, last, NAME_LEN))
            last[0] = '\0';
    }
    return strcmp(last, a) == 0 || (b && strcmp(last, b) == 0);
}

/* The entry layout of gHotSpotVMStructs, which JVMCI's table shares. */
struct entry_layout {
    uint64_t o_type, o_field, o_static, o_offset, o_address, stride;
};

/* Walks the VMStructEntry array at table, filling the wanted fields still missing. 0 at its end,
 * else -errno with why[] naming the table. */
static int walk_structs(const struct hotspot *h, uint64_t table, const struct entry_layout *el, const char *what,
                        struct tables *t, char *why, size_t whylen)
{
    uint8_t entry[SPAN_MAX];
    char type[NAME_LEN], name[NAME_LEN];
    uint64_t last_type = 0;
    type[0] = '\0';
    for (int i = 0; i < MAX_ENTRIES; i++) {
        int rc = mem_read(h, table + (uint64_t)i * el->stride, entry, el->stride);
        if (rc)
            return rc == -ESRCH ? rc : fail(why, whylen, -ENOTSUP, "%s is unreadable at entry %d", what, i);
        uint64_t type_ptr, name_ptr, offset, address;
        int32_t is_static;
        memcpy(&type_ptr, entry + el->o_type, 8);
        if (!type_ptr)
            return 0;
        memcpy(&name_ptr, entry + el->o_field, 8);
        memcpy(&is_static, entry + el->o_static, 4);
        memcpy(&offset, entry + el->o_offset, 8);
        memcpy(&address, entry + el->o_address, 8);
        int have_name = 0; /* the field name is read once, for the first wanted type */
        for (int f = 0; f < F_COUNT; f++) {
            if (t->have_field[f] || !type_is(h, type_ptr, &last_type, type, fields[f].type, fields[f].type2))
                continue;
            if (!have_name++ && mem_str(h, name_ptr, name, sizeof(name)))
                name[0] = '\0';
            if (strcmp(name, fields[f].name) == 0 && !is_static == !fields[f].is_static) {
                t->field[f] = fields[f].is_static ? address : offset;
                t->have_field[f] = 1;
                break;
            }
        }
    }
    return fail(why, whylen, -ENOTSUP, "%s has no end within %d entries", what, MAX_ENTRIES);
}

static int read_structs(const struct hotspot *h, uint64_t bias, const uint64_t *sym, struct tables *t, char *why,
                        size_t whylen)
{
    uint64_t table;
    struct entry_layout el;
    int rc;
    if ((rc = mem_u64(h, bias + sym[S_STRUCTS], &table)) || (rc = companion(h, bias, sym, S_S_TYPE, &el.o_type)) ||
        (rc = companion(h, bias, sym, S_S_FIELD, &el.o_field)) ||
        (rc = companion(h, bias, sym, S_S_STATIC, &el.o_static)) ||
        (rc = companion(h, bias, sym, S_S_OFFSET, &el.o_offset)) ||
        (rc = companion(h, bias, sym, S_S_ADDRESS, &el.o_address)) ||
        (rc = companion(h, bias, sym, S_S_STRIDE, &el.stride)))
        return rc == -ESRCH ? rc : fail(why, whylen, -ENOTSUP, "gHotSpotVMStructs' companions are unreadable");
    if (!table || !el.stride) /* the VM fills them in as it starts (VMStructs::init) */
        return fail(why, whylen, -EAGAIN, "gHotSpotVMStructs is not filled in yet (still starting): try again");
    if (el.stride < 8 || el.o_type + 8 > el.stride || el.o_field + 8 > el.stride || el.o_static + 4 > el.stride ||
        el.o_offset + 8 > el.stride || el.o_address + 8 > el.stride)
        return fail(why, whylen, -ENOTSUP, "gHotSpotVMStructs' entry layout is not one this reads (stride %" PRIu64 ")",
                    el.stride);
    if ((rc = walk_structs(h, table, &el, "gHotSpotVMStructs", t, why, whylen)))
        return rc;
    /* JVMCI's table, where the build has one (not 27's Debian build): what it cannot give stays unread */
    if (sym[S_JVMCI]) {
        rc = walk_structs(h, bias + sym[S_JVMCI], &el, "JVMCI's VM structs", t, NULL, 0);
        if (rc == -ESRCH)
            return rc;
        t->jvmci = rc == 0;
    }
    return 0;
}

static int read_constants(const struct hotspot *h, uint64_t bias, const uint64_t *sym, struct tables *t, char *why,
                          size_t whylen)
{
    uint64_t table, o_name, o_value, stride;
    int rc;
    if ((rc = mem_u64(h, bias + sym[S_INTS], &table)) || (rc = companion(h, bias, sym, S_I_NAME, &o_name)) ||
        (rc = companion(h, bias, sym, S_I_VALUE, &o_value)) || (rc = companion(h, bias, sym, S_I_STRIDE, &stride)))
        return rc == -ESRCH ? rc : fail(why, whylen, -ENOTSUP, "gHotSpotVMIntConstants' companions are unreadable");
    if (!table || !stride)
        return fail(why, whylen, -EAGAIN, "gHotSpotVMIntConstants is not filled in yet (still starting): try again");
    if (stride < 8 || o_name + 8 > stride || o_value + 4 > stride)
        return fail(why, whylen, -ENOTSUP,
                    "gHotSpotVMIntConstants' entry layout is not one this reads (stride %" PRIu64 ")", stride);
    uint8_t entry[SPAN_MAX];
    char name[NAME_LEN];
    for (int i = 0; i < MAX_ENTRIES; i++) {
        if ((rc = mem_read(h, table + (uint64_t)i * stride, entry, stride)))
            return rc == -ESRCH ? rc
                                : fail(why, whylen, -ENOTSUP, "gHotSpotVMIntConstants is unreadable at entry %d", i);
        uint64_t name_ptr;
        memcpy(&name_ptr, entry + o_name, 8);
        if (!name_ptr)
            return 0;
        if (mem_str(h, name_ptr, name, sizeof(name)))
            continue;
        for (int c = 0; c < C_COUNT; c++)
            if (!t->have_constant[c] && strcmp(name, constant_names[c]) == 0) {
                memcpy(&t->constant[c], entry + o_value, 4);
                t->have_constant[c] = 1;
            }
    }
    return fail(why, whylen, -ENOTSUP, "gHotSpotVMIntConstants has no end within %d entries", MAX_ENTRIES);
}

/* ---- the JDK's release file ---- */

/* The value of KEY="value" in line, unquoted, into out. */
static void release_value(const char *line, const char *key, char *out, size_t len)
{
    size_t k = strlen(key);
    if (strncmp(line, key, k) != 0 || line[k] != '=')
        return;
    const char *v = line + k + 1;
    if (*v == '"')
        v++;
    size_t n = strcspn(v, "\"\n");
    if (n >= len)
        n = len - 1;
    memcpy(out, v, n);
    out[n] = '\0';
}

/* "IMPLEMENTOR JAVA_RUNTIME_VERSION" of <home>/release, home being libjvm.so's lib/server/.. /.. */
static void read_vm_name(struct hotspot *h)
{
    char home[sizeof(h->info.libjvm)], path[4096], line[512], impl[48] = "", version[48] = "";
    snprintf(home, sizeof(home), "%s", h->info.libjvm);
    for (int i = 0; i < 3; i++) {
        char *slash = strrchr(home, '/');
        if (!slash)
            return;
        *slash = '\0';
    }
    snprintf(path, sizeof(path), "%s/%ld/root%s/release", h->proc_root, (long)h->pid, home);
    FILE *f = fopen(path, "re");
    if (!f)
        return;
    while (fgets(line, sizeof(line), f)) {
        release_value(line, "IMPLEMENTOR", impl, sizeof(impl));
        release_value(line, "JAVA_RUNTIME_VERSION", version, sizeof(version));
    }
    fclose(f);
    snprintf(h->info.vm_name, sizeof(h->info.vm_name), "%s%s%s", impl, impl[0] && version[0] ? " " : "", version);
}

/* ---- walking the thread list ---- */

/* What open checks besides a hotspot_thread. */
struct thread_check {
    uint64_t eetop; /* the thread object's eetop: its JavaThread*, 0 while starting or ending */
};

static uint64_t span_u64(const struct hotspot *h, const uint8_t *span, uint32_t off)
{
    uint64_t v;
    memcpy(&v, span + (off - h->span_lo), sizeof(v));
    return v;
}

/* One JavaThread, read with its handles' slots read again last: 0, -EAGAIN
 * (torn: something moved), or -ESRCH. */
static int read_thread(const struct hotspot *h, uint64_t jt, struct hotspot_thread *t, struct thread_check *c)
{
    uint8_t span[SPAN_MAX];
    *t = (struct hotspot_thread){.java_thread = jt, .vthread_state = -1};
    int rc = mem_read(h, jt + h->span_lo, span, h->span_len);
    if (rc)
        return rc == -ESRCH ? rc : -EAGAIN;
    uint64_t h_obj = span_u64(h, span, h->info.thread_obj), h_vt = span_u64(h, span, h->info.vthread);
    uint64_t osthread = span_u64(h, span, h->osthread), obj = 0, vt = 0, again;
    int32_t ns_tid = 0, vt_state = -1;
    int64_t tid = 0, vt_tid = 0;
    if (osthread && (rc = mem_i32(h, osthread + h->os_thread_id, &ns_tid)))
        goto torn;
    if ((h_obj && (rc = mem_u64(h, h_obj, &obj))) || (h_vt && (rc = mem_u64(h, h_vt, &vt))))
        goto torn;
    if (obj && (rc = mem_read(h, obj + h->info.tid, &tid, sizeof(tid))))
        goto torn;
    if (c) {
        c->eetop = 0;
        if (obj && (rc = mem_u64(h, obj + h->eetop, &c->eetop)))
            goto torn;
    }
    if (vt && vt != obj) {
        if ((rc = mem_read(h, vt + h->info.tid, &vt_tid, sizeof(vt_tid))) ||
            (rc = mem_i32(h, vt + h->info.vt_state, &vt_state)))
            goto torn;
    }
    /* a collection (or an unmount) between the reads above shows here */
    if ((h_obj && ((rc = mem_u64(h, h_obj, &again)) || again != obj)) ||
        (h_vt && ((rc = mem_u64(h, h_vt, &again)) || again != vt)))
        goto torn;
    t->ns_tid = ns_tid;
    t->java_tid = tid;
    memcpy(&t->thread_state, span + (h->info.thread_state - h->span_lo), sizeof(t->thread_state));
    t->pending_monitor = span_u64(h, span, h->info.pending_monitor);
    t->waiting_monitor = span_u64(h, span, h->info.waiting_monitor);
    if (vt && vt != obj && vt_tid != tid) {
        t->vthread_id = vt_tid;
        t->vthread_state = vt_state;
    }
    return 0;
torn:
    return rc == -ESRCH ? rc : -EAGAIN;
}

/* Waits out a safepoint under way (the counter is odd during one), so that a
 * walk starts just after it: 0, -EAGAIN when it lasts longer than 20 ms, -ESRCH. */
static int settle(const struct hotspot *h)
{
    for (int i = 0; i < SETTLE_POLLS; i++) {
        uint64_t counter;
        int rc = mem_u64(h, h->safepoint_addr, &counter);
        if (rc)
            return rc == -ESRCH ? rc : -EAGAIN;
        if (!(counter & 1))
            return 0;
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
    return -EAGAIN;
}

/* One walk: the number of threads, -EAGAIN when torn, -ESRCH, -ENOMEM. */
static int walk_once(struct hotspot *h, struct hotspot_thread *out, size_t cap, struct thread_check *checks)
{
    uint64_t before, after, list, list_again, array;
    uint32_t len = 0;
    int rc;
    if ((rc = mem_u64(h, h->safepoint_addr, &before)) || (rc = mem_u64(h, h->list_addr, &list)))
        return rc == -ESRCH ? rc : -EAGAIN;
    if (before & 1)
        return -EAGAIN; /* a safepoint is under way */
    if (list) {
        if ((rc = mem_read(h, list + h->list_length, &len, sizeof(len))) ||
            (rc = mem_u64(h, list + h->list_threads, &array)))
            return rc == -ESRCH ? rc : -EAGAIN;
        if (len > MAX_THREADS)
            return -EAGAIN;
        size_t n = len < cap ? len : cap;
        if (n > h->slots_cap) {
            uint64_t *slots = realloc(h->slots, n * sizeof(*slots));
            if (!slots)
                return -ENOMEM;
            h->slots = slots;
            h->slots_cap = n;
        }
        if (n && (rc = mem_read(h, array, h->slots, n * sizeof(*h->slots))))
            return rc == -ESRCH ? rc : -EAGAIN;
        for (size_t i = 0; i < n; i++)
            if (!h->slots[i] || (rc = read_thread(h, h->slots[i], &out[i], checks ? &checks[i] : NULL)))
                return rc == -ESRCH ? rc : -EAGAIN;
    }
    if ((rc = mem_u64(h, h->safepoint_addr, &after)) || (rc = mem_u64(h, h->list_addr, &list_again)))
        return rc == -ESRCH ? rc : -EAGAIN;
    return after == before && list_again == list ? (int)len : -EAGAIN;
}

int hotspot_threads(struct hotspot *h, struct hotspot_thread *out, size_t cap)
{
    if (!h || (cap && !out))
        return -EINVAL;
    /* no waiting here: the caller runs in the collector's event loop, and tries again at its next tick */
    int rc = -EAGAIN;
    for (int try = 0; try < TRIES && rc == -EAGAIN; try++)
        rc = walk_once(h, out, cap, NULL);
    return rc;
}

int hotspot_thread_now(struct hotspot *h, uint64_t java_thread, struct hotspot_thread *out)
{
    uint64_t before, after;
    int rc;
    if (!h || !out || !java_thread)
        return -EINVAL;
    if ((rc = mem_u64(h, h->safepoint_addr, &before)))
        return rc == -ESRCH ? rc : -EAGAIN;
    if (before & 1)
        return -EAGAIN;
    if ((rc = read_thread(h, java_thread, out, NULL)))
        return rc;
    if ((rc = mem_u64(h, h->safepoint_addr, &after)))
        return rc == -ESRCH ? rc : -EAGAIN;
    return after == before ? 0 : -EAGAIN;
}

/* The counts a park's reason reads (kstate.h park_why_of), those park_rule names: its continuation's pin
 * count (0, with *entry 0, when it runs none) and its monitors held. 0, or -errno (unreadable). */
static int park_counts(struct hotspot *h, uint64_t java_thread, uint64_t *entry, uint32_t *pins, int64_t *held)
{
    const struct hotspot_info *in = &h->info;
    int rc = 0;
    *entry = 0;
    *pins = 0;
    *held = 0;
    if ((in->park_rule & PARK_RULE_PIN_COUNT) &&
        ((rc = mem_u64(h, java_thread + in->cont_entry, entry)) ||
         (*entry && (rc = mem_read(h, *entry + in->pin_count, pins, sizeof(*pins))))))
        return rc;
    if (in->park_rule & PARK_RULE_HELD)
        rc = mem_read(h, java_thread + in->held_monitors, held, sizeof(*held));
    return rc;
}

int hotspot_park_why(struct hotspot *h, uint64_t java_thread)
{
    uint64_t entry;
    uint32_t pins;
    int64_t held;
    if (park_counts(h, java_thread, &entry, &pins, &held) ||
        ((h->info.park_rule & PARK_RULE_PIN_COUNT) && !entry)) /* parked on its carrier: it runs one */
        return PARK_WHY_UNKNOWN;
    return park_why_of(h->info.park_rule, pins, held);
}

int hotspot_thread_list(struct hotspot *h, uint64_t *list)
{
    if (!h || !list)
        return -EINVAL;
    return mem_u64(h, h->list_addr, list);
}

const struct hotspot_info *hotspot_info(const struct hotspot *h)
{
    return h ? &h->info : NULL;
}

/* ---- checking the layout on live threads ---- */

/* More than one number on proc_root/pid/status's NSpid line: the JVM has a pid namespace of its own. */
static int own_pidns(const char *proc_root, int32_t pid, int *own)
{
    char path[4096], line[256];
    snprintf(path, sizeof(path), "%s/%ld/status", proc_root, (long)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return errno == ENOENT ? -ESRCH : -errno;
    *own = 0;
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, "NSpid:", 6) == 0) {
            char *p = line + 6, *end;
            int n = 0;
            while (strtol(p, &end, 10), end != p) {
                n++;
                p = end;
            }
            *own = n > 1;
            break;
        }
    fclose(f);
    return 0;
}

static int by_value(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* The JVM's threads as its own namespace numbers them (the last number of each
 * task's NSpid line), sorted; malloc'ed, *n of them. */
static int32_t *ns_tids(const struct hotspot *h, size_t *n)
{
    char path[4096], line[256];
    *n = 0;
    snprintf(path, sizeof(path), "%s/%ld/task", h->proc_root, (long)h->pid);
    DIR *d = opendir(path);
    if (!d)
        return NULL;
    size_t cap = 256;
    int32_t *tids = malloc(cap * sizeof(*tids));
    struct dirent *e;
    while (tids && (e = readdir(d)) && *n < MAX_THREADS * 2) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof(path), "%s/%ld/task/%s/status", h->proc_root, (long)h->pid, e->d_name);
        FILE *f = fopen(path, "re");
        if (!f)
            continue;
        while (fgets(line, sizeof(line), f)) {
            if (strncmp(line, "NSpid:", 6) != 0)
                continue;
            char *p = line + 6, *end;
            long v, last = -1;
            while ((v = strtol(p, &end, 10)), end != p) {
                last = v;
                p = end;
            }
            if (last > 0) {
                if (*n == cap) {
                    int32_t *more = realloc(tids, 2 * cap * sizeof(*tids));
                    if (!more)
                        break;
                    tids = more;
                    cap *= 2;
                }
                tids[(*n)++] = (int32_t)last;
            }
            break;
        }
        fclose(f);
    }
    closedir(d);
    if (tids)
        qsort(tids, *n, sizeof(*tids), by_value);
    return tids;
}

/* Is ns_tid a thread of the JVM. */
static int is_jvm_thread(const struct hotspot *h, int32_t ns_tid, const int32_t *tids, size_t n)
{
    if (ns_tid <= 0)
        return 0;
    if (!h->own_pidns) {
        char path[4096];
        struct stat st;
        snprintf(path, sizeof(path), "%s/%ld/task/%ld", h->proc_root, (long)h->pid, (long)ns_tid);
        return stat(path, &st) == 0;
    }
    return tids && bsearch(&ns_tid, tids, n, sizeof(*tids), by_value) != NULL;
}

/* Every thread that reads whole must have a thread object whose eetop is its
 * JavaThread*, a tid > 0, a plausible state and an OS thread of the JVM; and
 * there must be one. A few walks (threads start and end between the walk and
 * the look at /proc). */
/* The park counts' offsets, checked on the threads a verified walk gave: a count of held monitors
 * is small and never negative, and so is a continuation's pin count. Any doubt and they are not read
 * (a park's reason is then unknown, as without them). */
static void verify_park(struct hotspot *h, const struct hotspot_thread *rows, size_t n)
{
    struct hotspot_info *in = &h->info;
    int ok = 1;
    for (size_t i = 0; i < n && ok; i++) {
        uint64_t entry;
        int64_t held;
        uint32_t pins;
        ok = park_counts(h, rows[i].java_thread, &entry, &pins, &held) == 0 && held >= 0 && held <= 1 << 20 &&
             pins <= 1 << 16;
    }
    if (!ok) {
        in->park_rule = 0;
        in->held_monitors = in->cont_entry = in->pin_count = 0;
        in->park_from = "the counts read out of range on a live thread, so they are not read";
    }
}

static int verify(struct hotspot *h, char *why, size_t whylen)
{
    struct hotspot_thread *rows = calloc(VERIFY_ROWS, sizeof(*rows));
    struct thread_check *checks = calloc(VERIFY_ROWS, sizeof(*checks));
    char problem[160] = "no Java thread read whole";
    int rc = -ENOMEM, starting = 0, torn = 0;
    if (!rows || !checks)
        goto cleanup;
    for (int try = 0; try < TRIES && torn < TORN_AT_OPEN;) {
        int n = settle(h);
        if (n == 0)
            n = walk_once(h, rows, VERIFY_ROWS, checks);
        if (n == -ESRCH || n == -ENOMEM) {
            rc = fail(why, whylen, n, "pid %ld: %s", (long)h->pid, strerror(-n));
            goto cleanup;
        }
        if (n == -EAGAIN) {
            torn++;
            snprintf(problem, sizeof(problem), "%d walks of the thread list in a row were torn or unreadable", torn);
            continue;
        }
        torn = 0;
        if (try++)
            nanosleep(&(struct timespec){0, 20000000}, NULL); /* 20 ms: let threads start or end */
        if (n == 0) {
            starting = 1;
            continue;
        }
        size_t m = (size_t)n < VERIFY_ROWS ? (size_t)n : VERIFY_ROWS, good = 0, tid_n = 0;
        int32_t *tids = h->own_pidns ? ns_tids(h, &tid_n) : NULL;
        int bad = 0;
        for (size_t i = 0; i < m && !bad; i++) {
            const struct hotspot_thread *t = &rows[i];
            const struct thread_check *c = &checks[i];
            if (!c->eetop)
                continue; /* no thread object, or one starting or ending */
            bad = 1;
            if (c->eetop != t->java_thread)
                snprintf(problem, sizeof(problem),
                         "the thread object of JavaThread 0x%" PRIx64 " says it belongs to 0x%" PRIx64, t->java_thread,
                         c->eetop);
            else if (t->java_tid <= 0)
                snprintf(problem, sizeof(problem), "JavaThread 0x%" PRIx64 " has Thread.tid %" PRId64, t->java_thread,
                         t->java_tid);
            else if (t->thread_state < 0 || t->thread_state >= MAX_STATE)
                snprintf(problem, sizeof(problem), "JavaThread 0x%" PRIx64 " has state %" PRId32, t->java_thread,
                         t->thread_state);
            else if (!is_jvm_thread(h, t->ns_tid, tids, tid_n))
                snprintf(problem, sizeof(problem),
                         "OS thread %" PRId32 " of JavaThread 0x%" PRIx64 " is not a thread of pid %ld", t->ns_tid,
                         t->java_thread, (long)h->pid);
            else
                bad = 0;
            good += !bad;
        }
        free(tids);
        if (!bad && good) {
            verify_park(h, rows, m);
            rc = 0;
            goto cleanup;
        }
        starting = !bad; /* no thread has its thread object yet: the JVM is still making its main thread */
    }
    if (starting)
        rc = fail(why, whylen, -EAGAIN, "pid %ld has no Java thread yet (still starting): try again", (long)h->pid);
    else
        rc = fail(why, whylen, -ENOTSUP, "layout not verified: %s (JDK %" PRIu32 ", %s)", problem, h->info.feature,
                  h->info.release);
cleanup:
    free(rows);
    free(checks);
    return rc;
}

/* ---- open ---- */

/* Is the JVM's heap ZGC's (Universe::_collectedHeap's vtable is ZCollectedHeap's
 * or XCollectedHeap's): 2 generational, 1 single-generation, else 0. */
static int zgc_kind(const struct hotspot *h, uint64_t bias, const uint64_t *sym, const struct tables *t)
{
    uint64_t heap, vptr;
    if (!t->have_field[F_HEAP] || mem_u64(h, t->field[F_HEAP], &heap) || mem_u64(h, heap, &vptr))
        return 0;
    /* a vtable pointer is the Itanium ABI's address point: past offset-to-top and typeinfo */
    if (sym[S_ZHEAP] && vptr == bias + sym[S_ZHEAP] + 16)
        return 2;
    return sym[S_XHEAP] && vptr == bias + sym[S_XHEAP] + 16;
}

/* The statics of java_lang_Thread and friends: offsets in a Java object. */
static int read_java_offset(const struct hotspot *h, uint64_t addr, uint32_t *out)
{
    int32_t v;
    int rc = mem_i32(h, addr, &v);
    if (rc)
        return rc;
    if (v <= 0 || v >= 1 << 16)
        return -EAGAIN; /* not computed yet: the JVM is starting */
    *out = (uint32_t)v;
    return 0;
}

/* The pin count's offsets as Continuation::pin's machine code has them (jvmcode.h): 0, or -ENOTSUP. */
static int code_pin_offsets(const struct hotspot *h, uint64_t bias, const uint64_t *sym, uint32_t *entry,
                            uint32_t *count)
{
    uint8_t code[JVMCODE_PIN_BYTES];
    if (!sym[S_CONT_PIN] || mem_read(h, bias + sym[S_CONT_PIN], code, sizeof(code)))
        return -ENOTSUP;
    return jvmcode_pin_offsets(code, sizeof(code), entry, count);
}

/* What of the JDK's freeze decision the kernel view can read (kstate.h park_why_of), and from where. */
static void park_layout(struct hotspot *h, uint64_t bias, const uint64_t *sym, const struct tables *t)
{
    struct hotspot_info *in = &h->info;
    in->park_rule = 0;
    in->held_monitors = in->cont_entry = in->pin_count = 0;
    in->park_from = "";
    uint32_t code_entry = 0, code_count = 0;
    int by_code =
        code_pin_offsets(h, bias, sym, &code_entry, &code_count) == 0 && code_entry < SPAN_MAX && code_count < 256;
    int by_table = t->have_field[F_CONT_ENTRY] && t->have_field[F_PIN_COUNT] && t->field[F_CONT_ENTRY] < SPAN_MAX &&
                   t->field[F_PIN_COUNT] < 256;
    if (by_table && by_code && (code_entry != t->field[F_CONT_ENTRY] || code_count != t->field[F_PIN_COUNT])) {
        in->park_from = "JVMCI's VM structs and the machine code of Continuation::pin disagree on the pin count's "
                        "offsets, so neither is read";
    } else if (by_table || by_code) {
        in->cont_entry = by_table ? (uint32_t)t->field[F_CONT_ENTRY] : code_entry;
        in->pin_count = by_table ? (uint32_t)t->field[F_PIN_COUNT] : code_count;
        in->park_rule |= PARK_RULE_PIN_COUNT;
        in->park_from = by_table && by_code ? "the pin count's offsets from JVMCI's VM structs, which the machine code "
                                              "of Continuation::pin agrees with"
                        : by_table          ? "the pin count's offsets from JVMCI's VM structs"
                                            : "the pin count's offsets from the machine code of Continuation::pin";
    } else if (in->feature == 21) {
        /* no pin count read; no class of 21's image calls Continuation.pin (every jmod's bytecode was
         * searched): only code given --add-exports java.base/jdk.internal.vm can */
        in->park_rule |= PARK_RULE_NO_CS;
    }
    if (t->have_field[F_HELD] && t->field[F_HELD] < SPAN_MAX) {
        in->held_monitors = (uint32_t)t->field[F_HELD];
        in->park_rule |= PARK_RULE_HELD;
    } else if (in->feature >= 26 && (t->jvmci ? !t->have_field[F_HELD] : !sym[S_HELD_ASM])) {
        /* gone with legacy locking: its freeze checks none. JVMCI's table, read whole, lists no such
         * field; without that table, no code generator maintains the count (21 to 25 have one) */
        in->park_rule |= PARK_RULE_NO_HELD;
    }
}

static int fill_layout(struct hotspot *h, uint64_t bias, const uint64_t *sym, const struct tables *t, char *why,
                       size_t whylen)
{
    for (int f = 0; f < F_COUNT; f++)
        if (fields[f].optional)
            continue;
        else if (!t->have_field[f] || (!fields[f].is_static && t->field[f] >= 1 << 20) ||
                 (fields[f].is_static && !t->field[f]))
            return fail(why, whylen, -ENOTSUP, "JDK %" PRIu32 " (%s): gHotSpotVMStructs has no usable %s::%s",
                        h->info.feature, h->info.release, fields[f].type, fields[f].name);
    for (int c = 0; c < C_COUNT; c++)
        if (!t->have_constant[c])
            return fail(why, whylen, -ENOTSUP, "JDK %" PRIu32 " (%s): gHotSpotVMIntConstants has no %s",
                        h->info.feature, h->info.release, constant_names[c]);
    for (int k = S_TID; k <= S_SAFEPOINT; k++)
        if (!sym[k])
            return fail(why, whylen, -ENOTSUP, "JDK %" PRIu32 " (%s): libjvm.so's .symtab has no %s", h->info.feature,
                        h->info.release, sym_words[k]);
    struct hotspot_info *in = &h->info;
    in->thread_obj = (uint32_t)t->field[F_THREAD_OBJ];
    in->vthread = (uint32_t)t->field[F_VTHREAD];
    in->pending_monitor = (uint32_t)t->field[F_PENDING];
    in->waiting_monitor = (uint32_t)t->field[F_WAITING];
    in->thread_state = (uint32_t)t->field[F_STATE];
    in->state_blocked = t->constant[C_BLOCKED];
    in->state_in_native = t->constant[C_IN_NATIVE];
    h->list_addr = t->field[F_LIST];
    h->list_length = (uint32_t)t->field[F_LENGTH];
    h->list_threads = (uint32_t)t->field[F_THREADS];
    h->osthread = (uint32_t)t->field[F_OSTHREAD];
    h->os_thread_id = (uint32_t)t->field[F_THREAD_ID];
    h->safepoint_addr = bias + sym[S_SAFEPOINT];
    /* ZGC moves objects while the JVM runs, outside safepoints: generational ZGC keeps coloured
     * pointers in the handles (they read as unmapped addresses), and 21's single-generation ZGC
     * leaves a sleeping carrier's handles at the old copy of a relocated object until its next
     * cycle (seen: a pinned virtual thread read as tid 0, state 0, under allocation). */
    int zgc = zgc_kind(h, bias, sym, t);
    if (zgc)
        return fail(why, whylen, -ENOTSUP,
                    "layout not verified: %s; run the JVM with G1, Parallel, Serial or Shenandoah to watch it "
                    "without an agent (JDK %" PRIu32 ")",
                    zgc == 2 ? "generational ZGC keeps coloured pointers in the thread handles, which this does not "
                               "decode"
                             : "ZGC relocates thread objects while the JVM runs and the handles of a sleeping thread "
                               "go on pointing at the old copy",
                    in->feature);
    if (h->os_thread_id >= SPAN_MAX || h->list_length >= SPAN_MAX || h->list_threads >= SPAN_MAX)
        return fail(why, whylen, -ENOTSUP, "layout not verified: OSThread or ThreadsList offsets out of range");
    /* the JavaThread span a walk reads: its 8-byte fields and _thread_state (4) */
    uint32_t lo = in->thread_obj, hi = in->thread_obj + 8;
    const uint32_t offs[] = {in->vthread, h->osthread, in->pending_monitor, in->waiting_monitor, in->thread_state};
    const uint32_t sizes[] = {8, 8, 8, 8, 4};
    for (int i = 0; i < 5; i++) {
        lo = offs[i] < lo ? offs[i] : lo;
        hi = offs[i] + sizes[i] > hi ? offs[i] + sizes[i] : hi;
    }
    if (hi - lo > SPAN_MAX)
        return fail(why, whylen, -ENOTSUP, "layout not verified: JavaThread's fields are %" PRIu32 " bytes apart",
                    hi - lo);
    h->span_lo = lo;
    h->span_len = hi - lo;
    park_layout(h, bias, sym, t);
    int rc;
    if ((rc = read_java_offset(h, bias + sym[S_TID], &in->tid)) ||
        (rc = read_java_offset(h, bias + sym[S_EETOP], &h->eetop)) ||
        (rc = read_java_offset(h, bias + sym[S_VT_STATE], &in->vt_state)))
        return rc == -EAGAIN ? fail(why, whylen, rc,
                                    "pid %ld has not laid out java.lang.Thread yet (still starting): "
                                    "try again",
                                    (long)h->pid)
                             : fail(why, whylen, rc, "pid %ld: %s", (long)h->pid, strerror(-rc));
    return 0;
}

int hotspot_open(struct hotspot **out, const char *proc_root, int32_t pid, char *why, size_t whylen)
{
    if (why && whylen)
        why[0] = '\0';
    if (!out || !proc_root || pid <= 0)
        return fail(why, whylen, -EINVAL, "no pid");
    *out = NULL;
    char path[4096];
    struct jvm_map map;
    uint64_t sym[S_COUNT] = {0}, vaddr0 = 0;
    struct tables t = {0};
    int rc, fd = -1;
    struct hotspot *h = calloc(1, sizeof(*h));
    if (!h)
        return -ENOMEM;
    h->mem = -1;
    h->pid = pid;
    h->proc_root = strdup(proc_root);
    if (!h->proc_root) {
        rc = -ENOMEM;
        goto cleanup;
    }
    if ((rc = find_libjvm(proc_root, pid, &map))) {
        if (rc == -ENOENT)
            fail(why, whylen, rc, "pid %ld maps no libjvm.so: not a HotSpot JVM", (long)pid);
        else
            fail(why, whylen, rc, "pid %ld: %s/%ld/maps: %s%s", (long)pid, proc_root, (long)pid,
                 rc == -ESRCH ? "the process is gone" : strerror(-rc),
                 rc == -EACCES ? " (reading another process's memory needs root)" : "");
        goto cleanup;
    }
    snprintf(h->info.libjvm, sizeof(h->info.libjvm), "%s", map.path);
    snprintf(path, sizeof(path), "%s/%ld/mem", proc_root, (long)pid);
    h->mem = open(path, O_RDONLY | O_CLOEXEC);
    if (h->mem < 0) {
        rc = errno == ENOENT ? -ESRCH : errno == EPERM ? -EACCES : -errno;
        fail(why, whylen, rc, "%s: %s%s", path, strerror(-rc),
             rc == -EACCES ? " (reading another process's memory needs root)" : "");
        goto cleanup;
    }
    if ((rc = own_pidns(proc_root, pid, &h->own_pidns))) {
        fail(why, whylen, rc, "pid %ld: %s", (long)pid, strerror(-rc));
        goto cleanup;
    }
    fd = open_libjvm(proc_root, pid, &map);
    if (fd < 0) {
        rc = fd;
        fail(why, whylen, rc, "cannot open pid %ld's %s: %s", (long)pid, map.path, strerror(-rc));
        goto cleanup;
    }
    uid_t owner = 0;
    if ((rc = hotspot_trusted_file(fd, &owner))) {
        if (rc == -EPERM)
            rc = fail(why, whylen, -ENOTSUP,
                      "its %s is owned by uid %lu or writable by others: the collector reads only a JDK that root "
                      "installed (one its user could change as it is read)",
                      map.path, (unsigned long)owner);
        else
            fail(why, whylen, rc, "pid %ld's %s: %s", (long)pid, map.path, strerror(-rc));
        goto cleanup;
    }
    if ((rc = read_symbols(fd, &vaddr0, sym, why, whylen)))
        goto cleanup;
    for (int k = S_STRUCTS; k < S_TID; k++)
        if (!sym[k]) {
            rc = fail(why, whylen, -ENOTSUP, "libjvm.so exports no %s: not a HotSpot this can read", sym_names[k]);
            goto cleanup;
        }
    uint64_t bias = map.start - vaddr0;
    if ((rc = read_structs(h, bias, sym, &t, why, whylen)) || (rc = read_constants(h, bias, sym, &t, why, whylen)))
        goto cleanup;
    if (!t.have_field[F_MAJOR] || !t.have_field[F_RELEASE]) {
        rc = fail(why, whylen, -ENOTSUP, "gHotSpotVMStructs has no Abstract_VM_Version: not a HotSpot this can read");
        goto cleanup;
    }
    int32_t major;
    uint64_t release;
    if ((rc = mem_i32(h, t.field[F_MAJOR], &major)) || (rc = mem_u64(h, t.field[F_RELEASE], &release))) {
        fail(why, whylen, rc, "pid %ld: Abstract_VM_Version is unreadable: %s", (long)pid, strerror(-rc));
        goto cleanup;
    }
    if (mem_str(h, release, h->info.release, sizeof(h->info.release)))
        h->info.release[0] = '\0';
    h->info.feature = major > 0 ? (uint32_t)major : 0;
    read_vm_name(h);
    if (major < 21) {
        rc = fail(why, whylen, -ENOTSUP, "JDK %" PRId32 " (%s): zero-touch needs JDK 21 or later", major,
                  h->info.release);
        goto cleanup;
    }
    if ((rc = fill_layout(h, bias, sym, &t, why, whylen)) || (rc = verify(h, why, whylen)))
        goto cleanup;
    *out = h;
    h = NULL;
cleanup:
    if (fd >= 0)
        close(fd);
    hotspot_close(h);
    return rc;
}

void hotspot_close(struct hotspot *h)
{
    if (!h)
        return;
    if (h->mem >= 0)
        close(h->mem);
    free(h->proc_root);
    free(h->slots);
    free(h);
}
