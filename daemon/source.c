/*
 * source: the aiu-smi child, its pipes, and the rows it prints.
 *
 * Flow: child stdout -> csv_lines_feed -> csv_parse_line -> pace_row ->
 * store_append.  Nothing here writes to the database except through the
 * store.
 */
#include "source.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "csvparse.h"
#include "log.h"
#include "pace.h"
#include "store.h"
#include "timeparse.h"

#define HEALTH_CHECK_NS		(5ULL * NSEC_PER_SEC)
#define HEALTH_STALE_NS		(30ULL * NSEC_PER_SEC)
#define SILENCE_CHECK_NS	(1ULL * NSEC_PER_SEC)
#define READ_CHUNK		65536

struct source {
	sd_event *ev;
	const struct config *cfg;
	struct store *st;
	struct pace *pace;
	uint64_t interval_ns;		/* source.interval, as last set */
	bool windows_open;
	int64_t opened_ns;		/* when the windows opened */
	sd_event_source *replay_ev;	/* pace is yet to hear of the opening */

	pid_t pid;			/* 0 when no child runs */
	int out_fd, err_fd;
	sd_event_source *out_io, *err_io, *child_ev;
	sd_event_source *restart_timer, *kill_timer;
	sd_event_source *silence_timer, *health_timer;
	uint64_t child_interval_ns;
	uint64_t spawned_mono_ns;
	uint64_t last_row_mono_ns;	/* 0 until the child's first row */
	uint64_t backoff_ns;
	bool stopping;			/* no more restarts */
	bool restart_at_once;		/* we killed it on purpose */
	bool started_once;

	struct csv_lines out_lines, err_lines;
	struct csv_parser parser;
	unsigned mapped_generation;
	int col_metric[CSV_COLS_MAX];	/* store metric id per column, -1 if not a metric */
	bool header_mapped;
	int64_t read_stamp_ns;		/* stamp of the read being parsed */
	struct csv_result res;		/* scratch: too big for the stack per line */
	int ids[CSV_COLS_MAX];
	struct store_value vals[CSV_COLS_MAX];

	int cached_date, cached_hour;	/* local Date/Time -> epoch cache */
	int64_t cached_hour_epoch;

	struct source_device dev[SOURCE_MAX_DEVICES];
	struct card *cards;
	size_t ncards;
	struct source_stats stats;
	struct ratelimit bad_rl, stderr_rl, skew_rl;
};

static void source_spawn(struct source *src);
static void source_kill(struct source *src, const char *why);

/* Metrics whose aggregate over an interval is their maximum, not their mean. */
static const char *const max_metrics[] = { "peakmem" };

/* ---- helpers ---- */

static void
set_error(struct source *src, const char *fmt, ...) LOG_FMT(2, 3);

static void
set_error(struct source *src, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(src->stats.last_error, sizeof(src->stats.last_error), fmt, ap);
	va_end(ap);
}

/* Copy a line for a log message: printable ASCII only, at most 200 bytes. */
static void
printable(const char *line, size_t len, char *buf, size_t buflen)
{
	size_t o = 0;

	for (size_t i = 0; i < len && o + 5 < buflen; i++) {
		unsigned char c = (unsigned char)line[i];
		if (i == 200) {
			memcpy(buf + o, "...", 3);
			o += 3;
			break;
		}
		if (c >= 0x20 && c < 0x7f)
			buf[o++] = (char)c;
		else
			o += (size_t)snprintf(buf + o, buflen - o, "\\x%02x", c);
	}
	buf[o] = '\0';
}

static void
format_seconds(uint64_t ns, char *buf, size_t len)
{
	char frac[16];
	size_t n;

	snprintf(frac, sizeof(frac), "%09llu",
	    (unsigned long long)(ns % NSEC_PER_SEC));
	for (n = strlen(frac); n > 0 && frac[n - 1] == '0'; n--)
		frac[n - 1] = '\0';
	snprintf(buf, len, "%llu%s%s", (unsigned long long)(ns / NSEC_PER_SEC),
	    n > 0 ? "." : "", frac);
}

/* Arm (or re-arm) a one-shot monotonic timer at usec; create it if needed. */
static int
arm_timer(struct source *src, sd_event_source **s, uint64_t usec,
    sd_event_time_handler_t cb)
{
	int r;

	if (*s == NULL)
		return sd_event_add_time(src->ev, s, CLOCK_MONOTONIC, usec, 1000,
		    cb, src);
	if ((r = sd_event_source_set_time(*s, usec)) < 0)
		return r;
	return sd_event_source_set_enabled(*s, SD_EVENT_ONESHOT);
}

static uint64_t
silence_limit_ns(const struct source *src)
{
	uint64_t limit = SOURCE_SILENCE_INTERVALS * src->child_interval_ns;

	if (src->last_row_mono_ns == 0)
		return SOURCE_STARTUP_GRACE_NS;
	return limit > SOURCE_SILENCE_MIN_NS ? limit : SOURCE_SILENCE_MIN_NS;
}

/* ---- rates ---- */

/* The rate rows are stored at while a window is open. */
static uint64_t
fine_ns(const struct source *src)
{
	uint64_t w = src->cfg->source.window_interval_ns;

	return w > 0 && w < src->interval_ns ? w : src->interval_ns;
}

/* The delay the child should sample at now. */
static uint64_t
wanted_delay(const struct source *src)
{
	if (src->cfg->source.pre_window_ns > 0 || src->windows_open)
		return fine_ns(src);
	return src->interval_ns;
}

static struct pace_params
pace_params_now(const struct source *src)
{
	struct pace_params prm = {
		.fine_ns = fine_ns(src),
		.coarse_ns = src->interval_ns,
		.pre_ns = src->cfg->source.pre_window_ns,
	};

	/* without a ring, the child's own rate is the stored one */
	if (prm.pre_ns == 0)
		prm.fine_ns = prm.coarse_ns = wanted_delay(src);
	return prm;
}

/* Bring pace and the child in line with the rates now wanted. */
static void
apply_rates(struct source *src, const char *why)
{
	struct pace_params prm = pace_params_now(src);

	pace_set_params(src->pace, &prm);
	if (src->pid != 0 && src->child_interval_ns != wanted_delay(src) &&
	    !src->restart_at_once) {
		src->restart_at_once = true;
		source_kill(src, why);
	}
}

static void
store_row(void *arg, const struct store_sample *s)
{
	struct source *src = arg;

	store_append(src->st, s);
	src->stats.rows++;
}

static int
replace_rows(void *arg, int device, int64_t after_ns)
{
	struct source *src = arg;

	return store_delete_after(src->st, device, after_ns);
}

/*
 * Tell pace the windows opened, which replays the ring, unless done.  It
 * runs from the event loop right after the request that opened them, so
 * that request's reply does not wait for it; rows read meanwhile are in
 * the ring and replayed too.
 */
static void
replay_now(struct source *src)
{
	if (src->replay_ev == NULL)
		return;
	src->replay_ev = sd_event_source_disable_unref(src->replay_ev);
	pace_set_window(src->pace, true, src->opened_ns);
}

static int
on_replay(sd_event_source *s, void *arg)
{
	(void)s;
	replay_now(arg);
	return 0;
}

/* Say how much of the time before a window the ring covers, for n metrics. */
static void
describe_ring(const struct source *src, size_t n)
{
	struct pace_params prm = pace_params_now(src);
	size_t rows = pace_ring_rows(&prm, n);
	uint64_t covered = rows * prm.fine_ns;
	char secs[32];

	if (prm.pre_ns == 0 || prm.coarse_ns <= prm.fine_ns)
		return;
	format_seconds(covered, secs, sizeof(secs));
	if (covered < prm.pre_ns + prm.coarse_ns)
		log_warnx("the fine-rate ring holds only %ss per card at %zu "
		    "metrics (%d KiB); a window's start is covered at the fine "
		    "rate that far back at most", secs, n,
		    PACE_RING_DEVICE_BYTES / 1024);
	else
		log_info("fine-rate ring: %zu rows (%ss) per card", rows, secs);
}

/* ---- rows ---- */

/* aiu-smi's local Date and Time as epoch seconds; cached per hour. */
static int64_t
smi_epoch(struct source *src, int date, int hms)
{
	int hour = hms / 3600;

	if (date != src->cached_date || hour != src->cached_hour) {
		struct tm tm = { .tm_year = date / 10000 - 1900,
		    .tm_mon = date / 100 % 100 - 1, .tm_mday = date % 100,
		    .tm_hour = hour, .tm_isdst = -1 };
		src->cached_hour_epoch = (int64_t)mktime(&tm);
		src->cached_date = date;
		src->cached_hour = hour;
	}
	return src->cached_hour_epoch + hms % 3600;
}

static void
map_header(struct source *src)
{
	const struct csv_parser *p = &src->parser;

	size_t nmetrics = 0;

	src->header_mapped = true;
	for (int c = 0; c < p->ncols; c++) {
		src->col_metric[c] = -1;
		if (p->cols[c].role != CSV_ROLE_METRIC)
			continue;
		if (store_metric(src->st, p->cols[c].key, p->cols[c].unit,
		    &src->col_metric[c]) == -1) {
			log_warnx("cannot add metric '%s' to the catalog; "
			    "rows are dropped until the next header",
			    p->cols[c].key);
			src->header_mapped = false;
			continue;
		}
		nmetrics++;
		for (size_t k = 0; k < sizeof(max_metrics) /
		    sizeof(max_metrics[0]); k++)
			if (strcmp(p->cols[c].key, max_metrics[k]) == 0)
				pace_set_max(src->pace, src->col_metric[c]);
	}
	src->mapped_generation = p->generation;
	describe_ring(src, nmetrics);
}

static void
handle_row(struct source *src, const struct csv_row *row)
{
	const struct csv_parser *p = &src->parser;
	struct source_device *d;
	struct store_sample s;
	bool all_zero = true;
	size_t n = 0;

	if (!src->header_mapped || src->mapped_generation != p->generation) {
		src->stats.bad_lines++;
		return;
	}
	if (row->device < 0 || row->device >= SOURCE_MAX_DEVICES) {
		src->stats.bad_lines++;
		return;
	}
	for (int c = 0; c < p->ncols; c++) {
		const struct csv_value *v = &row->values[c];

		if (src->col_metric[c] < 0)
			continue;
		src->ids[n] = src->col_metric[c];
		src->vals[n].mant = v->mant;
		src->vals[n].scale = v->scale;
		src->vals[n].present = v->present;
		/* host-side columns are never zero; they say nothing of the card */
		if (v->present && v->mant != 0 &&
		    strncmp(p->cols[c].key, "host", 4) != 0)
			all_zero = false;
		n++;
	}
	s = (struct store_sample){
		.ts_ns = src->read_stamp_ns,
		.device = row->device,
		.interval_ms = (uint32_t)(src->child_interval_ns / NSEC_PER_MSEC),
		.nvalues = n,
		.metric = src->ids,
		.values = src->vals,
	};
	if (row->have_clock) {
		int64_t skew = smi_epoch(src, row->date, row->hms) -
		    src->read_stamp_ns / (int64_t)NSEC_PER_SEC;
		unsigned dropped;

		s.have_skew = true;
		s.skew_s = (int32_t)skew;
		if ((skew > 2 || skew < -2 - (int64_t)(src->child_interval_ns /
		    NSEC_PER_SEC)) && ratelimit_pass(&src->skew_rl,
		    now_monotonic_ns(), &dropped))
			log_warnx("aiu-smi's clock differs from ours by %llds "
			    "(device %d); samples keep our stamp",
			    (long long)skew, row->device);
	}
	src->stats.rows_read++;
	pace_row(src->pace, &s);

	d = &src->dev[row->device];
	d->seen = true;
	d->rows++;
	d->newest_ts_ns = s.ts_ns;
	health_note_row(&d->health, all_zero);
	src->stats.newest_ts_ns = s.ts_ns;
	src->last_row_mono_ns = now_monotonic_ns();
}

static void
handle_map_entry(struct source *src, int device, const char *path)
{
	struct source_device *d;
	char bus[INV_BUSID_MAX] = "";

	if (device < 0 || device >= SOURCE_MAX_DEVICES)
		return;
	d = &src->dev[device];
	if (inventory_busid_from_path(src->cfg->source.metric_files, path, bus,
	    sizeof(bus)) == -1)
		bus[0] = '\0';
	if (!d->seen || strcmp(d->health.path, path) != 0) {
		health_init(&d->health, path);
		log_info("device %d: metric file %s%s%s", device, path,
		    bus[0] ? ", bus " : "", bus);
	}
	d->seen = true;
	snprintf(d->bus_id, sizeof(d->bus_id), "%s", bus);
	store_device_map(src->st, device, path, bus, src->read_stamp_ns);
}

static void
report_bad(struct source *src, const char *line, size_t len, const char *why)
{
	char text[1024];
	unsigned dropped;

	src->stats.bad_lines++;
	if (!ratelimit_pass(&src->bad_rl, now_monotonic_ns(), &dropped))
		return;
	if (dropped > 0)
		log_warnx("%u more unparsable lines from aiu-smi not shown", dropped);
	printable(line, len, text, sizeof(text));
	log_warnx("aiu-smi line %llu rejected: %s: \"%s\"",
	    (unsigned long long)(src->stats.rows_read + src->stats.bad_lines),
	    why, text);
}

static void
on_stdout_line(void *arg, const char *line, size_t len, bool overlong)
{
	struct source *src = arg;
	struct csv_result *res = &src->res;

	if (overlong) {
		report_bad(src, line, len, "line longer than 4096 bytes");
		return;
	}
	switch (csv_parse_line(&src->parser, line, len, res)) {
	case CSV_ROW:
		handle_row(src, &res->u.row);
		break;
	case CSV_HEADER:
		map_header(src);
		break;
	case CSV_MAP_ENTRY:
		handle_map_entry(src, res->u.map.device, res->u.map.path);
		break;
	case CSV_BAD:
		report_bad(src, line, len, res->error);
		break;
	case CSV_BLANK:
	case CSV_COMMENT:
	case CSV_MAP_BEGIN:
		break;
	}
}

static void
on_stderr_line(void *arg, const char *line, size_t len, bool overlong)
{
	struct source *src = arg;
	char text[1024], pidfield[32];
	const char *fields[] = { pidfield, NULL };
	unsigned dropped;

	(void)overlong;
	if (!ratelimit_pass(&src->stderr_rl, now_monotonic_ns(), &dropped))
		return;
	if (dropped > 0)
		log_warnx("%u more lines of aiu-smi's stderr not shown", dropped);
	printable(line, len, text, sizeof(text));
	snprintf(pidfield, sizeof(pidfield), "CHILD_PID=%d", (int)src->pid);
	log_fields(LOG_WARNING, fields, "aiu-smi[%d]: %s", (int)src->pid, text);
}

/*
 * Read what fd has now; returns bytes read, 0 at EOF, -1 with EAGAIN when
 * nothing is left for now, -1 otherwise on error.
 */
static ssize_t
read_some(struct source *src, int fd, bool is_stdout)
{
	static char buf[READ_CHUNK];
	ssize_t n;

	do
		n = read(fd, buf, sizeof(buf));
	while (n == -1 && errno == EINTR);
	if (n <= 0)
		return n;
	if (is_stdout) {
		src->read_stamp_ns = now_realtime_ns();
		csv_lines_feed(&src->out_lines, buf, (size_t)n, on_stdout_line, src);
	} else
		csv_lines_feed(&src->err_lines, buf, (size_t)n, on_stderr_line, src);
	return n;
}

/* Read fd until it would block or ends; true at EOF or error. */
static bool
drain(struct source *src, int fd, bool is_stdout)
{
	ssize_t n;

	while ((n = read_some(src, fd, is_stdout)) > 0)
		;
	return n == 0 || errno != EAGAIN;
}

static void
close_pipe(int *fd, sd_event_source **io)
{
	*io = sd_event_source_disable_unref(*io);
	if (*fd != -1)
		close(*fd);
	*fd = -1;
}

static int
on_pipe(sd_event_source *s, int fd, uint32_t revents, void *arg)
{
	struct source *src = arg;
	bool is_stdout = fd == src->out_fd;

	ssize_t n;

	(void)s;
	(void)revents;
	/* one read per wake-up keeps the loop fair to timers and clients */
	n = read_some(src, fd, is_stdout);
	if (n == 0 || (n == -1 && errno != EAGAIN)) {
		if (is_stdout)
			close_pipe(&src->out_fd, &src->out_io);
		else
			close_pipe(&src->err_fd, &src->err_io);
	}
	return 0;
}

/* ---- the child process ---- */

static char **
child_argv(const struct source *src)
{
	const struct config *cfg = src->cfg;
	size_t n = (size_t)cfg->source.argc + 9, i = 0;
	char **argv = calloc(n, sizeof(*argv));
	char delay[32], *ids = NULL;

	if (argv == NULL)
		return NULL;
	format_seconds(wanted_delay(src), delay, sizeof(delay));
	for (int a = 0; a < cfg->source.argc; a++)
		argv[i++] = strdup(cfg->source.argv[a]);
	argv[i++] = strdup("-s");
	argv[i++] = strdup("-g");
	argv[i++] = strdup(cfg->source.groups);
	argv[i++] = strdup("-d");
	argv[i++] = strdup(delay);
	if (!cfg->source.all_devices) {
		size_t len = cfg->source.ndevices * 5 + 1, o = 0;

		if ((ids = malloc(len)) != NULL) {
			for (size_t d = 0; d < cfg->source.ndevices; d++)
				o += (size_t)snprintf(ids + o, len - o, "%s%d",
				    d ? "," : "", cfg->source.devices[d]);
			argv[i++] = strdup("-i");
			argv[i++] = ids;
		}
	}
	argv[i++] = strdup(cfg->source.metric_files);
	argv[i] = NULL;
	for (size_t k = 0; k < i; k++)
		if (argv[k] == NULL) {
			for (size_t j = 0; j < i; j++)
				free(argv[j]);
			free(argv);
			return NULL;
		}
	return argv;
}

static void
free_argv(char **argv)
{
	for (size_t i = 0; argv != NULL && argv[i] != NULL; i++)
		free(argv[i]);
	free(argv);
}

/* In the forked child: become aiu-smi.  Never returns. */
static _Noreturn void
child_exec(char **argv, int out_w, int err_w, pid_t daemon_pid)
{
	sigset_t none;

	/* die with the daemon, whatever kills it */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != daemon_pid)
		_exit(127);
	setpgid(0, 0);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	if (dup2(out_w, STDOUT_FILENO) == -1 || dup2(err_w, STDERR_FILENO) == -1)
		_exit(127);
	/* Python block-buffers a pipe; rows would arrive late and mis-stamped */
	setenv("PYTHONUNBUFFERED", "1", 1);
	execvp(argv[0], argv);
	dprintf(STDERR_FILENO, "cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

static int on_child_exit(sd_event_source *s, const siginfo_t *si, void *arg);
static int on_restart_timer(sd_event_source *s, uint64_t usec, void *arg);

static void
schedule_restart(struct source *src, uint64_t delay_ns)
{
	uint64_t now;

	sd_event_now(src->ev, CLOCK_MONOTONIC, &now);
	if (arm_timer(src, &src->restart_timer, now + delay_ns / 1000,
	    on_restart_timer) < 0)
		log_warnx("cannot arm the restart timer; aiu-smi stays stopped");
}

static void
source_spawn(struct source *src)
{
	int out[2] = { -1, -1 }, err[2] = { -1, -1 };
	char **argv;
	pid_t pid, self = getpid();
	char delay[32];

	if ((argv = child_argv(src)) == NULL) {
		log_warnx("out of memory building aiu-smi's command line");
		schedule_restart(src, src->backoff_ns);
		return;
	}
	if (pipe2(out, O_CLOEXEC) == -1 || pipe2(err, O_CLOEXEC) == -1) {
		log_warn("pipe");
		goto fail;
	}
	if ((pid = fork()) == -1) {
		log_warn("fork");
		goto fail;
	}
	if (pid == 0)
		child_exec(argv, out[1], err[1], self);
	/* also set here, so a kill(-pid) right after fork reaches it */
	setpgid(pid, pid);
	close(out[1]);
	close(err[1]);
	free_argv(argv);

	src->pid = pid;
	src->out_fd = out[0];
	src->err_fd = err[0];
	fcntl(src->out_fd, F_SETFL, O_NONBLOCK);
	fcntl(src->err_fd, F_SETFL, O_NONBLOCK);
	csv_lines_reset(&src->out_lines);
	csv_lines_reset(&src->err_lines);
	csv_parser_init(&src->parser);
	src->header_mapped = false;
	src->child_interval_ns = wanted_delay(src);
	src->spawned_mono_ns = now_monotonic_ns();
	src->last_row_mono_ns = 0;
	if (sd_event_add_io(src->ev, &src->out_io, src->out_fd, EPOLLIN,
	    on_pipe, src) < 0 ||
	    sd_event_add_io(src->ev, &src->err_io, src->err_fd, EPOLLIN,
	    on_pipe, src) < 0 ||
	    sd_event_add_child(src->ev, &src->child_ev, pid, WEXITED,
	    on_child_exit, src) < 0)
		log_warnx("cannot watch aiu-smi (pid %d); it is killed", (int)pid);
	if (src->started_once)
		src->stats.restarts++;
	src->started_once = true;
	src->stats.pid = pid;
	src->stats.interval_ns = src->child_interval_ns;
	format_seconds(src->child_interval_ns, delay, sizeof(delay));
	log_info("started %s (pid %d) every %ss", src->cfg->source.argv[0],
	    (int)pid, delay);
	if (src->child_ev == NULL)
		source_kill(src, "not watchable");
	return;
fail:
	for (int i = 0; i < 2; i++) {
		if (out[i] != -1)
			close(out[i]);
		if (err[i] != -1)
			close(err[i]);
	}
	free_argv(argv);
	set_error(src, "cannot start aiu-smi: %s", strerror(errno));
	schedule_restart(src, src->backoff_ns);
}

static void
describe_status(int code, int status, char *buf, size_t len)
{
	if (code == CLD_EXITED)
		snprintf(buf, len, "exited with status %d", status);
	else
		snprintf(buf, len, "killed by signal %d (%s)%s", status,
		    strsignal(status), code == CLD_DUMPED ? ", core dumped" : "");
}

/* The child is gone: keep what it wrote, then restart it unless stopping. */
static void
child_gone(struct source *src, int code, int status)
{
	uint64_t ran_ns = now_monotonic_ns() - src->spawned_mono_ns;
	char how[128];

	if (src->out_fd != -1) {
		drain(src, src->out_fd, true);
		close_pipe(&src->out_fd, &src->out_io);
	}
	if (src->err_fd != -1) {
		drain(src, src->err_fd, false);
		close_pipe(&src->err_fd, &src->err_io);
	}
	if (csv_lines_pending(&src->out_lines) > 0)
		log_warnx("aiu-smi ended in the middle of a line; it is dropped");
	pace_flush(src->pace);
	src->child_ev = sd_event_source_disable_unref(src->child_ev);
	src->kill_timer = sd_event_source_disable_unref(src->kill_timer);
	describe_status(code, status, how, sizeof(how));
	if (!src->stopping && !src->restart_at_once)
		set_error(src, "aiu-smi (pid %d) %s after %llus", (int)src->pid,
		    how, (unsigned long long)(ran_ns / NSEC_PER_SEC));
	src->pid = 0;
	src->stats.pid = 0;
	if (src->stopping)
		return;
	if (src->restart_at_once) {
		src->restart_at_once = false;
		source_spawn(src);
		return;
	}
	if (src->last_row_mono_ns != 0 &&
	    now_monotonic_ns() - src->spawned_mono_ns >= SOURCE_HEALTHY_NS)
		src->backoff_ns = SOURCE_BACKOFF_MIN_NS;
	log_warnx("%s; restarting in %llus", src->stats.last_error,
	    (unsigned long long)(src->backoff_ns / NSEC_PER_SEC));
	schedule_restart(src, src->backoff_ns);
	src->backoff_ns *= 2;
	if (src->backoff_ns > SOURCE_BACKOFF_MAX_NS)
		src->backoff_ns = SOURCE_BACKOFF_MAX_NS;
}

static int
on_child_exit(sd_event_source *s, const siginfo_t *si, void *arg)
{
	struct source *src = arg;

	(void)s;
	child_gone(src, si->si_code, si->si_status);
	return 0;
}

static int
on_restart_timer(sd_event_source *s, uint64_t usec, void *arg)
{
	struct source *src = arg;

	(void)s;
	(void)usec;
	if (src->pid == 0 && !src->stopping)
		source_spawn(src);
	return 0;
}

static int
on_kill_timer(sd_event_source *s, uint64_t usec, void *arg)
{
	struct source *src = arg;

	(void)s;
	(void)usec;
	if (src->pid != 0) {
		log_warnx("aiu-smi (pid %d) ignored SIGTERM; sending SIGKILL",
		    (int)src->pid);
		kill(-src->pid, SIGKILL);
	}
	return 0;
}

/* Ask the child to go (SIGTERM, SIGKILL after a grace); child_gone follows. */
static void
source_kill(struct source *src, const char *why)
{
	uint64_t now;

	if (src->pid == 0)
		return;
	log_notice("stopping aiu-smi (pid %d): %s", (int)src->pid, why);
	kill(-src->pid, SIGTERM);
	sd_event_now(src->ev, CLOCK_MONOTONIC, &now);
	if (arm_timer(src, &src->kill_timer,
	    now + SOURCE_KILL_GRACE_NS / 1000, on_kill_timer) < 0)
		kill(-src->pid, SIGKILL);
}

static int
on_silence_timer(sd_event_source *s, uint64_t usec, void *arg)
{
	struct source *src = arg;
	uint64_t now = now_monotonic_ns(), since;

	since = src->last_row_mono_ns ? src->last_row_mono_ns : src->spawned_mono_ns;
	if (src->pid != 0 && src->kill_timer == NULL &&
	    now - since > silence_limit_ns(src)) {
		set_error(src, "aiu-smi (pid %d) printed no row for %llus",
		    (int)src->pid, (unsigned long long)((now - since) / NSEC_PER_SEC));
		log_warnx("%s", src->stats.last_error);
		source_kill(src, "silent");
	}
	/* re-armed from its scheduled time, so it never drifts */
	arm_timer(src, &src->silence_timer, usec + SILENCE_CHECK_NS / 1000,
	    on_silence_timer);
	(void)s;
	return 0;
}

static int
on_health_timer(sd_event_source *s, uint64_t usec, void *arg)
{
	struct source *src = arg;
	uint64_t now = now_monotonic_ns();

	for (int i = 0; i < SOURCE_MAX_DEVICES; i++) {
		struct source_device *d = &src->dev[i];
		struct stat sb;
		bool exists;
		char text[640];

		if (!d->seen || d->health.path[0] == '\0')
			continue;
		exists = stat(d->health.path, &sb) == 0;
		if (health_observe(&d->health, exists, exists ?
		    (int64_t)sb.st_mtim.tv_sec * (int64_t)NSEC_PER_SEC +
		    sb.st_mtim.tv_nsec : 0, now, HEALTH_STALE_NS)) {
			health_describe(&d->health, text, sizeof(text));
			log_notice("device %d: %s", i, text);
		}
	}
	arm_timer(src, &src->health_timer, usec + HEALTH_CHECK_NS / 1000,
	    on_health_timer);
	(void)s;
	return 0;
}

/* ---- inventory ---- */

static void
scan_inventory(struct source *src)
{
	struct card *cards = NULL;
	size_t n = 0;
	int64_t now = now_realtime_ns();

	if (inventory_scan(src->cfg->sysfs_root, &cards, &n) == -1) {
		log_warn("cannot list PCI devices under %s/bus/pci/devices",
		    src->cfg->sysfs_root);
		return;
	}
	if (n == 0)
		log_notice("no Spyre card (PCI 1014:06a7 or 1014:06a8) under %s",
		    src->cfg->sysfs_root);
	for (size_t i = 0; i < n; i++) {
		log_info("card %s: %s, NUMA node %d, driver %s, link %s x%d",
		    cards[i].bus_id, cards[i].vf ? "VF" : "PF",
		    cards[i].numa_node, cards[i].driver[0] ? cards[i].driver :
		    "none", cards[i].link_speed[0] ? cards[i].link_speed :
		    "unknown", cards[i].link_width);
		store_card(src->st, &cards[i], now);
	}
	free(src->cards);
	src->cards = cards;
	src->ncards = n;
	src->stats.ncards = n;
}

/* ---- public ---- */

static int
pace_start(struct source *src)
{
	struct pace_params prm = pace_params_now(src);
	struct pace_sink sink = { store_row, replace_rows, src };

	if ((src->pace = pace_new(&prm, &sink)) == NULL) {
		log_warnx("out of memory");
		return -1;
	}
	return 0;
}

int
source_start(sd_event *ev, const struct config *cfg, struct store *st,
    struct source **out)
{
	struct source *src;
	uint64_t now;

	if ((src = calloc(1, sizeof(*src))) == NULL) {
		log_warnx("out of memory");
		return -1;
	}
	src->ev = sd_event_ref(ev);
	src->cfg = cfg;
	src->st = st;
	src->interval_ns = cfg->source.interval_ns;
	src->out_fd = src->err_fd = -1;
	src->backoff_ns = SOURCE_BACKOFF_MIN_NS;
	src->bad_rl = (struct ratelimit)RATELIMIT_INIT(10 * NSEC_PER_SEC, 10);
	src->stderr_rl = (struct ratelimit)RATELIMIT_INIT(10 * NSEC_PER_SEC, 20);
	src->skew_rl = (struct ratelimit)RATELIMIT_INIT(600 * NSEC_PER_SEC, 1);
	src->cached_date = -1;
	csv_parser_init(&src->parser);
	if (pace_start(src) == -1) {
		source_free(src);
		return -1;
	}

	scan_inventory(src);
	sd_event_now(ev, CLOCK_MONOTONIC, &now);
	if (arm_timer(src, &src->silence_timer, now + SILENCE_CHECK_NS / 1000,
	    on_silence_timer) < 0 ||
	    arm_timer(src, &src->health_timer, now + HEALTH_CHECK_NS / 1000,
	    on_health_timer) < 0) {
		log_warnx("cannot set up aiu-smi's timers");
		source_free(src);
		return -1;
	}
	source_spawn(src);
	*out = src;
	return 0;
}

void
source_set_interval(struct source *src, uint64_t interval_ns)
{
	src->interval_ns = interval_ns;
	apply_rates(src, "sampling interval changed");
}

void
source_set_windows_open(struct source *src, bool open)
{
	if (open == src->windows_open)
		return;
	src->windows_open = open;
	if (open) {
		src->opened_ns = now_realtime_ns();
		if (sd_event_add_defer(src->ev, &src->replay_ev, on_replay,
		    src) < 0)
			pace_set_window(src->pace, true, src->opened_ns);
	} else {
		replay_now(src);
		pace_set_window(src->pace, false, now_realtime_ns());
	}
	apply_rates(src, open ? "a profiling window opened" :
	    "the last profiling window closed");
}

void
source_reconfigure(struct source *src, const struct config *cfg)
{
	bool differs = config_source_differs(src->cfg, cfg);

	src->cfg = cfg;
	scan_inventory(src);
	if (differs && src->pid != 0 && !src->restart_at_once) {
		src->restart_at_once = true;
		source_kill(src, "command line changed");
	} else if (differs && src->pid == 0) {
		/* waiting out a back-off: the new command deserves a try now */
		src->backoff_ns = SOURCE_BACKOFF_MIN_NS;
		schedule_restart(src, 0);
	}
	apply_rates(src, "window_interval or pre_window changed");
}

void
source_stop(struct source *src, uint64_t grace_ns)
{
	uint64_t deadline;
	int status = 0;
	pid_t r;

	src->stopping = true;
	src->restart_timer = sd_event_source_disable_unref(src->restart_timer);
	replay_now(src);
	if (src->pid == 0)
		return;
	kill(-src->pid, SIGTERM);
	deadline = now_monotonic_ns() + grace_ns;
	for (;;) {
		struct pollfd pfd[2] = {
			{ .fd = src->out_fd, .events = POLLIN },
			{ .fd = src->err_fd, .events = POLLIN },
		};

		/* keep reading, or a child blocked on a full pipe never exits */
		poll(pfd, 2, 10);
		if (src->out_fd != -1 && (pfd[0].revents & (POLLIN | POLLHUP)) &&
		    drain(src, src->out_fd, true))
			close_pipe(&src->out_fd, &src->out_io);
		if (src->err_fd != -1 && (pfd[1].revents & (POLLIN | POLLHUP)) &&
		    drain(src, src->err_fd, false))
			close_pipe(&src->err_fd, &src->err_io);
		if ((r = waitpid(src->pid, &status, WNOHANG)) == src->pid ||
		    (r == -1 && errno == ECHILD))
			break;
		if (now_monotonic_ns() > deadline) {
			log_warnx("aiu-smi (pid %d) did not stop in time; "
			    "sending SIGKILL", (int)src->pid);
			kill(-src->pid, SIGKILL);
			waitpid(src->pid, &status, 0);
			break;
		}
	}
	child_gone(src, WIFSIGNALED(status) ? CLD_KILLED : CLD_EXITED,
	    WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
}

void
source_free(struct source *src)
{
	if (src == NULL)
		return;
	if (src->pid != 0)
		source_stop(src, SOURCE_KILL_GRACE_NS);
	sd_event_source_disable_unref(src->restart_timer);
	sd_event_source_disable_unref(src->kill_timer);
	sd_event_source_disable_unref(src->silence_timer);
	sd_event_source_disable_unref(src->health_timer);
	sd_event_source_disable_unref(src->replay_ev);
	sd_event_unref(src->ev);
	pace_free(src->pace);
	free(src->cards);
	free(src);
}

void
source_get_stats(const struct source *src, struct source_stats *out)
{
	struct pace_stats ps;

	*out = src->stats;
	out->windows_open = src->windows_open;
	out->stored_interval_ns = src->windows_open ? fine_ns(src) :
	    src->interval_ns;
	if (src->pace != NULL) {
		pace_get_stats(src->pace, &ps);
		out->ring_bytes = ps.ring_bytes;
	}
}

const struct source_device *
source_device(const struct source *src, int device)
{
	if (device < 0 || device >= SOURCE_MAX_DEVICES || !src->dev[device].seen)
		return NULL;
	return &src->dev[device];
}

const struct card *
source_cards(const struct source *src, size_t *n)
{
	*n = src->ncards;
	return src->cards;
}
