/*
 * clockshift: an LD_PRELOAD library that shifts what a process reads of
 * CLOCK_REALTIME, for tests of host clock steps; the machine's clock is
 * never touched.
 *
 *   CLOCKSHIFT_FILE=PATH LD_PRELOAD=.../clockshift.so PROGRAM ...
 *
 * PATH holds a signed number of nanoseconds added to CLOCK_REALTIME (and
 * CLOCK_REALTIME_COARSE) as clock_gettime(2), gettimeofday(2) and time(2)
 * return it; a missing, empty or unreadable file means 0.  The file is
 * looked at (stat(2)) at every call and read again when its inode, size
 * or mtime changed: a test steps the clock of every process under the
 * library at once by renaming a new file over PATH.  CLOCK_MONOTONIC and
 * the other clocks are left as they are, so a step moves the
 * REALTIME-minus-MONOTONIC offset as a real one does; only the kernel's
 * own notice of a step (a timerfd's TFD_TIMER_CANCEL_ON_SET) cannot be
 * imitated from here.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

typedef int (*gettime_fn)(clockid_t, struct timespec *);

static gettime_fn real_gettime;
/* the file as last read; a data race between threads only rereads it */
static ino_t seen_ino;
static off_t seen_size = -1;
static struct timespec seen_mtim;
static volatile int64_t shift_ns;

/* The offset now in force, reread if the file changed. */
static int64_t
current_shift(void)
{
	const char *path = getenv("CLOCKSHIFT_FILE");
	struct stat sb;
	char buf[64];
	ssize_t n;
	int fd;

	if (path == NULL || stat(path, &sb) == -1) {
		seen_size = -1;
		shift_ns = 0;
		return 0;
	}
	if (sb.st_ino == seen_ino && sb.st_size == seen_size &&
	    sb.st_mtim.tv_sec == seen_mtim.tv_sec &&
	    sb.st_mtim.tv_nsec == seen_mtim.tv_nsec)
		return shift_ns;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return shift_ns;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	shift_ns = strtoll(buf, NULL, 10);
	seen_ino = sb.st_ino;
	seen_size = sb.st_size;
	seen_mtim = sb.st_mtim;
	return shift_ns;
}

static int
real_clock(clockid_t id, struct timespec *ts)
{
	if (real_gettime == NULL)
		*(void **)&real_gettime = dlsym(RTLD_NEXT, "clock_gettime");
	return real_gettime(id, ts);
}

/* ts moved by the current shift. */
static void
shift(struct timespec *ts)
{
	int64_t ns = (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec +
	    current_shift();

	ts->tv_sec = ns / 1000000000;
	ts->tv_nsec = ns % 1000000000;
	if (ts->tv_nsec < 0) {
		ts->tv_nsec += 1000000000;
		ts->tv_sec--;
	}
}

int
clock_gettime(clockid_t id, struct timespec *ts)
{
	int rc = real_clock(id, ts);

	if (rc == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE))
		shift(ts);
	return rc;
}

int
gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
	struct timespec ts;

	(void)tz;
	if (clock_gettime(CLOCK_REALTIME, &ts) == -1)
		return -1;
	tv->tv_sec = ts.tv_sec;
	tv->tv_usec = ts.tv_nsec / 1000;
	return 0;
}

time_t
time(time_t *t)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_REALTIME, &ts) == -1)
		return (time_t)-1;
	if (t != NULL)
		*t = ts.tv_sec;
	return ts.tv_sec;
}
