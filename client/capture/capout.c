/*
 * capout: a capture's output directory (capture.h), written beside
 * --output and renamed into place (output.h), also when part of it
 * failed: the traces are what cannot be taken again.
 *
 *   HOST_PID.MS.pt.trace.json   each process's trace as it wrote it
 *                               (MS its start in epoch ms: the name
 *                               torch.profiler's handler gives, which
 *                               export reads the host from)
 *   HOST_PID.MS.merged.json     the same with the cards' counters
 *   steps.csv                   the steps of every trace
 *   report.md, aiusmi.csv, *.png, *.svg   with --report
 *
 * The merged traces, steps.csv and the report are written by the export
 * and report commands themselves (export_cmd, report_cmd through cmd_run), on the
 * window just ended, so that they say and check exactly what those
 * commands do.  The report comes last, into the directory already in
 * place, so that report.md names the trace where it stays.
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
#include <unistd.h>

#include "capterm.h"
#include "capture.h"
#include "cmd.h"
#include "format.h"
#include "output.h"
#include "procinfo.h"
#include "timeparse.h"
#include "trace.h"

#define COPY_BUFSIZE	(1 << 16)

/* Copy fd (from its start) into the new file path; false after saying why. */
static bool
copy_fd(int fd, const char *path)
{
	static char buf[COPY_BUFSIZE];
	ssize_t n;
	int out;

	if ((out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    0644)) == -1) {
		warn("%s", path);
		return false;
	}
	if (lseek(fd, 0, SEEK_SET) == -1)
		goto fail;
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		const char *p = buf;

		if (n == -1) {
			if (errno == EINTR)
				continue;
			goto fail;
		}
		while (n > 0) {
			ssize_t w = write(out, p, (size_t)n);

			if (w == -1) {
				if (errno == EINTR)
					continue;
				goto fail;
			}
			p += w;
			n -= w;
		}
	}
	if (close(out) == -1) {
		warn("%s", path);
		(void)unlink(path);
		return false;
	}
	return true;
fail:
	warn("%s", path);
	close(out);
	(void)unlink(path);
	return false;
}

int
capout_add_trace(struct capture *c, struct captrace *t)
{
	char incoming[PATH_MAX + 32], final[PATH_MAX + NAME_MAX + 2];
	char via[PATH_MAX], ebuf[256];
	struct trace_info info;
	struct trace_error err;

	snprintf(incoming, sizeof(incoming), "%s/.incoming-%d", c->tmp,
	    (int)t->pid);
	if (!copy_fd(t->fd, incoming))
		return CLIENT_EXIT_FAILED;
	if (trace_read(incoming, NULL, &info, &err) == TRACE_OK &&
	    info.absolute && info.has_span) {
		t->has_span = true;
		t->start_ns = info.start_ns;
		t->end_ns = info.end_ns;
	} else {
		warnx("%s: the trace of process %d has no span to place the "
		    "cards' samples on%s%s", t->found, (int)t->pid,
		    info.dialect == TRACE_DIALECT_BASE ? "" : ": ",
		    info.dialect == TRACE_DIALECT_BASE ? "" :
		    trace_strerror(&err, ebuf, sizeof(ebuf)));
	}
	trace_info_free(&info);
	/* a gzip file keeps its name's .gz: it is copied as it is */
	t->gz = strlen(t->found) > 3 &&
	    strcmp(t->found + strlen(t->found) - 3, ".gz") == 0;
	snprintf(t->name, sizeof(t->name), "%.200s_%d.%" PRId64
	    ".pt.trace.json%s", c->host[0] != '\0' ? c->host : "localhost",
	    (int)t->pid, (t->has_span ? t->start_ns : now_realtime_ns()) /
	    (int64_t)NSEC_PER_MSEC, t->gz ? ".gz" : "");
	snprintf(final, sizeof(final), "%s/%s", c->tmp, t->name);
	if (rename(incoming, final) == -1) {
		warn("%s", final);
		(void)unlink(incoming);
		return CLIENT_EXIT_FAILED;
	}
	if (t->keep)
		return CLIENT_EXIT_OK;
	/* moved, not copied: the process's folder keeps nothing */
	if (!procinfo_path(t->pid, t->found, via, sizeof(via)) ||
	    unlink(via) == -1)
		(void)unlink(t->found);
	return CLIENT_EXIT_OK;
}

/*
 * Run a command of this program with args (NULL-ended; args[0] is its
 * name), as "spyremon" would run it: on copies, since getopt may reorder.
 */
static int
run(struct capture *c, const struct cmd_spec *spec, const char *const *args)
{
	char *argv[16 + 2 * CAPSERVE_MAX_PROCS];
	int argc = 0, rc;

	for (; args[argc] != NULL && argc + 1 < (int)(sizeof(argv) /
	    sizeof(argv[0])); argc++)
		if ((argv[argc] = strdup(args[argc])) == NULL)
			errx(CLIENT_EXIT_FAILED, "out of memory");
	argv[argc] = NULL;
	rc = cmd_run(c->cl, spec, argc, argv);
	for (int i = 0; i < argc; i++)
		free(argv[i]);
	return rc;
}

/* The name of t's merged trace: its name with .merged for .pt.trace. */
static void
merged_name(const struct captrace *t, char *buf, size_t len)
{
	size_t n = strlen(t->name) - strlen(".pt.trace.json") -
	    (t->gz ? 3 : 0);

	snprintf(buf, len, "%.*s.merged.json", (int)n, t->name);
}

/*
 * Move the files report wrote into sub into the output, but steps.csv,
 * which export wrote already for every trace.
 */
static int
adopt_report(const struct capture *c, const char *sub)
{
	char from[PATH_MAX + NAME_MAX + 2], to[PATH_MAX + NAME_MAX + 2];
	struct dirent *e;
	DIR *d;
	int rc = CLIENT_EXIT_OK;

	if ((d = opendir(sub)) == NULL) {
		warn("%s", sub);
		return CLIENT_EXIT_FAILED;
	}
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if ((size_t)snprintf(from, sizeof(from), "%s/%s", sub,
		    e->d_name) >= sizeof(from) || (size_t)snprintf(to,
		    sizeof(to), "%s/%s", c->output, e->d_name) >= sizeof(to))
			continue;
		if (strcmp(e->d_name, "steps.csv") == 0)
			(void)unlink(from);
		else if (rename(from, to) == -1) {
			warn("%s", to);
			rc = CLIENT_EXIT_FAILED;
		}
	}
	closedir(d);
	if (rmdir(sub) == -1 && rc == CLIENT_EXIT_OK) {
		warn("%s", sub);
		rc = CLIENT_EXIT_FAILED;
	}
	return rc;
}

/*
 * Report prints the folder it wrote, which here is a passing one: its
 * line goes to /dev/null, and capture says where the files went.
 */
static int
run_report(struct capture *c, const char *const *argv)
{
	int saved, null, rc;

	fflush(stdout);
	if ((saved = dup(STDOUT_FILENO)) == -1 ||
	    (null = open("/dev/null", O_WRONLY | O_CLOEXEC)) == -1 ||
	    dup2(null, STDOUT_FILENO) == -1) {
		warn("report");
		return CLIENT_EXIT_FAILED;
	}
	close(null);
	rc = run(c, &report_cmd, argv);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	return rc;
}

int
capout_telemetry(struct capture *c)
{
	char id[32], merged[PATH_MAX + NAME_MAX + 2], steps[PATH_MAX + 16];
	const char *argv[8 + 2 * CAPSERVE_MAX_PROCS];
	char (*paths)[PATH_MAX + NAME_MAX + 2];
	char mname[NAME_MAX + 1];
	size_t n = 0, k;
	int rc = CLIENT_EXIT_OK, r;

	snprintf(id, sizeof(id), "%" PRId64, c->window_id);
	if ((paths = calloc(c->ntraces + 1, sizeof(*paths))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (size_t i = 0; i < c->ntraces; i++) {
		const struct captrace *t = &c->traces[i];

		if (t->name[0] == '\0' || !t->has_span)
			continue;
		snprintf(paths[n], sizeof(paths[n]), "%s/%s", c->tmp, t->name);
		merged_name(t, mname, sizeof(mname));
		snprintf(merged, sizeof(merged), "%s/%s", c->tmp, mname);
		capterm_progress(c->tty, "writing %s", mname);
		r = run(c, &export_cmd, (const char *[]){ "export", "--window",
		    id, "--trace", paths[n], "--merge", merged, NULL });
		if (r != CLIENT_EXIT_OK && rc == CLIENT_EXIT_OK)
			rc = r;
		n++;
	}
	/* a vLLM server's traces have no steps (its profiler is not stepped) */
	if (n == 0 || c->vllm_url != NULL) {
		free(paths);
		return rc;
	}
	capterm_progress(c->tty, "writing steps.csv");
	snprintf(steps, sizeof(steps), "%s/steps.csv", c->tmp);
	k = 0;
	argv[k++] = "export";
	argv[k++] = "--window";
	argv[k++] = id;
	for (size_t i = 0; i < n; i++) {
		argv[k++] = "--trace";
		argv[k++] = paths[i];
	}
	argv[k++] = "--steps";
	argv[k++] = "--csv";
	argv[k++] = "--output";
	argv[k++] = steps;
	argv[k] = NULL;
	if ((r = run(c, &export_cmd, argv)) != CLIENT_EXIT_OK &&
	    rc == CLIENT_EXIT_OK)
		rc = r;
	free(paths);
	return rc;
}

int
capout_report(struct capture *c)
{
	char id[32], trace[PATH_MAX + NAME_MAX + 2], sub[PATH_MAX + 16];
	const struct captrace *t = NULL;
	int r;

	for (size_t i = 0; i < c->ntraces && t == NULL; i++)
		if (c->traces[i].name[0] != '\0' && c->traces[i].has_span)
			t = &c->traces[i];
	if (t == NULL)
		return CLIENT_EXIT_OK;
	capterm_progress(c->tty, "writing the report");
	snprintf(id, sizeof(id), "%" PRId64, c->window_id);
	/* report takes one trace: the first process's, named where it stays */
	snprintf(trace, sizeof(trace), "%s/%s", c->output, t->name);
	snprintf(sub, sizeof(sub), "%s/.report", c->output);
	/* a vLLM server's traces have no steps: its report is the window's */
	if (c->vllm_url != NULL)
		r = run_report(c, (const char *[]){ "report", "--window", id,
		    "--output", sub, NULL });
	else
		r = run_report(c, (const char *[]){ "report", "--window", id,
		    "--trace", trace, "--output", sub, NULL });
	if (r == CLIENT_EXIT_OK)
		r = adopt_report(c, sub);
	return r;
}

int
capout_publish(struct capture *c)
{
	int rc = output_dir_publish(c->output, c->tmp);

	c->published = rc == CLIENT_EXIT_OK;
	return rc;
}

void
capout_list(const struct capture *c)
{
	char b[FMT_BUFLEN], e[FMT_BUFLEN], span[FMT_BUFLEN];
	char mname[NAME_MAX + 1], path[PATH_MAX + NAME_MAX + 2];
	struct stat sb;

	if (c->window_id != 0) {
		fmt_time_ms(c->window_begin_ns, b, sizeof(b));
		if (fmt_same_utc_day(c->window_begin_ns, c->window_end_ns))
			fmt_clock_ms(c->window_end_ns, e, sizeof(e));
		else
			fmt_time_ms(c->window_end_ns, e, sizeof(e));
		fmt_span(c->window_end_ns - c->window_begin_ns, span,
		    sizeof(span));
		printf("window %" PRId64 " (%s): %s .. %s, %s\n", c->window_id,
		    c->tag, b, e, span);
	}
	for (size_t i = 0; i < c->ntraces; i++) {
		const struct captrace *t = &c->traces[i];

		if (t->name[0] == '\0')
			continue;
		printf("%s/%s: the trace of process %d", c->output, t->name,
		    (int)t->pid);
		if (t->has_span) {
			fmt_span(t->end_ns - t->start_ns, span, sizeof(span));
			printf(", %s", span);
		}
		putchar('\n');
		merged_name(t, mname, sizeof(mname));
		snprintf(path, sizeof(path), "%s/%s", c->output, mname);
		if (stat(path, &sb) == 0)
			printf("%s: with the cards' counters\n", path);
	}
	snprintf(path, sizeof(path), "%s/steps.csv", c->output);
	if (stat(path, &sb) == 0)
		printf("%s\n", path);
	snprintf(path, sizeof(path), "%s/report.md", c->output);
	if (stat(path, &sb) == 0)
		printf("%s, with aiusmi.csv and the plots\n", path);
}
