/* ctl: a request over the control socket (contract in ctl.h). */
#include "ctl.h"

#include <err.h>
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "client.h"
#include "json.h"
#include "jsonw.h"
#include "proto.h"
#include "timeparse.h"

/* One call: where to, how long it may take, and where errors go. */
struct call {
	const char *path;
	int timeout_ms;
	char *why;		/* NULL: errors are printed; else written here */
	size_t whylen;
};

/* Say what went wrong: printed, or kept for the caller to word. */
static void __attribute__((format(printf, 2, 3)))
say(const struct call *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (c->why == NULL)
		vwarnx(fmt, ap);
	else
		vsnprintf(c->why, c->whylen, fmt, ap);
	va_end(ap);
}

/* Milliseconds left until deadline (monotonic ns), at least 0. */
static int
ms_left(uint64_t deadline)
{
	uint64_t now = now_monotonic_ns();

	if (now >= deadline)
		return 0;
	return (int)((deadline - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC);
}

static int
connect_error(const struct call *c, int error)
{
	const char *path = c->path;

	switch (error) {
	case ENOENT:
	case ECONNREFUSED:
		say(c, "cannot connect to %s: %s: is spyremond running?", path,
		    strerror(error));
		break;
	case EACCES:
	case EPERM:
		say(c, "cannot connect to %s: %s: are you in group spyremon?",
		    path, strerror(error));
		break;
	case EAGAIN:
	case EINPROGRESS:
	case ETIMEDOUT:
		say(c, "cannot connect to %s: spyremond did not accept within "
		    "%d s", path, CTL_TIMEOUT_MS / 1000);
		break;
	default:
		say(c, "cannot connect to %s: %s", path, strerror(error));
		break;
	}
	return CLIENT_EXIT_DAEMON;
}

/* A connected socket in *fd, or an exit status after saying why. */
static int
ctl_connect(const struct call *c, int *fd)
{
	const char *path = c->path;
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = CTL_TIMEOUT_MS / 1000,
	    .tv_usec = (CTL_TIMEOUT_MS % 1000) * 1000 };
	int s, error;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		say(c, "cannot connect to %s: the path is too long for a socket",
		    path);
		return CLIENT_EXIT_DAEMON;
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	if ((s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1) {
		say(c, "socket: %s", strerror(errno));
		return CLIENT_EXIT_DAEMON;
	}
	/* bounds a connect that waits for a full listen queue */
	setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(s, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		error = errno;
		close(s);
		return connect_error(c, error);
	}
	*fd = s;
	return CLIENT_EXIT_OK;
}

static int
send_all(int fd, const struct call *c, const unsigned char *buf, size_t len,
    uint64_t deadline)
{
	const char *path = c->path;
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };

	while (len > 0) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n > 0) {
			buf += n;
			len -= (size_t)n;
			continue;
		}
		if (n == -1 && errno != EAGAIN && errno != EINTR) {
			say(c, "%s: cannot send the request: %s", path,
			    strerror(errno));
			return -1;
		}
		if (poll(&pfd, 1, ms_left(deadline)) == 0) {
			say(c, "%s: spyremond did not take the request within "
			    "%d s", path, c->timeout_ms / 1000);
			return -1;
		}
	}
	return 0;
}

/* Read one line into a new NUL-terminated buffer *out (without the newline). */
static int
recv_line(int fd, const struct call *c, uint64_t deadline, char **out)
{
	const char *path = c->path;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap), *nl;
	int r;

	while (buf != NULL) {
		ssize_t n;

		if ((r = poll(&pfd, 1, ms_left(deadline))) == 0) {
			say(c, "%s: spyremond did not answer within %d s", path,
			    c->timeout_ms / 1000);
			break;
		}
		if (r == -1 && errno != EINTR) {
			say(c, "poll: %s", strerror(errno));
			break;
		}
		if (len + 1 == cap) {
			char *p;

			if (cap >= CTL_MAX_REPLY) {
				say(c, "%s: the reply is longer than %d bytes",
				    path, CTL_MAX_REPLY);
				break;
			}
			if ((p = realloc(buf, cap * 2)) == NULL)
				break;
			buf = p;
			cap *= 2;
		}
		n = recv(fd, buf + len, cap - len - 1, MSG_DONTWAIT);
		if (n == 0) {
			say(c, "%s: spyremond closed the connection without "
			    "answering", path);
			break;
		}
		if (n == -1) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			say(c, "%s: cannot read the reply: %s", path,
			    strerror(errno));
			break;
		}
		len += (size_t)n;
		buf[len] = '\0';
		if ((nl = memchr(buf, '\n', len)) != NULL) {
			*nl = '\0';
			*out = buf;
			return 0;
		}
	}
	free(buf);
	return -1;
}

/* The reply's verdict: 0 if ok, else an exit status after printing why. */
static int
check_reply(const struct call *c, yajl_val reply)
{
	const char *path = c->path;
	const char *code, *msg;
	bool ok;

	if (!json_bool(reply, "ok", &ok)) {
		say(c, "%s: the reply has no \"ok\"", path);
		return CLIENT_EXIT_FAILED;
	}
	if (ok)
		return CLIENT_EXIT_OK;
	code = json_str(reply, "error");
	msg = json_str(reply, "message");
	say(c, "%s", msg != NULL ? msg : code != NULL ? code : "request refused");
	if (code != NULL && strcmp(code, PROTO_E_BUSY) == 0)
		return CLIENT_EXIT_DAEMON;
	return CLIENT_EXIT_FAILED;
}

/*
 * The call: *reply is the daemon's answer whenever it gave one (also a
 * refusal, when keep is set), else NULL.
 */
static int
call(const struct call *c, yajl_gen g, bool keep, yajl_val *reply)
{
	uint64_t deadline = now_monotonic_ns() +
	    (uint64_t)c->timeout_ms * NSEC_PER_MSEC;
	const unsigned char *req;
	char *line = NULL, ebuf[256];
	size_t len;
	int fd, rc;

	*reply = NULL;
	if (yajl_gen_get_buf(g, &req, &len) != yajl_gen_status_ok)
		errx(CLIENT_EXIT_FAILED, "cannot build the request");
	if (len + 1 > PROTO_MAX_REQUEST) {
		say(c, "the request is %zu bytes, more than the %d the daemon "
		    "takes: shorten the metadata", len + 1, PROTO_MAX_REQUEST);
		return CLIENT_EXIT_USAGE;
	}
	if ((rc = ctl_connect(c, &fd)) != CLIENT_EXIT_OK)
		return rc;
	rc = CLIENT_EXIT_DAEMON;
	if (send_all(fd, c, req, len, deadline) == 0 &&
	    send_all(fd, c, (const unsigned char *)"\n", 1, deadline) == 0 &&
	    recv_line(fd, c, deadline, &line) == 0) {
		*reply = yajl_tree_parse(line, ebuf, sizeof(ebuf));
		if (*reply == NULL || !YAJL_IS_OBJECT(*reply)) {
			say(c, "%s: the reply is not a JSON object", c->path);
			rc = CLIENT_EXIT_FAILED;
		} else
			rc = check_reply(c, *reply);
	}
	close(fd);
	free(line);
	if (rc != CLIENT_EXIT_OK && !(keep && rc == CLIENT_EXIT_FAILED &&
	    *reply != NULL && YAJL_IS_OBJECT(*reply))) {
		yajl_tree_free(*reply);
		*reply = NULL;
	}
	return rc;
}

int
ctl_call(const char *path, yajl_gen g, yajl_val *reply)
{
	struct call c = { .path = path, .timeout_ms = CTL_TIMEOUT_MS };

	return call(&c, g, false, reply);
}

int
ctl_ask(const char *path, yajl_gen g, int timeout_ms, char *why,
    size_t whylen, yajl_val *reply)
{
	struct call c = { .path = path, .timeout_ms = timeout_ms, .why = why,
	    .whylen = whylen };

	if (whylen > 0)
		why[0] = '\0';
	return call(&c, g, true, reply);
}

yajl_gen
ctl_request_new(const char *cmd)
{
	yajl_gen g = json_gen_new(false);

	yajl_gen_map_open(g);
	jsonw_str(g, "v");
	yajl_gen_integer(g, PROTO_VERSION);
	jsonw_str(g, "cmd");
	jsonw_str(g, cmd);
	jsonw_str(g, "expires_ns");
	yajl_gen_integer(g, now_realtime_ns() + CTL_TIMEOUT_MS *
	    (int64_t)NSEC_PER_MSEC);
	return g;
}

int
ctl_request_send(struct client *cl, yajl_gen g, yajl_val *reply)
{
	const char *path;
	int rc;

	yajl_gen_map_close(g);
	if ((path = client_socket(cl)) == NULL)
		rc = CLIENT_EXIT_FAILED;
	else
		rc = ctl_call(path, g, reply);
	yajl_gen_free(g);
	return rc;
}
