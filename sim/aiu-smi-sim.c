/*
 * aiu-smi-sim: prints simulated aiu-smi output on a fixed schedule.
 *
 * Every line goes out in its own write(2), as Python's aiu-smi does under
 * PYTHONUNBUFFERED=1, so a reader of a pipe sees each line the moment it
 * is written.  Rows of interval k are written at start + k * delay on
 * CLOCK_MONOTONIC; the schedule never drifts, and intervals missed while
 * the process was stopped are skipped rather than written in a burst.
 */
#include "sim.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "metricfile.h"
#include "timeparse.h"

#define OVERLONG_BYTES	10000
#define SPLIT_PAUSE_NS	(2 * NSEC_PER_MSEC)

struct metric_file {
	int fd;			/* -1: not written (card reads zero) */
	ino_t ino;
	dev_t dev;
};

struct sim_run {
	struct sim_options *opts;
	struct sim_model *model;
	struct sim_layout layout;
	int out_fd;
	int stamp_fd;			/* -1 without --stamp-log */
	struct metric_file files[SIM_CARDS_MAX];
	struct sim_mfile mfiles[SIM_CARDS_MAX];	/* --metric-format new* */
	int file_log_fd;		/* -1 without --file-log */
	struct sim_powersched *sched;	/* NULL without --power-schedule */
	int power_log_fd;		/* -1 without --power-log */
	int64_t sched_from_ns;		/* realtime the last step ended */
	bool shifted;			/* shift_ns is set (--start) */
	int64_t shift_ns;		/* --start less the first row's realtime */
	int64_t logged_ms;		/* --power-log written below this ms */
	bool recreated;			/* --recreate-after done */
	uint64_t ticks;			/* model steps (file updates) so far */
	uint64_t intervals;		/* intervals written so far */
	uint64_t rows;			/* complete data rows written */
	uint64_t row_lines;		/* row lines, complete or cut */
	uint64_t garbage_lines;
	uint64_t fault_rng;		/* varies split points and garbage */
	bool header_changed;
	char line[SIM_LINE_MAX];
};

/*
 * SIGTERM and SIGINT end the process at once, except while a row and its
 * stamp-log line are being written: then the row is finished first, so
 * that the stamp log describes every row written.
 */
static volatile sig_atomic_t stop_requested;
static volatile sig_atomic_t in_row;

static void
on_stop_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
	if (!in_row)
		_exit(0);
}

static void
install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_stop_signal;	/* no SA_RESTART: blocked writes end */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = SIG_IGN;	/* a closed pipe shows up as EPIPE */
	sigaction(SIGPIPE, &sa, NULL);
}

static void
run_free(struct sim_run *run)
{
	sim_model_free(run->model);
	run->model = NULL;
	for (int i = 0; i < SIM_CARDS_MAX; i++) {
		if (run->files[i].fd != -1)
			close(run->files[i].fd);
		sim_mfile_close(&run->mfiles[i]);
	}
	if (run->file_log_fd != -1)
		close(run->file_log_fd);
	if (run->power_log_fd != -1)
		close(run->power_log_fd);
	sim_powersched_free(run->sched);
	run->sched = NULL;
	if (run->stamp_fd != -1)
		close(run->stamp_fd);
	if (run->out_fd != STDOUT_FILENO)
		close(run->out_fd);
	sim_options_free(run->opts);
}

static _Noreturn void
run_exit(struct sim_run *run, int code)
{
	run_free(run);
	exit(code);
}

static uint64_t
fault_random(struct sim_run *run)
{
	uint64_t z = (run->fault_rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Write all of buf to fd; a reader that went away ends the process quietly. */
static void
write_all(struct sim_run *run, int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n;

		/* within a row, its line and its log line are finished first */
		if (stop_requested && !in_row)
			run_exit(run, 0);
		n = write(fd, buf, len);
		if (n == -1 && errno == EINTR) {
			/* a blocked write: its line is not whole, nor logged */
			if (stop_requested)
				run_exit(run, 0);
			continue;
		}
		if (n == -1 && errno == EPIPE)
			run_exit(run, 0);
		if (n == -1)
			fatal(1, "write");
		buf += n;
		len -= (size_t)n;
	}
}

static void
write_line(struct sim_run *run, const char *buf, size_t len)
{
	write_all(run, run->out_fd, buf, len);
}

static void
write_text(struct sim_run *run, const char *text)
{
	write_line(run, text, strlen(text));
}

static const char *
workload_name(const struct sim_options *opts)
{
	static const char *const names[] = {
		[WORKLOAD_IDLE] = "idle", [WORKLOAD_BUSY] = "busy",
		[WORKLOAD_CYCLE] = "cycle", [WORKLOAD_FILE] = "file",
		[WORKLOAD_ZERO] = "zero",
	};

	return names[opts->workload];
}

/* The comment lines, the #MetricFiles block and the header. */
static void
write_preamble(struct sim_run *run)
{
	const struct sim_options *opts = run->opts;
	char path[1024];
	size_t len;

	if (opts->csv) {
		snprintf(run->line, sizeof(run->line),
		    "# aiu-smi-sim %s (simulated aiu-smi): %d cards, seed %llu,"
		    " workload %s\n", SIM_VERSION, opts->ncards,
		    (unsigned long long)opts->seed, workload_name(opts));
		write_text(run, run->line);
	}
	write_text(run, "#MetricFiles\n");
	for (int i = 0; i < opts->ncards; i++) {
		if (!opts->selected[i])
			continue;
		sim_metric_path(opts->pattern, i, path, sizeof(path));
		snprintf(run->line, sizeof(run->line), "# %d %s\n", i, path);
		write_text(run, run->line);
	}
	len = sim_layout_header(&run->layout, run->line, sizeof(run->line));
	write_line(run, run->line, len);
}

/* One line of printable bytes that is neither a comment nor a header. */
static size_t
garbage_random(struct sim_run *run, char *buf, size_t cap)
{
	static const char first[] = "abcdefghjklmnopqrstuvwxyz0123456789";
	size_t len = 8 + fault_random(run) % 90, i;

	if (len + 2 > cap)
		len = cap - 2;
	buf[0] = first[fault_random(run) % (sizeof(first) - 1)];
	for (i = 1; i < len; i++) {
		char c = (char)(0x20 + fault_random(run) % 95);

		buf[i] = c == ',' ? ';' : c;	/* one cell: never a row */
	}
	buf[len++] = '\n';
	buf[len] = '\0';
	return len;
}

/* A copy of row (CSV, with "\n") made invalid in one of three ways. */
static size_t
garbage_from_row(struct sim_run *run, const char *row, char *buf, size_t cap)
{
	static const char *const bad_cells[] = {
		"abc", "1.2.3", "nan", "12a", "--", "N/A", "0x1f",
	};
	const char *cell = row, *next;
	int ncells = 1, pick, kind;

	for (const char *p = row; *p != '\0'; p++)
		ncells += *p == ',';
	/* a row with no metric cell (ID, date, time only) has none to spoil */
	if ((kind = (int)(fault_random(run) % 3)) == 2 && ncells <= 3)
		kind = 1;
	switch (kind) {
	case 0:		/* an extra cell */
		snprintf(buf, cap, "%.*s,0.000\n", (int)strcspn(row, "\n"), row);
		break;
	case 1:		/* an ID that is not a number */
		snprintf(buf, cap, "x%s", row + strcspn(row, ","));
		break;
	default:	/* a metric cell that is not a number */
		pick = 3 + (int)(fault_random(run) % (uint64_t)(ncells - 3));
		for (int i = 0; i < pick; i++)
			cell = strchr(cell, ',') + 1;
		next = cell + strcspn(cell, ",\n");
		snprintf(buf, cap, "%.*s%s%s", (int)(cell - row), row,
		    bad_cells[fault_random(run) % 7], next);
		break;
	}
	return strlen(buf);
}

static void
write_garbage(struct sim_run *run, const char *row)
{
	char buf[SIM_LINE_MAX + 16];
	size_t len;

	switch (run->garbage_lines++ % 3) {
	case 0:
		len = garbage_random(run, buf, sizeof(buf));
		break;
	case 1:
		if (run->opts->csv) {
			len = garbage_from_row(run, row, buf, sizeof(buf));
			break;
		}
		__attribute__((fallthrough));
	default:
		len = (size_t)snprintf(buf, sizeof(buf),
		    "Traceback (most recent call last):\n");
		break;
	}
	write_line(run, buf, len);
}

/* OVERLONG_BYTES of the row repeated, then "\n": no newline inside. */
static void
write_overlong(struct sim_run *run, const char *row, size_t rowlen)
{
	static char buf[OVERLONG_BYTES + 1];
	size_t unit = rowlen - 1;	/* without its "\n" */

	for (size_t i = 0; i < OVERLONG_BYTES; i++)
		buf[i] = (i + 1) % (unit + 1) == 0 ? ',' : row[i % (unit + 1)];
	buf[OVERLONG_BYTES] = '\n';
	write_line(run, buf, sizeof(buf));
}

static void
stamp_row(struct sim_run *run, int64_t stamp, int card, const char *row,
    size_t len)
{
	char buf[SIM_LINE_MAX + 64];
	int n;

	if (run->stamp_fd == -1)
		return;
	n = snprintf(buf, sizeof(buf), "%lld %d %.*s\n", (long long)stamp,
	    card, (int)len - 1, row);
	if (n < 0 || (size_t)n >= sizeof(buf))
		fatalx(1, "stamp log line too long");
	write_all(run, run->stamp_fd, buf, (size_t)n);
}

/* Write one row line, whole or in two parts; returns the stamp. */
static int64_t
write_row(struct sim_run *run, const char *row, size_t len)
{
	struct timespec pause = { 0, (long)SPLIT_PAUSE_NS };
	int64_t stamp;
	size_t split;

	if (!run->opts->split_rows || len < 2) {
		stamp = now_realtime_ns();
		write_line(run, row, len);
		return stamp;
	}
	split = 1 + fault_random(run) % (len - 1);
	stamp = now_realtime_ns();
	write_line(run, row, split);
	nanosleep(&pause, NULL);
	write_line(run, row + split, len - split);
	return stamp;
}

static void
change_header(struct sim_run *run)
{
	char buf[SIM_LINE_MAX];
	size_t len;

	sim_layout_init(&run->layout, run->opts->csv, run->opts->groups, true);
	len = sim_layout_header(&run->layout, buf, sizeof(buf));
	write_line(run, buf, len);
	run->header_changed = true;
}

static _Noreturn void
hang(void)
{
	for (;;)
		pause();	/* SIGTERM and SIGINT exit from the handler */
}

/* Faults and ends due after the complete row just written. */
static void
after_row(struct sim_run *run, const char *row)
{
	const struct sim_options *opts = run->opts;
	uint64_t r = run->rows;
	char msg[128];

	if (opts->stderr_every != 0 && r % opts->stderr_every == 0) {
		int n = snprintf(msg, sizeof(msg), "aiu-smi-sim: warning: "
		    "simulated warning after %llu rows\n", (unsigned long long)r);

		write_all(run, STDERR_FILENO, msg, (size_t)n);
	}
	if (opts->garbage_every != 0 && r % opts->garbage_every == 0)
		write_garbage(run, row);
	if (opts->header_change_set && !run->header_changed &&
	    r >= opts->header_change_after)
		change_header(run);
	if (opts->exit_after_set && r >= opts->exit_after)
		run_exit(run, 0);
	if (opts->hang_after_set && r >= opts->hang_after)
		hang();
}

static void
emit_row(struct sim_run *run, int card, const char *date, const char *hms)
{
	const struct sim_options *opts = run->opts;
	uint64_t line_no = run->row_lines + 1;
	bool cut = opts->missing_column_every != 0 &&
	    line_no % opts->missing_column_every == 0;
	size_t len;
	int64_t stamp;

	len = sim_layout_row(&run->layout, run->model, card, date, hms, cut,
	    run->line, sizeof(run->line));
	if (opts->overlong_every != 0 && line_no % opts->overlong_every == 0)
		write_overlong(run, run->line, len);
	in_row = 1;
	stamp = write_row(run, run->line, len);
	run->row_lines++;
	if (!cut) {
		run->rows++;
		stamp_row(run, stamp, card, run->line, len);
	}
	in_row = 0;
	if (stop_requested)
		run_exit(run, 0);
	if (!cut)
		after_row(run, run->line);
}

static bool
new_format(const struct sim_options *opts)
{
	return opts->mformat != MFORMAT_STUB;
}

static void
create_new_format(struct sim_run *run, int card)
{
	static const int orders[] = { [MFORMAT_NEW] = MF_ORDER_NATIVE,
	    [MFORMAT_NEW_LE] = MF_ORDER_LITTLE, [MFORMAT_NEW_BE] = MF_ORDER_BIG };
	const struct sim_options *opts = run->opts;
	struct sim_mfile *f = &run->mfiles[card];
	char path[1024];

	sim_metric_path(opts->pattern, card, path, sizeof(path));
	if (sim_mfile_create(f, path) == -1) {
		log_warnx("%s: card %d reads zero", path, card);
		return;
	}
	f->order = orders[opts->mformat];
	f->old_format = opts->old_cards[card];
	f->interval_ms = (uint32_t)(opts->file_interval_ns / NSEC_PER_MSEC);
	f->updates = 0;
}

static void
open_metric_files(struct sim_run *run)
{
	char path[1024];
	struct stat st;

	for (int i = 0; i < run->opts->ncards && new_format(run->opts); i++)
		create_new_format(run, i);
	for (int i = 0; i < run->opts->ncards && !new_format(run->opts); i++) {
		struct metric_file *mf = &run->files[i];

		sim_metric_path(run->opts->pattern, i, path, sizeof(path));
		mf->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		    0644);
		if (mf->fd == -1 || fstat(mf->fd, &st) == -1) {
			log_warn("%s: card %d reads zero", path, i);
			continue;
		}
		mf->ino = st.st_ino;
		mf->dev = st.st_dev;
	}
}

/*
 * Update card's metric file as its runtime would; false if the file is no
 * longer at its path (deleted or replaced), which leaves the card at zero.
 */
static bool
touch_metric_file(struct sim_run *run, int card)
{
	struct metric_file *mf = &run->files[card];
	char path[1024], record[64];
	struct stat st;

	if (new_format(run->opts)) {
		const struct sim_mfile *f = &run->mfiles[card];
		sim_metric_path(run->opts->pattern, card, path, sizeof(path));
		return f->fd != -1 && stat(path, &st) == 0 &&
		    (unsigned long long)st.st_ino == f->ino &&
		    (unsigned long long)st.st_dev == f->dev;
	}
	if (mf->fd == -1)
		return false;
	sim_metric_path(run->opts->pattern, card, path, sizeof(path));
	if (stat(path, &st) == -1 || st.st_ino != mf->ino ||
	    st.st_dev != mf->dev)
		return false;
	memset(record, 0, sizeof(record));
	snprintf(record, sizeof(record), "SIMMETRIC %llu",
	    (unsigned long long)run->intervals);
	if (pwrite(mf->fd, record, sizeof(record), 0) == -1)
		return false;
	return true;
}

static void
card_states(struct sim_run *run, enum sim_card_state *state)
{
	const struct sim_options *opts = run->opts;
	uint64_t t = run->ticks * opts->file_interval_ns;
	bool file_busy = false;

	if (opts->workload == WORKLOAD_FILE)
		file_busy = access(opts->workload_path, F_OK) == 0;
	for (int i = 0; i < opts->ncards; i++) {
		bool busy;

		switch (opts->workload) {
		case WORKLOAD_BUSY:
			busy = true;
			break;
		case WORKLOAD_CYCLE:
			busy = sim_model_cycle_busy(run->model, i, t);
			break;
		case WORKLOAD_FILE:
			busy = file_busy;
			break;
		default:
			busy = false;
			break;
		}
		state[i] = busy ? CARD_BUSY : CARD_IDLE;
		if (opts->workload == WORKLOAD_ZERO ||
		    (opts->write_metric_files && !touch_metric_file(run, i)))
			state[i] = CARD_ZERO;
	}
}

/* Write every card's new-format file, and its --file-log line. */
static void
update_files(struct sim_run *run, double dt)
{
	const struct sim_options *opts = run->opts;
	char line[128];
	int64_t stamp;
	uint32_t pwr;

	for (int i = 0; i < opts->ncards; i++) {
		struct sim_mfile *f = &run->mfiles[i];
		bool torn;

		if (i == 0 && opts->recreate_set && !run->recreated &&
		    f->updates == opts->recreate_after) {
			create_new_format(run, 0);
			run->recreated = true;
		}
		torn = opts->tear_every != 0 &&
		    (f->updates + 1) % opts->tear_every == 0;
		in_row = 1;
		if (sim_mfile_update(f, run->model, i, dt, torn, &stamp,
		    &pwr) == 0) {
			f->updates++;
			if (run->file_log_fd != -1) {
				int n = snprintf(line, sizeof(line),
				    "%lld %d %u %u %d %lld\n",
				    (long long)(stamp / (int64_t)NSEC_PER_MSEC),
				    i, f->seq, pwr, torn,
				    (long long)now_realtime_ns());
				write_all(run, run->file_log_fd, line, (size_t)n);
			}
		}
		in_row = 0;
		if (stop_requested)
			run_exit(run, 0);
	}
}

/* Each scheduled card's power over every whole ms before now_ns. */
static void
log_power(struct sim_run *run, int64_t now_ns)
{
	const int64_t ms = (int64_t)NSEC_PER_MSEC;
	char line[96];

	for (; (run->logged_ms + 1) * ms <= now_ns; run->logged_ms++)
		for (int i = 0; i < run->opts->ncards; i++) {
			int n;

			if (!sim_powersched_has(run->sched, i))
				continue;
			n = snprintf(line, sizeof(line), "%lld %d %.6f\n",
			    (long long)run->logged_ms, i,
			    sim_powersched_mean(run->sched, i,
			    run->logged_ms * ms, (run->logged_ms + 1) * ms));
			write_all(run, run->power_log_fd, line, (size_t)n);
		}
}

/*
 * Scheduled cards take the schedule's mean power over the step that just
 * ended (from the last step's end to now, on the realtime clock, which
 * the schedule and the stored samples share).
 */
static void
follow_schedule(struct sim_run *run)
{
	int64_t now = now_realtime_ns();

	if (run->sched == NULL)
		return;
	for (int i = 0; i < run->opts->ncards; i++)
		if (sim_powersched_has(run->sched, i))
			sim_model_set_power(run->model, i,
			    sim_powersched_mean(run->sched, i,
			    run->sched_from_ns, now));
	if (run->power_log_fd != -1) {
		in_row = 1;
		log_power(run, now);
		in_row = 0;
		if (stop_requested)
			run_exit(run, 0);
	}
	run->sched_from_ns = now;
}

static void
emit_interval(struct sim_run *run)
{
	const struct sim_options *opts = run->opts;
	enum sim_card_state state[SIM_CARDS_MAX];
	double dt = (double)opts->file_interval_ns / 1e9;
	char date[16], hms[16];
	time_t now;
	struct tm tm;

	card_states(run, state);
	sim_model_step(run->model, state, dt);
	follow_schedule(run);
	run->ticks++;
	if (opts->write_metric_files && new_format(opts))
		update_files(run, dt);
	if (run->ticks % (opts->delay_ns / opts->file_interval_ns) != 0)
		return;
	now = time(NULL);
	if (opts->start_set) {
		/* the first row is dated --start; later ones as time passes */
		int64_t t = now_realtime_ns();

		if (!run->shifted) {
			run->shift_ns = opts->start_ns - t;
			run->shifted = true;
		}
		t += run->shift_ns;
		now = (time_t)(t / (int64_t)NSEC_PER_SEC -
		    (t % (int64_t)NSEC_PER_SEC < 0));
	}
	localtime_r(&now, &tm);
	strftime(date, sizeof(date), "%Y%m%d", &tm);
	strftime(hms, sizeof(hms), "%H:%M:%S", &tm);
	run->intervals++;
	for (int i = 0; i < opts->ncards; i++)
		if (opts->selected[i])
			emit_row(run, i, date, hms);
}

static void
sleep_until(uint64_t deadline_ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(deadline_ns / NSEC_PER_SEC),
		.tv_nsec = (long)(deadline_ns % NSEC_PER_SEC),
	};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	    EINTR)
		;
}

static _Noreturn void
run_schedule(struct sim_run *run)
{
	uint64_t delay = run->opts->file_interval_ns;
	uint64_t start = now_monotonic_ns(), k = 0, now;

	for (;;) {
		k++;
		sleep_until(start + k * delay);
		now = now_monotonic_ns();
		if (now >= start + (k + 1) * delay)
			k = (now - start) / delay;
		emit_interval(run);
	}
}

static int
open_output(const char *path, int flags)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | flags, 0644);

	if (fd == -1)
		fatal(1, "%s", path);
	return fd;
}

int
main(int argc, char **argv)
{
	static struct sim_options opts;
	static struct sim_run run;

	log_init("aiu-smi-sim", 0);
	sim_options_parse(&opts, argc, argv);
	install_signals();
	run.opts = &opts;
	run.out_fd = STDOUT_FILENO;
	run.stamp_fd = -1;
	run.file_log_fd = -1;
	run.power_log_fd = -1;
	run.fault_rng = opts.seed ^ 0x2545f4914f6cdd1dULL;
	for (int i = 0; i < SIM_CARDS_MAX; i++)
		run.files[i].fd = run.mfiles[i].fd = -1;
	if (opts.filename != NULL)
		run.out_fd = open_output(opts.filename, O_TRUNC);
	if (opts.stamp_log != NULL)
		run.stamp_fd = open_output(opts.stamp_log, O_APPEND);
	if (opts.file_log != NULL)
		run.file_log_fd = open_output(opts.file_log, O_APPEND);
	run.model = sim_model_new(&opts);
	if (run.model == NULL)
		fatal(1, "memory");
	if (opts.power_schedule != NULL) {
		run.sched = sim_powersched_load(opts.power_schedule, opts.ncards);
		for (int i = 0; i < opts.ncards; i++)
			sim_powersched_set_idle(run.sched, i,
			    sim_model_idle_power(run.model, i));
	}
	if (opts.power_log != NULL)
		run.power_log_fd = open_output(opts.power_log, O_APPEND);
	run.sched_from_ns = now_realtime_ns();
	run.logged_ms = run.sched_from_ns / (int64_t)NSEC_PER_MSEC + 1;
	if (opts.write_metric_files)
		open_metric_files(&run);
	sim_layout_init(&run.layout, opts.csv, opts.groups, false);
	write_preamble(&run);
	if (opts.header_change_set && opts.header_change_after == 0)
		change_header(&run);
	if (opts.exit_after_set && opts.exit_after == 0)
		run_exit(&run, 0);
	if (opts.hang_after_set && opts.hang_after == 0)
		hang();
	run_schedule(&run);
}
