#include "answer.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* What a field may be: a set of these. */
enum {
    T_NULL = 1u,
    T_BOOL = 2u,
    T_INT = 4u, /* a number written without fraction or exponent */
    T_NUM = 8u,
    T_STR = 16u,
    T_ARR = 32u,
    T_OBJ = 64u,
};

struct shape;

struct field {
    const char *key;
    unsigned types;
    const struct shape *sub; /* an object's fields; for an array, its items' (items are then objects) */
    unsigned items;          /* an array's item types (0: not checked) */
};

struct shape {
    const struct field *fields;
    size_t n;
};

#define SHAPE(name, ...)                                                                                               \
    static const struct field name##_fields[] = {__VA_ARGS__};                                                         \
    static const struct shape name = {name##_fields, sizeof(name##_fields) / sizeof(name##_fields[0])}

SHAPE(memory, {"budget_bytes", T_INT, NULL, 0}, {"used_bytes", T_INT, NULL, 0}, {"peak_bytes", T_INT, NULL, 0},
      {"dropped", T_INT, NULL, 0});
SHAPE(alert_rule, {"k", T_INT, NULL, 0}, {"hold_ns", T_INT, NULL, 0});
SHAPE(allow, {"uids", T_ARR, NULL, T_INT}, {"gids", T_ARR, NULL, T_INT});
SHAPE(collector, {"pid", T_INT, NULL, 0}, {"version", T_STR, NULL, 0}, {"socket", T_STR, NULL, 0},
      {"dir", T_STR, NULL, 0}, {"uptime_ns", T_INT, NULL, 0}, {"clients", T_INT, NULL, 0},
      {"memory", T_OBJ, &memory, 0}, {"alert_rule", T_OBJ, &alert_rule, 0}, {"window_ns", T_INT, NULL, 0},
      {"allow", T_OBJ, &allow, 0}, {"peers_refused", T_INT, NULL, 0}, {"kernel_view", T_OBJ, NULL, 0});

SHAPE(occupancy, {"carriers", T_INT, NULL, 0}, {"busy_pct", T_NUM, NULL, 0}, {"held_pct", T_NUM, NULL, 0},
      {"idle_pct", T_NUM, NULL, 0}, {"runqueue_pct", T_NUM, NULL, 0});
SHAPE(alert, {"active", T_BOOL, NULL, 0}, {"held", T_INT, NULL, 0}, {"total", T_INT, NULL, 0});
SHAPE(drops, {"events_dropped", T_INT, NULL, 0}, {"collector_dropped", T_INT, NULL, 0},
      {"transitions_dropped", T_INT, NULL, 0}, {"stacks_dropped", T_INT, NULL, 0},
      {"definitions_dropped", T_INT, NULL, 0}, {"memory_dropped", T_INT, NULL, 0},
      {"carriers_dropped", T_INT, NULL, 0});
SHAPE(recording_error, {"active", T_BOOL, NULL, 0}, {"error", T_STR, NULL, 0}, {"since_unix_ns", T_INT, NULL, 0},
      {"stopped_for_ns", T_INT, NULL, 0}, {"resumed_unix_ns", T_INT | T_NULL, NULL, 0}, {"frames_lost", T_INT, NULL, 0},
      {"bytes_lost", T_INT, NULL, 0});
SHAPE(agent_occupancy, {"hogged_ns", T_INT, NULL, 0});
SHAPE(deadlock, {"kind", T_STR, NULL, 0}, {"text", T_STR, NULL, 0}, {"for_ns", T_INT, NULL, 0},
      {"found", T_INT, NULL, 0});
SHAPE(agent_cost, {"cpu_ns", T_INT, NULL, 0}, {"jvmti_calls", T_INT, NULL, 0});
SHAPE(status_jvm, {"ns_pid", T_INT | T_NULL, NULL, 0}, {"pid_source", T_STR, NULL, 0},
      {"pid_note", T_STR | T_NULL, NULL, 0}, {"recording_error", T_OBJ | T_NULL, &recording_error, 0},
      {"java_version", T_STR | T_NULL, NULL, 0}, {"vm", T_STR | T_NULL, NULL, 0},
      {"vm_version", T_STR | T_NULL, NULL, 0}, {"vendor", T_STR | T_NULL, NULL, 0}, {"host", T_STR | T_NULL, NULL, 0},
      {"app", T_STR | T_NULL, NULL, 0}, {"agent_version", T_STR | T_NULL, NULL, 0},
      {"options", T_STR | T_NULL, NULL, 0}, {"mode", T_STR | T_NULL, NULL, 0}, {"jdk_feature", T_INT | T_NULL, NULL, 0},
      {"connected", T_BOOL, NULL, 0}, {"disconnected_for_ns", T_INT | T_NULL, NULL, 0}, {"connections", T_INT, NULL, 0},
      {"recording", T_STR | T_NULL, NULL, 0}, {"occupancy", T_STR, NULL, 0}, {"carriers", T_INT, NULL, 0},
      {"pins_in_progress", T_INT, NULL, 0}, {"pins_total", T_INT, NULL, 0}, {"alert", T_OBJ, &alert, 0},
      {"drops", T_OBJ, &drops, 0}, {"kernel_occupancy", T_OBJ | T_NULL, &occupancy, 0}, {"hogs_total", T_INT, NULL, 0},
      {"carriers_hogged", T_INT, NULL, 0}, {"agent_occupancy", T_OBJ, &agent_occupancy, 0},
      {"agent_cost", T_OBJ | T_NULL, &agent_cost, 0}, {"deadlock", T_OBJ | T_NULL, &deadlock, 0});

SHAPE(blocked, {"for_ns", T_INT, NULL, 0}, {"state", T_STR, NULL, 0}, {"syscall", T_STR | T_NULL, NULL, 0});
SHAPE(kernel, {"on_cpu_ns", T_INT, NULL, 0}, {"off_cpu_ns", T_INT, NULL, 0}, {"runqueue_ns", T_INT, NULL, 0},
      {"state", T_STR, NULL, 0}, {"off_cpu_for_ns", T_INT | T_NULL, NULL, 0}, {"syscall", T_STR | T_NULL, NULL, 0},
      {"occupancy", T_OBJ | T_NULL, &occupancy, 0});
SHAPE(carrier, {"name", T_STR, NULL, 0}, {"tid", T_INT, NULL, 0}, {"state", T_STR, NULL, 0},
      {"vthread", T_INT | T_NULL, NULL, 0}, {"pinned_for_ns", T_INT | T_NULL, NULL, 0},
      {"hogged_for_ns", T_INT | T_NULL, NULL, 0}, {"reason", T_STR | T_NULL, NULL, 0},
      {"culprit", T_STR | T_NULL, NULL, 0}, {"blocker", T_STR | T_NULL, NULL, 0}, {"busy_pct", T_NUM, NULL, 0},
      {"pinned_pct", T_NUM, NULL, 0}, {"idle_pct", T_NUM, NULL, 0}, {"blocked", T_OBJ | T_NULL, &blocked, 0},
      {"kernel", T_OBJ | T_NULL, &kernel, 0});
SHAPE(top_jvm, {"ns_pid", T_INT | T_NULL, NULL, 0}, {"pid_source", T_STR, NULL, 0},
      {"pid_note", T_STR | T_NULL, NULL, 0}, {"recording_error", T_OBJ | T_NULL, &recording_error, 0},
      {"java_version", T_STR | T_NULL, NULL, 0}, {"connected", T_BOOL, NULL, 0}, {"occupancy", T_STR, NULL, 0},
      {"carriers_blocked", T_INT, NULL, 0}, {"alert", T_OBJ, &alert, 0},
      {"kernel_occupancy", T_OBJ | T_NULL, &occupancy, 0}, {"carriers", T_ARR, &carrier, T_OBJ},
      {"hogs_total", T_INT, NULL, 0}, {"carriers_hogged", T_INT, NULL, 0}, {"deadlock", T_OBJ | T_NULL, &deadlock, 0});

static unsigned type_of(const struct jsonread *v)
{
    switch (v->type) {
    case JSONREAD_NULL:
        return T_NULL;
    case JSONREAD_BOOL:
        return T_BOOL;
    case JSONREAD_NUMBER:
        return v->is_int ? T_INT | T_NUM : T_NUM;
    case JSONREAD_STRING:
        return T_STR;
    case JSONREAD_ARRAY:
        return T_ARR;
    default:
        return T_OBJ;
    }
}

static const char *type_name(const struct jsonread *v)
{
    static const char *const names[] = {"null", "a bool", "a number", "a string", "a list", "an object"};
    if (v->type == JSONREAD_NUMBER && !v->is_int)
        return "a fraction";
    return names[v->type];
}

/* "an integer or null" for a set of types. */
static void describe(unsigned types, char *out, size_t cap)
{
    static const struct {
        unsigned bit;
        const char *name;
    } names[] = {{T_BOOL, "a bool"}, {T_INT, "an integer"}, {T_NUM, "a number"}, {T_STR, "a string"},
                 {T_ARR, "a list"},  {T_OBJ, "an object"},  {T_NULL, "null"}};
    out[0] = '\0';
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (types & names[i].bit)
            snprintf(out + strlen(out), cap - strlen(out), "%s%s", out[0] ? " or " : "", names[i].name);
}

static int bad(char *err, size_t errlen, const char *path, const struct jsonread *v, unsigned want)
{
    char what[96];
    describe(want, what, sizeof(what));
    snprintf(err, errlen, "%s: %s where %s belongs", path, type_name(v), what);
    return -EINVAL;
}

static int check_shape(const struct jsonread *obj, const struct shape *shape, const char *path, char *err,
                       size_t errlen);

static int check_value(const struct jsonread *v, const struct field *f, const char *path, char *err, size_t errlen)
{
    if (!(type_of(v) & f->types))
        return bad(err, errlen, path, v, f->types);
    if (v->type == JSONREAD_OBJECT && f->sub)
        return check_shape(v, f->sub, path, err, errlen);
    if (v->type != JSONREAD_ARRAY || !f->items)
        return 0;
    for (size_t i = 0; i < v->count; i++) {
        char at[256];
        snprintf(at, sizeof(at), "%s[%zu]", path, i);
        const struct field item = {NULL, f->items, f->sub, 0};
        int rc = check_value(&v->items[i], &item, at, err, errlen);
        if (rc)
            return rc;
    }
    return 0;
}

static int check_shape(const struct jsonread *obj, const struct shape *shape, const char *path, char *err,
                       size_t errlen)
{
    for (size_t i = 0; i < shape->n; i++) {
        const struct jsonread *v = jsonread_get(obj, shape->fields[i].key);
        if (!v)
            continue; /* absent: the renderers show a default */
        char at[256];
        snprintf(at, sizeof(at), "%s%s%s", path, *path ? "." : "", shape->fields[i].key);
        int rc = check_value(v, &shape->fields[i], at, err, errlen);
        if (rc)
            return rc;
    }
    return 0;
}

int answer_check(const struct jsonread *root, enum answer_kind kind, char *err, size_t errlen)
{
    if (errlen)
        err[0] = '\0';
    const struct jsonread *jvms = root && root->type == JSONREAD_OBJECT ? jsonread_get(root, "jvms") : NULL;
    if (!jvms || jvms->type != JSONREAD_ARRAY) {
        snprintf(err, errlen, "not a vtpin collector's answer (no \"jvms\" list)");
        return -EINVAL;
    }
    /* STATUS has it; a TOP answer does not, but one that has it has it right */
    const struct jsonread *c = jsonread_get(root, "collector");
    if ((kind == ANSWER_STATUS || c) && (!c || c->type != JSONREAD_OBJECT)) {
        snprintf(err, errlen, "not a vtpin collector's answer (no \"collector\" object)");
        return -EINVAL;
    }
    static const struct field collector_field = {"collector", T_OBJ, &collector, 0};
    if (c && check_value(c, &collector_field, "collector", err, errlen))
        return -EINVAL;
    const struct jsonread *w = jsonread_get(root, "window_ns");
    static const struct field window = {"window_ns", T_INT, NULL, 0};
    if (w && check_value(w, &window, "window_ns", err, errlen))
        return -EINVAL;
    for (size_t i = 0; i < jvms->count; i++) {
        const struct jsonread *j = &jvms->items[i];
        char at[32];
        snprintf(at, sizeof(at), "jvms[%zu]", i);
        if (j->type != JSONREAD_OBJECT)
            return bad(err, errlen, at, j, T_OBJ);
        const struct jsonread *pid = jsonread_get(j, "pid");
        if (!pid || pid->type != JSONREAD_NUMBER || !pid->is_int || pid->integer <= 0 || pid->integer > INT32_MAX) {
            if (!pid)
                snprintf(err, errlen, "%s: no \"pid\"", at);
            else if (pid->type == JSONREAD_NUMBER && pid->is_int)
                snprintf(err, errlen, "%s.pid: %lld is not a process id", at, (long long)pid->integer);
            else
                snprintf(err, errlen, "%s.pid: %s where a process id (an integer above 0) belongs", at, type_name(pid));
            return -EINVAL;
        }
        int rc = check_shape(j, kind == ANSWER_STATUS ? &status_jvm : &top_jvm, at, err, errlen);
        if (rc)
            return rc;
    }
    return 0;
}
