/*
 * capture: the command line of "spyremon capture" and its outcome
 * (capture.h).  The order of the work: check the process, learn what its
 * environment says (KINETO_USE_DAEMON, the socket folder, the folder it
 * may write traces to), ask spyremond whether it runs, take the daemon's
 * side of the socket (or find dynolog on it), serve the polls and wait
 * for the traces (caploop.c), end the window at the traces' end, and
 * write the output directory (capout.c).
 */
#include <err.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "caplitter.h"
#include "capture.h"
#include "capterm.h"
#include "capwin.h"
#include "cmd.h"
#include "dynoreq.h"
#include "format.h"
#include "output.h"
#include "procinfo.h"
#include "proto.h"
#include "loadgen.h"
#include "timeparse.h"

enum {
	OPT_PID = CLIENT_OPT_FIRST_FREE, OPT_DURATION, OPT_ITERATIONS, OPT_TAG,
	OPT_OUTPUT, OPT_REPORT, OPT_WARMUP, OPT_SOCKET_DIR,
	OPT_MAX_PROCS, OPT_DYNOLOG_PORT, OPT_VLLM, OPT_PROFILER_DIR,
	OPT_STOP_TIMEOUT, OPT_LOAD, OPT_PROMPT_TOKENS, OPT_OUTPUT_TOKENS,
	OPT_CONCURRENCY, OPT_MODEL, OPT_LOAD_TIMEOUT,
};

/* A whole positive number no larger than max; false if s is not one. */
static bool
parse_count(const char *s, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < 1 || v > max)
		return false;
	*out = v;
	return true;
}

static int
bad_option(const char *opt, const char *arg, const char *want)
{
	warnx("%s %s: %s", opt, arg, want);
	return CLIENT_EXIT_USAGE;
}

struct capture_opts {
	struct capture c;
	bool duration_given;
	bool kineto_given;	/* an option only --pid takes */
	bool load_given;	/* an option only --load takes */
};

static int
capture_option(void *opts, int ch, char *arg)
{
	struct capture_opts *o = opts;
	struct capture *c = &o->c;
	const char *why;
	uint64_t ns;
	long v;

	switch (ch) {
	case OPT_PID:
		if (!parse_count(arg, INT32_MAX, &v))
			return bad_option("--pid", arg,
			    "not a process ID");
		c->pid = (pid_t)v;
		break;
	case OPT_DURATION:
		if (parse_duration(arg, &ns) == -1 ||
		    ns < NSEC_PER_MSEC || ns > 3600 * NSEC_PER_SEC)
			return bad_option("--duration", arg,
			    "give a duration from 1ms to 1h, such as 2s");
		c->duration_ns = (int64_t)((ns + NSEC_PER_MSEC - 1) /
		    NSEC_PER_MSEC * NSEC_PER_MSEC);
		o->duration_given = true;
		break;
	case OPT_ITERATIONS:
		if (!parse_count(arg, 1000000, &c->iterations))
			return bad_option("--iterations", arg,
			    "give a number of steps from 1 to 1000000");
		c->by_iterations = true;
		break;
	case OPT_TAG:
		if (!proto_tag_valid(arg, &why))
			return bad_option("--tag", arg, why);
		c->tag = arg;
		break;
	case OPT_OUTPUT:
		c->output = arg;
		break;
	case OPT_REPORT:
		c->report = true;
		break;
	case OPT_WARMUP:
		/* ACTIVITIES_WARMUP_PERIOD_SECS is whole seconds */
		if (parse_duration(arg, &ns) == -1 ||
		    ns % NSEC_PER_SEC != 0 || ns > 600 * NSEC_PER_SEC)
			return bad_option("--warmup", arg,
			    "give whole seconds from 0s to 600s");
		c->warmup_ns = (int64_t)ns;
		break;
	case OPT_SOCKET_DIR:
		c->socket_dir = arg;
		break;
	case OPT_MAX_PROCS:
		if (!parse_count(arg, CAPSERVE_MAX_PROCS, &v))
			return bad_option("--max-processes", arg,
			    "give a number from 1 to 256");
		c->max_procs = (int)v;
		break;
	case OPT_DYNOLOG_PORT:
		if (!parse_count(arg, 65535, &v))
			return bad_option("--dynolog-port", arg,
			    "not a TCP port");
		c->dynolog_port = (int)v;
		break;
	case OPT_VLLM:
		c->vllm_url = arg;
		break;
	case OPT_PROFILER_DIR:
		c->profiler_dir = arg;
		break;
	case OPT_STOP_TIMEOUT:
		if (parse_duration(arg, &ns) == -1 || ns < NSEC_PER_SEC ||
		    ns > 3600 * NSEC_PER_SEC)
			return bad_option("--stop-timeout", arg,
			    "give a duration from 1s to 1h, such as 10m");
		c->stop_timeout_ns = (int64_t)ns;
		break;
	case OPT_LOAD:
		if (!parse_count(arg, 1000000, &c->load_n))
			return bad_option("--load", arg,
			    "give a number of requests from 1 to 1000000");
		break;
	case OPT_PROMPT_TOKENS:
		if (!parse_count(arg, LOADGEN_MAX_TOKENS, &c->prompt_tokens))
			return bad_option("--prompt-tokens", arg,
			    "give a number of tokens from 1 to 1000000");
		break;
	case OPT_OUTPUT_TOKENS:
		if (!parse_count(arg, LOADGEN_MAX_TOKENS, &c->output_tokens))
			return bad_option("--output-tokens", arg,
			    "give a number of tokens from 1 to 1000000");
		break;
	case OPT_CONCURRENCY:
		if (!parse_count(arg, LOADGEN_MAX_CONCURRENCY, &v))
			return bad_option("--concurrency", arg,
			    "give a number of requests from 1 to 256");
		c->concurrency = (int)v;
		break;
	case OPT_MODEL:
		if (*arg == '\0' || strlen(arg) > 200)
			return bad_option("--model", arg,
			    "give a model's name, at most 200 bytes");
		c->model = arg;
		break;
	case OPT_LOAD_TIMEOUT:
		if (parse_duration(arg, &ns) == -1 || ns < NSEC_PER_MSEC ||
		    ns > 3600 * NSEC_PER_SEC)
			return bad_option("--load-timeout", arg,
			    "give a duration from 1ms to 1h, such as 60s");
		c->load_timeout_ns = (int64_t)ns;
		break;
	}
	if (ch == OPT_PROMPT_TOKENS || ch == OPT_OUTPUT_TOKENS ||
	    ch == OPT_CONCURRENCY || ch == OPT_MODEL || ch == OPT_LOAD_TIMEOUT)
		o->load_given = true;
	if (ch == OPT_ITERATIONS || ch == OPT_WARMUP || ch == OPT_SOCKET_DIR ||
	    ch == OPT_MAX_PROCS || ch == OPT_DYNOLOG_PORT)
		o->kineto_given = true;
	return CLIENT_EXIT_OK;
}

/* The options that need others or exclude them: an exit status. */
static int
check_options(struct capture_opts *o)
{
	struct capture *c = &o->c;

	/* --wait is the option every command takes (client.h): here, how
	 * long the process may take to poll, and the readers' wait after */
	if (c->cl->wait_set) {
		if (c->cl->wait_ns < (int64_t)NSEC_PER_SEC ||
		    c->cl->wait_ns > 3600 * (int64_t)NSEC_PER_SEC) {
			warnx("--wait: give capture a duration from 1s to 1h");
			return CLIENT_EXIT_USAGE;
		}
		c->wait_ns = c->cl->wait_ns;
		c->wait_given = true;
	}
	if (c->vllm_url != NULL) {
		if (c->pid != 0 || o->kineto_given) {
			warnx("--vllm takes --duration, not --pid, --iterations, "
			    "--warmup, --socket-dir, --max-processes or "
			    "--dynolog-port");
			return CLIENT_EXIT_USAGE;
		}
		if (c->profiler_dir == NULL &&
		    (c->profiler_dir = getenv("VLLM_TORCH_PROFILER_DIR")) == NULL) {
			warnx("--vllm needs --profiler-dir: the server's "
			    "VLLM_TORCH_PROFILER_DIR");
			return CLIENT_EXIT_USAGE;
		}
		if (o->load_given && c->load_n == 0) {
			warnx("--prompt-tokens, --output-tokens, --concurrency, "
			    "--model and --load-timeout go with --load");
			return CLIENT_EXIT_USAGE;
		}
		if (c->load_n > 0 && o->duration_given) {
			warnx("--load and --duration exclude each other: the "
			    "profile lasts as long as the load");
			return CLIENT_EXIT_USAGE;
		}
		return CLIENT_EXIT_OK;
	}
	if (c->load_n > 0 || o->load_given) {
		warnx("--load and its options go with --vllm");
		return CLIENT_EXIT_USAGE;
	}
	if (c->profiler_dir != NULL || c->stop_timeout_ns !=
	    CAPTURE_STOP_TIMEOUT_NS) {
		warnx("--profiler-dir and --stop-timeout go with --vllm");
		return CLIENT_EXIT_USAGE;
	}
	if (c->pid == 0) {
		warnx("capture needs --pid or --vllm");
		return CLIENT_EXIT_USAGE;
	}
	if (o->duration_given && c->by_iterations) {
		warnx("--duration and --iterations exclude each other");
		return CLIENT_EXIT_USAGE;
	}
	return CLIENT_EXIT_OK;
}

/*
 * How often process pid polls: ON_DEMAND_CONFIG_UPDATE_INTERVAL_SECS in
 * its environment (the stand-in's) or in the config file Kineto reads
 * (KINETO_CONFIG, else /etc/libkineto.conf), else Kineto's default.
 */
static int64_t
poll_interval(pid_t pid)
{
	static const char key[] = "ON_DEMAND_CONFIG_UPDATE_INTERVAL_SECS";
	char val[64], file[PATH_MAX], line[512];
	long secs = CAPTURE_KINETO_INTERVAL_S, v;
	FILE *fp;

	if (procinfo_getenv(pid, key, val, sizeof(val)) == 1 &&
	    parse_count(val, 3600, &v))
		return v * (int64_t)NSEC_PER_SEC;
	if (procinfo_getenv(pid, "KINETO_CONFIG", val, sizeof(val)) != 1)
		snprintf(val, sizeof(val), "/etc/libkineto.conf");
	if (!procinfo_path(pid, val, file, sizeof(file)) ||
	    ((fp = fopen(file, "re")) == NULL && (fp = fopen(val, "re")) == NULL))
		return secs * (int64_t)NSEC_PER_SEC;
	while (fgets(line, sizeof(line), fp) != NULL) {
		char *eq = strchr(line, '=');

		if (eq != NULL && strncmp(line, key, sizeof(key) - 1) == 0 &&
		    eq == line + sizeof(key) - 1) {
			eq[strcspn(eq, "\r\n")] = '\0';
			if (parse_count(eq + 1, 3600, &v))
				secs = v;
		}
	}
	fclose(fp);
	return secs * (int64_t)NSEC_PER_SEC;
}

/* Hex digits from getrandom(2) into buf (2 * n + 1 bytes). */
static void
random_hex(char *buf, size_t n)
{
	unsigned char r[16];

	if (n > sizeof(r) || getrandom(r, n, 0) != (ssize_t)n) {
		/* no entropy to speak of is still no reason to fail */
		uint64_t t = now_monotonic_ns() ^ (uint64_t)getpid();

		memcpy(r, &t, sizeof(t));
		memcpy(r + sizeof(t), &t, sizeof(t));
	}
	for (size_t i = 0; i < n && i < sizeof(r); i++)
		snprintf(buf + 2 * i, 3, "%02x", r[i]);
}

/*
 * Learn what the process and those it started say: how many poll
 * (KINETO_USE_DAEMON set), how often, their socket folder and job id.
 */
static void
learn(struct capture *c)
{
	pid_t kids[PROCINFO_MAX_CHILDREN];
	char val[PATH_MAX];
	size_t nkids;
	bool have_dir = c->socket_dir != NULL;

	c->expected = 0;
	c->interval_ns = 0;
	nkids = procinfo_descendants(c->pid, kids, PROCINFO_MAX_CHILDREN);
	for (size_t i = 0; i <= nkids; i++) {
		pid_t p = i == 0 ? c->pid : kids[i - 1];

		switch (procinfo_getenv(p, "KINETO_USE_DAEMON", val,
		    sizeof(val))) {
		case -1:
			c->env_unread++;
			continue;
		case 0:
			continue;
		}
		c->expected++;
		if (c->interval_ns == 0)
			c->interval_ns = poll_interval(p);
		if (!have_dir && procinfo_getenv(p, "KINETO_IPC_SOCKET_DIR",
		    c->socket_dir_buf, sizeof(c->socket_dir_buf)) == 1 &&
		    c->socket_dir_buf[0] != '\0') {
			/* the folder its processes talk in, spelled as they do */
			c->socket_dir = c->socket_dir_buf;
			have_dir = true;
		}
		if (c->jobid == 0 && procinfo_getenv(p, "SLURM_JOB_ID", val,
		    sizeof(val)) == 1)
			c->jobid = strtoll(val, NULL, 10);
	}
	if (c->interval_ns == 0)
		c->interval_ns = CAPTURE_KINETO_INTERVAL_S * (int64_t)NSEC_PER_SEC;
	if (!have_dir && (c->socket_dir = getenv("KINETO_IPC_SOCKET_DIR")) !=
	    NULL && c->socket_dir[0] == '\0')
		c->socket_dir = NULL;
	if (c->wait_ns == 0)
		/* one interval, and the longest gap of a process backing off */
		c->wait_ns = c->interval_ns + 6 * (int64_t)NSEC_PER_SEC;
}

/* The metadata the window records: what can be read of the process. */
static void
collect_meta(struct capture *c)
{
	static char pid[16], cmd[PROTO_META_VALUE_MAX + 1], torch[64];
	pid_t kids[PROCINFO_MAX_CHILDREN];
	size_t nkids;
	bool have_torch;

	snprintf(pid, sizeof(pid), "%d", (int)c->pid);
	c->meta[c->nmeta * 2] = "pid";
	c->meta[c->nmeta++ * 2 + 1] = pid;
	c->meta[c->nmeta * 2] = "capture";
	c->meta[c->nmeta++ * 2 + 1] = c->via_dynolog ? "dynolog" : "kineto-ipc";
	if (!c->via_dynolog) {
		/* dynolog gives each process a trace id of its own */
		c->meta[c->nmeta * 2] = "trace_id";
		c->meta[c->nmeta++ * 2 + 1] = c->trace_id;
	}
	if (procinfo_cmdline(c->pid, cmd, sizeof(cmd)) && cmd[0] != '\0') {
		c->meta[c->nmeta * 2] = "command";
		c->meta[c->nmeta++ * 2 + 1] = cmd;
	}
	if (c->host[0] != '\0') {
		c->meta[c->nmeta * 2] = "host";
		c->meta[c->nmeta++ * 2 + 1] = c->host;
	}
	have_torch = procinfo_torch_version(c->pid, torch, sizeof(torch));
	nkids = procinfo_descendants(c->pid, kids, PROCINFO_MAX_CHILDREN);
	for (size_t i = 0; !have_torch && i < nkids; i++)
		have_torch = procinfo_torch_version(kids[i], torch,
		    sizeof(torch));
	if (have_torch) {
		c->meta[c->nmeta * 2] = "torch";
		c->meta[c->nmeta++ * 2 + 1] = torch;
	}
}

/* Take the socket, or find dynolog on it; an exit status. */
static int
take_socket(struct capture *c)
{
	int r = kipc_bind(c->socket_dir, &c->sock);

	if (r == KIPC_BOUND) {
		fprintf(stderr, "spyremon: capture: answering the profiler's "
		    "polls on %s\n", kipc_name(&c->sock));
		return CLIENT_EXIT_OK;
	}
	if (r == -1) {
		if (c->socket_dir != NULL)
			warn("cannot take the profiler's daemon socket in %s",
			    c->socket_dir);
		else
			warn("cannot take the profiler's daemon socket "
			    "@%s@", KIPC_DAEMON_NAME);
		return CLIENT_EXIT_FAILED;
	}
	c->via_dynolog = true;
	fprintf(stderr, "spyremon: capture: %s is held by another daemon: "
	    "asking dynolog on 127.0.0.1:%d\n", kipc_name(&c->sock),
	    c->dynolog_port);
	return CLIENT_EXIT_OK;
}

/* What a process that was given up on says, and the exit status it gives. */
static int
report_procs(const struct capture *c)
{
	int rc = CLIENT_EXIT_OK;

	for (size_t i = 0; i < c->serve.nprocs; i++) {
		const struct capproc *p = &c->serve.procs[i];

		/* still due: the loop was interrupted, and said so */
		if (p->state == CAPPROC_DONE || p->state == CAPPROC_SERVED)
			continue;
		if (p->state == CAPPROC_REFUSED) {
			warnx("process %d took the request but %s (Kineto says "
			    "why on the job's stderr)", (int)p->pid, p->why);
			if (rc == CLIENT_EXIT_OK)
				rc = CAPTURE_EXIT_REFUSED;
		} else {
			warnx("process %d took the request but %s (asked for "
			    "%s)", (int)p->pid, p->why, c->traces[i].asked);
			rc = CAPTURE_EXIT_NO_TRACE;
		}
	}
	return rc;
}

/*
 * Copy the traces found, end the window at their end, write the rest:
 * an exit status.  With no trace found the output is removed.
 */
static int
finish(struct capture *c)
{
	int64_t end = 0, b, e;
	size_t found = 0;
	int rc = CLIENT_EXIT_OK, r;

	for (size_t i = 0; i < c->ntraces; i++) {
		struct captrace *t = &c->traces[i];

		if (t->fd == -1)
			continue;
		if ((r = capout_add_trace(c, t)) != CLIENT_EXIT_OK) {
			rc = r;
			continue;
		}
		found++;
		if (t->has_span && t->end_ns > end)
			end = t->end_ns;
	}
	if (c->window_id != 0) {
		/* the traces' end, when it is one the window may take */
		if (end < c->window_begin_ns || end > now_realtime_ns())
			end = 0;
		if ((r = capwin_end(c->cl, c->window_id, end, &b, &e)) ==
		    CLIENT_EXIT_OK) {
			c->window_begin_ns = b;
			c->window_end_ns = e;
		} else {
			c->window_id = 0;
			c->telemetry_rc = r;
		}
	}
	if (found == 0) {
		output_dir_remove(c->tmp);
		return rc;
	}
	if (c->window_id != 0 && (r = capout_telemetry(c)) != CLIENT_EXIT_OK &&
	    rc == CLIENT_EXIT_OK)
		rc = r;
	if ((r = capout_publish(c)) != CLIENT_EXIT_OK) {
		/* a trace cannot be taken again: it stays where it is */
		warnx("the output is left in %s", c->tmp);
		return r;
	}
	if (c->report && c->window_id != 0 && (r = capout_report(c)) !=
	    CLIENT_EXIT_OK && rc == CLIENT_EXIT_OK)
		rc = r;
	capout_list(c);
	return rc;
}

/* capture --vllm: the defaults of its tag and output, then capvllm. */
static int
capture_vllm(struct capture *c)
{
	static char outbuf[PATH_MAX];
	char stamp[32];
	time_t now;
	int rc;

	c->tty = isatty(STDERR_FILENO) == 1;
	if (c->tag == NULL)
		c->tag = "capture-vllm";
	if (c->output == NULL) {
		now = time(NULL);
		strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", gmtime(&now));
		snprintf(outbuf, sizeof(outbuf), "capture-vllm-%s", stamp);
		c->output = outbuf;
	}
	if (gethostname(c->host, sizeof(c->host)) == -1)
		c->host[0] = '\0';
	c->host[sizeof(c->host) - 1] = '\0';
	rc = capvllm_run(c);
	capterm_clear(c->tty);
	for (size_t i = 0; i < c->ntraces; i++)
		if (c->traces[i].fd != -1)
			close(c->traces[i].fd);
	return rc;
}

static int
capture_run(struct client *cl, void *opts, int argc, char *argv[])
{
	struct capture_opts *o = opts;
	struct capture *c = &o->c;
	static char tagbuf[32], outbuf[PATH_MAX];
	char stamp[32], r6[13];
	time_t now;
	int rc, procs_rc, out_rc = CLIENT_EXIT_OK;

	(void)argc;
	(void)argv;
	c->cl = cl;
	if ((rc = check_options(o)) != CLIENT_EXIT_OK)
		return rc;
	if (c->vllm_url != NULL)
		return capture_vllm(c);
	switch (procinfo_check(c->pid, &c->uid)) {
	case PROCINFO_NONE:
		warnx("there is no process %d", (int)c->pid);
		return CAPTURE_EXIT_NO_PROCESS;
	case PROCINFO_NOT_YOURS:
		warnx("process %d belongs to uid %u: only root may capture "
		    "another user's process", (int)c->pid, (unsigned)c->uid);
		return CAPTURE_EXIT_NOT_YOURS;
	case PROCINFO_OK:
		break;
	}
	c->tty = isatty(STDERR_FILENO) == 1;
	if (c->tag == NULL) {
		snprintf(tagbuf, sizeof(tagbuf), "capture-%d", (int)c->pid);
		c->tag = tagbuf;
	}
	if (c->output == NULL) {
		now = time(NULL);
		strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", gmtime(&now));
		snprintf(outbuf, sizeof(outbuf), "capture-%d-%s", (int)c->pid,
		    stamp);
		c->output = outbuf;
	}
	if (gethostname(c->host, sizeof(c->host)) == -1)
		c->host[0] = '\0';
	c->host[sizeof(c->host) - 1] = '\0';
	random_hex(c->trace_id, 8);
	random_hex(r6, 6);
	snprintf(c->base, sizeof(c->base), "spyremon-capture-%d-%s",
	    (int)getpid(), r6);
	learn(c);
	/* what captures killed or interrupted before left */
	caplitter_sweep(c);
	if ((rc = output_dir_open(c->output, c->tmp, sizeof(c->tmp))) !=
	    CLIENT_EXIT_OK)
		return rc;
	if (!caplitter_arm(c)) {
		output_dir_remove(c->tmp);
		return CLIENT_EXIT_FAILED;
	}
	/* spyremond is asked first: without it the trace is still taken */
	if ((c->telemetry_rc = capwin_hello(cl)) == CLIENT_EXIT_OK)
		c->telemetry = true;
	else
		fprintf(stderr, "spyremon: capture: spyremond does not answer: "
		    "taking the trace without the cards' telemetry (no window, "
		    "merged trace, steps.csv or report)\n");
	if ((rc = take_socket(c)) != CLIENT_EXIT_OK) {
		output_dir_remove(c->tmp);
		caplitter_done(c);
		return rc;
	}
	collect_meta(c);
	rc = caploop_run(c);
	/* the processes find no daemon from here on, and back off */
	kipc_close(&c->sock);
	capterm_clear(c->tty);
	procs_rc = report_procs(c);
	if (c->serve.nprocs > 0) {
		capterm_progress(c->tty, "writing %s", c->output);
		out_rc = finish(c);
		capterm_clear(c->tty);
	} else {
		output_dir_remove(c->tmp);
	}
	caplitter_done(c);
	for (size_t i = 0; i < c->ntraces; i++)
		if (c->traces[i].fd != -1)
			close(c->traces[i].fd);
	/* the worst first: no trace, then a failed output, then no telemetry */
	if (rc != CLIENT_EXIT_OK)
		return rc;
	if (procs_rc != CLIENT_EXIT_OK)
		return procs_rc;
	if (out_rc != CLIENT_EXIT_OK)
		return out_rc;
	if (c->window_id == 0 && c->telemetry_rc != CLIENT_EXIT_OK) {
		fprintf(stderr, "spyremon: capture: the trace was taken without "
		    "the cards' telemetry; exit status %d says so\n",
		    c->telemetry_rc);
		return c->telemetry_rc;
	}
	return CLIENT_EXIT_OK;
}

static const struct option capture_longopts[] = {
	{ "pid", required_argument, NULL, OPT_PID },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "iterations", required_argument, NULL, OPT_ITERATIONS },
	{ "tag", required_argument, NULL, OPT_TAG },
	{ "output", required_argument, NULL, OPT_OUTPUT },
	{ "report", no_argument, NULL, OPT_REPORT },
	{ "warmup", required_argument, NULL, OPT_WARMUP },
	{ "socket-dir", required_argument, NULL, OPT_SOCKET_DIR },
	{ "max-processes", required_argument, NULL, OPT_MAX_PROCS },
	{ "dynolog-port", required_argument, NULL, OPT_DYNOLOG_PORT },
	{ "vllm", required_argument, NULL, OPT_VLLM },
	{ "profiler-dir", required_argument, NULL, OPT_PROFILER_DIR },
	{ "stop-timeout", required_argument, NULL, OPT_STOP_TIMEOUT },
	{ "load", required_argument, NULL, OPT_LOAD },
	{ "prompt-tokens", required_argument, NULL, OPT_PROMPT_TOKENS },
	{ "output-tokens", required_argument, NULL, OPT_OUTPUT_TOKENS },
	{ "concurrency", required_argument, NULL, OPT_CONCURRENCY },
	{ "model", required_argument, NULL, OPT_MODEL },
	{ "load-timeout", required_argument, NULL, OPT_LOAD_TIMEOUT },
	{ NULL, 0, NULL, 0 },
};

static const struct capture_opts capture_defaults = {
	.c = {
		.duration_ns = CAPTURE_DEFAULT_DURATION_NS,
		.max_procs = CAPTURE_DEFAULT_MAX_PROCS,
		.dynolog_port = DYNOREQ_PORT,
		.stop_timeout_ns = CAPTURE_STOP_TIMEOUT_NS,
		.prompt_tokens = CAPTURE_PROMPT_TOKENS,
		.output_tokens = CAPTURE_OUTPUT_TOKENS,
		.concurrency = 1,
		.load_timeout_ns = CAPTURE_LOAD_TIMEOUT_NS,
		.sock = { .fd = -1 },
	},
};

const struct cmd_spec capture_cmd = {
	.name = "capture",
	.usage =
	    "usage: spyremon capture --pid PID [--duration D | --iterations N]\n"
	    "                        [--tag TAG] [--output DIR] [--report] [--wait D]\n"
	    "                        [--warmup D] [--socket-dir DIR] [--max-processes N]\n"
	    "                        [--dynolog-port PORT]\n"
	    "       spyremon capture --vllm URL --profiler-dir DIR [--duration D]\n"
	    "                        [--stop-timeout D] [--tag TAG] [--output DIR]\n"
	    "                        [--report]\n"
	    "       spyremon capture --vllm URL --profiler-dir DIR --load N\n"
	    "                        [--prompt-tokens P] [--output-tokens O]\n"
	    "                        [--concurrency C] [--model NAME]\n"
	    "                        [--load-timeout D] [--stop-timeout D] [--tag TAG]\n"
	    "                        [--output DIR] [--report]\n"
	    "\n"
	    "Asks the PyTorch profiler (Kineto) in process PID, and in every\n"
	    "process it started, for a trace, with no change to the job, which\n"
	    "must run with KINETO_USE_DAEMON=1.  A window on spyremond covers the\n"
	    "traced span; DIR (new, or empty) gets each trace, each trace with the\n"
	    "cards' counters merged in, and steps.csv.\n"
	    "\n"
	    "      --pid PID            the job: a profiled process, or its parent\n"
	    "      --duration D         trace for D, 1ms to 1h (default 2s)\n"
	    "      --iterations N       trace N steps instead\n"
	    "      --tag TAG            the window's tag (default capture-PID)\n"
	    "      --output DIR         where to write (default capture-PID-TIME)\n"
	    "      --report             add the report (spyremon report)\n"
	    "      --wait D             how long a process may take to poll,\n"
	    "                           1s to 1h\n"
	    "      --warmup D           Kineto's warm-up, whole seconds (default 0)\n"
	    "      --socket-dir DIR     the folder of Kineto's socket files\n"
	    "      --max-processes N    ask at most N processes (default 32)\n"
	    "      --dynolog-port PORT  dynolog's TCP port (default 1778)\n"
	    "\n"
	    "With --vllm, the vLLM server at URL is profiled instead through its\n"
	    "/start_profile and /stop_profile, its counters kept with the window\n"
	    "as mark begin --vllm keeps them; DIR gets the traces its workers\n"
	    "wrote in the profiler folder during the window (left there too).\n"
	    "\n"
	    "      --vllm URL           the server, such as http://localhost:8000\n"
	    "      --profiler-dir DIR   its VLLM_TORCH_PROFILER_DIR (default: that\n"
	    "                           variable here)\n"
	    "      --stop-timeout D     how long its workers may take to write\n"
	    "                           their traces, 1s to 1h (default 10m)\n"
	    "\n"
	    "With --load, the profile lasts while N completions are sent to the\n"
	    "server's /v1/completions (ignore_eos: each exactly O tokens long); a\n"
	    "request that fails is exit 1 with no output.\n"
	    "\n"
	    "      --load N             send N completion requests, 1 to 1000000\n"
	    "      --prompt-tokens P    a prompt of about P tokens (default 32)\n"
	    "      --output-tokens O    max_tokens of each (default 64)\n"
	    "      --concurrency C      requests in flight at once, 1 to 256\n"
	    "                           (default 1)\n"
	    "      --model NAME         the model (default: the first of\n"
	    "                           /v1/models)\n"
	    "      --load-timeout D     how long each request may take, 1ms to\n"
	    "                           1h (default 60s)\n",
	.exits = CMD_EXITS_BASE | CMD_EXIT(CLIENT_EXIT_DAEMON) |
	    CMD_EXIT(CLIENT_EXIT_DATABASE) | CMD_EXIT(CLIENT_EXIT_PARTIAL) |
	    CMD_EXIT(CLIENT_EXIT_INCOMPLETE) |
	    CMD_EXIT(CAPTURE_EXIT_NO_PROCESS) | CMD_EXIT(CAPTURE_EXIT_NOT_YOURS) |
	    CMD_EXIT(CAPTURE_EXIT_NO_POLL) | CMD_EXIT(CAPTURE_EXIT_REFUSED) |
	    CMD_EXIT(CAPTURE_EXIT_NO_TRACE) | CMD_EXIT(CAPTURE_EXIT_NOT_TARGET),
	.longopts = capture_longopts,
	.operands = 0,
	.opts_size = sizeof(struct capture_opts),
	.defaults = &capture_defaults,
	.option = capture_option,
	.run = capture_run,
};
