/* The owner of a monitor when it is a virtual thread that unmounted holding
 * it (JDK 24+, JEP 491), which JVMTI does not name: GetObjectMonitorUsage
 * leaves virtual owners out (JDK-8328083), and GetOwnedMonitorInfo needs the
 * thread, which JVMTI cannot list.
 *
 * Found with the JDK's own thread-dump machinery, as `jcmd Thread.dump_to_file`
 * finds a virtual thread's monitors: the thread containers
 * (jdk.internal.vm.ThreadContainers.root() and their children) list the
 * virtual threads, and jdk.internal.vm.ThreadSnapshot.of(thread) names the
 * monitors an unmounted one holds, from its frozen stack. JNI calls into the
 * JDK's internal classes (JNI does not check module access), on the writer
 * thread only, when a pin crosses the threshold and neither JVMTI nor the
 * carriers named the owner. A look snapshots at most VOWNER_THREADS_MAX
 * unmounted virtual threads, and at most VOWNER_LOOKS_PER_SECOND looks run a
 * second (the rest say nothing); the last owner found is checked first (one
 * snapshot, no look), so every waiter of one monitor is named. */
#ifndef VTPIN_VOWNER_H
#define VTPIN_VOWNER_H

#include <jvmti.h>
#include <stdint.h>

#define VOWNER_THREADS_MAX 4096
#define VOWNER_LOOKS_PER_SECOND 2

/* The unmounted virtual thread that owns monitor (not waiter): a new local ref, or NULL (none found,
 * not over the limits, or this JDK has no such machinery: before 25). Writer thread only. */
jthread vowner_find(JNIEnv *jni, jobject monitor, jthread waiter, int64_t now_ns);

#endif
