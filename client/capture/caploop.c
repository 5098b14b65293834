/*
 * caploop: serving Kineto's polls, or handing the request to dynolog,
 * then waiting for the traces (capture.h).
 *
 * Every poll is answered at once, within the 90 ms the process waits: the
 * request to the processes that are ours and can take it, nothing to the
 * rest.  The window is opened after the first request has gone out, so
 * that spyremond's answer never delays it.  A trace is looked for where
 * the process was asked to write it and where Kineto writes when it
 * refuses that path, through the process's own root, every
 * CAPLOOP_LOOK_MS and at each of its polls.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture.h"
#include "capterm.h"
#include "capwin.h"
#include "dynoreq.h"
#include "format.h"
#include "procinfo.h"
#include "timeparse.h"

#define CAPLOOP_LOOK_MS		100
#define CAPLOOP_CONFIG_MAX	2048
#define CAPLOOP_CMDLINE_SHOWN	120	/* of a process named in a message */

/* Set by SIGINT, SIGTERM and SIGHUP while the loop runs. */
static volatile sig_atomic_t interrupted_by;

static void
on_signal(int sig)
{
	interrupted_by = sig;
}

/* Kineto writes on-demand traces only under KINETO_ONDEMAND_TRACE_DIR. */
void
caploop_trace_dir(int32_t pid, char *dir, size_t len)
{
	size_t n;

	if (procinfo_getenv(pid, "KINETO_ONDEMAND_TRACE_DIR", dir, len) != 1 ||
	    dir[0] == '\0')
		snprintf(dir, len, "/tmp/");
	n = strlen(dir);
	if (dir[n - 1] != '/' && n + 1 < len) {
		dir[n] = '/';
		dir[n + 1] = '\0';
	}
}

/*
 * The trace asked of process pid, in dir (NULL: its own): a new entry, or
 * NULL if the folder's name is too long for it.
 */
static struct captrace *
new_trace(struct capture *c, int32_t pid, uid_t uid, const char *dir)
{
	struct captrace *t = &c->traces[c->ntraces];
	char own[PATH_MAX];

	if (dir == NULL) {
		caploop_trace_dir(pid, own, sizeof(own));
		dir = own;
	}
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->uid = uid;
	t->fd = -1;
	/* Kineto inserts _PID before .pt.trace.json */
	if ((size_t)snprintf(t->request, sizeof(t->request), "%s%s.pt.trace.json",
	    dir, c->base) >= sizeof(t->request) ||
	    (size_t)snprintf(t->asked, sizeof(t->asked), "%s%s_%d.pt.trace.json",
	    dir, c->base, (int)pid) >= sizeof(t->asked)) {
		warnx("process %d: KINETO_ONDEMAND_TRACE_DIR=%s is too long a "
		    "name", (int)pid, dir);
		return NULL;
	}
	snprintf(t->fallback, sizeof(t->fallback),
	    "/tmp/libkineto_activities_%d.json", (int)pid);
	c->ntraces++;
	return t;
}

/* Open path (through the process's root first) if it is t's trace. */
static bool
try_open(struct captrace *t, const char *path)
{
	char via[PATH_MAX];
	const char *cand[2];
	struct stat sb;

	cand[0] = procinfo_path(t->pid, path, via, sizeof(via)) ? via : path;
	cand[1] = path;
	for (size_t i = 0; i < 2; i++) {
		int fd = open(cand[i], O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

		if (fd == -1)
			continue;
		/* a regular file of the process's user, never anyone else's */
		if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) &&
		    (sb.st_uid == t->uid || sb.st_uid == 0)) {
			t->fd = fd;
			snprintf(t->found, sizeof(t->found), "%s", path);
			return true;
		}
		close(fd);
	}
	return false;
}

/* Look for the trace of t; true once it is there. */
static bool
look(struct capture *c, struct captrace *t)
{
	if (t->fd != -1)
		return true;
	if (try_open(t, t->asked))
		return true;
	/* Kineto refused the path (KINETO_ONDEMAND_TRACE_DIR) and used its own */
	if (try_open(t, t->fallback)) {
		t->at_fallback = true;
		capterm_clear(c->tty);
		fprintf(stderr, "spyremon: capture: process %d wrote its trace "
		    "to %s, Kineto's default, not to %s: its "
		    "KINETO_ONDEMAND_TRACE_DIR does not allow that folder\n",
		    (int)t->pid, t->fallback, t->asked);
		return true;
	}
	return false;
}

static struct captrace *
trace_of(struct capture *c, int32_t pid)
{
	for (size_t i = 0; i < c->ntraces; i++)
		if (c->traces[i].pid == pid)
			return &c->traces[i];
	return NULL;
}

static bool
alive(int32_t pid)
{
	return procinfo_alive(pid);
}

/* Open the window at the plan's start; a failure costs only telemetry. */
static void
open_window(struct capture *c)
{
	int64_t begin = c->by_iterations ? 0 : c->serve.start_ns;
	int rc;

	if (!c->telemetry || c->window_id != 0)
		return;
	rc = capwin_begin(c->cl, c->tag, c->meta, c->nmeta, begin,
	    &c->window_id);
	if (rc != CLIENT_EXIT_OK) {
		c->telemetry_rc = rc;
		c->window_id = 0;
		c->telemetry = false;
		fprintf(stderr, "spyremon: capture: no window on spyremond: "
		    "the trace is taken without the cards' telemetry\n");
		return;
	}
	c->window_begin_ns = begin != 0 ? begin : now_realtime_ns();
}

/*
 * End the window of a plan given up (the process refused it) at its
 * begin: it spans nothing, and a new one is opened for the new plan.
 */
static void
close_window(struct capture *c)
{
	int64_t b, e;

	if (c->window_id == 0)
		return;
	if (capwin_end(c->cl, c->window_id, c->window_begin_ns, &b, &e) !=
	    CLIENT_EXIT_OK)
		(void)capwin_end(c->cl, c->window_id, 0, &b, &e);
	c->window_id = 0;
}

/* Answer one datagram. */
static void
answer(struct capture *c, const struct kipc_msg *m, int64_t now)
{
	struct kipc_request r;
	char config[CAPLOOP_CONFIG_MAX], when[FMT_BUFLEN];
	struct captrace *t;
	size_t len = 0;
	bool there, again = false;

	if (m->truncated)
		return;
	if (strcmp(m->type, "ctxt") == 0) {
		(void)kipc_reply_ctxt(&c->sock, m, 1);
		return;
	}
	if (strcmp(m->type, "req") != 0)
		return;
	if (!kipc_parse_request(m->payload, m->size, &r) || !m->has_cred) {
		(void)kipc_reply(&c->sock, m, "", 0);
		return;
	}
	t = trace_of(c, m->pid);
	there = t != NULL && look(c, t);
	switch (capserve_poll(&c->serve, m->pid, m->uid, &r, now, there)) {
	case CAPSERVE_REQUEST:
		if ((t = new_trace(c, m->pid, m->uid, NULL)) != NULL &&
		    (len = capserve_config(&c->serve, t->request, c->iterations,
		    c->trace_id, config, sizeof(config))) == 0)
			c->ntraces--;
		if (len == 0)
			c->serve.nprocs--;	/* not served after all */
		break;
	case CAPSERVE_AGAIN:
		again = true;
		len = capserve_config(&c->serve, t->request, c->iterations,
		    c->trace_id, config, sizeof(config));
		break;
	case CAPSERVE_NOTHING:
		break;
	}
	if (kipc_reply(&c->sock, m, config, len) == -1 && len > 0)
		warn("cannot send the request to process %d", (int)m->pid);
	if (len == 0)
		return;
	fmt_time_ms(c->serve.start_ns, when, sizeof(when));
	capterm_clear(c->tty);
	if (c->by_iterations)
		fprintf(stderr, "spyremon: capture: process %d took the "
		    "request: %ld steps from its next one\n", (int)m->pid,
		    c->iterations);
	else
		fprintf(stderr, "spyremon: capture: process %d %s: %.3fs "
		    "from %s\n", (int)m->pid, again ? "did not start the trace "
		    "(its profiler looked at the request too late); asking "
		    "again" : "took the request", (double)c->duration_ns / 1e9,
		    when);
	if (again)
		close_window(c);
	open_window(c);
}

static void
show_progress(const struct capture *c, int64_t now)
{
	const struct capserve *s = &c->serve;

	if (!c->tty)
		return;
	if (s->start_ns == 0)
		capterm_progress(c->tty, "waiting for process %d to poll (every "
		    "%.0fs)", (int)c->pid, (double)c->interval_ns / 1e9);
	else if (c->by_iterations)
		capterm_progress(c->tty, "tracing %ld steps", c->iterations);
	else if (now < s->start_ns)
		capterm_progress(c->tty, "trace starts in %.1fs",
		    (double)(s->start_ns - now) / 1e9);
	else if (now < s->end_ns)
		capterm_progress(c->tty, "tracing: %.1fs of %.1fs",
		    (double)(now - s->start_ns) / 1e9,
		    (double)c->duration_ns / 1e9);
	else
		capterm_progress(c->tty, "waiting for the profiler to write its "
		    "trace (%.1fs)", (double)(now - s->end_ns) / 1e9);
}

/* Look for every trace due; true once all are settled. */
static bool
look_all(struct capture *c, int64_t now)
{
	for (size_t i = 0; i < c->ntraces; i++)
		if (c->serve.procs[i].state == CAPPROC_SERVED &&
		    look(c, &c->traces[i]))
			capserve_found(&c->serve, c->traces[i].pid);
	capserve_tick(&c->serve, now, alive);
	return capserve_closed(&c->serve, now) && capserve_settled(&c->serve);
}

/* Why no process took the request: an exit status after saying so. */
static int
no_poll(struct capture *c)
{
	const struct capserve *s = &c->serve;
	char wait[FMT_BUFLEN], what[160];

	fmt_span(c->wait_ns, wait, sizeof(wait));
	if (s->busy_polls > 0) {
		warnx("process %d polled, but its profiler was busy with a "
		    "trace of its own for all of %s", (int)s->first_busy_pid,
		    wait);
		return CAPTURE_EXIT_REFUSED;
	}
	if (c->via_dynolog)
		snprintf(what, sizeof(what), "dynolog has had no poll for "
		    "trace requests from process %d or a process it started",
		    (int)c->pid);
	else
		snprintf(what, sizeof(what), "process %d did not poll for a "
		    "trace request within %s", (int)c->pid, wait);
	if (c->expected == 0 && c->env_unread > 0)
		warnx("%s: is KINETO_USE_DAEMON=1 in the job's environment? "
		    "(it cannot be read here) Without it Kineto never polls",
		    what);
	else if (c->expected == 0)
		warnx("%s: neither it nor a process it started runs with "
		    "KINETO_USE_DAEMON set; start the job with "
		    "KINETO_USE_DAEMON=1 in its environment", what);
	else
		warnx("%s, though KINETO_USE_DAEMON is set: it polls once "
		    "PyTorch's profiler is loaded (import torch)%s%s", what,
		    c->socket_dir != NULL ? ", in KINETO_IPC_SOCKET_DIR=" : "",
		    c->socket_dir != NULL ? c->socket_dir : "");
	if (s->other_polls > 0)
		fprintf(stderr, "spyremon: %zu poll(s) came from other "
		    "processes, such as %d, which %d did not start\n",
		    s->other_polls, (int)s->other_pid, (int)c->pid);
	return CAPTURE_EXIT_NO_POLL;
}

/* SIGINT, SIGTERM or SIGHUP: say what the processes asked will still do. */
static int
interrupted(const struct capture *c)
{
	warnx("interrupted");
	for (size_t i = 0; i < c->ntraces; i++)
		if (c->serve.procs[i].state == CAPPROC_SERVED &&
		    c->traces[i].fd == -1)
			fprintf(stderr, "spyremon: process %d took the request and "
			    "may still write its trace to %s (the next capture "
			    "of a job that writes there removes it)\n",
			    (int)c->traces[i].pid, c->traces[i].asked);
	return CLIENT_EXIT_FAILED;
}

/* The direct path: the socket is ours. */
static int
serve(struct capture *c)
{
	static unsigned char buf[KIPC_MAX_DATAGRAM];
	int64_t started = now_realtime_ns();
	struct kipc_msg m;
	int r;

	for (;;) {
		struct pollfd p = { .fd = c->sock.fd, .events = POLLIN };
		int64_t now;

		show_progress(c, now_realtime_ns());
		if (poll(&p, 1, CAPLOOP_LOOK_MS) == -1 && errno != EINTR) {
			warn("poll");
			return CLIENT_EXIT_FAILED;
		}
		if (interrupted_by != 0)
			return interrupted(c);
		while ((r = kipc_recv(&c->sock, buf, sizeof(buf), &m)) == 1)
			answer(c, &m, now_realtime_ns());
		if (r == -1) {
			warn("%s", kipc_name(&c->sock));
			return CLIENT_EXIT_FAILED;
		}
		now = now_realtime_ns();
		if (c->serve.nprocs == 0 && now - started > c->wait_ns)
			return no_poll(c);
		if (c->serve.nprocs > 0 && look_all(c, now))
			return CLIENT_EXIT_OK;
	}
}

/*
 * Whether every process dynolog's answer names is the target or one it
 * started: whatever answers on the port may not be dynolog, or not the
 * dynolog the job polls.  CLIENT_EXIT_OK, or CAPTURE_EXIT_NOT_TARGET after
 * naming the first process that is not, before any window is opened.
 */
static int
check_reported(const struct capture *c, const struct dynoreq_result *res)
{
	const int32_t *lists[2] = { res->matched, res->triggered };
	const size_t counts[2] = { res->nmatched, res->ntriggered };
	char cmd[CAPLOOP_CMDLINE_SHOWN];

	for (size_t l = 0; l < 2; l++)
		for (size_t i = 0; i < counts[l]; i++) {
			pid_t p = (pid_t)lists[l][i];

			if (procinfo_descends(p, c->pid))
				continue;
			if (p < 1 || !procinfo_alive(p))
				warnx("dynolog on 127.0.0.1:%d answered for "
				    "process %d, which does not exist, not for "
				    "process %d or a process it started: not "
				    "using its answer", c->dynolog_port, (int)p,
				    (int)c->pid);
			else
				warnx("dynolog on 127.0.0.1:%d answered for "
				    "process %d (%s), which is neither process "
				    "%d nor a process it started: not using its "
				    "answer", c->dynolog_port, (int)p,
				    procinfo_cmdline(p, cmd, sizeof(cmd)) &&
				    cmd[0] != '\0' ? cmd : "?", (int)c->pid);
			return CAPTURE_EXIT_NOT_TARGET;
		}
	return CLIENT_EXIT_OK;
}

/* dynolog's path: it answers the polls; the request goes through it. */
static int
via_dynolog(struct capture *c)
{
	struct dynoreq_result res;
	char config[CAPLOOP_CONFIG_MAX], dir[PATH_MAX], request[PATH_MAX];
	int64_t now = now_realtime_ns();
	int rc;

	/* each process takes the request at its next poll */
	c->serve.extra_ns = c->interval_ns;
	c->serve.unseen = true;
	capserve_plan(&c->serve, now);
	caploop_trace_dir((int32_t)c->pid, dir, sizeof(dir));
	if ((size_t)snprintf(request, sizeof(request), "%s%s.pt.trace.json",
	    dir, c->base) >= sizeof(request) ||
	    capserve_config(&c->serve, request, c->iterations,
		    c->trace_id, config, sizeof(config)) == 0) {
		warnx("KINETO_ONDEMAND_TRACE_DIR=%s is too long a name", dir);
		return CLIENT_EXIT_FAILED;
	}
	if (dynoreq_send(c->dynolog_port, config, c->jobid, (int32_t)c->pid,
	    c->max_procs, &res) == -1) {
		warnx("%s is held by another process, and dynolog does not "
		    "answer on 127.0.0.1:%d: is another spyremon capture "
		    "running?", kipc_name(&c->sock), c->dynolog_port);
		return CLIENT_EXIT_FAILED;
	}
	if ((rc = check_reported(c, &res)) != CLIENT_EXIT_OK)
		return rc;
	if (res.nmatched == 0) {
		c->serve.start_ns = 0;
		return no_poll(c);
	}
	if (res.ntriggered == 0) {
		warnx("dynolog knows process %d, but its profiler is busy "
		    "(%" PRId64 " busy): a trace is already pending or "
		    "running", (int)c->pid, res.busy);
		return CAPTURE_EXIT_REFUSED;
	}
	for (size_t i = 0; i < res.ntriggered; i++) {
		if (new_trace(c, res.triggered[i], c->uid, dir) == NULL)
			return CLIENT_EXIT_FAILED;
		capserve_add(&c->serve, res.triggered[i], now);
		fprintf(stderr, "spyremon: capture: dynolog gave process %d "
		    "the request: %.3fs from its next poll\n",
		    (int)res.triggered[i], (double)c->duration_ns / 1e9);
	}
	open_window(c);
	for (;;) {
		show_progress(c, now_realtime_ns());
		(void)poll(NULL, 0, CAPLOOP_LOOK_MS);
		if (interrupted_by != 0)
			return interrupted(c);
		if (look_all(c, now_realtime_ns()))
			return CLIENT_EXIT_OK;
	}
}

int
caploop_run(struct capture *c)
{
	struct sigaction sa = { .sa_handler = on_signal }, old_int, old_term;
	struct sigaction old_hup;
	struct capserve *s = &c->serve;
	int rc;

	s->target = (int32_t)c->pid;
	s->uid = c->uid;
	s->any_uid = geteuid() == 0;
	s->by_iterations = c->by_iterations;
	s->duration_ns = c->duration_ns;
	s->warmup_ns = c->warmup_ns;
	/* several processes to serve: give them all time to poll */
	s->extra_ns = c->expected > 1 ? c->interval_ns : 0;
	s->quiet_ns = c->wait_ns + CAPSERVE_TICK_NS;
	/* a step may take longer than a poll interval */
	s->pending_ns = c->wait_given || c->wait_ns > CAPTURE_STEP_WAIT_NS ?
	    c->wait_ns : CAPTURE_STEP_WAIT_NS;
	s->max_procs = (size_t)c->max_procs;
	s->retries = 1;
	interrupted_by = 0;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGHUP, &sa, &old_hup);
	rc = c->via_dynolog ? via_dynolog(c) : serve(c);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	return rc;
}
