/*
 * caplitter: a capture's temporary files, removed on SIGINT, SIGTERM and
 * SIGHUP, and by the next capture when their capture is gone
 * (caplitter.h).
 *
 * The signal's part runs in the handler of output.c (output_at_signal),
 * after that has removed an export's temporary file: it uses only calls
 * that are safe there (open, getdents64, unlinkat, rename, write), and
 * the capture's state as it stands.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "caplitter.h"
#include "output.h"
#include "procinfo.h"

#define TRACE_PREFIX	"spyremon-capture-"
#define TREE_DEPTH	3	/* DIR.tmp-X/.report.tmp-Y/file, and one more */

/* The capture the signal handler cleans up after; NULL when none. */
static struct capture *volatile armed;

/* ---- what the handler may call ---- */

/* Append s to buf (len bytes, *o used) as far as it fits. */
static void
put(char *buf, size_t len, size_t *o, const char *s)
{
	while (*s != '\0' && *o + 1 < len)
		buf[(*o)++] = *s++;
	buf[*o] = '\0';
}

static void
put_int(char *buf, size_t len, size_t *o, long v)
{
	char d[24];
	size_t n = 0;

	if (v < 0) {
		put(buf, len, o, "-");
		v = -v;
	}
	do
		d[n++] = (char)('0' + v % 10);
	while ((v /= 10) > 0 && n < sizeof(d));
	while (n > 0 && *o + 1 < len) {
		buf[(*o)++] = d[--n];
		buf[*o] = '\0';
	}
}

static void
say(const char *a, const char *b, const char *c)
{
	char msg[PATH_MAX + 256];
	size_t o = 0;

	put(msg, sizeof(msg), &o, a);
	put(msg, sizeof(msg), &o, b);
	put(msg, sizeof(msg), &o, c);
	(void)write(STDERR_FILENO, msg, o);
}

/*
 * Remove name in dirfd and, if it is a directory, what it holds, depth
 * levels down at most; symbolic links are removed, never followed.
 */
static void
rm_tree_at(int dirfd, const char *name, int depth)
{
	char buf[2048];
	bool removed;
	ssize_t n;
	int fd;

	if (unlinkat(dirfd, name, 0) == 0 || (errno != EISDIR &&
	    errno != EPERM) || depth == 0)
		return;
	if ((fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return;
	/* entries removed while reading may hide others: read again */
	for (int pass = 0; pass < 8; pass++) {
		removed = false;
		if (lseek(fd, 0, SEEK_SET) == -1)
			break;
		while ((n = getdents64(fd, buf, sizeof(buf))) > 0)
			for (ssize_t at = 0; at < n;) {
				struct dirent64 *e = (struct dirent64 *)(void *)
				    (buf + at);

				at += e->d_reclen;
				if (strcmp(e->d_name, ".") == 0 ||
				    strcmp(e->d_name, "..") == 0)
					continue;
				rm_tree_at(fd, e->d_name, depth - 1);
				removed = true;
			}
		if (!removed)
			break;
	}
	close(fd);
	(void)unlinkat(dirfd, name, AT_REMOVEDIR);
}

/*
 * Remove the entries of dirfd whose names begin with '.': the capture's
 * own temporaries.  The number of other entries left.
 */
static size_t
rm_hidden(int dirfd)
{
	char buf[2048];
	size_t others = 0;
	ssize_t n;

	if (lseek(dirfd, 0, SEEK_SET) == -1)
		return 0;
	while ((n = getdents64(dirfd, buf, sizeof(buf))) > 0)
		for (ssize_t at = 0; at < n;) {
			struct dirent64 *e = (struct dirent64 *)(void *)
			    (buf + at);

			at += e->d_reclen;
			if (strcmp(e->d_name, ".") == 0 ||
			    strcmp(e->d_name, "..") == 0)
				continue;
			if (e->d_name[0] == '.')
				rm_tree_at(dirfd, e->d_name, TREE_DEPTH);
			else
				others++;
		}
	return others;
}

/* Remove the trace t's process wrote, as the process sees its path. */
static void
rm_trace(const struct captrace *t)
{
	char via[PATH_MAX + 64];
	size_t o = 0;

	put(via, sizeof(via), &o, "/proc/");
	put_int(via, sizeof(via), &o, t->pid);
	put(via, sizeof(via), &o, "/root");
	put(via, sizeof(via), &o, t->found);
	if (unlink(via) == -1)
		(void)unlink(t->found);
}

/*
 * The signal's cleanup: the socket file, the traces found and not yet
 * moved, the output's temporaries; an output holding a trace is renamed
 * into place.
 */
static void
on_signal(void)
{
	struct capture *c = armed;
	const char *dir;
	size_t others = 0;
	int saved = errno, fd;

	if (c == NULL)
		return;
	armed = NULL;
	if (c->sock.fd != -1 && !c->sock.abstract && c->sock.path[0] != '\0')
		(void)unlink(c->sock.path);
	for (size_t i = 0; i < c->ntraces; i++)
		if (c->traces[i].fd != -1 && c->traces[i].found[0] != '\0' &&
		    !c->traces[i].keep)
			rm_trace(&c->traces[i]);
	dir = c->tmp[0] != '\0' ? c->tmp : c->published ? c->output : NULL;
	if (dir != NULL && (fd = open(dir, O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC)) != -1) {
		others = rm_hidden(fd);
		close(fd);
	}
	if (c->tmp[0] != '\0') {
		if (others == 0)
			(void)rmdir(c->tmp);
		else if ((rmdir(c->output) == 0 || errno == ENOENT) &&
		    rename(c->tmp, c->output) == 0)
			say("spyremon: capture: interrupted: what was complete "
			    "is in ", c->output, "\n");
		else
			say("spyremon: capture: interrupted: what was complete "
			    "is left in ", c->tmp, "\n");
	} else if (c->published) {
		say("spyremon: capture: interrupted: ", c->output,
		    " holds what was complete\n");
	}
	errno = saved;
}

bool
caplitter_arm(struct capture *c)
{
	char path[PATH_MAX + sizeof(CAPLITTER_MARK) + 1], pid[24];
	size_t o = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", c->tmp, CAPLITTER_MARK);
	put_int(pid, sizeof(pid), &o, (long)getpid());
	put(pid, sizeof(pid), &o, "\n");
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0644)) == -1 || write(fd, pid, o) != (ssize_t)o) {
		fprintf(stderr, "spyremon: capture: %s: %s\n", path,
		    strerror(errno));
		if (fd != -1)
			close(fd);
		return false;
	}
	close(fd);
	armed = c;
	output_at_signal(on_signal);
	return true;
}

void
caplitter_done(struct capture *c)
{
	char path[PATH_MAX + sizeof(CAPLITTER_MARK) + 1];

	armed = NULL;
	output_at_signal(NULL);
	/* an output left where it is, with its traces, is no one's litter */
	if (c->tmp[0] != '\0' || c->published) {
		snprintf(path, sizeof(path), "%s/%s", c->tmp[0] != '\0' ?
		    c->tmp : c->output, CAPLITTER_MARK);
		(void)unlink(path);
	}
}

/* ---- the next capture ---- */

/* True if no process pid runs (in this pid namespace). */
static bool
gone(long pid)
{
	return pid > 0 && pid != (long)getpid() && kill((pid_t)pid, 0) == -1 &&
	    errno == ESRCH;
}

/* True if name ends in ".tmp-" and the six characters of mkdtemp. */
static bool
is_tmp_name(const char *name)
{
	size_t n = strlen(name);

	if (n < 11 || strncmp(name + n - 11, ".tmp-", 5) != 0)
		return false;
	for (size_t i = n - 6; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') ||
		    (name[i] >= 'A' && name[i] <= 'Z') ||
		    (name[i] >= '0' && name[i] <= '9')))
			return false;
	return true;
}

/*
 * The capture that marked directory fd, if it was the caller's (the mark
 * is the caller's own file) and is gone; else 0.
 */
static long
dead_mark(int fd)
{
	char buf[32];
	struct stat sb;
	ssize_t n;
	long pid;
	int m;

	if ((m = openat(fd, CAPLITTER_MARK, O_RDONLY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return 0;
	n = fstat(m, &sb) == 0 && S_ISREG(sb.st_mode) &&
	    sb.st_uid == geteuid() ? read(m, buf, sizeof(buf) - 1) : -1;
	close(m);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	pid = strtol(buf, NULL, 10);
	return gone(pid) ? pid : 0;
}

/* The outputs beside c->output that gone captures left. */
static void
sweep_outputs(const struct capture *c)
{
	char parent[PATH_MAX], *slash;
	struct dirent *e;
	DIR *d;

	snprintf(parent, sizeof(parent), "%s", c->output);
	for (size_t n = strlen(parent); n > 1 && parent[n - 1] == '/'; n--)
		parent[n - 1] = '\0';
	if ((slash = strrchr(parent, '/')) == NULL)
		snprintf(parent, sizeof(parent), ".");
	else
		slash[slash == parent ? 1 : 0] = '\0';
	if ((d = opendir(parent)) == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		long pid;
		int fd;

		if ((e->d_type != DT_DIR && e->d_type != DT_UNKNOWN) ||
		    strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if ((fd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY |
		    O_NOFOLLOW | O_CLOEXEC)) == -1)
			continue;
		if ((pid = dead_mark(fd)) == 0) {
			close(fd);
			continue;
		}
		if (is_tmp_name(e->d_name)) {
			close(fd);
			rm_tree_at(dirfd(d), e->d_name, TREE_DEPTH);
			fprintf(stderr, "spyremon: capture: removed %s/%s, the "
			    "unfinished output of capture %ld, which is no "
			    "longer running\n", parent, e->d_name, pid);
		} else {
			(void)rm_hidden(fd);
			close(fd);
			fprintf(stderr, "spyremon: capture: removed the "
			    "temporary files in %s/%s, left by capture %ld, "
			    "which is no longer running\n", parent, e->d_name,
			    pid);
		}
	}
	closedir(d);
}

/*
 * The capture a trace's name says it was written for, if name is one
 * (spyremon-capture-PID-HEX_PID.pt.trace.json, or Kineto's .tmp of it);
 * else 0.
 */
static long
trace_capture(const char *name)
{
	const char *p = name + sizeof(TRACE_PREFIX) - 1, *q;
	char *end;
	long pid;

	if (strncmp(name, TRACE_PREFIX, sizeof(TRACE_PREFIX) - 1) != 0)
		return 0;
	pid = strtol(p, &end, 10);
	if (end == p || *end != '-' || (q = strchr(end, '_')) == NULL ||
	    (size_t)(q - end - 1) != 12)
		return 0;
	for (const char *h = end + 1; h < q; h++)
		if (!((*h >= '0' && *h <= '9') || (*h >= 'a' && *h <= 'f')))
			return 0;
	strtol(q + 1, &end, 10);
	if (end == q + 1 || (strcmp(end, ".pt.trace.json") != 0 &&
	    strcmp(end, ".pt.trace.json.tmp") != 0))
		return 0;
	return pid;
}

/* The traces in dir written for gone captures, of c's process's user. */
static void
sweep_traces(const struct capture *c, const char *dir, const char *shown)
{
	struct dirent *e;
	struct stat sb;
	DIR *d;

	if ((d = opendir(dir)) == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		long pid = trace_capture(e->d_name);

		if (pid == 0 || !gone(pid) || fstatat(dirfd(d), e->d_name, &sb,
		    AT_SYMLINK_NOFOLLOW) == -1 || !S_ISREG(sb.st_mode) ||
		    (sb.st_uid != c->uid && sb.st_uid != geteuid()) ||
		    unlinkat(dirfd(d), e->d_name, 0) == -1)
			continue;
		fprintf(stderr, "spyremon: capture: removed %s%s, a trace "
		    "written for capture %ld, which is no longer running\n",
		    shown, e->d_name, pid);
	}
	closedir(d);
}

void
caplitter_sweep(const struct capture *c)
{
	char dir[PATH_MAX], via[PATH_MAX];

	sweep_outputs(c);
	caploop_trace_dir((int32_t)c->pid, dir, sizeof(dir));
	if (procinfo_path(c->pid, dir, via, sizeof(via)))
		sweep_traces(c, via, dir);
	sweep_traces(c, dir, dir);
	if (strcmp(dir, "/tmp/") != 0)
		sweep_traces(c, "/tmp/", "/tmp/");
}
