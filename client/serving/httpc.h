/*
 * httpc: one plain-HTTP request to a server given by URL
 * ("http://HOST[:PORT][/PREFIX]"; HOST a name, an IPv4 address or an
 * IPv6 one in brackets; port 80 by default), the whole answer read within
 * a deadline.  No TLS, no redirects: a served model's own port.
 */
#ifndef SPYREMON_HTTPC_H
#define SPYREMON_HTTPC_H

#include <stddef.h>

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

void httpc_answer_free(struct httpc_answer *a);

#endif
