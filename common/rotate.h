/* The one naming of rotated files, the agent's record= and the collector's recordings: the file
 * in use keeps its name PATH, and the ones before it are PATH.1 (the newest) to PATH.keep. */
#ifndef VTPIN_COMMON_ROTATE_H
#define VTPIN_COMMON_ROTATE_H

/* PATH.keep goes, each PATH.i becomes PATH.i+1 and PATH becomes PATH.1: PATH is free for the next
 * file. 0, or the -errno of that last rename (the caller goes on in PATH). A name that cannot
 * move (another user's file in a shared directory) stays, and the chain behind it with it. */
int rotate_names(const char *path, unsigned keep);
/* PATH.1 back to PATH, after a rotate_names whose next PATH could not be made: 0 or -errno (the
 * recording then goes on in PATH.1). */
int rotate_back(const char *path);

#endif
