/*
 * promtext: the Prometheus text format's sample lines, summed by name.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "promtext.h"

static bool
name_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	    c == ':';
}

static bool
name_char(char c)
{
	return name_start(c) || (c >= '0' && c <= '9');
}

static int
bad(char *why, size_t whylen, size_t line, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(why, whylen, "line %zu: ", line);

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < whylen)
		vsnprintf(why + n, whylen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

/* Skip the label set at *p ('{' .. '}') within [*p, end); false if malformed. */
static bool
skip_labels(const char **pp, const char *end, const char **what)
{
	const char *p = *pp + 1;

	for (;;) {
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p < end && *p == '}') {
			*pp = p + 1;
			return true;
		}
		if (p >= end || !name_start(*p)) {
			*what = "a label name expected";
			return false;
		}
		while (p < end && name_char(*p))
			p++;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p >= end || *p != '=') {
			*what = "'=' expected after a label name";
			return false;
		}
		p++;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p >= end || *p != '"') {
			*what = "a label value must be quoted";
			return false;
		}
		for (p++; p < end && *p != '"'; p++)
			if (*p == '\\') {
				if (p + 1 >= end || (p[1] != '\\' && p[1] != '"' &&
				    p[1] != 'n')) {
					*what = "a bad escape in a label value";
					return false;
				}
				p++;
			}
		if (p >= end) {
			*what = "a label value is not closed";
			return false;
		}
		p++;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p < end && *p == ',')
			p++;
		else if (p >= end || *p != '}') {
			*what = "',' or '}' expected after a label";
			return false;
		}
	}
}

/* The value text v[0..n) as a double; false if it is not one. */
static bool
parse_value(const char *v, size_t n, double *out)
{
	char buf[64], *end;

	if (n == 0 || n >= sizeof(buf))
		return false;
	memcpy(buf, v, n);
	buf[n] = '\0';
	if (strcmp(buf, "NaN") == 0 || strcmp(buf, "+Inf") == 0 ||
	    strcmp(buf, "-Inf") == 0 || strcmp(buf, "Inf") == 0) {
		*out = strtod(buf, NULL);
		return true;
	}
	/* strtod takes "nan" and "infinity" too: the format does not */
	for (size_t i = 0; i < n; i++)
		if (buf[i] == 'n' || buf[i] == 'N' || buf[i] == 'i' ||
		    buf[i] == 'I')
			return false;
	errno = 0;
	*out = strtod(buf, &end);
	return end != buf && *end == '\0' && errno != EINVAL;
}

/* Parse one sample line [p, end) and add it to sums; NULL or what is wrong. */
static const char *
sample_line(const char *p, const char *end, struct promtext_sum *sums,
    size_t nsums)
{
	const char *name = p, *what = NULL, *v;
	size_t namelen;
	double val;

	if (!name_start(*p))
		return "a metric name expected";
	while (p < end && name_char(*p))
		p++;
	namelen = (size_t)(p - name);
	if (p < end && *p == '{' && !skip_labels(&p, end, &what))
		return what;
	if (p >= end || (*p != ' ' && *p != '\t'))
		return "a value expected after the name";
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	v = p;
	while (p < end && *p != ' ' && *p != '\t')
		p++;
	if (!parse_value(v, (size_t)(p - v), &val))
		return "the value is not a number";
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p < end) {	/* a timestamp: an integer of milliseconds */
		const char *t = p;

		if (*p == '-')
			p++;
		while (p < end && *p >= '0' && *p <= '9')
			p++;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p < end || p == t)
			return "junk after the value";
	}
	for (size_t i = 0; i < nsums; i++)
		if (strlen(sums[i].name) == namelen &&
		    memcmp(sums[i].name, name, namelen) == 0) {
			sums[i].sum += val;
			sums[i].n++;
		}
	return NULL;
}

int
promtext_sums(const char *text, size_t len, struct promtext_sum *sums,
    size_t nsums, char *why, size_t whylen)
{
	const char *p = text, *end = text + len;
	size_t line = 0;

	for (size_t i = 0; i < nsums; i++) {
		sums[i].sum = 0;
		sums[i].n = 0;
	}
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *le = eol != NULL ? eol : end, *what;

		line++;
		if (le > p && le[-1] == '\r')
			le--;
		if (le > p && memchr(p, '\0', (size_t)(le - p)) != NULL)
			return bad(why, whylen, line, "a NUL byte");
		while (p < le && (*p == ' ' || *p == '\t'))
			p++;
		if (p < le && *p != '#' &&
		    (what = sample_line(p, le, sums, nsums)) != NULL)
			return bad(why, whylen, line, "%s", what);
		p = eol != NULL ? eol + 1 : end;
	}
	return 0;
}
