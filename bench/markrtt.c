/*
 * Round-trip time of the control socket's requests, as a client sees it.
 *
 *   make B=build bench                 (builds build/bench-markrtt)
 *   build/bench-markrtt SOCKET PAIRS               the raw protocol
 *   build/bench-markrtt -x SPYREMON SOCKET PAIRS   the spyremon command
 *
 * Raw: every request is one connection, as spyremon makes it: socket(),
 * connect(), write the JSON line, read up to the reply's newline, close().
 * The clock runs from socket() to close().  PAIRS no-op "hello" requests
 * come first (the floor: the daemon's accept and reply without a database
 * write), then PAIRS begin/end pairs, each end naming the id its begin
 * returned.
 *
 * With -x, each request is a whole "SPYREMON --socket SOCKET mark begin
 * --tag T" or "mark end --id N" process: fork, exec, its work, exit and
 * waitpid are all timed.  PAIRS runs of "SPYREMON --version" come first,
 * the floor: starting the program, its dynamic linking and its exit.
 *
 * Prints p50, p99, mean and max of each kind, in microseconds.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define REPLY_MAX	65536
#define TAG		"bench-rtt"

enum kind { K_HELLO, K_BEGIN, K_END, K_N };

static const char *const raw_name[K_N] = { "hello", "begin", "end" };
static const char *const cli_name[K_N] = { "--version", "begin", "end" };

struct series {
	double *us;
	size_t n;
};

static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/*
 * Send one request line on a new connection; the reply, NUL-terminated, in
 * buf.  True if it was answered ok, false if refused with "busy" (the
 * daemon's per-uid bound on ended windows still being stored); any other
 * refusal ends the program.
 */
static bool
ask(const char *path, const char *req, char *buf, size_t len)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	size_t got = 0, reqlen = strlen(req);
	ssize_t r;
	int fd;

	if (strlen(path) >= sizeof(sun.sun_path))
		errx(1, "%s: path too long", path);
	memcpy(sun.sun_path, path, strlen(path) + 1);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		err(1, "socket");
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1)
		err(1, "connect %s", path);
	if (write(fd, req, reqlen) != (ssize_t)reqlen)
		err(1, "write");
	while (got == 0 || memchr(buf, '\n', got) == NULL) {
		if (got + 1 >= len)
			errx(1, "reply too long");
		if ((r = read(fd, buf + got, len - 1 - got)) == -1 && errno == EINTR)
			continue;
		if (r <= 0)
			errx(1, "the daemon closed without a reply to %s", req);
		got += (size_t)r;
	}
	buf[got] = '\0';
	close(fd);
	if (strstr(buf, "\"ok\":true") != NULL)
		return true;
	if (strstr(buf, "\"error\":\"busy\"") != NULL)
		return false;
	errx(1, "%s -> %s", req, buf);
}

/* Begins refused with busy, retried after BUSY_PAUSE_US, not timed. */
static size_t busy_refusals;
#define BUSY_PAUSE_US	5000

/* The "id" of a begin reply. */
static int64_t
reply_id(const char *reply)
{
	const char *p = strstr(reply, "\"id\":");

	if (p == NULL)
		errx(1, "no id in %s", reply);
	return strtoll(p + 5, NULL, 10);
}

static void
record(struct series *s, double us)
{
	s->us[s->n++] = us;
}

static void
run_raw(const char *path, size_t pairs, struct series *s)
{
	char reply[REPLY_MAX], req[256];
	double t0;
	int64_t id;

	for (size_t i = 0; i < pairs; i++) {
		t0 = now_us();
		if (!ask(path, "{\"v\":1,\"cmd\":\"hello\"}\n", reply,
		    sizeof(reply)))
			errx(1, "hello -> %s", reply);
		record(&s[K_HELLO], now_us() - t0);
	}
	for (size_t i = 0; i < pairs; i++) {
		t0 = now_us();
		while (!ask(path, "{\"v\":1,\"cmd\":\"begin\",\"tag\":\""
		    TAG "\",\"meta\":{\"commit\":\"abc123\"}}\n", reply,
		    sizeof(reply))) {
			busy_refusals++;
			usleep(BUSY_PAUSE_US);
			t0 = now_us();
		}
		record(&s[K_BEGIN], now_us() - t0);
		id = reply_id(reply);
		snprintf(req, sizeof(req), "{\"v\":1,\"cmd\":\"end\",\"id\":%"
		    PRId64 "}\n", id);
		t0 = now_us();
		if (!ask(path, req, reply, sizeof(reply)))
			errx(1, "%s -> %s", req, reply);
		record(&s[K_END], now_us() - t0);
	}
}

/* Run argv to its exit, its stdout in out; false if it failed. */
static bool
run_process(char *const argv[], char *out, size_t len)
{
	size_t got = 0;
	ssize_t r;
	pid_t pid;
	int p[2], status;

	if (pipe2(p, O_CLOEXEC) == -1)
		err(1, "pipe");
	if ((pid = fork()) == -1)
		err(1, "fork");
	if (pid == 0) {
		dup2(p[1], STDOUT_FILENO);
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	while ((r = read(p[0], out + got, len - 1 - got)) > 0 ||
	    (r == -1 && errno == EINTR))
		got += r > 0 ? (size_t)r : 0;
	out[got] = '\0';
	close(p[0]);
	while (waitpid(pid, &status, 0) == -1)
		if (errno != EINTR)
			err(1, "waitpid");
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void
run_cli(char *prog, char *path, size_t pairs, struct series *s)
{
	static char o_socket[] = "--socket", mark[] = "mark", begin[] = "begin",
	    end[] = "end", o_tag[] = "--tag", tag[] = TAG, o_meta[] = "--meta",
	    meta[] = "commit=abc123", o_id[] = "--id", o_version[] = "--version";
	char out[4096], idbuf[32];
	char *version_argv[] = { prog, o_version, NULL };
	char *begin_argv[] = { prog, o_socket, path, mark, begin, o_tag, tag,
	    o_meta, meta, NULL };
	char *end_argv[] = { prog, o_socket, path, mark, end, o_id, idbuf, NULL };
	double t0;

	for (size_t i = 0; i < pairs; i++) {
		t0 = now_us();
		if (!run_process(version_argv, out, sizeof(out)))
			errx(1, "%s --version failed", prog);
		record(&s[K_HELLO], now_us() - t0);
	}
	for (size_t i = 0; i < pairs; i++) {
		t0 = now_us();
		if (!run_process(begin_argv, out, sizeof(out)))
			errx(1, "%s mark begin failed", prog);
		record(&s[K_BEGIN], now_us() - t0);
		snprintf(idbuf, sizeof(idbuf), "%lld", strtoll(out, NULL, 10));
		t0 = now_us();
		if (!run_process(end_argv, out, sizeof(out)))
			errx(1, "%s mark end --id %s failed", prog, idbuf);
		record(&s[K_END], now_us() - t0);
	}
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted v. */
static double
percentile(const double *v, size_t n, double p)
{
	size_t k = (size_t)(p / 100.0 * (double)n + 0.999999);

	return v[k == 0 ? 0 : k - 1];
}

static void
report(const char *mode, const char *name, struct series *s)
{
	double sum = 0.0;

	if (s->n == 0)
		return;
	qsort(s->us, s->n, sizeof(*s->us), cmp_double);
	for (size_t i = 0; i < s->n; i++)
		sum += s->us[i];
	printf("%s %-9s n=%-5zu p50 %8.1f us  p99 %8.1f us  mean %8.1f us  "
	    "max %8.1f us\n", mode, name, s->n,
	    percentile(s->us, s->n, 50), percentile(s->us, s->n, 99),
	    sum / (double)s->n, s->us[s->n - 1]);
}

int
main(int argc, char *argv[])
{
	struct series s[K_N];
	char *prog = NULL;
	size_t pairs;
	int ch;

	while ((ch = getopt(argc, argv, "x:")) != -1) {
		switch (ch) {
		case 'x':
			prog = optarg;
			break;
		default:
			goto usage;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc != 2 || (pairs = strtoul(argv[1], NULL, 10)) == 0)
		goto usage;
	for (int k = 0; k < K_N; k++) {
		if ((s[k].us = calloc(pairs, sizeof(double))) == NULL)
			err(1, "calloc");
		s[k].n = 0;
	}
	if (prog != NULL)
		run_cli(prog, argv[0], pairs, s);
	else
		run_raw(argv[0], pairs, s);
	for (int k = 0; k < K_N; k++) {
		report(prog != NULL ? "cli" : "raw", prog != NULL ?
		    cli_name[k] : raw_name[k], &s[k]);
		free(s[k].us);
	}
	if (prog == NULL)
		printf("raw begins refused busy and retried (untimed): %zu\n",
		    busy_refusals);
	return 0;
usage:
	fprintf(stderr, "usage: bench-markrtt [-x SPYREMON] SOCKET PAIRS\n");
	return 2;
}
