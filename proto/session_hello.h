/* The agent's Hello: one model of it for every reader (the collector's connections and JVMs,
 * the report's sessions), taken from the message once, its strings owned.
 *
 * A string the agent did not send is NULL (a report writes null for it; the collector's
 * readers take NULL as empty). Pure. */
#ifndef VTPIN_PROTO_SESSION_HELLO_H
#define VTPIN_PROTO_SESSION_HELLO_H

#include <stddef.h>
#include <stdint.h>

#include "vtpin.pb-c.h"

struct session_hello {
    uint32_t schema_version;
    int64_t pid; /* the JVM's own, in its pid namespace */
    char *java_version, *vm_name, *vm_version, *vm_vendor, *host, *agent_version, *options;
    char *app;     /* main class or jar: the first word of sun.java.command */
    int mode;      /* a Vtpin__V1__LoadMode value; 0 when not said */
    int occupancy; /* a Vtpin__V1__OccupancySource value; 0 when not said */
    int has_clock; /* the wall and monotonic clocks at one instant: both said */
    int64_t start_unix_ns, start_mono_ns;
    int has_threshold;
    uint64_t threshold_ns;
    uint64_t sample_interval_ns;       /* 0: not said */
    uint64_t occupancy_interval_ns;    /* sampled occupancy's period; older agents: sample_interval_ns */
    uint32_t jdk_feature, parallelism; /* 0: unknown */
    uint32_t connection;               /* 0 for an agent's first connection to a collector */
    int has_thread_layout;             /* a kernel view can read the carriers' JavaThreads */
    char **capabilities_missing;
    size_t n_capabilities_missing;
};

/* Takes d into h (h empty, or freed first). 0, or -ENOMEM (h empty). */
int session_hello_take(struct session_hello *h, const Vtpin__V1__Hello *d);
/* A deep copy of src into dst (what dst held is freed once the copy is whole). 0, or -ENOMEM
 * (dst unchanged). */
int session_hello_copy(struct session_hello *dst, const struct session_hello *src);
/* Frees what h owns and empties it. */
void session_hello_fini(struct session_hello *h);
/* The bytes its strings hold (for a memory budget). */
size_t session_hello_bytes(const struct session_hello *h);

struct json;
/* Into the JSON object being written, the Hello's facts as the report's "jvm" and the collector's
 * status both give them: "java_version", "vm", "vm_version", "vendor", "host", "agent_version",
 * "options", "app" (null when not said), "mode", "jdk_feature", "parallelism" (null when not
 * said) and "capabilities_missing" (an array). Each reader writes the pid its own way. */
void session_hello_json(struct json *j, const struct session_hello *h);

#endif
