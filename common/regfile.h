/*
 * regfile: open a path that someone else may create or swap, without
 * blocking on it.
 *
 * A FIFO, a device or a socket put in place of a file must not hang the
 * caller in open(2) or read(2): the path is opened with O_NONBLOCK, then
 * fstat(2) on the descriptor says what was opened; only a regular file is
 * kept (and O_NONBLOCK taken off again).  An lstat(2) before the open keeps
 * a device from being opened at all (an open can have side effects), and
 * the fstat after it catches a swap in between.  Anything else fails with
 * a reason that names the path and what it is ("is a FIFO").
 */
#ifndef SPYREMON_REGFILE_H
#define SPYREMON_REGFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

/* "a FIFO", "a character device", "a directory", ... for mode's file type. */
const char *regfile_kind(mode_t mode);

/*
 * Open path read-only (O_CLOEXEC, O_NOCTTY, O_NONBLOCK during the open;
 * O_NOFOLLOW too if nofollow) and return the descriptor of a regular file,
 * with its fstat in *sb.  On failure -1, with *kind set to what the path is
 * (0 if it could not be opened or looked at: errno says why) and why (of
 * size len) saying so after "PATH: ", e.g. "is a FIFO, not a regular file".
 */
int regfile_open(const char *path, bool nofollow, struct stat *sb,
    mode_t *kind, char *why, size_t len);

#endif
