/*
 * clockshift: an LD_PRELOAD library that shifts what a process reads of
 * CLOCK_REALTIME, for tests of host clock steps; the machine's clock is
 * never touched.
 *
 *   CLOCKSHIFT_FILE=PATH LD_PRELOAD=.../clockshift.so PROGRAM ...
 *
 * PATH holds a signed number of nanoseconds added to CLOCK_REALTIME (and
 * CLOCK_REALTIME_COARSE) as clock_gettime(2), gettimeofday(2) and time(2)
 * return it; a missing, empty or unreadable file means 0.  A second
 * number, a rate in ppm, slews the clock: from the file's mtime on (by the
 * machine's own clock, so that every process agrees), the offset grows by
 * that many ns per ms, as adjtime(3) or an NTP daemon slews it; the rate
 * is held within +-CLOCKSHIFT_MAX_PPM, the most the kernel slews.  The file is
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
/* the slew's rate (ppm) and its start (the file's mtime, ns) */
#define CLOCKSHIFT_MAX_PPM	500
static volatile int64_t slew_ppm;
static volatile int64_t slew_from_ns;

static int real_clock(clockid_t id, struct timespec *ts);

/* The slew accumulated since the file was written, in ns. */
static int64_t
slewed(void)
{
	struct timespec now;
	int64_t ns;

	if (slew_ppm == 0 || real_clock(CLOCK_REALTIME, &now) == -1)
		return 0;
	ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec - slew_from_ns;
	return ns < 0 ? 0 : ns * slew_ppm / 1000000;
}

/* The offset now in force, reread if the file changed. */
static int64_t
current_shift(void)
{
	const char *path = getenv("CLOCKSHIFT_FILE");
	struct stat sb;
	char buf[64], *end;
	ssize_t n;
	int fd;

	if (path == NULL || stat(path, &sb) == -1) {
		seen_size = -1;
		shift_ns = 0;
		slew_ppm = 0;
		return 0;
	}
	if (sb.st_ino == seen_ino && sb.st_size == seen_size &&
	    sb.st_mtim.tv_sec == seen_mtim.tv_sec &&
	    sb.st_mtim.tv_nsec == seen_mtim.tv_nsec)
		return shift_ns + slewed();
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return shift_ns + slewed();
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	shift_ns = strtoll(buf, &end, 10);
	slew_ppm = strtoll(end, NULL, 10);
	if (slew_ppm > CLOCKSHIFT_MAX_PPM)
		slew_ppm = CLOCKSHIFT_MAX_PPM;
	if (slew_ppm < -CLOCKSHIFT_MAX_PPM)
		slew_ppm = -CLOCKSHIFT_MAX_PPM;
	slew_from_ns = (int64_t)sb.st_mtim.tv_sec * 1000000000 +
	    sb.st_mtim.tv_nsec;
	seen_ino = sb.st_ino;
	seen_size = sb.st_size;
	seen_mtim = sb.st_mtim;
	return shift_ns + slewed();
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
