#include "session_hello.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "wire_names.h"

/* A copy of s, or NULL for NULL; *failed set when memory ran out. */
static char *dup_opt(const char *s, int *failed)
{
    if (!s)
        return NULL;
    char *c = strdup(s);
    if (!c)
        *failed = 1;
    return c;
}

/* Each owned string of h, by address: the copies and frees below walk them alike. */
#define HELLO_STRINGS(h)                                                                                               \
    {                                                                                                                  \
        &(h)->java_version, &(h)->vm_name, &(h)->vm_version, &(h)->vm_vendor, &(h)->host, &(h)->agent_version,         \
            &(h)->options, &(h)->app                                                                                   \
    }
#define HELLO_N_STRINGS 8

void session_hello_fini(struct session_hello *h)
{
    char **strings[HELLO_N_STRINGS] = HELLO_STRINGS(h);
    for (size_t i = 0; i < HELLO_N_STRINGS; i++)
        free(*strings[i]);
    for (size_t i = 0; i < h->n_capabilities_missing; i++)
        free(h->capabilities_missing[i]);
    free(h->capabilities_missing);
    memset(h, 0, sizeof(*h));
}

/* dst's strings and capabilities as copies of src's (dst's fields otherwise src's). */
static int copy_owned(struct session_hello *dst, const struct session_hello *src)
{
    int failed = 0;
    char **to[HELLO_N_STRINGS] = HELLO_STRINGS(dst);
    char *const *from[HELLO_N_STRINGS] = HELLO_STRINGS(src);
    for (size_t i = 0; i < HELLO_N_STRINGS; i++)
        *to[i] = dup_opt(*from[i], &failed);
    dst->capabilities_missing = NULL;
    dst->n_capabilities_missing = 0;
    if (src->n_capabilities_missing && !failed) {
        dst->capabilities_missing = calloc(src->n_capabilities_missing, sizeof(char *));
        failed = !dst->capabilities_missing;
        for (size_t i = 0; !failed && i < src->n_capabilities_missing; i++) {
            dst->capabilities_missing[i] =
                dup_opt(src->capabilities_missing[i] ? src->capabilities_missing[i] : "", &failed);
            dst->n_capabilities_missing += !failed;
        }
    }
    return failed ? -ENOMEM : 0;
}

int session_hello_copy(struct session_hello *dst, const struct session_hello *src)
{
    struct session_hello h = *src;
    if (copy_owned(&h, src)) {
        session_hello_fini(&h);
        return -ENOMEM;
    }
    session_hello_fini(dst);
    *dst = h;
    return 0;
}

int session_hello_take(struct session_hello *h, const Vtpin__V1__Hello *d)
{
    session_hello_fini(h);
    /* the message's strings, borrowed, and its capabilities as one borrowed array: copy_owned copies them */
    struct session_hello view = {
        .schema_version = d->schema_version,
        .pid = d->pid,
        .java_version = d->java_version,
        .vm_name = d->vm_name,
        .vm_version = d->vm_version,
        .vm_vendor = d->vm_vendor,
        .host = d->host,
        .agent_version = d->agent_version,
        .options = d->options,
        .app = d->app,
        .mode = d->has_mode ? (int)d->mode : 0,
        .occupancy = d->has_occupancy ? (int)d->occupancy : 0,
        .has_clock = d->has_start_unix_ns && d->has_start_mono_ns,
        .start_unix_ns = d->has_start_unix_ns ? d->start_unix_ns : 0,
        .start_mono_ns = d->has_start_mono_ns ? d->start_mono_ns : 0,
        .has_threshold = d->has_threshold_ns,
        .threshold_ns = d->has_threshold_ns ? d->threshold_ns : 0,
        .sample_interval_ns = d->has_sample_interval_ns ? d->sample_interval_ns : 0,
        .jdk_feature = d->has_jdk_feature ? d->jdk_feature : 0,
        .parallelism = d->has_parallelism ? d->parallelism : 0,
        .connection = d->has_connection ? d->connection : 0,
        .has_thread_layout = d->thread_layout != NULL,
        .capabilities_missing = d->capabilities_missing,
        .n_capabilities_missing = d->n_capabilities_missing,
    };
    view.occupancy_interval_ns =
        d->has_occupancy_sample_interval_ns ? d->occupancy_sample_interval_ns : view.sample_interval_ns;
    *h = view;
    if (copy_owned(h, &view)) {
        session_hello_fini(h);
        return -ENOMEM;
    }
    return 0;
}

size_t session_hello_bytes(const struct session_hello *h)
{
    char *const *strings[HELLO_N_STRINGS] = HELLO_STRINGS(h);
    size_t n = 0;
    for (size_t i = 0; i < HELLO_N_STRINGS; i++)
        n += *strings[i] ? strlen(*strings[i]) + 1 : 0;
    for (size_t i = 0; i < h->n_capabilities_missing; i++)
        n += sizeof(char *) + strlen(h->capabilities_missing[i]) + 1;
    return n;
}

static void kv_nonzero(struct json *j, const char *key, uint32_t v)
{
    if (v)
        json_kv_uint(j, key, v);
    else
        json_kv_null(j, key);
}

void session_hello_json(struct json *j, const struct session_hello *h)
{
    json_kv_string(j, "java_version", h->java_version);
    json_kv_string(j, "vm", h->vm_name);
    json_kv_string(j, "vm_version", h->vm_version);
    json_kv_string(j, "vendor", h->vm_vendor);
    json_kv_string(j, "host", h->host);
    json_kv_string(j, "agent_version", h->agent_version);
    json_kv_string(j, "options", h->options);
    json_kv_string(j, "app", h->app);
    json_kv_string(j, "mode", wire_mode_name(h->mode));
    kv_nonzero(j, "jdk_feature", h->jdk_feature);
    kv_nonzero(j, "parallelism", h->parallelism);
    json_key(j, "capabilities_missing");
    json_array_begin_inline(j);
    for (size_t i = 0; i < h->n_capabilities_missing; i++)
        json_string(j, h->capabilities_missing[i]);
    json_array_end(j);
}
