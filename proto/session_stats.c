#include "session_stats.h"

#include <stdio.h>
#include <string.h>

#include "common/json.h"

/* An integer field the model keeps and renders as a counter. */
static int is_counter(const ProtobufCFieldDescriptor *f)
{
    if (f->label != PROTOBUF_C_LABEL_OPTIONAL)
        return 0;
    switch (f->type) {
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32:
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_SFIXED64:
        return 1;
    default:
        return 0;
    }
}

/* A scalar the copy may keep: no pointer into the caller's message. */
static int is_scalar(const ProtobufCFieldDescriptor *f)
{
    return f->label != PROTOBUF_C_LABEL_REPEATED && f->type != PROTOBUF_C_TYPE_STRING &&
           f->type != PROTOBUF_C_TYPE_BYTES && f->type != PROTOBUF_C_TYPE_MESSAGE;
}

void session_stats_take(struct session_stats *st, const Vtpin__V1__Stats *d)
{
    const ProtobufCMessageDescriptor *desc = &vtpin__v1__stats__descriptor;
    st->has = 1;
    st->msg = *d;
    st->msg.base.n_unknown_fields = 0;
    st->msg.base.unknown_fields = NULL;
    char *msg = (char *)&st->msg;
    for (unsigned i = 0; i < desc->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &desc->fields[i];
        if (is_scalar(f))
            continue;
        if (f->label == PROTOBUF_C_LABEL_REPEATED) { /* its count at quantifier_offset, its array at offset */
            *(size_t *)(msg + f->quantifier_offset) = 0;
            *(void **)(msg + f->offset) = NULL;
        } else if (f->type == PROTOBUF_C_TYPE_BYTES) {
            memset(msg + f->offset, 0, sizeof(ProtobufCBinaryData));
        } else {
            *(void **)(msg + f->offset) = NULL;
        }
    }
    st->n_jvmti_calls = 0;
    for (size_t i = 0; i < d->n_jvmti_calls && st->n_jvmti_calls < SESSION_STATS_JVMTI_MAX; i++) {
        const Vtpin__V1__JvmtiCalls *c = d->jvmti_calls[i];
        if (!c || !c->function)
            continue;
        snprintf(st->jvmti_calls[st->n_jvmti_calls].function, sizeof(st->jvmti_calls[0].function), "%s", c->function);
        st->jvmti_calls[st->n_jvmti_calls++].calls = c->calls;
    }
}

/* The value of counter field f of msg, as unsigned (a signed counter below 0 reads 0). */
static uint64_t counter_value(const Vtpin__V1__Stats *msg, const ProtobufCFieldDescriptor *f)
{
    const char *at = (const char *)msg + f->offset;
    switch (f->type) {
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32:
        return *(const uint32_t *)at;
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
        return *(const uint64_t *)at;
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32: {
        int32_t v = *(const int32_t *)at;
        return v > 0 ? (uint64_t)v : 0;
    }
    default: {
        int64_t v = *(const int64_t *)at;
        return v > 0 ? (uint64_t)v : 0;
    }
    }
}

static int counter_said(const Vtpin__V1__Stats *msg, const ProtobufCFieldDescriptor *f)
{
    return *(const protobuf_c_boolean *)((const char *)msg + f->quantifier_offset) != 0;
}

int session_stats_get(const struct session_stats *st, const char *name, uint64_t *out)
{
    const ProtobufCFieldDescriptor *f =
        protobuf_c_message_descriptor_get_field_by_name(&vtpin__v1__stats__descriptor, name);
    *out = 0;
    if (!st->has || !f || !is_counter(f) || !counter_said(&st->msg, f))
        return 0;
    *out = counter_value(&st->msg, f);
    return 1;
}

uint64_t session_stats_jvmti_total(const struct session_stats *st)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < st->n_jvmti_calls; i++)
        sum += st->jvmti_calls[i].calls;
    return sum;
}

void session_stats_json(struct json *j, const struct session_stats *st)
{
    const ProtobufCMessageDescriptor *desc = &vtpin__v1__stats__descriptor;
    for (unsigned i = 0; i < desc->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &desc->fields[i];
        if (!is_counter(f))
            continue;
        json_key(j, f->name);
        if (st->has && counter_said(&st->msg, f))
            json_uint(j, counter_value(&st->msg, f));
        else
            json_null(j);
    }
    json_key(j, "jvmti_calls");
    if (!st->has || !st->n_jvmti_calls) {
        json_null(j);
        return;
    }
    json_object_begin_inline(j);
    for (size_t i = 0; i < st->n_jvmti_calls; i++)
        json_kv_uint(j, st->jvmti_calls[i].function, st->jvmti_calls[i].calls);
    json_object_end(j);
}
