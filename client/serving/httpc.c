/*
 * httpc: an HTTP/1.1 request with "Connection: close", the answer read to
 * the end of the connection (or its Content-Length), chunked bodies
 * joined.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "httpc.h"

struct url {
	char host[256];
	char port[8];
	char prefix[512];
};

static int
fail(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return -1;
}

static int
url_parse(const char *url, struct url *u, char *why, size_t whylen)
{
	const char *p, *hend, *slash;
	size_t n;

	if (strncmp(url, "http://", 7) != 0)
		return fail(why, whylen, "%s: not an http:// URL", url);
	p = url + 7;
	slash = strchr(p, '/');
	hend = slash != NULL ? slash : p + strlen(p);
	snprintf(u->port, sizeof(u->port), "80");
	if (*p == '[') {
		const char *rb = memchr(p, ']', (size_t)(hend - p));

		if (rb == NULL)
			return fail(why, whylen, "%s: no ']' after the IPv6 "
			    "address", url);
		n = (size_t)(rb - p - 1);
		if (n == 0 || n >= sizeof(u->host))
			return fail(why, whylen, "%s: bad host", url);
		memcpy(u->host, p + 1, n);
		u->host[n] = '\0';
		p = rb + 1;
	} else {
		const char *colon = memchr(p, ':', (size_t)(hend - p));
		const char *e = colon != NULL ? colon : hend;

		n = (size_t)(e - p);
		if (n == 0 || n >= sizeof(u->host))
			return fail(why, whylen, "%s: bad host", url);
		memcpy(u->host, p, n);
		u->host[n] = '\0';
		p = e;
	}
	if (p < hend) {
		char *end;
		long port;

		if (*p != ':')
			return fail(why, whylen, "%s: junk after the host", url);
		port = strtol(p + 1, &end, 10);
		if (end != hend || port < 1 || port > 65535 || p[1] < '0' ||
		    p[1] > '9')
			return fail(why, whylen, "%s: bad port", url);
		snprintf(u->port, sizeof(u->port), "%ld", port);
	}
	n = strlen(hend);
	while (n > 0 && hend[n - 1] == '/')
		n--;
	if (n >= sizeof(u->prefix))
		return fail(why, whylen, "%s: path too long", url);
	memcpy(u->prefix, hend, n);
	u->prefix[n] = '\0';
	for (const char *c = u->host; *c != '\0'; c++)
		if (*c <= ' ' || *c == '@' || *c == '?' || *c == '#')
			return fail(why, whylen, "%s: bad host", url);
	for (const char *c = u->prefix; *c != '\0'; c++)
		if (*c <= ' ' || *c > '~' || *c == '?' || *c == '#')
			return fail(why, whylen, "%s: the path may hold no "
			    "spaces, query or fragment", url);
	return 0;
}

int
httpc_url_ok(const char *url, char *why, size_t whylen)
{
	struct url u;

	return url_parse(url, &u, why, whylen);
}

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait for events on fd until deadline; false when it passed. */
static bool
wait_fd(int fd, short events, int64_t deadline)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	int64_t left;
	int r;

	for (;;) {
		if ((left = deadline - now_ms()) <= 0)
			return false;
		r = poll(&pfd, 1, (int)left);
		if (r > 0)
			return true;
		if (r == 0)
			return false;
		if (errno != EINTR)
			return false;
	}
}

/* A socket connected to u within deadline, or -1 with why. */
static int
dial(const struct url *u, int64_t deadline, char *why, size_t whylen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *ai;
	int fd = -1, rc, soerr = 0;
	socklen_t sl = sizeof(soerr);

	if ((rc = getaddrinfo(u->host, u->port, &hints, &res)) != 0)
		return fail(why, whylen, "%s: %s", u->host, gai_strerror(rc));
	fail(why, whylen, "%s port %s: no address", u->host, u->port);
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK |
		    SOCK_CLOEXEC, ai->ai_protocol);
		if (fd == -1)
			continue;
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		if (errno == EINPROGRESS) {
			if (!wait_fd(fd, POLLOUT, deadline)) {
				fail(why, whylen, "%s port %s: no connection "
				    "within the time allowed", u->host, u->port);
				close(fd);
				fd = -1;
				continue;
			}
			if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr,
			    &sl) == 0 && soerr == 0)
				break;
			errno = soerr;
		}
		fail(why, whylen, "%s port %s: %s", u->host, u->port,
		    strerror(errno));
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	return fd;
}

/* Join the chunks of body[0..len) in place; false if malformed. */
static bool
dechunk(char *body, size_t *len)
{
	size_t in = 0, out = 0;

	for (;;) {
		char *end;
		unsigned long n;
		char *eol = memchr(body + in, '\n', *len - in);

		if (eol == NULL)
			return false;
		n = strtoul(body + in, &end, 16);
		if (end == body + in)
			return false;
		in = (size_t)(eol - body) + 1;
		if (n == 0)
			break;
		if (n > *len - in)
			return false;
		memmove(body + out, body + in, n);
		out += n;
		in += n;
		if (in < *len && body[in] == '\r')
			in++;
		if (in < *len && body[in] == '\n')
			in++;
	}
	*len = out;
	body[out] = '\0';
	return true;
}

/* The value of header name in head[0..hlen), or NULL; *vlen its length. */
static const char *
header(const char *head, size_t hlen, const char *name, size_t *vlen)
{
	size_t nl = strlen(name);
	const char *p = memchr(head, '\n', hlen), *end = head + hlen;

	while (p != NULL && p + 1 < end) {
		const char *line = p + 1, *eol = memchr(line, '\n',
		    (size_t)(end - line));
		const char *le = eol != NULL ? eol : end;

		if ((size_t)(le - line) > nl && line[nl] == ':' &&
		    strncasecmp(line, name, nl) == 0) {
			const char *v = line + nl + 1;

			while (v < le && (*v == ' ' || *v == '\t'))
				v++;
			while (le > v && (le[-1] == '\r' || le[-1] == ' '))
				le--;
			*vlen = (size_t)(le - v);
			return v;
		}
		p = eol;
	}
	return NULL;
}

/* Split the answer buf[0..len) into *out; -1 with why if malformed. */
static int
parse_answer(char *buf, size_t len, struct httpc_answer *out, char *why,
    size_t whylen)
{
	char *sep = memmem(buf, len, "\r\n\r\n", 4);
	size_t hlen, skip = 4;
	int status;

	if (sep == NULL) {
		sep = memmem(buf, len, "\n\n", 2);
		skip = 2;
	}
	if (sep == NULL)
		return fail(why, whylen, "the answer ends within its head");
	hlen = (size_t)(sep - buf);
	if (len < 12 || strncmp(buf, "HTTP/1.", 7) != 0 ||
	    sscanf(buf + 8, " %3d", &status) != 1 || status < 100)
		return fail(why, whylen, "not an HTTP answer");
	out->status = status;
	out->len = len - hlen - skip;
	memmove(buf, sep + skip, out->len);
	buf[out->len] = '\0';
	out->body = buf;
	return 0;
}

int
httpc_request(const char *method, const char *url, const char *path,
    int timeout_ms, struct httpc_answer *out, char *why, size_t whylen)
{
	int64_t deadline = now_ms() + timeout_ms;
	char req[1024], *buf = NULL;
	size_t len = 0, cap = 0, vlen, hlen;
	bool chunked = false;
	long clen = -1;
	const char *v, *sep;
	struct url u;
	int fd, n;

	memset(out, 0, sizeof(*out));
	if (url_parse(url, &u, why, whylen) == -1)
		return -1;
	n = snprintf(req, sizeof(req), "%s %s%s HTTP/1.1\r\nHost: %s%s%s:%s\r\n"
	    "Accept: */*\r\nUser-Agent: spyremon\r\nConnection: close\r\n%s"
	    "\r\n", method, u.prefix, path, strchr(u.host, ':') ? "[" : "",
	    u.host, strchr(u.host, ':') ? "]" : "", u.port,
	    strcmp(method, "POST") == 0 ? "Content-Length: 0\r\n" : "");
	if (n < 0 || (size_t)n >= sizeof(req))
		return fail(why, whylen, "%s: URL too long", url);
	if ((fd = dial(&u, deadline, why, whylen)) == -1)
		return -1;
	for (size_t sent = 0; sent < (size_t)n;) {
		ssize_t w = send(fd, req + sent, (size_t)n - sent, MSG_NOSIGNAL);

		if (w > 0) {
			sent += (size_t)w;
			continue;
		}
		if (w == -1 && errno != EAGAIN && errno != EINTR) {
			close(fd);
			return fail(why, whylen, "%s: %s", url, strerror(errno));
		}
		if (!wait_fd(fd, POLLOUT, deadline)) {
			close(fd);
			return fail(why, whylen, "%s: the request could not be "
			    "sent within the time allowed", url);
		}
	}
	for (;;) {
		ssize_t r;

		if (cap - len < 4096) {
			if (cap > HTTPC_BODY_MAX + 65536) {
				free(buf);
				close(fd);
				return fail(why, whylen, "%s%s: answer over %u "
				    "bytes", url, path, HTTPC_BODY_MAX);
			}
			cap = cap ? cap * 2 : 16384;
			if ((buf = realloc(buf, cap + 1)) == NULL) {
				close(fd);
				return fail(why, whylen, "out of memory");
			}
		}
		r = recv(fd, buf + len, cap - len, 0);
		if (r > 0) {
			len += (size_t)r;
			/* stop at Content-Length: a server may keep it open */
			buf[len] = '\0';
			if ((sep = strstr(buf, "\r\n\r\n")) != NULL &&
			    (v = header(buf, (size_t)(sep - buf),
			    "Content-Length", &vlen)) != NULL &&
			    len >= (size_t)(sep - buf) + 4 + strtoul(v, NULL, 10))
				break;
			continue;
		}
		if (r == 0)
			break;
		if (errno == EINTR || errno == EAGAIN) {
			if (!wait_fd(fd, POLLIN, deadline)) {
				free(buf);
				close(fd);
				return fail(why, whylen, "%s%s: no whole answer "
				    "within %d ms", url, path, timeout_ms);
			}
			continue;
		}
		if (errno == ECONNRESET && len == 0)
			break;	/* said below as no answer */
		free(buf);
		close(fd);
		return fail(why, whylen, "%s%s: %s", url, path, strerror(errno));
	}
	close(fd);
	if (len == 0) {
		free(buf);
		return fail(why, whylen, "%s%s: the server closed the "
		    "connection without an answer", url, path);
	}
	buf[len] = '\0';
	if ((sep = strstr(buf, "\r\n\r\n")) != NULL) {
		hlen = (size_t)(sep - buf);
		if ((v = header(buf, hlen, "Transfer-Encoding", &vlen)) != NULL &&
		    vlen == 7 && strncasecmp(v, "chunked", 7) == 0)
			chunked = true;
		if ((v = header(buf, hlen, "Content-Length", &vlen)) != NULL)
			clen = strtol(v, NULL, 10);
	}
	if (parse_answer(buf, len, out, why, whylen) == -1) {
		free(buf);
		return fail(why, whylen, "%s%s: %s", url, path, "not an HTTP "
		    "answer");
	}
	if (chunked && !dechunk(out->body, &out->len)) {
		httpc_answer_free(out);
		return fail(why, whylen, "%s%s: a malformed chunked body", url,
		    path);
	}
	if (!chunked && clen >= 0) {
		if ((size_t)clen > out->len) {
			httpc_answer_free(out);
			return fail(why, whylen, "%s%s: the answer ends before "
			    "its Content-Length", url, path);
		}
		out->len = (size_t)clen;
		out->body[out->len] = '\0';
	}
	return 0;
}

void
httpc_answer_free(struct httpc_answer *a)
{
	free(a->body);
	a->body = NULL;
	a->len = 0;
}
