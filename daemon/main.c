/*
 * spyremond: collects Spyre card telemetry from aiu-smi into SQLite.
 *
 * Start-up order: config, log, signals, event loop, the control socket
 * (bound and listening, so a second daemon stops here, before it touches
 * the database), store, source, the open windows, serving the socket's
 * clients; READY=1 only then.  The finalisation runs in reverse.  The
 * daemon never forks into the background: systemd (Type=notify)
 * supervises it.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "clockstep.h"
#include "clocksync.h"
#include "config.h"
#include "control.h"
#include "log.h"
#include "source.h"
#include "spyremond.h"
#include "store.h"
#include "timeparse.h"
#include "version.h"
#include "windows.h"

#define STATUS_EVERY_NS		(5ULL * NSEC_PER_SEC)
#define STOP_GRACE_NS		(5ULL * NSEC_PER_SEC)
/*
 * The test suite's seam for adjtimex(2): "unsync" or "sync" make every
 * window record that clock state (clocksync_fake); unset in production.
 */
#define TEST_CLOCK_ENV		"SPYREMOND_TEST_CLOCK"
#define MAX_PENDING_ROWS	50000	/* ~10 MB: 1 min at 8 cards x 100 Hz, 100 min at 1 Hz */

struct daemon {
	sd_event *ev;
	struct config *cfg;
	const char *config_path;	/* NULL: the default, which may be absent */
	struct store *st;
	struct source *src;
	struct windows *win;
	struct control *ctl;
	sd_event_source *flush_timer, *status_timer, *sync_done;
	unsigned pushed_restarts;	/* source counts already in the store */
	uint64_t pushed_bad_lines;
	char *database_next;		/* a reloaded config's new path, or NULL */
	char *socket_next;
};

/* --help: on stdout, exit 0. */
static _Noreturn void
help(void)
{
	printf("usage: spyremond [-v] [-c file]\n"
	    "       spyremond --check-config [-c file]\n"
	    "       spyremond --version | --help\n"
	    "\n"
	    "Collects the telemetry of the host's Spyre cards from aiu-smi into\n"
	    "SQLite, and serves spyremon on its control socket.\n"
	    "\n"
	    "  -c, --config FILE   the config (default %s)\n"
	    "      --check-config  print the config in force as YAML, or its errors\n"
	    "  -v, --verbose       log more; twice, debugging too\n"
	    "      --version       print the version\n"
	    "  -h, --help          print this\n"
	    "\n"
	    "exit status:\n"
	    "  %d  stopped by SIGTERM or SIGINT, or --check-config found it valid\n"
	    "  %d  the config is invalid or cannot be read\n"
	    "  %d  bad command line\n"
	    "  %d  the database cannot be opened, created or migrated\n"
	    "  %d  signals, timers or the event loop failed\n"
	    "  %d  the control socket cannot be set up\n"
	    "  %d  the database's log is damaged and was not opened (refused\n"
	    "     by on_damaged_database, or no copy could be kept aside)\n",
	    CONFIG_DEFAULT_PATH, EXIT_OK, EXIT_CONFIG, EXIT_USAGE,
	    EXIT_DATABASE, EXIT_EVENTLOOP, EXIT_SOCKET, EXIT_DAMAGED);
	exit(EXIT_OK);
}

/*
 * A usage error, after getopt or main said what is wrong: the line
 * pointing to --help, exit 2.
 */
static _Noreturn void
usage_try(void)
{
	fprintf(stderr, "try 'spyremond --help'\n");
	exit(EXIT_USAGE);
}

/*
 * Load the config at path, or the default.  A missing default file means
 * built-in defaults; any other problem prints every error.  NULL on error.
 */
static struct config *
load_config(const char *path)
{
	struct config_errors errs = { 0 };
	struct config *cfg = NULL;
	bool defaulted;

	if (config_load_default(path, &cfg, &errs, &defaulted) == -1) {
		for (size_t i = 0; i < errs.n; i++)
			log_warnx("%s", errs.msgs[i]);
		log_warnx("%zu error%s in the config", errs.n,
		    errs.n == 1 ? "" : "s");
	} else if (defaulted)
		log_info("no %s; using built-in defaults", CONFIG_DEFAULT_PATH);
	config_errors_free(&errs);
	return cfg;
}

static void
update_status(struct daemon *d)
{
	struct source_stats ss;
	struct store_stats st;
	char every[32], newest[64] = "no sample yet", writer[256] = "";
	size_t nwin = 0;

	if (d->win != NULL)
		(void)windows_list(d->win, &nwin);
	source_get_stats(d->src, &ss);
	store_get_stats(d->st, &st);
	format_duration(ss.stored_interval_ns, every, sizeof(every));
	if (ss.newest_ts_ns != 0)
		snprintf(newest, sizeof(newest), "newest %.1fs ago",
		    (double)(now_realtime_ns() - ss.newest_ts_ns) / 1e9);
	if (st.stalled)
		snprintf(writer, sizeof(writer), "; WRITES STALLED %.0fs (%s), "
		    "%zu rows waiting, %llu dropped", (double)st.stalled_ns / 1e9,
		    st.why, st.pending, (unsigned long long)st.rows_dropped);
	if (st.recreated > 0)
		snprintf(writer + strlen(writer), sizeof(writer) - strlen(writer),
		    "; database file created again %llu time%s",
		    (unsigned long long)st.recreated, st.recreated == 1 ? "" : "s");
	sd_notifyf(0, "STATUS=collecting %zu card%s every %s; %llu rows stored; "
	    "%s; child %s, restarts %u; %llu bad lines; %zu window%s open%s",
	    ss.ncards, ss.ncards == 1 ? "" : "s", every,
	    (unsigned long long)st.rows_written, newest,
	    ss.pid ? "running" : "stopped", ss.restarts,
	    (unsigned long long)ss.bad_lines, nwin, nwin == 1 ? "" : "s", writer);
}

/* The host clock was stepped (logged and counted by clockstep.c). */
static void
on_clock_step(void *arg, int64_t step_ns, int64_t at_ns)
{
	struct daemon *d = arg;
	/* a new epoch of the clock, recorded; retention by age measures
	 * older rows by the clock that stamped them */
	int64_t epoch = store_clock_stepped(d->st, step_ns, at_ns);

	if (d->src != NULL)
		source_clock_stepped(d->src, step_ns, at_ns, epoch);
	/* windows.max_open counts from begins the step moved */
	windows_clock_stepped(d->win, at_ns);
}

/* The first window opened or the last one closed: the source changes rate. */
static void
on_windows_open(void *arg, bool any_open, int64_t at_ns)
{
	struct daemon *d = arg;

	source_set_windows_open(d->src, any_open, at_ns);
	update_status(d);
}

static int
on_status_timer(sd_event_source *s, uint64_t usec, void *arg)
{
	update_status(arg);
	sd_event_source_set_time(s, usec + STATUS_EVERY_NS / 1000);
	sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
	return 0;
}

/*
 * Hand the source's restarts and rejected lines since the last call to the
 * store, which keeps them as counters across restarts of the daemon.
 */
static void
push_counters(struct daemon *d)
{
	struct source_stats ss;

	source_get_stats(d->src, &ss);
	if (ss.restarts > d->pushed_restarts)
		store_counter_add(d->st, STORE_COUNTER_CHILD_RESTARTS,
		    ss.restarts - d->pushed_restarts);
	if (ss.bad_lines > d->pushed_bad_lines)
		store_counter_add(d->st, STORE_COUNTER_REJECTED_LINES,
		    ss.bad_lines - d->pushed_bad_lines);
	d->pushed_restarts = ss.restarts;
	d->pushed_bad_lines = ss.bad_lines;
}

/*
 * The windows that end from now on are summarized by the store as they
 * become complete (store_sync_window); those left unsummarized from before
 * this start (spyremond stopped first, or an older build) are summarized
 * once, now.
 */
static void
summarize_left_windows(struct daemon *d)
{
	int64_t lookback = (int64_t)d->cfg->windows.idle_lookback_ns;

	store_set_idle_lookback(d->st, lookback);
	(void)store_windows_summarize_due(d->st, now_realtime_ns(), 0,
	    lookback);
}

/* Syncs are done: answer the clients that wait for them. */
static int
on_sync_done(sd_event_source *s, int fd, uint32_t revents, void *arg)
{
	struct daemon *d = arg;

	(void)s;
	(void)fd;
	(void)revents;
	store_sync_ack(d->st);
	control_syncs_done(d->ctl);
	return 0;
}

/* The source's restarts so far, for the windows' counts. */
static unsigned
child_restarts(void *arg)
{
	struct daemon *d = arg;
	struct source_stats ss;

	source_get_stats(d->src, &ss);
	return ss.restarts;
}

static int
on_flush_timer(sd_event_source *s, uint64_t usec, void *arg)
{
	struct daemon *d = arg;

	push_counters(d);
	store_flush(d->st);
	/* re-armed from its scheduled time, so flushes never drift */
	sd_event_source_set_time(s, usec + d->cfg->flush_interval_ns / 1000);
	sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
	return 0;
}

/* The retention limits of cfg, for the store's writer thread. */
static void
set_retention(struct daemon *d, const struct config *cfg)
{
	struct store_retention r = {
		.max_age_ns = cfg->retention.max_age_ns,
		.max_size = cfg->retention.max_size,
		.windows_max_age_ns = cfg->retention.windows_max_age_ns,
	};

	store_set_retention(d->st, &r);
}

static int
on_terminate(sd_event_source *s, const struct signalfd_siginfo *si, void *arg)
{
	struct daemon *d = arg;

	(void)s;
	log_notice("received %s; stopping", strsignal((int)si->ssi_signo));
	sd_notify(0, "STOPPING=1\nSTATUS=stopping");
	source_stop(d->src, STOP_GRACE_NS);
	sd_event_exit(d->ev, EXIT_OK);
	return 0;
}

/*
 * A reloaded config's path (*path) of what only a restart opens: the
 * running one stays in the config (status and the next reload compare with
 * what the daemon really uses), and the new one is kept in *next (NULL
 * when the config names the running one again).
 */
static void
keep_path(char **path, const char *running, char **next, const char *key,
    const char *doing)
{
	char *keep;

	free(*next);
	*next = NULL;
	if (strcmp(*path, running) == 0)
		return;
	if ((keep = strdup(running)) == NULL || (*next = strdup(*path)) == NULL)
		fatalx(EXIT_EVENTLOOP, "out of memory");
	log_warnx("%s: the new path %s takes effect only on restart; %s %s",
	    key, *path, doing, running);
	free(*path);
	*path = keep;
}

static int
on_reload(sd_event_source *s, const struct signalfd_siginfo *si, void *arg)
{
	struct daemon *d = arg;
	struct config *cfg;

	(void)s;
	(void)si;
	sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%llu\nSTATUS=reloading",
	    (unsigned long long)(now_monotonic_ns() / 1000));
	log_notice("reloading %s", d->config_path ? d->config_path :
	    CONFIG_DEFAULT_PATH);
	if ((cfg = load_config(d->config_path)) == NULL) {
		log_warnx("reload failed; keeping the running config");
	} else {
		keep_path(&cfg->database, d->cfg->database, &d->database_next,
		    "database", "still writing");
		keep_path(&cfg->socket, d->cfg->socket, &d->socket_next,
		    "socket", "still listening on");
		control_set_pending(d->ctl, d->database_next, d->socket_next);
		source_reconfigure(d->src, cfg);
		source_set_interval(d->src, cfg->source.interval_ns);
		control_set_config(d->ctl, cfg);
		windows_set_max_open(d->win, cfg->windows.max_open_ns,
		    now_realtime_ns());
		windows_set_limits(d->win, cfg->windows.max_open_per_uid,
		    cfg->windows.max_ending_per_uid);
		set_retention(d, cfg);
		store_set_idle_lookback(d->st,
		    (int64_t)cfg->windows.idle_lookback_ns);
		config_free(d->cfg);
		d->cfg = cfg;
		log_notice("reloaded");
	}
	sd_notify(0, "READY=1");
	update_status(d);
	return 0;
}

static int
add_timer(struct daemon *d, sd_event_source **s, uint64_t after_ns,
    sd_event_time_handler_t cb)
{
	uint64_t now;

	sd_event_now(d->ev, CLOCK_MONOTONIC, &now);
	return sd_event_add_time(d->ev, s, CLOCK_MONOTONIC,
	    now + after_ns / 1000, 1000, cb, d);
}

static void
setup_loop(struct daemon *d)
{
	sigset_t mask;
	int r;

	/* sd-event receives these through signalfd and a pidfd, never async */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) == -1)
		fatal(EXIT_EVENTLOOP, "sigprocmask");
	/* a client or child that goes away must not kill us */
	signal(SIGPIPE, SIG_IGN);
	if ((r = sd_event_default(&d->ev)) < 0)
		fatalx(EXIT_EVENTLOOP, "sd_event_default: %s", strerror(-r));
	if ((r = sd_event_add_signal(d->ev, NULL, SIGTERM, on_terminate, d)) < 0 ||
	    (r = sd_event_add_signal(d->ev, NULL, SIGINT, on_terminate, d)) < 0 ||
	    (r = sd_event_add_signal(d->ev, NULL, SIGHUP, on_reload, d)) < 0)
		fatalx(EXIT_EVENTLOOP, "signals: %s", strerror(-r));
	/* WATCHDOG=1 at half of WATCHDOG_USEC, only while the loop turns */
	if ((r = sd_event_set_watchdog(d->ev, true)) < 0)
		fatalx(EXIT_EVENTLOOP, "watchdog: %s", strerror(-r));
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "check-config", no_argument, NULL, 'C' },
		{ "config", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	static char prog[] = "spyremond";
	struct daemon d = { 0 };
	struct control_ctx ctx;
	struct store_options so;
	struct store_prev_daemon prev;
	int64_t started_ns = now_realtime_ns();
	bool check_only = false;
	int ch, verbosity = 0, r, code;

	argv[0] = prog;		/* getopt's messages name the program so */
	while ((ch = getopt_long(argc, argv, "c:hvV", longopts, NULL)) != -1) {
		switch (ch) {
		case 'C':
			check_only = true;
			break;
		case 'c':
			d.config_path = optarg;
			break;
		case 'v':
			verbosity++;
			break;
		case 'V':
			printf("spyremond %s\n", SPYREMON_VERSION);
			return EXIT_OK;
		case 'h':
			help();
		default:
			usage_try();	/* getopt said why */
		}
	}
	if (optind != argc) {
		fprintf(stderr, "spyremond: unexpected operand '%s'\n",
		    argv[optind]);
		usage_try();
	}
	log_init("spyremond", verbosity);

	if ((d.cfg = load_config(d.config_path)) == NULL)
		return EXIT_CONFIG;
	if (clocksync_fake(getenv(TEST_CLOCK_ENV)) != NULL) {
		clocksync_adjtimex = clocksync_fake(getenv(TEST_CLOCK_ENV));
		log_warnx("%s is set: the clock state recorded is a fake "
		    "(\"%s\")", TEST_CLOCK_ENV, getenv(TEST_CLOCK_ENV));
	}
	if (check_only) {
		config_print(d.cfg, stdout);
		config_free(d.cfg);
		return EXIT_OK;
	}

	setup_loop(&d);
	if (control_open(d.ev, d.cfg->socket, &d.ctl) == -1)
		fatalx(EXIT_SOCKET, "cannot set up the control socket %s",
		    d.cfg->socket);
	/* the loop never waits on SQLite: a thread writes */
	so = (struct store_options){ .max_pending = MAX_PENDING_ROWS,
	    .on_damage = d.cfg->on_damaged_database == CONFIG_DAMAGE_REFUSE ?
	    STORE_DAMAGE_REFUSE : STORE_DAMAGE_KEEP_ASIDE,
	    .checkpoint_interval_ns = d.cfg->checkpoint_interval_ns };
	if ((r = store_open_with(d.cfg->database, &so, &d.st)) ==
	    STORE_OPEN_DAMAGED)
		fatalx(EXIT_DAMAGED, "the database %s is damaged and was left "
		    "as it is", d.cfg->database);
	if (r == -1)
		fatalx(EXIT_DATABASE, "cannot use the database %s", d.cfg->database);
	/* steps are counted from here; without the kernel's notice, still seen */
	(void)clockstep_start(d.ev, on_clock_step, &d);
	if (source_start(d.ev, d.cfg, d.st, &d.src) == -1)
		fatalx(EXIT_EVENTLOOP, "cannot start collecting");
	/* before the loop runs, so before any row: the counter follows */
	store_previous_daemon(d.st, &prev);
	(void)clockstep_behind(prev.last_write_ns);
	if (windows_start(d.ev, d.st, d.cfg->windows.max_open_ns,
	    now_realtime_ns(), on_windows_open, &d, &d.win) == -1)
		fatalx(EXIT_DATABASE, "cannot read the open windows from %s",
		    d.cfg->database);
	windows_set_restarts_fn(d.win, child_restarts, &d);
	windows_set_limits(d.win, d.cfg->windows.max_open_per_uid,
	    d.cfg->windows.max_ending_per_uid);
	set_retention(&d, d.cfg);
	summarize_left_windows(&d);
	ctx = (struct control_ctx){ .cfg = d.cfg, .st = d.st, .src = d.src,
	    .win = d.win, .started_ns = started_ns };
	if (control_start(d.ctl, &ctx) == -1)
		fatalx(EXIT_SOCKET, "cannot serve the control socket %s",
		    d.cfg->socket);
	if (sd_event_add_io(d.ev, &d.sync_done, store_sync_fd(d.st), EPOLLIN,
	    on_sync_done, &d) < 0)
		fatalx(EXIT_EVENTLOOP, "cannot watch the writer thread");
	if (add_timer(&d, &d.flush_timer, d.cfg->flush_interval_ns,
	    on_flush_timer) < 0 ||
	    add_timer(&d, &d.status_timer, STATUS_EVERY_NS, on_status_timer) < 0)
		fatalx(EXIT_EVENTLOOP, "cannot set up timers");

	log_notice("collecting into %s", d.cfg->database);
	sd_notify(0, "READY=1");
	update_status(&d);

	r = sd_event_loop(d.ev);
	code = r < 0 ? EXIT_EVENTLOOP : r;
	if (r < 0)
		log_warnx("event loop: %s", strerror(-r));

	clockstep_stop();
	windows_free(d.win);
	if (d.src != NULL)
		push_counters(&d);
	source_free(d.src);
	sd_event_source_disable_unref(d.status_timer);
	sd_event_source_disable_unref(d.flush_timer);
	sd_event_source_disable_unref(d.sync_done);
	/* every queued row, then every ended window's summary, before exit */
	store_close(d.st);
	/* only now may another daemon take the socket, and the database */
	control_free(d.ctl);
	sd_event_unref(d.ev);
	config_free(d.cfg);
	free(d.database_next);
	free(d.socket_next);
	log_notice("stopped");
	return code;
}
