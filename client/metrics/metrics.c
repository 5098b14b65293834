/*
 * metrics: "spyremon metrics", the database as Prometheus reads it.
 *
 * Three ways out, one snapshot each:
 *   - stdout (OpenMetrics, or 0.0.4 with --format prometheus);
 *   - --output FILE: node_exporter's textfile collector format (0.0.4
 *     without timestamps, which that collector refuses), written whole
 *     and renamed into place, so the collector never reads half a file;
 *   - --http: one HTTP/1.x request on stdin, its answer on stdout, as an
 *     inetd-style service started per connection (systemd Accept=yes).
 *     The head must arrive within HTTP_TIMEOUT_MS; the database is read
 *     only once the request is known to be good.
 */
#include <err.h>
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "cmd.h"
#include "collect.h"
#include "db.h"
#include "expo.h"
#include "http.h"
#include "output.h"
#include "render.h"
#include "timeparse.h"

/* flush_interval's default (spyremond.yaml(5)) */
#define DEFAULT_FLUSH_NS	(1000 * 1000000LL)

enum {
	OPT_FORMAT = CLIENT_OPT_FIRST_FREE,
	OPT_OUTPUT,
	OPT_HTTP,
};

/* The exposition of the database at path, in a malloc'd buffer. */
static int
expose(const char *path, int64_t flush_ns, enum expo_format fmt,
    bool timestamps, char **buf, size_t *len)
{
	struct collect c;
	struct expo e;
	sqlite3 *db = NULL;
	FILE *fp;
	int rc;

	*buf = NULL;
	*len = 0;
	if ((rc = db_open(path, &db)) != CLIENT_EXIT_OK)
		return rc;
	rc = collect_read(db, path, now_realtime_ns(), flush_ns, &c);
	db_close(db);
	if (rc != CLIENT_EXIT_OK) {
		collect_free(&c);
		return rc;
	}
	if ((fp = open_memstream(buf, len)) == NULL)
		err(CLIENT_EXIT_FAILED, "open_memstream");
	expo_init(&e, fp, fmt, timestamps);
	render_metrics(&c, &e);
	collect_free(&c);
	if (fclose(fp) != 0)
		err(CLIENT_EXIT_FAILED, "out of memory");
	return CLIENT_EXIT_OK;
}

static int
write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w == -1 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int
respond(int status, int minor, const char *ctype, const char *body,
    size_t len, bool head_only)
{
	char hdr[512];
	int n;

	n = snprintf(hdr, sizeof(hdr), "HTTP/1.%d %d %s\r\n"
	    "Content-Type: %s\r\nContent-Length: %zu\r\n%s"
	    "Connection: close\r\n\r\n", minor, status, http_reason(status),
	    ctype, len, status == 405 ? "Allow: GET, HEAD\r\n" : "");
	if (write_all(STDOUT_FILENO, hdr, (size_t)n) == -1 ||
	    (!head_only && write_all(STDOUT_FILENO, body, len) == -1)) {
		warn("cannot send the answer");
		return CLIENT_EXIT_FAILED;
	}
	return status == 200 ? CLIENT_EXIT_OK : CLIENT_EXIT_FAILED;
}

static int
respond_error(int status, int minor, const char *why)
{
	char body[256];
	int n;

	n = snprintf(body, sizeof(body), "%d %s: %s\n", status,
	    http_reason(status), why);
	warnx("http: %d %s", status, why);
	return respond(status, minor, "text/plain; charset=utf-8", body,
	    (size_t)n, false);
}

static const char *
why_refused(int status)
{
	switch (status) {
	case 405: return "only GET and HEAD are served";
	case 414: return "request line too long";
	case 431: return "request headers too large";
	case 505: return "only HTTP/1.0 and HTTP/1.1 are served";
	default: return "malformed request";
	}
}

/*
 * Read the request head from stdin until it parses, is refused, the peer
 * closes, or HTTP_TIMEOUT_MS passes.  Returns 0 with *req filled, or the
 * status to refuse with (408 for the timeout), or -2 when the peer went
 * away without a request and there is no one to answer.
 */
static int
read_request(struct http_request *req)
{
	char buf[HTTP_HEAD_MAX + 2];
	size_t len = 0;
	int64_t deadline = now_realtime_ns() + HTTP_TIMEOUT_MS * 1000000LL;

	for (;;) {
		struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
		int64_t left = (deadline - now_realtime_ns()) / 1000000;
		ssize_t r;
		int rc;

		if (left <= 0)
			return 408;
		if ((rc = poll(&pfd, 1, (int)left)) == -1 && errno == EINTR)
			continue;
		if (rc == -1) {
			warn("poll");
			return -2;
		}
		if (rc == 0)
			return 408;
		r = read(STDIN_FILENO, buf + len, sizeof(buf) - 1 - len);
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1) {
			warn("cannot read the request");
			return -2;
		}
		if (r == 0)
			return len > 0 ? 400 : -2;
		len += (size_t)r;
		buf[len] = '\0';
		if ((rc = http_parse(buf, len, req)) != -1)
			return rc;
		if (len >= sizeof(buf) - 1)
			return 431;
	}
}

static int
serve_http(const char *path, int64_t flush_ns)
{
	struct http_request req;
	enum expo_format fmt;
	char *body;
	size_t len;
	int status, rc;

	status = read_request(&req);
	if (status == -2)
		return CLIENT_EXIT_FAILED;	/* nothing to answer */
	if (status == 408)
		return respond_error(408, 1, "no complete request in time");
	if (status != 0)
		return respond_error(status, 1, why_refused(status));
	if (strcmp(req.path, "/metrics") != 0)
		return respond_error(404, req.minor, "only /metrics is served");
	fmt = http_wants_openmetrics(req.accept) ? EXPO_OPENMETRICS :
	    EXPO_PROMETHEUS;
	if ((rc = expose(path, flush_ns, fmt, true, &body, &len)) != CLIENT_EXIT_OK) {
		free(body);
		respond_error(500, req.minor, "cannot read the database");
		return rc;
	}
	rc = respond(200, req.minor, expo_content_type(fmt), body, len,
	    req.method == HTTP_HEAD);
	free(body);
	return rc;
}

struct metrics_opts {
	enum expo_format fmt;
	const char *out;
	bool http, have_format;
};

static int
metrics_option(void *opts, int ch, char *arg)
{
	struct metrics_opts *o = opts;

	switch (ch) {
	case OPT_FORMAT:
		o->have_format = true;
		if (strcmp(arg, "openmetrics") == 0)
			o->fmt = EXPO_OPENMETRICS;
		else if (strcmp(arg, "prometheus") == 0)
			o->fmt = EXPO_PROMETHEUS;
		else {
			warnx("--format: \"%s\" is neither openmetrics "
			    "nor prometheus", arg);
			return CLIENT_EXIT_USAGE;
		}
		break;
	case OPT_OUTPUT:
		o->out = arg;
		break;
	case OPT_HTTP:
		o->http = true;
		break;
	}
	return CLIENT_EXIT_OK;
}

static int
metrics_run(struct client *cl, void *opts, int argc, char *argv[])
{
	struct metrics_opts *o = opts;
	const char *path;
	struct config *cfg;
	int64_t flush_ns = DEFAULT_FLUSH_NS;
	char *body;
	size_t len;
	FILE *fp;
	int rc;

	(void)argc;
	(void)argv;
	if (o->http && (o->out != NULL || o->have_format)) {
		warnx("metrics: --http takes neither --output nor --format "
		    "(the Accept header chooses)");
		return CLIENT_EXIT_USAGE;
	}
	if (o->out != NULL && o->have_format) {
		warnx("metrics: --output always writes the textfile "
		    "collector's format");
		return CLIENT_EXIT_USAGE;
	}
	if ((path = client_database(cl)) == NULL)
		return o->http ? respond_error(500, 1,
		    "no database configured") : CLIENT_EXIT_FAILED;
	/* the daemon's; built-in default if the config cannot be read */
	if ((cfg = client_config(cl)) != NULL)
		flush_ns = (int64_t)cfg->flush_interval_ns;
	if (o->http)
		return serve_http(path, flush_ns);
	if (o->out != NULL)
		o->fmt = EXPO_PROMETHEUS;
	if ((rc = expose(path, flush_ns, o->fmt, o->out == NULL, &body,
	    &len)) != CLIENT_EXIT_OK) {
		free(body);
		return rc;
	}
	if ((fp = output_open(o->out)) == NULL) {
		free(body);
		return CLIENT_EXIT_FAILED;
	}
	if (len > 0)
		fwrite(body, 1, len, fp);
	free(body);
	return output_close(fp, o->out, CLIENT_EXIT_OK);
}

static const struct option metrics_longopts[] = {
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "output", required_argument, NULL, OPT_OUTPUT },
	{ "http", no_argument, NULL, OPT_HTTP },
	{ NULL, 0, NULL, 0 },
};

static const struct metrics_opts metrics_cmd_defaults = {
	.fmt = EXPO_OPENMETRICS,
};

const struct cmd_spec metrics_cmd = {
	.name = "metrics",
	.usage =
	    "usage: spyremon metrics [--format openmetrics|prometheus]\n"
	    "       spyremon metrics --output FILE\n"
	    "       spyremon metrics --http\n"
	    "\n"
	    "Prints each card's newest sample and the daemon's counters, from the\n"
	    "database opened read-only.\n"
	    "\n"
	    "      --format FORMAT   openmetrics (default) or prometheus (0.0.4)\n"
	    "      --output FILE     node_exporter's textfile format, atomically\n"
	    "      --http            answer one HTTP request (GET /metrics) on\n"
	    "                        stdin and stdout, as a socket-activated service\n",
	.exits = CMD_EXITS_BASE | CMD_EXIT(CLIENT_EXIT_DATABASE),
	.longopts = metrics_longopts,
	.operands = 0,
	.opts_size = sizeof(struct metrics_opts),
	.defaults = &metrics_cmd_defaults,
	.option = metrics_option,
	.run = metrics_run,
};
