/* The record= output: wire-format frames appended to a file. Written by the
 * writer thread only; batched in memory and flushed once per writer round
 * so a reader (or a crash) sees whole frames soon after they happen. */
#ifndef VTPIN_RECORD_FILE_H
#define VTPIN_RECORD_FILE_H

#include "wire.h"

struct record_file;

/* Creates or empties path with exactly mode (record_mode=, 0600 by default), never
 * through a symbolic link (-ELOOP) and never another user's file (-EPERM). NULL with
 * *err = -errno on failure. */
struct record_file *record_file_open(const char *path, unsigned mode, int *err);
int record_file_put(struct record_file *r, const WireEvent *ev); /* 0, or -errno (frame lost, counted) */
int record_file_flush(struct record_file *r);                    /* 0, or -errno of a failed write (counted) */
uint64_t record_file_lost(const struct record_file *r);
/* ENOSPC or EDQUOT when the 8 KiB held aside for the last notice and
 * counters could not be had at open (the disk is nearly full: a later
 * failure may leave no room to say so in the file), else 0. */
int record_file_reserve_error(const struct record_file *r);
/* After the first failed write (disk full, ...) the file is cut back to its
 * last whole frame and only Stats, Notice and Goodbye are still tried, so a
 * reader sees why it stops; everything else is counted as unwritten. */
int record_file_error(const struct record_file *r); /* errno of the first failed write, or 0 */
uint64_t record_file_write_failures(const struct record_file *r);
uint64_t record_file_unwritten(const struct record_file *r);
/* Bytes of the file, with what is buffered. */
uint64_t record_file_size(const struct record_file *r);
/* Flushes, then PATH becomes PATH.1 (PATH.1 becomes PATH.2, ... up to PATH.keep, the oldest
 * removed) and a new PATH with the magic takes the events that follow; the caller puts the
 * session's Hello and definitions to it again. -errno when it cannot (the events go on where
 * they went: PATH, or PATH.1 when only the new file could not be made). */
int record_file_rotate(struct record_file *r, const char *path, unsigned keep, unsigned mode);
void record_file_close(struct record_file *r);

#endif
