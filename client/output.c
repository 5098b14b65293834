/*
 * output: a file written whole or not at all (output.h).
 */
#include <dirent.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client.h"
#include "output.h"
#include "regfile.h"

/* The temporary file, for the signal handler to remove. */
static char tmp_path[PATH_MAX];
static volatile sig_atomic_t have_tmp;
/* The caller's own cleanup, run by the signal handler after that. */
static void (*at_signal)(void);

static void
on_fatal_signal(int sig)
{
	if (have_tmp)
		unlink(tmp_path);
	if (at_signal != NULL)
		at_signal();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void
catch_fatal_signals(void)
{
	struct sigaction sa = { .sa_handler = on_fatal_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

void
output_at_signal(void (*fn)(void))
{
	at_signal = fn;
	catch_fatal_signals();
}

const char *
output_name(const char *path)
{
	return path == NULL || strcmp(path, "-") == 0 ? "stdout" : path;
}

const char *
output_tmp_path(void)
{
	return have_tmp ? tmp_path : NULL;
}

/*
 * True if a file replacing the regular file path (sb) can keep its owner
 * and group: as root always, otherwise if it is the caller's own and its
 * group one of the caller's.  Else print why not and return false: the
 * rename would silently hand someone else's file to the caller.
 */
static bool
keeps_owner(const char *path, const struct stat *sb)
{
	if (geteuid() == 0)
		return true;
	if (sb->st_uid != geteuid()) {
		warnx("%s: belongs to uid %u; the new file would be yours, "
		    "so it is not replaced (remove it first)", path,
		    (unsigned)sb->st_uid);
		return false;
	}
	if (sb->st_gid != getegid() && group_member(sb->st_gid) == 0) {
		warnx("%s: its group %u is not one of yours; the new file "
		    "could not keep it, so it is not replaced (remove it first)",
		    path, (unsigned)sb->st_gid);
		return false;
	}
	return true;
}

/*
 * Open path, which is not a regular file, to write in place: a character
 * device (/dev/null, a terminal) or a FIFO that someone reads (a shell's
 * >(...)).  Opened without blocking, so a FIFO that no one reads is an
 * error rather than an open that waits for good, and checked on the
 * descriptor (the path may have changed since the stat, sb).  Anything
 * else is an error that says what the path is.
 */
static FILE *
open_in_place(const char *path, const struct stat *sb)
{
	struct stat fsb;
	FILE *fp;
	int fd, flags;

	if (!S_ISCHR(sb->st_mode) && !S_ISFIFO(sb->st_mode)) {
		warnx("%s: is %s; name a file to write", path,
		    regfile_kind(sb->st_mode));
		return NULL;
	}
	if ((fd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)) ==
	    -1) {
		if (errno == ENXIO && S_ISFIFO(sb->st_mode))
			warnx("%s: is a FIFO that no one is reading; nothing "
			    "written", path);
		else
			warn("%s", path);
		return NULL;
	}
	if (fstat(fd, &fsb) == -1) {
		warn("%s", path);
		close(fd);
		return NULL;
	}
	if (!S_ISCHR(fsb.st_mode) && !S_ISFIFO(fsb.st_mode)) {
		warnx("%s: changed while being opened (now %s); nothing written",
		    path, regfile_kind(fsb.st_mode));
		close(fd);
		return NULL;
	}
	/* the writes themselves may wait for the reader, as it asked */
	if ((flags = fcntl(fd, F_GETFL)) != -1)
		(void)fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	if ((fp = fdopen(fd, "w")) == NULL) {
		warn("%s", path);
		close(fd);
	}
	return fp;
}

FILE *
output_open(const char *path)
{
	struct stat sb;
	bool exists;
	mode_t mask;
	FILE *fp;
	sigset_t fatal, saved;
	int fd, err;

	if (path == NULL || strcmp(path, "-") == 0)
		return stdout;
	if (lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode) &&
	    (stat(path, &sb) == -1 || S_ISREG(sb.st_mode))) {
		warnx("%s: is a symbolic link; name the file itself", path);
		return NULL;
	}
	if ((exists = stat(path, &sb) == 0) && !S_ISREG(sb.st_mode))
		return open_in_place(path, &sb);
	if (exists && !keeps_owner(path, &sb))
		return NULL;
	if ((size_t)snprintf(tmp_path, sizeof(tmp_path), "%s.XXXXXX", path) >=
	    sizeof(tmp_path)) {
		warnx("%s: the name is too long", path);
		return NULL;
	}
	catch_fatal_signals();
	/*
	 * The file exists from mkstemp on: a signal before have_tmp says so
	 * would leave it (a capture stopped as its first output appeared).
	 */
	sigemptyset(&fatal);
	sigaddset(&fatal, SIGINT);
	sigaddset(&fatal, SIGTERM);
	sigaddset(&fatal, SIGHUP);
	sigprocmask(SIG_BLOCK, &fatal, &saved);
	if ((fd = mkstemp(tmp_path)) != -1)
		have_tmp = 1;
	err = errno;
	sigprocmask(SIG_SETMASK, &saved, NULL);
	if (fd == -1) {
		errno = err;
		warn("%s", path);
		return NULL;
	}
	mask = umask(0);
	umask(mask);
	/*
	 * mkstemp makes 0600: give what open(2) would have, or the mode,
	 * owner and group of the file this replaces (keeps_owner checked
	 * they can be given).
	 */
	if (!exists)
		fchmod(fd, 0666 & ~mask);
	else if (fchown(fd, geteuid() == 0 ? sb.st_uid : (uid_t)-1,
	    sb.st_gid) == -1 || fchmod(fd, sb.st_mode & 07777) == -1) {
		warn("%s: cannot give the new file the old one's owner and mode",
		    path);
		close(fd);
		unlink(tmp_path);
		have_tmp = 0;
		return NULL;
	}
	if ((fp = fdopen(fd, "w")) == NULL) {
		warn("%s", path);
		close(fd);
		unlink(tmp_path);
		have_tmp = 0;
	}
	return fp;
}

int
output_close(FILE *fp, const char *path, int rc)
{
	bool failed = fflush(fp) == EOF || ferror(fp);

	if (failed && rc == CLIENT_EXIT_OK) {
		warn("%s", output_name(fp == stdout ? NULL : path));
		rc = CLIENT_EXIT_FAILED;
	}
	if (fp == stdout)
		return rc;
	if (fclose(fp) == EOF && rc == CLIENT_EXIT_OK) {
		warn("%s", path);
		rc = CLIENT_EXIT_FAILED;
	}
	if (!have_tmp)
		return rc;
	if (rc == CLIENT_EXIT_OK && rename(tmp_path, path) == -1) {
		warn("%s", path);
		rc = CLIENT_EXIT_FAILED;
	}
	if (rc != CLIENT_EXIT_OK)
		unlink(tmp_path);
	have_tmp = 0;
	return rc;
}

int
output_dir_open(const char *dir, char *tmp, size_t len)
{
	struct stat sb;

	tmp[0] = '\0';
	if (stat(dir, &sb) == 0) {
		DIR *d;
		struct dirent *e;
		bool empty = true;

		if (!S_ISDIR(sb.st_mode) || (d = opendir(dir)) == NULL) {
			warnx("--output %s: exists and is not a directory "
			    "spyremon can use", dir);
			return CLIENT_EXIT_FAILED;
		}
		while ((e = readdir(d)) != NULL)
			if (strcmp(e->d_name, ".") != 0 &&
			    strcmp(e->d_name, "..") != 0)
				empty = false;
		closedir(d);
		if (!empty) {
			warnx("--output %s: the directory is not empty; name a "
			    "new one", dir);
			return CLIENT_EXIT_FAILED;
		}
	} else if (errno != ENOENT) {
		warn("--output %s", dir);
		return CLIENT_EXIT_FAILED;
	}
	if ((size_t)snprintf(tmp, len, "%s.tmp-XXXXXX", dir) >= len ||
	    mkdtemp(tmp) == NULL) {
		warn("--output %s: cannot make a directory beside it", dir);
		tmp[0] = '\0';
		return CLIENT_EXIT_FAILED;
	}
	return CLIENT_EXIT_OK;
}

int
output_dir_publish(const char *dir, char *tmp)
{
	struct stat sb;

	/* an empty DIR is replaced; rename(2) refuses a non-empty one */
	if (stat(dir, &sb) == 0 && rmdir(dir) == -1) {
		warn("--output %s", dir);
		return CLIENT_EXIT_FAILED;
	}
	if (rename(tmp, dir) == -1) {
		warn("--output %s: rename from %s", dir, tmp);
		return CLIENT_EXIT_FAILED;
	}
	tmp[0] = '\0';
	return CLIENT_EXIT_OK;
}

void
output_dir_remove(char *tmp)
{
	DIR *d;
	struct dirent *e;
	char path[PATH_MAX + 300];

	if (tmp[0] == '\0' || (d = opendir(tmp)) == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", tmp, e->d_name);
		(void)unlink(path);
	}
	closedir(d);
	(void)rmdir(tmp);
	tmp[0] = '\0';
}
