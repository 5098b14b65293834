/*
 * http: the one HTTP/1.x request "spyremon metrics --http" answers, in the
 * inetd style (the request on stdin, the answer on stdout, then exit).
 *
 * The parser is pure and takes the bytes read so far; it accepts CRLF or
 * bare LF line ends, ignores the body (a GET has none) and every header
 * but Accept.  Limits: a request line of HTTP_LINE_MAX bytes, a head
 * (request line and headers) of HTTP_HEAD_MAX bytes, HTTP_HEADERS_MAX
 * header lines.
 */
#ifndef SPYREMON_HTTP_H
#define SPYREMON_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#define HTTP_LINE_MAX		2048
#define HTTP_HEAD_MAX		8192
#define HTTP_HEADERS_MAX	64
#define HTTP_ACCEPT_MAX		1024
#define HTTP_TIMEOUT_MS		10000	/* to read the whole head */

enum http_method { HTTP_GET, HTTP_HEAD };

struct http_request {
	enum http_method method;
	char path[HTTP_LINE_MAX];	/* the target up to '?' */
	int minor;			/* HTTP/1.<minor> */
	char accept[HTTP_ACCEPT_MAX];	/* "" if none; several are joined by "," */
};

/*
 * Parse the head in buf[0..len).  Returns 0 once the head is complete and
 * valid (*req filled), -1 if more bytes are needed, or the HTTP status to
 * refuse it with: 400 malformed, 405 a method but GET and HEAD, 414 a
 * request line too long, 431 headers too large or too many, 505 any
 * version but HTTP/1.0 and HTTP/1.1 (HTTP/1.9 too: the answer, given as
 * HTTP/1.<minor>, must not claim a version it does not speak).  A head over the limits is refused as soon as the
 * bytes show it, complete or not.
 */
int http_parse(const char *buf, size_t len, struct http_request *req);

/*
 * True if an Accept header value prefers OpenMetrics: the highest q of
 * application/openmetrics-text (version 1.0.0 or unversioned) is above 0
 * and at least that of text/plain and of the wildcards.  "" is false.
 */
bool http_wants_openmetrics(const char *accept);

/* The reason phrase of status, "Error" for one it does not know. */
const char *http_reason(int status);

#endif
