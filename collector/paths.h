/* Where the collector writes, and the private directories for its socket and recordings.
 * The socket's path (default and limit) is common/socket_path.h's one rule, which the agent
 * and the CLI share. Recordings go to $XDG_STATE_HOME/vtpin, else $HOME/.local/state/vtpin
 * (the home directory from the password database when HOME is unset). */
#ifndef VTPIN_COLLECTOR_PATHS_H
#define VTPIN_COLLECTOR_PATHS_H

#include <stddef.h>
#include <sys/types.h>

/* The default recording directory into out[cap]. 0, -ENOENT when no home
 * directory is known, or -ENAMETOOLONG. */
int collector_default_dir(char *out, size_t cap);

/* Creates dir and its missing parents with mode 0700. The directory, made now or found,
 * must be a real directory (not a symlink) owned by the effective uid that no one else can
 * write (common/path_trust.h): one another user made first, or one open to others, is
 * refused, never tightened. With strict (the default socket directory), its group and
 * other permissions are then set to mode's. 0 or -errno (-EPERM: someone else's or open
 * to others, -ENOTDIR: not a directory or a link); err names the path and why. */
int paths_make_private_dir(const char *dir, int strict, char *err, size_t errlen);
/* The same with mode instead of 0700 (0711 when other users may connect: they
 * must traverse it to reach the socket). A dir it creates gets exactly mode; with
 * strict, an existing one gets mode's group and other bits. */
int paths_make_dir(const char *dir, int strict, mode_t mode, char *err, size_t errlen);

/* The directory part of path into out[cap] ("." when there is none). 0 or -ENAMETOOLONG. */
int paths_dirname(const char *path, char *out, size_t cap);

#endif
