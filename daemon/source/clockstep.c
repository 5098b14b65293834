/*
 * clockstep: steps of the host clock (contract in clockstep.h).
 */
#include "clockstep.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "timeparse.h"

/* two monotonic reads this close around a realtime one read them as one */
#define READ_TIGHT_NS	(1000000ULL)
#define READ_TRIES	5

static struct {
	sd_event *ev;
	sd_event_source *timer;		/* the offset's check */
	sd_event_source *notice;	/* the kernel's timerfd */
	clockstep_fn *fn;
	void *arg;
	int64_t off;			/* the offset at the last check */
	uint64_t mono;			/* the monotonic clock then */
	bool have;			/* off and mono are set */
	struct clockstep_stats st;
} cs;

void
clockstep_read(int64_t *real, uint64_t *mono)
{
	uint64_t before, after;

	for (int i = 0; i < READ_TRIES; i++) {
		before = now_monotonic_ns();
		*real = now_realtime_ns();
		after = now_monotonic_ns();
		if (after - before <= READ_TIGHT_NS)
			break;
	}
	*mono = before + (after - before) / 2;
}

bool
clockstep_moved(int64_t off_then, uint64_t mono_then, int64_t off_now,
    uint64_t mono_now)
{
	uint64_t elapsed = mono_now > mono_then ? mono_now - mono_then : 0;
	int64_t slew = (int64_t)(elapsed / 1000000ULL * CLOCKSTEP_SLEW_PPM);

	return llabs(off_now - off_then) > slew + CLOCKSTEP_MIN_NS;
}

/* How a step was seen. */
enum seen_by { SEEN_OFFSET, SEEN_KERNEL, SEEN_RESTART };

/* Log, count and hand on a step of size_ns seen at realtime now. */
static void
note_step(int64_t size_ns, int64_t now, enum seen_by by)
{
	static const char *const how[] = {
		[SEEN_OFFSET] = "against the monotonic clock",
		[SEEN_KERNEL] = "the kernel's notice",
		[SEEN_RESTART] = "behind the last write of the daemon before: "
		    "stepped while none ran",
	};
	char when[64];

	format_time_utc(now, when, sizeof(when));
	cs.st.steps++;
	cs.st.net_ns += size_ns;
	cs.st.last_ns = size_ns;
	cs.st.last_at_ns = now;
	log_warnx("the host clock (CLOCK_REALTIME) was stepped %s by %s%.3fs "
	    "at %s (%s); rows and windows go on, stamped by the new clock",
	    size_ns >= 0 ? "forward" : "back", by == SEEN_RESTART ?
	    "at least " : "", (double)llabs(size_ns) / 1e9, when, how[by]);
	if (cs.fn != NULL)
		cs.fn(cs.arg, size_ns, now);
}

/* Compare the offset with the last check's; by_kernel: any change is one. */
static bool
check(bool by_kernel)
{
	int64_t real, off;
	uint64_t mono;
	bool stepped;

	clockstep_read(&real, &mono);
	off = real - (int64_t)mono;
	if (!cs.have) {
		cs.have = true;
		cs.off = off;
		cs.mono = mono;
		return false;
	}
	stepped = clockstep_moved(cs.off, cs.mono, off, mono) ||
	    (by_kernel && off != cs.off && llabs(off - cs.off) >
	    (int64_t)READ_TIGHT_NS);
	if (stepped)
		note_step(off - cs.off, real, by_kernel ? SEEN_KERNEL :
		    SEEN_OFFSET);
	cs.off = off;
	cs.mono = mono;
	return stepped;
}

bool
clockstep_behind(int64_t last_write_ns)
{
	int64_t now = now_realtime_ns();

	if (last_write_ns == 0 || last_write_ns - now <= CLOCKSTEP_MIN_NS)
		return false;
	note_step(now - last_write_ns, now, SEEN_RESTART);
	return true;
}

bool
clockstep_check(void)
{
	return check(false);
}

/* Arm fd to be cancelled by the next step; -1 if it cannot be. */
static int
arm_notice(int fd)
{
	struct itimerspec its = { .it_value = { .tv_sec = INT32_MAX } };

	return timerfd_settime(fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET,
	    &its, NULL);
}

static int
on_notice(sd_event_source *s, int fd, uint32_t revents, void *arg)
{
	uint64_t n;

	(void)s;
	(void)revents;
	(void)arg;
	if (read(fd, &n, sizeof(n)) == -1 && errno == ECANCELED)
		(void)check(true);
	if (arm_notice(fd) == -1) {
		log_warn("clock steps: timerfd");
		cs.notice = sd_event_source_disable_unref(cs.notice);
		cs.st.kernel = false;
	}
	return 0;
}

static int
on_timer(sd_event_source *s, uint64_t usec, void *arg)
{
	(void)arg;
	(void)check(false);
	sd_event_source_set_time(s, usec + CLOCKSTEP_CHECK_NS / 1000);
	sd_event_source_set_enabled(s, SD_EVENT_ON);
	return 0;
}

/* The kernel's notice on ev; -1 (logged) if it cannot be had. */
static int
watch_kernel(sd_event *ev)
{
	int fd = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC);
	int r;

	if (fd == -1 || arm_notice(fd) == -1) {
		log_warn("clock steps: timerfd (steps are still seen against "
		    "the monotonic clock)");
		if (fd != -1)
			close(fd);
		return -1;
	}
	if ((r = sd_event_add_io(ev, &cs.notice, fd, EPOLLIN, on_notice,
	    NULL)) < 0) {
		close(fd);
		log_warnx("clock steps: %s", strerror(-r));
		return -1;
	}
	(void)sd_event_source_set_io_fd_own(cs.notice, 1);
	cs.st.kernel = true;
	return 0;
}

int
clockstep_start(sd_event *ev, clockstep_fn *fn, void *arg)
{
	uint64_t now;
	int r, rc = 0;

	cs.fn = fn;
	cs.arg = arg;
	(void)check(false);
	if (ev == NULL)
		return 0;
	cs.ev = ev;
	if (watch_kernel(ev) == -1)
		rc = -1;
	(void)sd_event_now(ev, CLOCK_MONOTONIC, &now);
	if ((r = sd_event_add_time(ev, &cs.timer, CLOCK_MONOTONIC,
	    now + CLOCKSTEP_CHECK_NS / 1000, CLOCKSTEP_CHECK_NS / 10000,
	    on_timer, NULL)) < 0) {
		log_warnx("clock steps: timer: %s", strerror(-r));
		return -1;
	}
	return rc;
}

void
clockstep_stop(void)
{
	cs.timer = sd_event_source_disable_unref(cs.timer);
	cs.notice = sd_event_source_disable_unref(cs.notice);
	cs.ev = NULL;
	cs.fn = NULL;
}

void
clockstep_get_stats(struct clockstep_stats *out)
{
	*out = cs.st;
}
