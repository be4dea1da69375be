/* A HotSpot JVM (JDK 21 and later) read from outside, with no agent in it: a
 * root process reads the serviceability agent's tables that libjvm.so exports
 * (gHotSpotVMStructs, gHotSpotVMIntConstants) and a few .symtab statics, then
 * walks the JVM's thread list through proc_root/pid/mem with pread. No ptrace,
 * the JVM is never stopped, and no offset is guessed: each one is read from the
 * process and the whole layout is checked on live threads before it is used.
 *
 * A walk is a snapshot taken while the JVM runs: it is accepted only when the
 * safepoint counter is even and the same before and after it, the thread list
 * is the same, and each thread's two OopHandle slots read the same again after
 * its objects were read; else it is tried again a few times (-EAGAIN).
 * Collectors that move objects outside safepoints (ZGC, Shenandoah) are not
 * covered by that check; a generational ZGC's coloured pointers fail the
 * check at open (-ENOTSUP), so no wrong thread is reported.
 *
 * Cost: open parses libjvm.so's symbols once (100-250 ms); a walk is a few
 * preads per thread on a descriptor kept open (about 0.5 ms for 30 threads). */
#ifndef VTPIN_KERNEL_HOTSPOT_H
#define VTPIN_KERNEL_HOTSPOT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct hotspot;

/* Opens JVM pid (as proc_root, normally "/proc", sees it): finds its libjvm.so mapping in
 * proc_root/pid/maps, reads that file's ELF symbols with libelf (through proc_root/pid/root/<path>
 * so a JVM in a container works; proc_root/pid/map_files/<range> when that is not the mapped
 * file), reads the serviceability agent's exported tables and the .symtab statics it needs from
 * the process memory, and VERIFIES the layout on live threads before returning 0.
 * Returns 0 with *out; -ENOENT when pid maps no libjvm.so (not a HotSpot JVM); -ESRCH when it
 * is gone; -ENOTSUP when it is a JVM this cannot read (JDK older than 21, no .symtab, a table
 * entry missing, a layout that does not verify, a libjvm.so that neither root nor this process's
 * user owns, or that others can write: it is not parsed); -EAGAIN when it is still starting (no Java
 * thread or Thread offsets yet: try again later); other -errno (EACCES: not root). why[] (may be
 * NULL) says what failed in words a user can act on. Never guesses an offset. */
int hotspot_open(struct hotspot **out, const char *proc_root, int32_t pid, char *why, size_t whylen);
/* NULL-safe. */
void hotspot_close(struct hotspot *h);

/* What it read at open. */
struct hotspot_info {
    uint32_t feature; /* Abstract_VM_Version::_vm_major_version: 21, 25, ... */
    char release[64]; /* Abstract_VM_Version::_s_vm_release, e.g. "21.0.13+11-Debian-1" */
    char vm_name[96]; /* "IMPLEMENTOR JAVA_RUNTIME_VERSION" of the JDK's release file, "" if unreadable */
    char libjvm[512]; /* libjvm.so's path as the JVM's mount namespace names it */
    /* the wire's ThreadLayout: what the collector's BPF program reads at each context switch */
    uint32_t thread_obj, vthread, pending_monitor, waiting_monitor, thread_state; /* offsets in JavaThread */
    uint32_t tid; /* java.lang.Thread.tid in a thread object (java_lang_Thread::_tid_offset) */
    int32_t state_blocked, state_in_native; /* JavaThreadState values from gHotSpotVMIntConstants */
    uint32_t vt_state; /* java.lang.VirtualThread.state offset (java_lang_VirtualThread::_state_offset) */
    /* Why a park on the carrier could not unmount (kstate.h park_why_of): the counts the JDK's freeze
     * looks at, from JVMCI's table of VM structs (also in .symtab: JVMCIVMStructs::localHotSpotVMStructs),
     * which lists more than the serviceability agent's, or, for the pin count where a build has no such
     * table, from Continuation::pin's machine code (jvmcode.h). Offsets 0: not read; park_rule:
     * PARK_RULE_*. */
    uint32_t held_monitors; /* JavaThread::_held_monitor_count (intx) */
    uint32_t cont_entry;    /* JavaThread::_cont_entry (ContinuationEntry*) */
    uint32_t pin_count;     /* ContinuationEntry::_pin_count (uint32_t) */
    uint32_t park_rule;
    const char *park_from; /* where the offsets came from, or why they are not read; "" when no source had them */
};
const struct hotspot_info *hotspot_info(const struct hotspot *h);

/* One Java thread: its JavaThread* and its OS thread id as the JVM's own pid namespace numbers it
 * (OSThread::_thread_id; the caller maps it to the host's, e.g. with nspid_host_tid). */
struct hotspot_thread {
    uint64_t java_thread;
    int32_t ns_tid;        /* 0 when it has no OS thread yet */
    int64_t java_tid;      /* its java.lang.Thread.tid (the carrier's own, not a mounted virtual thread's); 0 when
                              it has no thread object */
    int64_t vthread_id;    /* the virtual thread mounted on it now (its Thread.tid), 0 when none */
    int32_t vthread_state; /* that virtual thread's VirtualThread.state, -1 when none */
    /* what the collector's BPF program reads at a switch, read here in the same pread as the rest */
    int32_t thread_state;                      /* JavaThread::_thread_state (see state_blocked) */
    uint64_t pending_monitor, waiting_monitor; /* its ObjectMonitor* entering / in wait(), 0 when none */
};
/* The JVM's Java threads now (ThreadsSMRSupport::_java_thread_list -> ThreadsList {_length, _threads}):
 * up to cap of them into out, returns how many there are (may exceed cap), -EAGAIN when every try
 * was torn by a safepoint, a GC or a thread starting or ending (it never waits: try again later), -ESRCH when
 * the JVM is gone,
 * -errno. Opens no file; allocates only when the list outgrows every earlier one. */
int hotspot_threads(struct hotspot *h, struct hotspot_thread *out, size_t cap);
/* One Java thread now, by the JavaThread* a walk gave (the thread must not have ended since: a
 * JavaThread that ended reads as garbage). 0, -EAGAIN (torn by a safepoint), -ESRCH, -errno. */
int hotspot_thread_now(struct hotspot *h, uint64_t java_thread, struct hotspot_thread *out);
/* Why the virtual thread mounted on java_thread, parked on its carrier, could not unmount: an enum
 * park_why (kstate.h park_why_of), PARK_WHY_UNKNOWN when this JVM does not let it be read. */
int hotspot_park_why(struct hotspot *h, uint64_t java_thread);
/* Whether the file open at fd is one the collector may parse: a regular file owned by root or by the
 * collector's user, that no group or other user can write (another user could change it as it is
 * read). 0, -EPERM (with *owner), -errno. */
int hotspot_trusted_file(int fd, uid_t *owner);
/* The ThreadsList pointer: it changes each time the thread list changes, so a caller can skip a
 * walk. 0 with *list, or -errno (-ESRCH: the JVM is gone). */
int hotspot_thread_list(struct hotspot *h, uint64_t *list);

#endif
