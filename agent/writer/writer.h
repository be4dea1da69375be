/* The background thread: drains the callbacks' queue, names stacks, applies
 * the threshold and writes the trace and the recording. It is the only
 * place that does I/O, allocates freely or formats text. writer.c is its
 * loop; the work is in the rooms below it: pinpath/ (pin_machine.c decides,
 * active_pins.c executes), occupancy/ (sampler.c, watchdog.c, hogs.c),
 * outputs/, and session_frames.c here (what goes out about the session). */
#ifndef VTPIN_WRITER_H
#define VTPIN_WRITER_H

#include <jvmti.h>
#include <stdint.h>

#include "options.h"
#include "writer_config.h"

/* Opens the outputs (errors are returned, naming the file, before the JVM
 * commits to running with the agent). Returns 0 or -errno. */
int writer_open(const struct options *options, char *err, size_t errlen);
/* 1 when record= is written (0 without it, or when its disk had no room at open). */
int writer_recording(void);
/* What the Hello says about the JVM; call before writer_start. */
void writer_configure(const struct writer_config *config);
/* Starts the writer: a plain pthread that joins the JVM only for its JNI/JVMTI work (writer_thread.h). */
int writer_start(jvmtiEnv *jvmti, JNIEnv *jni);
/* Asks the thread to drain, write what it has and finish; waits at most timeout_ms.
 * final (VMDeath, unload): the writer never joins the JVM again; 0 ("stop"): a new attach may restart it. */
void writer_stop(unsigned timeout_ms, int final);
/* After writer_stop: closes the outputs and forgets the session, so that
 * writer_open, writer_configure and writer_start can run a new one (a new
 * attach after "stop"). -EBUSY while the old thread has not finished. */
int writer_reset(void);
/* Called by the callbacks after committing a record that the writer must
 * see by due_ns: wakes it if it sleeps past that (a futex wake only then). */
void writer_wake(int64_t due_ns);
/* Waits until the writer has run a round that began after this call: everything the
 * callbacks committed before it is drained and reported, the carriers sampled, and the
 * Java API's pins in progress renewed. 0, -ESRCH (no writer running), -ETIMEDOUT. Any
 * thread but the writer's; it sleeps, so never a callback. */
int writer_sync(unsigned timeout_ms);
/* The threshold of the session running now (pins shorter are counted, not reported); -1: none runs. */
int64_t writer_threshold_ns(void);
/* Adds a notice (missing capability, ...) to the outputs; call before writer_start. */
void writer_notice(int severity, const char *code, const char *text);

#endif
