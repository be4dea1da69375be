#include "session.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

struct session {
    struct session_hello hello;
    struct session_defs *defs;
};

int session_classify_first(const WireEvent *ev, char *why, size_t whylen)
{
    if (ev->body_case == VTPIN__V1__EVENT__BODY_QUERY)
        return SESSION_FIRST_QUERY;
    if (ev->body_case != VTPIN__V1__EVENT__BODY_HELLO) {
        snprintf(why, whylen, "the first frame is not a Hello or a Query (event field %d)", (int)ev->body_case);
        return -EPROTO;
    }
    if (ev->hello->schema_version < WIRE_SCHEMA_MIN || ev->hello->schema_version > WIRE_SCHEMA_VERSION) {
        snprintf(why, whylen, "schema version %u in its Hello; this collector speaks versions %u to %u",
                 (unsigned)ev->hello->schema_version, (unsigned)WIRE_SCHEMA_MIN, (unsigned)WIRE_SCHEMA_VERSION);
        return -EPROTONOSUPPORT;
    }
    return SESSION_FIRST_AGENT;
}

int session_new(struct session **out, const Vtpin__V1__Hello *hi, const struct session_defs_limits *limits)
{
    struct session *s = calloc(1, sizeof(*s));
    if (!s)
        return -ENOMEM;
    if (session_hello_take(&s->hello, hi) != 0 || session_defs_new(&s->defs, limits) != 0) {
        session_free(s);
        return -ENOMEM;
    }
    *out = s;
    return 0;
}

void session_free(struct session *s)
{
    if (!s)
        return;
    session_hello_fini(&s->hello);
    session_defs_free(s->defs);
    free(s);
}

const struct session_hello *session_hello(const struct session *s)
{
    return &s->hello;
}

const struct session_defs *session_defs(const struct session *s)
{
    return s->defs;
}

int session_define(struct session *s, const WireEvent *ev)
{
    return session_defs_take(s->defs, ev);
}
