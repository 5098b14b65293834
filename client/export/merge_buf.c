/*
 * merge_buf: the text of one new event of a merged trace, and its
 * writing (merge_priv.h), for the slices of merge_ops.c and merge_bd.c.
 */
#include <err.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "merge_priv.h"
#include "target.h"

void
merge_buf_add(struct merge_buf *b, const char *p, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 256;

		while (cap < b->len + n + 1)
			cap *= 2;
		if ((b->p = realloc(b->p, cap)) == NULL)
			errx(CLIENT_EXIT_FAILED, "out of memory");
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void
merge_buf_fmt(struct merge_buf *b, const char *fmt, ...)
{
	char tmp[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	merge_buf_add(b, tmp, n < 0 ? 0 : (size_t)n >= sizeof(tmp) ?
	    sizeof(tmp) - 1 : (size_t)n);
}

void
merge_buf_json(struct merge_buf *b, const char *s)
{
	merge_buf_add(b, "\"", 1);
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			merge_buf_add(b, "\\", 1);
			merge_buf_add(b, s, 1);
		} else if (c < 0x20)
			merge_buf_fmt(b, "\\u%04x", c);
		else
			merge_buf_add(b, s, 1);
	}
	merge_buf_add(b, "\"", 1);
}

void
merge_buf_us(struct merge_buf *b, const struct merge_request *rq,
    int64_t own_ns)
{
	char t[MERGE_US_PREC_BUFLEN];
	size_t n = merge_fmt_us_prec(own_ns, merge_decimals(rq), t);

	merge_buf_add(b, t, n);
}

void
merge_buf_meta(struct merge_buf *b, const struct merge_request *rq,
    const char *name, int64_t pid, int64_t tid)
{
	b->len = 0;
	merge_buf_fmt(b, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%" PRId64
	    ",\"tid\":%" PRId64, name, pid, tid);
	if (rq->metadata_ts && rq->t->info.has_span) {
		merge_buf_fmt(b, ",\"ts\":");
		merge_buf_us(b, rq, rq->t->info.first_own_ns);
	}
}

int
merge_buf_put(struct merge_buf *b, merge_put_fn put, void *arg,
    struct merge_stats *st)
{
	bool first = st->events == 0;

	if (put(arg, first ? "\n" : ",\n", first ? 1 : 2) == -1 ||
	    put(arg, b->p, b->len) == -1)
		return -1;
	st->events++;
	return 0;
}
