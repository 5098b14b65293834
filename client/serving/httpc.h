/*
 * httpc: plain-HTTP requests to a server given by URL
 * ("http://HOST[:PORT][/PREFIX]"; HOST a name, an IPv4 address or an
 * IPv6 one in brackets; port 80 by default), each answer read whole
 * within a deadline.  No TLS, no redirects: a served model's own port.
 * One request at a time (httpc_request), or several at once on
 * nonblocking sockets driven by the caller's poll (struct httpc_conn).
 */
#ifndef SPYREMON_HTTPC_H
#define SPYREMON_HTTPC_H

#include <stddef.h>
#include <stdint.h>

struct addrinfo;

#define HTTPC_WHY_LEN	256
#define HTTPC_BODY_MAX	(16u << 20)	/* bytes of an answer's body */

struct httpc_answer {
	int status;		/* the HTTP status */
	char *body;		/* NUL-terminated (free it); chunks joined */
	size_t len;
};

/*
 * Whether url is one httpc takes; if not, why says so.  A trailing '/'
 * of the prefix is allowed.
 */
int httpc_url_ok(const char *url, char *why, size_t whylen);

/*
 * method ("GET" or "POST", a POST with an empty body) url + path within
 * timeout_ms: 0 with *out filled (any status), or -1 with why saying what
 * failed (refused, timed out, closed without an answer, malformed).
 */
int httpc_request(const char *method, const char *url, const char *path,
    int timeout_ms, struct httpc_answer *out, char *why, size_t whylen);

/* httpc_request with a JSON body (body NULL: none, as httpc_request). */
int httpc_request_body(const char *method, const char *url,
    const char *path, const char *body, size_t blen, int timeout_ms,
    struct httpc_answer *out, char *why, size_t whylen);

void httpc_answer_free(struct httpc_answer *a);

/* ---- requests in flight together ---- */

enum httpc_state {
	HTTPC_CONNECTING, HTTPC_SENDING, HTTPC_RECEIVING, HTTPC_DONE,
	HTTPC_FAILED,
};

struct httpc_conn {
	enum httpc_state state;
	int	 fd;			/* -1 once done or failed */
	int64_t	 deadline;		/* httpc_now_ms() by which it is done */
	int	 timeout_ms;
	struct httpc_answer answer;	/* HTTPC_DONE: the answer */
	char	 why[HTTPC_WHY_LEN];	/* HTTPC_FAILED: why */
	/* the rest is httpc.c's */
	char	 where[640];		/* url and path, for messages */
	char	 host[256], port[8];
	struct addrinfo *res, *next;
	char	*req, *buf;
	size_t	 reqlen, sent, len, cap;
};

/* CLOCK_MONOTONIC in ms, the clock of a conn's deadline. */
int64_t httpc_now_ms(void);

/*
 * Begin method url + path (body as httpc_request_body) on c, due within
 * timeout_ms: 0 with c under way (or already connected), -1 with c->why
 * (a bad URL, a name not found, refused at once).  httpc_conn_free(c)
 * either way.
 */
int httpc_start(struct httpc_conn *c, const char *method, const char *url,
    const char *path, const char *body, size_t blen, int timeout_ms);

/* The poll events c waits for: POLLOUT or POLLIN; 0 once done or failed. */
short httpc_events(const struct httpc_conn *c);

/*
 * Go on with c after poll gave revents on c->fd: 1 while under way, 0
 * when c->answer holds the whole answer (any status), -1 with c->why.
 */
int httpc_step(struct httpc_conn *c, short revents);

/* c's deadline passed: fail it, why saying at what stage (-1). */
int httpc_timeout(struct httpc_conn *c);

/* Close c's socket and free what it holds (its answer too). */
void httpc_conn_free(struct httpc_conn *c);

#endif
