/* regfile: open a path someone else controls without blocking; see regfile.h. */
#include "regfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

const char *
regfile_kind(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG:	return "a regular file";
	case S_IFDIR:	return "a directory";
	case S_IFIFO:	return "a FIFO";
	case S_IFCHR:	return "a character device";
	case S_IFBLK:	return "a block device";
	case S_IFSOCK:	return "a socket";
	case S_IFLNK:	return "a symbolic link";
	}
	return "of an unknown file type";
}

/* Fail with what path is: not a regular file. */
static int
not_regular(mode_t mode, mode_t *kind, char *why, size_t len)
{
	*kind = mode & S_IFMT;
	snprintf(why, len, "is %s, not a regular file", regfile_kind(mode));
	errno = EINVAL;
	return -1;
}

int
regfile_open(const char *path, bool nofollow, struct stat *sb, mode_t *kind,
    char *why, size_t len)
{
	int fd, flags, saved;

	*kind = 0;
	/* not opened at all if it is not a file now: opening a device acts */
	if ((nofollow ? lstat(path, sb) : stat(path, sb)) == 0 &&
	    !S_ISREG(sb->st_mode))
		return not_regular(sb->st_mode, kind, why, len);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK |
	    (nofollow ? O_NOFOLLOW : 0));
	if (fd == -1) {
		saved = errno;
		/* O_NOFOLLOW fails with ELOOP on a link swapped in */
		if (saved == ELOOP && nofollow && lstat(path, sb) == 0 &&
		    S_ISLNK(sb->st_mode))
			return not_regular(sb->st_mode, kind, why, len);
		snprintf(why, len, "%s", strerror(saved));
		errno = saved;
		return -1;
	}
	if (fstat(fd, sb) == -1) {
		saved = errno;
		close(fd);
		snprintf(why, len, "%s", strerror(saved));
		errno = saved;
		return -1;
	}
	if (!S_ISREG(sb->st_mode)) {
		close(fd);
		return not_regular(sb->st_mode, kind, why, len);
	}
	if ((flags = fcntl(fd, F_GETFL)) != -1)
		(void)fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	return fd;
}
