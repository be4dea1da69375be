/* Every pin of a session whose ended pins were summed up as it was read (pin_groups.h), for the
 * formats that show single pins (JSON, the HTML lanes, Perfetto): the file read a second time, each pin handed over in
 * the order the pins started, as the session kept whole lists them, and given back at once.
 *
 * The second pass keeps the pins from the first one not handed over yet: a pin is handed over
 * when it and every pin that began before it are known to end. The first pass said which pins
 * outlasted a sum (recording_session.late_ends) and which never end (its pins still in progress),
 * so those wait for nothing; every other pin ended within some 130,000 starts of its own. Memory
 * follows that window, not the session. Each pin is resolved with the first pass's tables (the
 * same file: the same definitions). */
#ifndef VTPIN_CLI_PIN_STREAM_H
#define VTPIN_CLI_PIN_STREAM_H

#include <stddef.h>

#include "recording.h"

/* Given each pin in turn. The pin and its own strings (blocked_in, its extra) live until it returns;
 * its stack, frames and names are the first pass's (they live as long as r). 0, or -errno (stops). */
typedef int (*pin_stream_fn)(const struct recording_pin *p, void *arg);

/* Every pin of r->sessions[session] (loaded with keep_input, and summed up: pins_folded) to fn, read
 * again from r->input_fd. 0, or -errno with a message in err (naming the file), or fn's. */
int pin_stream(const struct recording *r, size_t session, pin_stream_fn fn, void *arg, char *err, size_t errlen);

#endif
