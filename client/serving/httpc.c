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

int64_t
httpc_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Fail c with why; its socket closed. */
static int
conn_fail(struct httpc_conn *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->why, sizeof(c->why), fmt, ap);
	va_end(ap);
	if (c->fd != -1)
		close(c->fd);
	c->fd = -1;
	c->state = HTTPC_FAILED;
	return -1;
}

/*
 * Connect c to its next address, nonblocking: HTTPC_CONNECTING, or
 * HTTPC_SENDING once connected; -1 when no address is left (c->why says
 * why the last one failed).
 */
static int
dial_next(struct httpc_conn *c)
{
	while (c->next != NULL) {
		struct addrinfo *ai = c->next;

		c->next = ai->ai_next;
		c->fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK |
		    SOCK_CLOEXEC, ai->ai_protocol);
		if (c->fd == -1)
			continue;
		if (connect(c->fd, ai->ai_addr, ai->ai_addrlen) == 0) {
			c->state = HTTPC_SENDING;
			return 0;
		}
		if (errno == EINPROGRESS) {
			c->state = HTTPC_CONNECTING;
			return 0;
		}
		snprintf(c->why, sizeof(c->why), "%.180s port %s: %s", c->host,
		    c->port, strerror(errno));
		close(c->fd);
		c->fd = -1;
	}
	c->state = HTTPC_FAILED;
	return -1;
}

int
httpc_start(struct httpc_conn *c, const char *method, const char *url,
    const char *path, const char *body, size_t blen, int timeout_ms)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM };
	const char *lb, *rb;
	struct url u;
	int n, rc;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->state = HTTPC_FAILED;
	c->timeout_ms = timeout_ms;
	c->deadline = httpc_now_ms() + timeout_ms;
	snprintf(c->where, sizeof(c->where), "%s%s", url, path);
	if (url_parse(url, &u, c->why, sizeof(c->why)) == -1)
		return -1;
	snprintf(c->host, sizeof(c->host), "%s", u.host);
	snprintf(c->port, sizeof(c->port), "%s", u.port);
	lb = strchr(u.host, ':') != NULL ? "[" : "";
	rb = *lb != '\0' ? "]" : "";
#define HEAD	"%s %s%s HTTP/1.1\r\nHost: %s%s%s:%s\r\nAccept: */*\r\n" \
	"User-Agent: spyremon\r\nConnection: close\r\n%sContent-Length: " \
	"%zu\r\n\r\n"
	n = snprintf(NULL, 0, HEAD, method, u.prefix, path, lb, u.host, rb,
	    u.port, body != NULL ? "Content-Type: application/json\r\n" : "",
	    blen);
	if (n < 0 || (c->req = malloc((size_t)n + blen + 1)) == NULL)
		return conn_fail(c, "out of memory");
	(void)snprintf(c->req, (size_t)n + 1, HEAD, method, u.prefix, path, lb,
	    u.host, rb, u.port, body != NULL ?
	    "Content-Type: application/json\r\n" : "", blen);
#undef HEAD
	if (blen > 0)
		memcpy(c->req + n, body, blen);
	c->reqlen = (size_t)n + blen;
	if ((rc = getaddrinfo(u.host, u.port, &hints, &c->res)) != 0) {
		c->res = NULL;
		return conn_fail(c, "%s: %s", u.host, gai_strerror(rc));
	}
	c->next = c->res;
	snprintf(c->why, sizeof(c->why), "%.180s port %s: no address", u.host,
	    u.port);
	return dial_next(c);
}

short
httpc_events(const struct httpc_conn *c)
{
	switch (c->state) {
	case HTTPC_CONNECTING:
	case HTTPC_SENDING:
		return POLLOUT;
	case HTTPC_RECEIVING:
		return POLLIN;
	default:
		return 0;
	}
}

int
httpc_timeout(struct httpc_conn *c)
{
	switch (c->state) {
	case HTTPC_CONNECTING:
		return conn_fail(c, "%s port %s: no connection within the "
		    "time allowed", c->host, c->port);
	case HTTPC_SENDING:
		return conn_fail(c, "%s: the request could not be sent within "
		    "the time allowed", c->where);
	case HTTPC_RECEIVING:
		return conn_fail(c, "%s: no whole answer within %d ms",
		    c->where, c->timeout_ms);
	default:
		return c->state == HTTPC_DONE ? 0 : -1;
	}
}

/* The whole answer is in c->buf: split it into c->answer. */
static int
conn_answer(struct httpc_conn *c)
{
	struct httpc_answer *out = &c->answer;
	bool chunked = false;
	long clen = -1;
	const char *v, *sep;
	size_t vlen, hlen;

	close(c->fd);
	c->fd = -1;
	if (c->len == 0)
		return conn_fail(c, "%s: the server closed the connection "
		    "without an answer", c->where);
	c->buf[c->len] = '\0';
	if ((sep = strstr(c->buf, "\r\n\r\n")) != NULL) {
		hlen = (size_t)(sep - c->buf);
		if ((v = header(c->buf, hlen, "Transfer-Encoding", &vlen)) !=
		    NULL && vlen == 7 && strncasecmp(v, "chunked", 7) == 0)
			chunked = true;
		if ((v = header(c->buf, hlen, "Content-Length", &vlen)) != NULL)
			clen = strtol(v, NULL, 10);
	}
	if (parse_answer(c->buf, c->len, out, c->why, sizeof(c->why)) == -1)
		return conn_fail(c, "%s: not an HTTP answer", c->where);
	c->buf = NULL;		/* out->body now */
	if (chunked && !dechunk(out->body, &out->len)) {
		httpc_answer_free(out);
		return conn_fail(c, "%s: a malformed chunked body", c->where);
	}
	if (!chunked && clen >= 0) {
		if ((size_t)clen > out->len) {
			httpc_answer_free(out);
			return conn_fail(c, "%s: the answer ends before its "
			    "Content-Length", c->where);
		}
		out->len = (size_t)clen;
		out->body[out->len] = '\0';
	}
	c->state = HTTPC_DONE;
	return 0;
}

/* Read what there is: 1 while more is to come, else as httpc_step. */
static int
conn_read(struct httpc_conn *c)
{
	const char *v, *sep;
	size_t vlen;

	for (;;) {
		ssize_t r;

		if (c->cap - c->len < 4096) {
			char *nb;

			if (c->cap > HTTPC_BODY_MAX + 65536)
				return conn_fail(c, "%s: answer over %u bytes",
				    c->where, HTTPC_BODY_MAX);
			c->cap = c->cap ? c->cap * 2 : 16384;
			if ((nb = realloc(c->buf, c->cap + 1)) == NULL)
				return conn_fail(c, "out of memory");
			c->buf = nb;
		}
		r = recv(c->fd, c->buf + c->len, c->cap - c->len, 0);
		if (r > 0) {
			c->len += (size_t)r;
			/* stop at Content-Length: a server may keep it open */
			c->buf[c->len] = '\0';
			if ((sep = strstr(c->buf, "\r\n\r\n")) != NULL &&
			    (v = header(c->buf, (size_t)(sep - c->buf),
			    "Content-Length", &vlen)) != NULL && c->len >=
			    (size_t)(sep - c->buf) + 4 + strtoul(v, NULL, 10))
				return conn_answer(c);
			continue;
		}
		if (r == 0)
			return conn_answer(c);
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN)
			return 1;
		if (errno == ECONNRESET && c->len == 0)
			return conn_answer(c);	/* said as no answer */
		return conn_fail(c, "%s: %s", c->where, strerror(errno));
	}
}

int
httpc_step(struct httpc_conn *c, short revents)
{
	int soerr = 0;
	socklen_t sl = sizeof(soerr);

	if (c->state == HTTPC_CONNECTING) {
		if (revents == 0)
			return 1;
		if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == -1)
			soerr = errno;
		if (soerr != 0) {
			snprintf(c->why, sizeof(c->why), "%.180s port %s: %s",
			    c->host, c->port, strerror(soerr));
			close(c->fd);
			c->fd = -1;
			return dial_next(c) == -1 ? -1 : 1;
		}
		c->state = HTTPC_SENDING;
	}
	while (c->state == HTTPC_SENDING) {
		ssize_t w = send(c->fd, c->req + c->sent, c->reqlen - c->sent,
		    MSG_NOSIGNAL);

		if (w > 0 && (c->sent += (size_t)w) == c->reqlen)
			c->state = HTTPC_RECEIVING;
		else if (w == -1 && errno == EAGAIN)
			return 1;
		else if (w == -1 && errno != EINTR)
			return conn_fail(c, "%s: %s", c->where, strerror(errno));
	}
	if (c->state == HTTPC_RECEIVING)
		return conn_read(c);
	return c->state == HTTPC_DONE ? 0 : -1;
}

void
httpc_conn_free(struct httpc_conn *c)
{
	if (c->fd != -1)
		close(c->fd);
	c->fd = -1;
	if (c->res != NULL)
		freeaddrinfo(c->res);
	c->res = c->next = NULL;
	free(c->req);
	free(c->buf);
	c->req = c->buf = NULL;
	httpc_answer_free(&c->answer);
}

int
httpc_request_body(const char *method, const char *url, const char *path,
    const char *body, size_t blen, int timeout_ms, struct httpc_answer *out,
    char *why, size_t whylen)
{
	struct httpc_conn c;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = httpc_start(&c, method, url, path, body, blen, timeout_ms) == -1 ?
	    -1 : 1;
	while (rc == 1) {
		struct pollfd pfd = { .fd = c.fd, .events = httpc_events(&c) };
		int64_t left = c.deadline - httpc_now_ms();
		int r;

		if (left <= 0) {
			rc = httpc_timeout(&c);
			break;
		}
		if ((r = poll(&pfd, 1, (int)left)) == -1 && errno != EINTR) {
			rc = conn_fail(&c, "poll: %s", strerror(errno));
			break;
		}
		if (r > 0)
			rc = httpc_step(&c, pfd.revents);
	}
	if (rc == 0) {
		*out = c.answer;
		c.answer.body = NULL;
	} else
		snprintf(why, whylen, "%s", c.why);
	httpc_conn_free(&c);
	return rc == 0 ? 0 : -1;
}

int
httpc_request(const char *method, const char *url, const char *path,
    int timeout_ms, struct httpc_answer *out, char *why, size_t whylen)
{
	return httpc_request_body(method, url, path, NULL, 0, timeout_ms, out,
	    why, whylen);
}

void
httpc_answer_free(struct httpc_answer *a)
{
	free(a->body);
	a->body = NULL;
	a->len = 0;
}
