#include "outputs.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "collector_link.h"
#include "common/socket_path.h"
#include "log.h"
#include "record_file.h"
#include "trace.h"

static struct {
    struct record_file *record;
    struct link *link;
    struct trace *trace;
    char record_path[OPTIONS_PATH_MAX], trace_file[OPTIONS_PATH_MAX]; /* for the failure notice */
    uint64_t record_max; /* record_max=: rotate past it; 0: never (nor after a failed rotation) */
    unsigned record_keep, record_mode;
    int told_record, told_trace;
} outputs;

/* No room at all (ENOSPC, EDQUOT): the agent is a guest, the JVM must run
 * on; one line says which output is gone. Other errors (a missing
 * directory, a typo) stop a startup load as bad options do. */
static int no_room(int rc)
{
    return rc == -ENOSPC || rc == -EDQUOT;
}

const char *outputs_file_refused(int rc)
{
    return rc == -ELOOP   ? "it is a symbolic link, which vtpin does not follow (name the file itself)"
           : rc == -EPERM ? "it belongs to another user (remove it, or choose another path)"
                          : strerror(-rc);
}

int outputs_open(const struct options *o, char *err, size_t errlen)
{
    int rc = 0;
    if (o->record_file[0] && !outputs.record) {
        outputs.record = record_file_open(o->record_file, (unsigned)o->record_mode, &rc);
        if (!outputs.record && no_room(rc)) {
            log_alert("cannot write the recording %s: %s (the disk is full): vtpin runs without record= and the JVM "
                      "runs on",
                      o->record_file, strerror(-rc));
        } else if (!outputs.record) {
            snprintf(err, errlen, "cannot open record file '%s': %s", o->record_file, outputs_file_refused(rc));
            return rc;
        }
    }
    if (o->collector && !outputs.link) {
        outputs.link = link_new(o->collector_path, o->collector_buffer, o->collector_owner, &rc);
        if (!outputs.link && rc == -ENAMETOOLONG) {
            snprintf(err, errlen,
                     "the default collector socket path is over the %zu bytes a Unix socket path can "
                     "hold ($XDG_RUNTIME_DIR too long?): give collector=PATH",
                     socket_path_max());
            return rc;
        }
        if (!outputs.link) {
            snprintf(err, errlen, "out of memory for the collector buffer (buffer=%u)", o->collector_buffer);
            return -ENOMEM;
        }
    }
    if (o->trace != TRACE_OFF && !outputs.trace) {
        outputs.trace = trace_open(o->trace_file, o->trace, &rc);
        if (!outputs.trace && no_room(rc)) {
            log_alert("cannot write the trace to %s: %s (the disk is full): vtpin runs without it and the JVM runs on",
                      o->trace_file, strerror(-rc));
        } else if (!outputs.trace) {
            snprintf(err, errlen, "cannot open trace file '%s': %s", o->trace_file, outputs_file_refused(rc));
            return rc;
        }
    }
    snprintf(outputs.record_path, sizeof(outputs.record_path), "%s", o->record_file);
    outputs.record_max = o->record_max;
    outputs.record_keep = (unsigned)o->record_keep;
    outputs.record_mode = (unsigned)o->record_mode;
    snprintf(outputs.trace_file, sizeof(outputs.trace_file), "%s", o->trace_file);
    return 0;
}

int outputs_record_reserve_error(void)
{
    return record_file_reserve_error(outputs.record);
}

int outputs_has_record(void)
{
    return outputs.record != NULL;
}

const char *outputs_record_file(void)
{
    return outputs.record_path;
}

void outputs_close(void)
{
    record_file_close(outputs.record);
    trace_close(outputs.trace);
    link_free(outputs.link);
    memset(&outputs, 0, sizeof(outputs));
}

unsigned outputs_connected(void)
{
    return (outputs.record ? SINK_RECORD : 0) | (link_connected(outputs.link) ? SINK_LINK : 0);
}

unsigned outputs_all(void)
{
    return SINK_RECORD | (outputs.link ? SINK_LINK : 0);
}

unsigned outputs_put(unsigned sinks, const WireEvent *ev)
{
    unsigned ok = 0;
    if ((sinks & SINK_RECORD) && outputs.record && record_file_put(outputs.record, ev) == 0)
        ok |= SINK_RECORD;
    if ((sinks & SINK_LINK) && outputs.link && link_put(outputs.link, ev) == 0)
        ok |= SINK_LINK;
    return ok;
}

void outputs_put_all(const WireEvent *ev)
{
    outputs_put(outputs_all(), ev);
}

void outputs_notice(unsigned sinks, int severity, const char *code, const char *text)
{
    Vtpin__V1__Notice n = VTPIN__V1__NOTICE__INIT;
    n.time_ns = clock_mono_ns();
    n.severity = (Vtpin__V1__Severity)severity;
    n.code = (char *)code;
    n.text = (char *)text;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_NOTICE;
    ev.notice = &n;
    outputs_put(sinks, &ev);
}

void outputs_say(unsigned sinks, int severity, const char *code, const char *text)
{
    if (outputs.trace) {
        char line[512];
        snprintf(line, sizeof(line), "%s: %s", severity == VTPIN__V1__SEVERITY__INFO ? "note" : "warning", text);
        trace_line(outputs.trace, line);
    }
    outputs_notice(sinks, severity, code, text);
}

struct trace *outputs_trace(void)
{
    return outputs.trace;
}

int outputs_has_collector(void)
{
    return outputs.link != NULL;
}

int outputs_poll_connect(int64_t now)
{
    return outputs.link && link_poll_connect(outputs.link, now);
}

uint32_t outputs_connections(void)
{
    return link_connections(outputs.link);
}

void outputs_counts(struct outputs_counts *out)
{
    out->record_lost = record_file_lost(outputs.record);
    out->collector_dropped = link_dropped(outputs.link);
    out->write_failures = record_file_write_failures(outputs.record) + trace_write_failures(outputs.trace);
    out->events_unwritten = record_file_unwritten(outputs.record);
    out->connections = link_connections(outputs.link);
}

/* Said once per output: which file, why, and that the JVM runs on. The
 * recording gets the notice and the counters after its last whole frame. */
static void tell_write_failure(void (*record_counters)(void))
{
    if (!outputs.told_record && record_file_error(outputs.record)) {
        outputs.told_record = 1;
        char text[OPTIONS_PATH_MAX + 200];
        snprintf(text, sizeof(text),
                 "cannot write the recording %s: %s; it ends here, later events are counted as unwritten "
                 "(the JVM runs on)",
                 outputs.record_path, strerror(record_file_error(outputs.record)));
        log_alert("%s", text);
        outputs_notice(SINK_RECORD | SINK_LINK, VTPIN__V1__SEVERITY__ERROR, "output.record.write_failed", text);
        record_counters();
    }
    if (!outputs.told_trace && trace_error(outputs.trace)) {
        outputs.told_trace = 1;
        char text[OPTIONS_PATH_MAX + 200];
        snprintf(text, sizeof(text), "cannot write the trace to %s: %s; trace lines are lost (the JVM runs on)",
                 outputs.trace_file[0] ? outputs.trace_file : "stderr", strerror(trace_error(outputs.trace)));
        log_alert("%s", text);
        outputs_notice(SINK_RECORD | SINK_LINK, VTPIN__V1__SEVERITY__ERROR, "output.trace.write_failed", text);
    }
}

void outputs_flush(int64_t now, void (*record_counters)(void))
{
    if (outputs.record)
        record_file_flush(outputs.record);
    if (outputs.link)
        link_flush(outputs.link, now);
    trace_flush(outputs.trace);
    tell_write_failure(record_counters);
}

int outputs_record_due(void)
{
    return outputs.record && outputs.record_max && !record_file_error(outputs.record) &&
           record_file_size(outputs.record) >= outputs.record_max;
}

int outputs_record_rotate(void)
{
    int rc = record_file_rotate(outputs.record, outputs.record_path, outputs.record_keep, outputs.record_mode);
    if (rc) {
        outputs.record_max = 0; /* said once; the recording goes on growing */
        log_error("cannot rotate the recording %s (record_max=): %s; it goes on in %s%s without a size limit",
                  outputs.record_path, outputs_file_refused(rc), outputs.record_path,
                  rc == -ELOOP || rc == -EPERM ? ".1" : "");
    }
    return rc;
}

void outputs_drain(int64_t timeout_ns)
{
    if (outputs.link)
        link_drain(outputs.link, timeout_ns);
}
