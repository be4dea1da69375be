/* The record= output: wire-format frames appended to a file. Written by the
 * writer thread only; batched in memory and flushed once per writer round
 * so a reader (or a crash) sees whole frames soon after they happen. */
#ifndef VTPIN_RECORD_H
#define VTPIN_RECORD_H

#include "wire.h"

struct record;

struct record *record_open(const char *path, int *err); /* *err = -errno on failure */
int record_put(struct record *r, const WireEvent *ev);   /* 0, or -errno (frame lost, counted) */
int record_flush(struct record *r);
uint64_t record_lost(const struct record *r);
void record_close(struct record *r);

#endif
