/* Agent messages for people: one line each, prefixed "vtpin: ".
 * Never called from hot callbacks except for one-time failures. */
#ifndef VTPIN_LOG_H
#define VTPIN_LOG_H

int log_open(const char *path); /* NULL or "" keeps stderr; returns 0 or -errno */
void log_close(void);
void log_set_quiet(int quiet);
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* An error said on stderr and in log= both (a lost output: the person must see it). */
void log_alert(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A warning said on stderr and in log= both (the person who started the JVM and the log's reader). */
void log_tell(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
