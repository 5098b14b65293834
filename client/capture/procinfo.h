/*
 * procinfo: what /proc says about the process a capture is for and those
 * it started: whether it exists and whose it is, its environment (as it
 * was at exec), its command line, the torch it has loaded, its children,
 * and a path as it sees it (its own root and mounts: a service with
 * PrivateTmp= has a /tmp of its own).
 *
 * The root directory of /proc is a parameter (procinfo_root) so that
 * tests can give a tree of their own; it is "/proc" otherwise.
 */
#ifndef SPYREMON_PROCINFO_H
#define SPYREMON_PROCINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define PROCINFO_MAX_CHILDREN	1024	/* descendants looked at, at most */
#define PROCINFO_MAX_DEPTH	4096	/* parents walked up, at most */

enum procinfo_access {
	PROCINFO_OK,		/* it exists and the caller may signal it */
	PROCINFO_NONE,		/* no such process (or a zombie) */
	PROCINFO_NOT_YOURS,	/* another user's, and the caller is not root */
};

/* Whether pid exists and is the caller's to capture; its owner in *uid. */
enum procinfo_access procinfo_check(pid_t pid, uid_t *uid);

/* True while pid exists and is not a zombie. */
bool procinfo_alive(pid_t pid);

/*
 * The value of name in pid's environment as it was at exec, into buf:
 * 1 if set, 0 if not, -1 if the environment cannot be read (then *buf is
 * "").
 */
int procinfo_getenv(pid_t pid, const char *name, char *buf, size_t len);

/*
 * The command line, arguments joined by spaces, control characters and
 * invalid UTF-8 replaced by '?', cut at a character boundary to fit len:
 * false if it cannot be read.
 */
bool procinfo_cmdline(pid_t pid, char *buf, size_t len);

/*
 * The torch version pid runs: from the torch/version.py beside the files
 * of torch it has mapped (its libtorch, or its _C extension), such as
 * "2.5.1+cpu"; false if none or unreadable.
 */
bool procinfo_torch_version(pid_t pid, char *buf, size_t len);

/*
 * True if pid is ancestor or one of its descendants, by the parents
 * /proc/PID/stat gives, from pid up; false if pid is gone or the chain
 * reaches PID 1 (or breaks, or is longer than PROCINFO_MAX_DEPTH) first.
 */
bool procinfo_descends(pid_t pid, pid_t ancestor);

/*
 * pid's descendants, nearest first, into out (at most max): their number.
 */
size_t procinfo_descendants(pid_t pid, pid_t *out, size_t max);

/*
 * path as process pid sees it, through /proc/PID/root, into buf; false
 * if that does not fit.
 */
bool procinfo_path(pid_t pid, const char *path, char *buf, size_t len);

/* Replace "/proc" (for tests); NULL restores it. */
void procinfo_root(const char *root);

#endif
