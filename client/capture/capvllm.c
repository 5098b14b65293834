/*
 * capvllm: "spyremon capture --vllm URL": a vLLM server's profile over a
 * window.  The server is asked through its own endpoints (POST
 * /start_profile, POST /stop_profile, which vLLM has only when started
 * with VLLM_TORCH_PROFILER_DIR), and each worker's trace is found in that
 * folder (--profiler-dir) among the files written during the window.
 * The window keeps the server's counters as mark begin --vllm does, so
 * that summary and report give its serving figures.  With --load, the
 * profile lasts while a load of completions (loadgen.h) runs, and the
 * window's metadata says what was asked (vllm.load.*).
 */
#include <dirent.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "caplitter.h"
#include "capture.h"
#include "capterm.h"
#include "capwin.h"
#include "format.h"
#include "httpc.h"
#include "loadgen.h"
#include "markvllm.h"
#include "output.h"
#include "timeparse.h"

#define START_TIMEOUT_MS	30000	/* for start_profile's answer */
#define CAPVLLM_LOAD_META	5	/* vllm.load.* pairs */

static bool
ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && strcmp(s + n - t, tail) == 0;
}

/* A trace's name as vLLM's workers write it: HOST_PID.MS.pt.trace.json[.gz]. */
static bool
trace_name(const char *name)
{
	return ends_with(name, ".pt.trace.json") ||
	    ends_with(name, ".pt.trace.json.gz");
}

/* The worker's pid in such a name, or 0. */
static int32_t
name_pid(const char *name)
{
	const char *dot = strchr(name, '.'), *us;
	long v = 0;

	if (dot == NULL)
		return 0;
	for (us = dot; us > name && us[-1] != '_'; us--)
		if (us[-1] < '0' || us[-1] > '9')
			return 0;
	if (us == name || us == dot)
		return 0;
	v = strtol(us, NULL, 10);
	return v > 0 && v <= INT32_MAX ? (int32_t)v : 0;
}

/*
 * The traces in dir written from since_ns on (their last change), as
 * c->traces, each opened; named on stderr.
 */
static int
find_traces(struct capture *c, int64_t since_ns)
{
	DIR *d = opendir(c->profiler_dir);
	struct dirent *de;
	struct stat sb;

	if (d == NULL) {
		warn("--profiler-dir %s", c->profiler_dir);
		return CLIENT_EXIT_FAILED;
	}
	while ((de = readdir(d)) != NULL && c->ntraces < CAPSERVE_MAX_PROCS) {
		struct captrace *t = &c->traces[c->ntraces];
		int fd;

		if (!trace_name(de->d_name) ||
		    fstatat(dirfd(d), de->d_name, &sb, 0) == -1 ||
		    !S_ISREG(sb.st_mode) || (int64_t)sb.st_mtim.tv_sec *
		    1000000000 + sb.st_mtim.tv_nsec < since_ns)
			continue;
		if ((fd = openat(dirfd(d), de->d_name, O_RDONLY | O_CLOEXEC)) ==
		    -1) {
			warn("%s/%s", c->profiler_dir, de->d_name);
			continue;
		}
		memset(t, 0, sizeof(*t));
		t->fd = fd;
		t->keep = true;
		t->pid = name_pid(de->d_name);
		if (t->pid == 0)
			t->pid = (int32_t)c->ntraces + 1;
		snprintf(t->found, sizeof(t->found), "%s/%s", c->profiler_dir,
		    de->d_name);
		fprintf(stderr, "spyremon: capture: the server wrote %s\n",
		    t->found);
		c->ntraces++;
	}
	closedir(d);
	return CLIENT_EXIT_OK;
}

/* POST path to the server: CLIENT_EXIT_OK on 200, else why said. */
static int
post(const struct capture *c, const char *path, int timeout_ms)
{
	char why[HTTPC_WHY_LEN];
	struct httpc_answer a;
	int status;

	if (httpc_request("POST", c->vllm_url, path, timeout_ms, &a, why,
	    sizeof(why)) == -1) {
		warnx("capture: %s", why);
		return CLIENT_EXIT_FAILED;
	}
	status = a.status;
	httpc_answer_free(&a);
	if (status == 200)
		return CLIENT_EXIT_OK;
	if (status == 404)
		warnx("capture: %s%s: 404: the server has no profiler (vLLM "
		    "has it only when started with VLLM_TORCH_PROFILER_DIR set)",
		    c->vllm_url, path);
	else
		warnx("capture: %s%s: HTTP status %d", c->vllm_url, path,
		    status);
	return CLIENT_EXIT_FAILED;
}

/*
 * End the window with the end's counters merged into its metadata; its
 * span into c.  CLIENT_EXIT_OK, or why it failed said.
 */
static int
end_window(struct capture *c, const struct markvllm_end *ve)
{
	struct markvllm_meta vm;
	const char *meta[2 * VLLM_NMETA];
	int64_t b, e;
	int rc;

	markvllm_end_meta(ve, &vm, meta);
	if ((rc = capwin_end_meta(c->cl, c->window_id, 0, meta, vm.n, &b,
	    &e)) != CLIENT_EXIT_OK) {
		/* refused (its metadata): the window must not stay open */
		if (vm.n > 0)
			(void)capwin_end(c->cl, c->window_id, 0, &b, &e);
		return rc;
	}
	c->window_begin_ns = b;
	c->window_end_ns = e;
	return markvllm_end_check(ve, c->window_id);
}

/* End the window, keep the end's counters, copy the traces, write the rest. */
static int
finish(struct capture *c, const struct markvllm_end *ve, int64_t since_ns)
{
	size_t found = 0;
	int rc, r;

	if ((rc = end_window(c, ve)) != CLIENT_EXIT_OK) {
		/* a serving figure would be missing: no half output */
		c->window_id = 0;
		output_dir_remove(c->tmp);
		return rc;
	}
	if ((r = find_traces(c, since_ns)) != CLIENT_EXIT_OK) {
		output_dir_remove(c->tmp);
		return r;
	}
	for (size_t i = 0; i < c->ntraces; i++) {
		capterm_progress(c->tty, "copying %s", c->traces[i].found);
		if ((r = capout_add_trace(c, &c->traces[i])) == CLIENT_EXIT_OK)
			found++;
		else if (rc == CLIENT_EXIT_OK)
			rc = r;
	}
	if (found == 0) {
		warnx("capture: no trace in %s was written during the window",
		    c->profiler_dir);
		output_dir_remove(c->tmp);
		return CAPTURE_EXIT_NO_TRACE;
	}
	if ((r = capout_telemetry(c)) != CLIENT_EXIT_OK && rc == CLIENT_EXIT_OK)
		rc = r;
	if ((r = capout_publish(c)) != CLIENT_EXIT_OK) {
		warnx("the output is left in %s", c->tmp);
		return r;
	}
	if (c->report && (r = capout_report(c)) != CLIENT_EXIT_OK &&
	    rc == CLIENT_EXIT_OK)
		rc = r;
	capout_list(c);
	return rc;
}

/* Progress of the load on a terminal. */
static void
load_progress(void *arg, long done, long n)
{
	const struct capture *c = arg;

	capterm_progress(c->tty, "profiling the server: %ld of %ld requests "
	    "answered", done, n);
}

/*
 * The load (--load) while the profile runs: CLIENT_EXIT_OK once every
 * request succeeded, else CLIENT_EXIT_FAILED after saying how many failed
 * and why the first did.
 */
static int
load(struct capture *c, const char *model)
{
	struct loadgen_opts o = {
		.url = c->vllm_url, .model = model, .n = c->load_n,
		.concurrency = c->concurrency,
		.prompt_tokens = c->prompt_tokens,
		.output_tokens = c->output_tokens,
		.timeout_ms = (int)(c->load_timeout_ns / 1000000),
	};
	struct loadgen_result r;
	int rc = loadgen_run(&o, &r, load_progress, c);

	capterm_clear(c->tty);
	if (rc == -1) {
		warnx("capture: %ld of %ld completion requests failed, so the "
		    "load was not the one asked for; no output is written. "
		    "The first: %s", r.failed, c->load_n, r.first_error);
		return CLIENT_EXIT_FAILED;
	}
	fprintf(stderr, "spyremon: capture: %ld completion requests of model "
	    "%s answered: %.0f prompt and %.0f generated tokens (their "
	    "usage)\n", r.ok, model, r.prompt_tokens, r.completion_tokens);
	return CLIENT_EXIT_OK;
}

/* Wait c->duration_ns, with progress on a terminal. */
static void
wait_duration(const struct capture *c)
{
	char left[FMT_BUFLEN];
	int64_t until, now;
	struct timespec ts;

	until = now_realtime_ns() + c->duration_ns;
	while ((now = now_realtime_ns()) < until) {
		int64_t step = until - now < 200000000 ? until - now : 200000000;

		fmt_span(until - now, left, sizeof(left));
		capterm_progress(c->tty, "profiling the server, %s left", left);
		ts.tv_sec = step / 1000000000;
		ts.tv_nsec = step % 1000000000;
		(void)nanosleep(&ts, NULL);
	}
	capterm_clear(c->tty);
}

/* The load's own metadata, after vm's: what --load asked for. */
static void
load_meta(const struct capture *c, const char *model,
    struct markvllm_meta *vm, char lm[CAPVLLM_LOAD_META][2][PROTO_META_VALUE_MAX + 1],
    const char **meta)
{
	static const char *const keys[CAPVLLM_LOAD_META] = {
		"vllm.load.requests", "vllm.load.prompt_tokens",
		"vllm.load.output_tokens", "vllm.load.concurrency",
		"vllm.load.model",
	};
	size_t n = vm->n;

	snprintf(lm[0][1], sizeof(lm[0][1]), "%ld", c->load_n);
	snprintf(lm[1][1], sizeof(lm[1][1]), "%ld", c->prompt_tokens);
	snprintf(lm[2][1], sizeof(lm[2][1]), "%ld", c->output_tokens);
	snprintf(lm[3][1], sizeof(lm[3][1]), "%d", c->concurrency);
	snprintf(lm[4][1], sizeof(lm[4][1]), "%s", model);
	for (size_t i = 0; i < CAPVLLM_LOAD_META; i++) {
		snprintf(lm[i][0], sizeof(lm[i][0]), "%s", keys[i]);
		meta[2 * (n + i)] = lm[i][0];
		meta[2 * (n + i) + 1] = lm[i][1];
	}
}

static int
run(struct capture *c)
{
	struct markvllm_meta vm = { .n = 0 };
	struct markvllm_end ve = { .id = 0 };
	const char *meta[2 * (VLLM_NMETA + CAPVLLM_LOAD_META)];
	char lm[CAPVLLM_LOAD_META][2][PROTO_META_VALUE_MAX + 1];
	char lim[FMT_BUFLEN], model[256], why[LOADGEN_WHY];
	size_t nmeta;
	int64_t since;
	int rc;

	if ((rc = capwin_hello(c->cl)) != CLIENT_EXIT_OK) {
		warnx("capture --vllm: spyremond does not answer: the serving "
		    "figures need the cards' telemetry");
		return rc;
	}
	if ((rc = markvllm_begin(c->vllm_url, &vm)) != CLIENT_EXIT_OK)
		return rc;
	/* the model, before any window: one it does not serve is an error */
	if (c->load_n > 0 && loadgen_model(c->vllm_url, c->model,
	    VLLM_TIMEOUT_MS, model, sizeof(model), why, sizeof(why)) == -1) {
		warnx("capture --load: %s; no window opened", why);
		return CLIENT_EXIT_FAILED;
	}
	if ((rc = output_dir_open(c->output, c->tmp, sizeof(c->tmp))) !=
	    CLIENT_EXIT_OK)
		return rc;
	/* interrupted: the output's temporaries go (the window ends with
	   this process, capwin_begin ties it) */
	if (!caplitter_arm(c)) {
		output_dir_remove(c->tmp);
		return CLIENT_EXIT_FAILED;
	}
	for (size_t i = 0; i < vm.n; i++) {
		meta[2 * i] = vm.key[i];
		meta[2 * i + 1] = vm.value[i];
	}
	nmeta = vm.n;
	if (c->load_n > 0) {
		load_meta(c, model, &vm, lm, meta);
		nmeta += CAPVLLM_LOAD_META;
	}
	/* a second before: a file system's times may be coarse */
	since = now_realtime_ns() - 1000000000;
	if ((rc = capwin_begin(c->cl, c->tag, meta, nmeta, 0, &c->window_id)) !=
	    CLIENT_EXIT_OK) {
		output_dir_remove(c->tmp);
		return rc;
	}
	if ((rc = post(c, "/start_profile", START_TIMEOUT_MS)) !=
	    CLIENT_EXIT_OK) {
		int64_t b, e;

		(void)capwin_end(c->cl, c->window_id, 0, &b, &e);
		output_dir_remove(c->tmp);
		return rc;
	}
	if (c->load_n > 0)
		rc = load(c, model);
	else
		wait_duration(c);
	fmt_span(c->stop_timeout_ns, lim, sizeof(lim));
	fprintf(stderr, "spyremon: capture: stopping the server's profiler; "
	    "its workers write their traces (waiting up to %s)\n", lim);
	if (rc == CLIENT_EXIT_OK)
		rc = post(c, "/stop_profile", (int)(c->stop_timeout_ns /
		    1000000));
	else	/* the server is not left profiling */
		(void)post(c, "/stop_profile", (int)(c->stop_timeout_ns /
		    1000000));
	/* the counters at the end, as mark end reads them */
	ve.id = c->window_id;
	snprintf(ve.url, sizeof(ve.url), "%s", c->vllm_url);
	ve.read = vllm_read(c->vllm_url, &ve.counters, ve.why,
	    sizeof(ve.why)) == 0;
	if (rc != CLIENT_EXIT_OK) {
		(void)end_window(c, &ve);
		output_dir_remove(c->tmp);
		return rc;
	}
	return finish(c, &ve, since);
}

int
capvllm_run(struct capture *c)
{
	int rc = run(c);

	caplitter_done(c);
	return rc;
}
