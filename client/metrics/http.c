/*
 * http: parsing the one request "spyremon metrics --http" answers (http.h).
 */
#include "http.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *
http_reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 414: return "URI Too Long";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 505: return "HTTP Version Not Supported";
	default: return "Error";
	}
}

/* The length of the line at p (without its CR LF or LF), or -1 if no LF yet. */
static long
line_len(const char *p, const char *end, size_t *eol)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));

	if (nl == NULL)
		return -1;
	*eol = 1;
	if (nl > p && nl[-1] == '\r') {
		*eol = 2;
		return nl - p - 1;
	}
	return nl - p;
}

/* A token character of RFC 9110 (methods, header names). */
static bool
tchar(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || (c != '\0' && strchr("!#$%&'*+-.^_`|~", c));
}

static int
parse_request_line(const char *p, size_t n, struct http_request *req)
{
	const char *sp1, *sp2, *end = p + n;
	size_t mlen, tlen;

	if ((sp1 = memchr(p, ' ', n)) == NULL ||
	    (sp2 = memchr(sp1 + 1, ' ', (size_t)(end - sp1 - 1))) == NULL)
		return 400;
	mlen = (size_t)(sp1 - p);
	for (size_t i = 0; i < mlen; i++)
		if (!tchar(p[i]))
			return 400;
	tlen = (size_t)(sp2 - sp1 - 1);
	if (mlen == 0 || tlen == 0 || sp1[1] != '/')
		return 400;
	for (size_t i = 0; i < tlen; i++)
		if ((unsigned char)sp1[1 + i] <= ' ' || sp1[1 + i] == 0x7f)
			return 400;
	if ((size_t)(end - sp2 - 1) != 8 || memcmp(sp2 + 1, "HTTP/", 5) != 0 ||
	    sp2[6] < '0' || sp2[6] > '9' || sp2[7] != '.' ||
	    sp2[8] < '0' || sp2[8] > '9')
		return 400;
	/* HTTP/1.0 and HTTP/1.1 only: a reply must not claim another version */
	if (sp2[6] != '1' || sp2[8] > '1')
		return 505;
	req->minor = sp2[8] - '0';
	if (mlen == 3 && memcmp(p, "GET", 3) == 0)
		req->method = HTTP_GET;
	else if (mlen == 4 && memcmp(p, "HEAD", 4) == 0)
		req->method = HTTP_HEAD;
	else
		return 405;
	for (size_t i = 0; i < tlen && sp1[1 + i] != '?' && sp1[1 + i] != '#'; i++) {
		req->path[i] = sp1[1 + i];
		req->path[i + 1] = '\0';
	}
	return 0;
}

/* Add one header line (name: value) to req; only Accept is kept. */
static int
parse_header(const char *p, size_t n, struct http_request *req)
{
	const char *colon = memchr(p, ':', n), *v, *end = p + n;
	size_t have, vlen;

	if (colon == NULL || colon == p)
		return 400;
	for (const char *q = p; q < colon; q++)
		if (!tchar(*q))
			return 400;	/* also a space before the colon */
	for (const char *q = colon + 1; q < end; q++)
		if ((unsigned char)*q < ' ' && *q != '\t')
			return 400;
	if ((size_t)(colon - p) != 6 || strncasecmp(p, "accept", 6) != 0)
		return 0;
	for (v = colon + 1; v < end && (*v == ' ' || *v == '\t'); v++)
		;
	while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	vlen = (size_t)(end - v);
	have = strlen(req->accept);
	if (have + (have > 0) + vlen >= sizeof(req->accept))
		return 431;
	if (have > 0)
		req->accept[have++] = ',';
	memcpy(req->accept + have, v, vlen);
	req->accept[have + vlen] = '\0';
	return 0;
}

int
http_parse(const char *buf, size_t len, struct http_request *req)
{
	const char *p = buf, *end = buf + len;
	size_t eol, nheaders = 0;
	long n;
	int rc;

	memset(req, 0, sizeof(*req));
	/* tolerate empty lines before the request line (RFC 9112, 2.2) */
	while (p < end && (*p == '\r' || *p == '\n'))
		p++;
	if ((n = line_len(p, end, &eol)) == -1)
		return (size_t)(end - p) > HTTP_LINE_MAX ? 414 :
		    len > HTTP_HEAD_MAX ? 431 : -1;
	if (n > HTTP_LINE_MAX)
		return 414;
	if ((rc = parse_request_line(p, (size_t)n, req)) != 0)
		return rc;
	p += n + (long)eol;
	for (;;) {
		if ((n = line_len(p, end, &eol)) == -1)
			return len > HTTP_HEAD_MAX ? 431 : -1;
		if ((size_t)(p + n - buf) > HTTP_HEAD_MAX)
			return 431;
		if (n == 0)
			return 0;
		if (*p == ' ' || *p == '\t')
			return 400;	/* obsolete line folding */
		if (++nheaders > HTTP_HEADERS_MAX)
			return 431;
		if ((rc = parse_header(p, (size_t)n, req)) != 0)
			return rc;
		p += n + (long)eol;
	}
}

/*
 * The q of one media range "type/sub;param=v;q=0.5" (trimmed), or -1 if
 * it is not one of the kinds asked about.  kind: 'o' OpenMetrics, 't'
 * text/plain, '*' a wildcard.
 */
static double
range_q(const char *r, size_t n, char *kind)
{
	char buf[256], *save = NULL, *tok;
	double q = 1;
	bool om_version_ok = true;

	if (n >= sizeof(buf))
		return -1;
	memcpy(buf, r, n);
	buf[n] = '\0';
	tok = strtok_r(buf, ";", &save);
	if (tok == NULL)
		return -1;
	while (*tok == ' ' || *tok == '\t')
		tok++;
	tok[strcspn(tok, " \t")] = '\0';
	if (strcasecmp(tok, "application/openmetrics-text") == 0)
		*kind = 'o';
	else if (strcasecmp(tok, "text/plain") == 0)
		*kind = 't';
	else if (strcmp(tok, "*/*") == 0 || strcasecmp(tok, "text/*") == 0 ||
	    strcasecmp(tok, "application/*") == 0)
		*kind = '*';
	else
		return -1;
	while ((tok = strtok_r(NULL, ";", &save)) != NULL) {
		while (*tok == ' ' || *tok == '\t')
			tok++;
		if (strncasecmp(tok, "q=", 2) == 0)
			q = strtod(tok + 2, NULL);
		else if (strncasecmp(tok, "version=", 8) == 0 && *kind == 'o')
			om_version_ok = strncmp(tok + 8, "1.0.0", 5) == 0;
	}
	if (!om_version_ok)
		return -1;
	return q < 0 ? 0 : q > 1 ? 1 : q;
}

bool
http_wants_openmetrics(const char *accept)
{
	double best_om = 0, best_other = 0;
	const char *p = accept;

	while (*p != '\0') {
		size_t n = strcspn(p, ",");
		char kind = 0;
		double q = range_q(p, n, &kind);

		if (q >= 0 && kind == 'o' && q > best_om)
			best_om = q;
		else if (q >= 0 && kind != 'o' && q > best_other)
			best_other = q;
		p += n;
		if (*p == ',')
			p++;
	}
	return best_om > 0 && best_om >= best_other;
}
