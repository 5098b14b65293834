/*
 * merge: the trace copied through with the new events appended to its
 * events array (contract in merge.h; the events themselves in
 * merge_events.c).
 *
 * The second pass reads the uncompressed bytes again (trace_stream) in
 * COPY_CHUNK pieces and writes them on at once, so memory does not grow
 * with the trace.  The first pass found the '[' of the events array at
 * events_open, its ']' at events_close and bytes in all; the copy checks
 * the three, so a file that changed in between fails with the offset
 * instead of writing a trace with events spliced into the wrong place.
 * (export refuses a pipe before the first pass: it cannot be read twice.)
 *
 * The copy costs little beside the first pass: on a 300 MB trace, 0.25 s
 * of CPU over the 1.9 s of reading it once.  Having the kernel copy a
 * plain file (copy_file_range) saved 0.12 s, within the noise, so there
 * is one way of copying, not two (bench/README.md).
 *
 * A name ending in ".gz" is written as gzip at level MERGE_GZIP_LEVEL,
 * deflated here onto the output's stream, so that output.h's whole or
 * nothing holds for it too.
 */
#include <err.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "client.h"
#include "format.h"
#include "merge_bd.h"
#include "merge_ops.h"
#include "merge_priv.h"
#include "output.h"
#include "timeparse.h"
#include "trace.h"
#include "target.h"

#define COPY_CHUNK	(256 * 1024)	/* read from the trace at once */
#define STAGE_SIZE	(256 * 1024)	/* gathers small writes */
#define ZBUF_SIZE	(256 * 1024)	/* deflate's output */
/* zlib's fastest level: deflate runs in the copy's thread. */
#define MERGE_GZIP_LEVEL 1
#define PROGRESS_EVERY_NS (NSEC_PER_SEC / 4)

struct progress {
	bool	 on;
	uint64_t total;
	uint64_t next_ns;
	int	 width;		/* of the last line shown */
};

/* The output: a stream from output_open, plain or deflated. */
struct sink {
	FILE	*fp;
	const char *path;
	bool	 gz;
	bool	 failed;
	z_stream z;
	unsigned char *zbuf;
	char	*stage;		/* small writes, gathered */
	size_t	 staged;
	struct progress *pg;	/* cleared before an error is printed */
};

static void	progress_clear(struct progress *);

static int
sink_fail(struct sink *s)
{
	int saved = errno;

	progress_clear(s->pg);
	errno = saved;
	if (!s->failed)
		warn("%s", output_name(s->path));
	s->failed = true;
	return -1;
}

static int
sink_fwrite(struct sink *s, const void *p, size_t n)
{
	if (n > 0 && fwrite_unlocked(p, 1, n, s->fp) != n)
		return sink_fail(s);
	return 0;
}

/* Deflate p[0..n) with flush (Z_NO_FLUSH or Z_FINISH) and write it. */
static int
sink_deflate(struct sink *s, const void *p, size_t n, int flush)
{
	int zrc;

	s->z.next_in = (unsigned char *)(uintptr_t)p;
	s->z.avail_in = (uInt)n;
	do {
		s->z.next_out = s->zbuf;
		s->z.avail_out = ZBUF_SIZE;
		zrc = deflate(&s->z, flush);
		if (zrc == Z_STREAM_ERROR) {
			progress_clear(s->pg);
			warnx("%s: deflate failed", output_name(s->path));
			s->failed = true;
			return -1;
		}
		if (sink_fwrite(s, s->zbuf, ZBUF_SIZE - s->z.avail_out) == -1)
			return -1;
	} while (s->z.avail_out == 0 || (flush == Z_FINISH &&
	    zrc != Z_STREAM_END));
	return 0;
}

/* Bytes straight to the output, past the stage. */
static int
sink_emit(struct sink *s, const void *p, size_t n)
{
	if (s->failed)
		return -1;
	if (!s->gz)
		return sink_fwrite(s, p, n);
	/* avail_in is an unsigned int */
	for (size_t done = 0; done < n; done += COPY_CHUNK)
		if (sink_deflate(s, (const char *)p + done, n - done <
		    COPY_CHUNK ? n - done : COPY_CHUNK, Z_NO_FLUSH) == -1)
			return -1;
	return 0;
}

static int
sink_flush_stage(struct sink *s)
{
	size_t n = s->staged;

	s->staged = 0;
	return sink_emit(s, s->stage, n);
}

/* merge_put_fn: small writes are gathered, large ones go straight on. */
static int
sink_put(void *arg, const char *p, size_t n)
{
	struct sink *s = arg;

	if (s->failed)
		return -1;
	if (s->staged + n <= STAGE_SIZE) {
		memcpy(s->stage + s->staged, p, n);
		s->staged += n;
		return 0;
	}
	if (sink_flush_stage(s) == -1)
		return -1;
	if (n >= STAGE_SIZE)
		return sink_emit(s, p, n);
	memcpy(s->stage, p, n);
	s->staged = n;
	return 0;
}

static void
sink_init(struct sink *s, FILE *fp, const char *path, struct progress *pg)
{
	size_t len = strlen(path);

	memset(s, 0, sizeof(*s));
	s->fp = fp;
	s->path = path;
	s->pg = pg;
	s->gz = len > 3 && strcmp(path + len - 3, ".gz") == 0;
	if ((s->stage = malloc(STAGE_SIZE)) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	if (!s->gz)
		return;
	if ((s->zbuf = malloc(ZBUF_SIZE)) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	/* windowBits 15 + 16: a gzip header and trailer */
	if (deflateInit2(&s->z, MERGE_GZIP_LEVEL, Z_DEFLATED, 15 + 16, 8,
	    Z_DEFAULT_STRATEGY) != Z_OK)
		errx(CLIENT_EXIT_FAILED, "out of memory");
}

/* Write what is staged and end the gzip stream. */
static int
sink_finish(struct sink *s)
{
	if (sink_flush_stage(s) == -1)
		return -1;
	if (s->gz)
		return sink_deflate(s, "", 0, Z_FINISH);
	return 0;
}

static void
sink_free(struct sink *s)
{
	if (s->gz)
		deflateEnd(&s->z);
	free(s->zbuf);
	free(s->stage);
}

/* "merging: 312 MiB of 562 MiB (55%)", at most every PROGRESS_EVERY_NS. */
static void
progress_show(struct progress *p, uint64_t done)
{
	uint64_t now;
	int n;

	if (!p->on || (now = now_monotonic_ns()) < p->next_ns)
		return;
	p->next_ns = now + PROGRESS_EVERY_NS;
	n = fprintf(stderr, "\rmerging: %" PRIu64 " MiB of %" PRIu64 " MiB "
	    "(%d%%)", done >> 20, p->total >> 20, p->total == 0 ? 100 :
	    (int)(done * 100 / p->total));
	if (n - 1 < p->width)
		fprintf(stderr, "%*s", p->width - (n - 1), "");
	else
		p->width = n - 1;
}

static void
progress_clear(struct progress *p)
{
	if (p->on && p->width > 0)
		fprintf(stderr, "\r%*s\r", p->width, "");
	p->width = 0;
}

/* The trace changed between the passes: say where, and how. */
static int
changed(const struct trace_target *t, struct progress *pg, uint64_t offset,
    const char *what)
{
	struct trace_error e = {
		.has_offset = true,
		.compressed = t->info.compressed,
		.offset = offset,
	};
	char msg[384];

	snprintf(e.msg, sizeof(e.msg), "%s", what);
	progress_clear(pg);
	warnx("%s: the trace changed since it was read: %s", t->path,
	    trace_strerror(&e, msg, sizeof(msg)));
	return CLIENT_EXIT_FAILED;
}

/* The sink of events appended after the original's: a ',' before the first. */
struct appended {
	struct sink *s;
	bool	 comma;		/* the original's array has elements */
	bool	 started;
};

static int
put_appended(void *arg, const char *p, size_t n)
{
	struct appended *a = arg;

	if (!a->started) {
		a->started = true;
		if (a->comma && sink_put(a->s, ",", 1) == -1)
			return -1;
	}
	return sink_put(a->s, p, n);
}

/*
 * The new events: the cards' samples, then but for HTA the energy slices
 * and the breakdown's track, if asked for.
 */
static int
append(sqlite3 *db, const struct merge_request *rq, struct appended *app,
    struct merge_stats *st)
{
	int rc;

	if ((rc = merge_events_write(db, rq, put_appended, app, st)) !=
	    CLIENT_EXIT_OK || rq->as == MERGE_AS_HTA)
		return rc;
	if ((rc = merge_ops_write(db, rq, put_appended, app, st)) !=
	    CLIENT_EXIT_OK || rq->breakdown == NULL)
		return rc;
	return merge_bd_write(rq, put_appended, app, st);
}

/*
 * Copy the trace through s, the new events appended before the ']' at
 * events_close.  The stream must give exactly the bytes the first pass
 * read.
 */
static int
copy(sqlite3 *db, const struct merge_request *rq, struct trace_stream *ts,
    struct sink *s, struct progress *pg, struct merge_stats *st)
{
	const struct trace_info *in = &rq->t->info;
	struct appended app = { .s = s, .comma = in->nelements > 0 };
	struct trace_error err;
	uint64_t pos = 0;
	char *buf, msg[384];
	ssize_t n;
	int rc = CLIENT_EXIT_OK;

	if ((buf = malloc(COPY_CHUNK)) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	while (rc == CLIENT_EXIT_OK) {
		uint64_t end, head;

		if ((n = trace_stream_read(ts, buf, COPY_CHUNK, &err)) == -1) {
			progress_clear(pg);
			warnx("%s: %s", rq->t->path, trace_strerror(&err, msg,
			    sizeof(msg)));
			rc = CLIENT_EXIT_FAILED;
			break;
		}
		if (n == 0)
			break;
		end = pos + (uint64_t)n;
		if (end > in->bytes) {
			rc = changed(rq->t, pg, in->bytes, "it is longer");
			break;
		}
		if (in->events_close >= pos && in->events_close < end &&
		    buf[in->events_close - pos] != ']') {
			rc = changed(rq->t, pg, in->events_close, "the events "
			    "array no longer ends here");
			break;
		}
		if (in->events_open >= pos && in->events_open < end &&
		    buf[in->events_open - pos] != '[') {
			rc = changed(rq->t, pg, in->events_open, "the events "
			    "array no longer starts here");
		} else if (in->events_close < pos || in->events_close >= end) {
			if (sink_put(s, buf, (size_t)n) == -1)
				rc = CLIENT_EXIT_FAILED;
		} else {
			head = in->events_close - pos;
			if (sink_put(s, buf, head) == -1)
				rc = CLIENT_EXIT_FAILED;
			else if ((rc = append(db, rq, &app, st)) ==
			    CLIENT_EXIT_OK &&
			    sink_put(s, buf + head, (size_t)n - head) == -1)
				rc = CLIENT_EXIT_FAILED;
		}
		pos = end;
		progress_show(pg, pos);
	}
	if (rc == CLIENT_EXIT_OK && pos < in->bytes)
		rc = changed(rq->t, pg, pos, "it ends early");
	free(buf);
	return rc;
}

int
merge_write(sqlite3 *db, const struct merge_request *rq,
    struct merge_stats *st)
{
	struct progress pg = { .on = rq->progress, .total =
	    rq->t->info.bytes };
	struct trace_stream *ts;
	struct trace_error err;
	struct sink s;
	char msg[384];
	FILE *fp;
	int rc;

	if ((ts = trace_stream_open(rq->t->path, &err)) == NULL) {
		warnx("%s: %s", rq->t->path, trace_strerror(&err, msg,
		    sizeof(msg)));
		return CLIENT_EXIT_FAILED;
	}
	if ((fp = output_open(rq->out_path)) == NULL) {
		trace_stream_close(ts);
		return CLIENT_EXIT_FAILED;
	}
	sink_init(&s, fp, rq->out_path, &pg);
	memset(st, 0, sizeof(*st));
	rc = copy(db, rq, ts, &s, &pg, st);
	if (rc == CLIENT_EXIT_OK && sink_finish(&s) == -1)
		rc = CLIENT_EXIT_FAILED;
	progress_clear(&pg);
	trace_stream_close(ts);
	sink_free(&s);
	return output_close(fp, rq->out_path, rc);
}

void
merge_stats_print(FILE *fp, const char *out, const struct merge_stats *st)
{
	char lo[FMT_BUFLEN], hi[FMT_BUFLEN];

	if (st->events == 0) {
		fprintf(fp, "%s: the trace as it was: no sample overlaps its "
		    "span\n", output_name(out));
		return;
	}
	format_time_utc(st->lo_ns, lo, sizeof(lo));
	format_time_utc(st->hi_ns, hi, sizeof(hi));
	fprintf(fp, "%s: added %" PRIu64 " events after the trace's own: %zu "
	    "card%s, ", output_name(out), st->events, st->cards,
	    st->cards == 1 ? "" : "s");
	if (st->as == MERGE_AS_HTA)
		fprintf(fp, "%" PRIu64 " slices of cat " MERGE_HTA_CAT " with "
		    "%zu metrics in args, ", st->slices, st->tracks);
	else
		fprintf(fp, "%zu counter tracks, ", st->tracks);
	if (st->energy_slices > 0)
		fprintf(fp, "%" PRIu64 " slices of device events' energy, ",
		    st->energy_slices);
	if (st->breakdown_slices > 0)
		fprintf(fp, "%" PRIu64 " slices of the breakdown's classes, ",
		    st->breakdown_slices);
	fprintf(fp, "%" PRIu64 " samples from %s to %s (%.3f s), ",
	    st->samples, lo, hi, (double)(st->hi_ns - st->lo_ns) / 1e9);
	if (st->min_iv_ms == st->max_iv_ms)
		fprintf(fp, "one every %" PRId64 " ms", st->min_iv_ms);
	else
		fprintf(fp, "one every %" PRId64 " to %" PRId64 " ms",
		    st->min_iv_ms, st->max_iv_ms);
	if (st->coarse > 0)
		fprintf(fp, "; %" PRIu64 " of them imported from an aiu-smi log: "
		    "whole-second local times (coarse)", st->coarse);
	fprintf(fp, "\n");
}

/* ---- the output of a combined merge (merge_priv.h) ---- */

struct merge_sink {
	struct sink s;
	struct progress pg;	/* off: a combined merge shows none */
	FILE	*fp;
	const char *path;
};

struct merge_sink *
merge_sink_open(const char *path)
{
	struct merge_sink *m;

	if ((m = calloc(1, sizeof(*m))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	if ((m->fp = output_open(path)) == NULL) {
		free(m);
		return NULL;
	}
	m->path = path;
	sink_init(&m->s, m->fp, path, &m->pg);
	return m;
}

int
merge_sink_put(void *arg, const char *p, size_t n)
{
	struct merge_sink *m = arg;

	return sink_put(&m->s, p, n);
}

int
merge_sink_close(struct merge_sink *m, int rc)
{
	if (rc == CLIENT_EXIT_OK && sink_finish(&m->s) == -1)
		rc = CLIENT_EXIT_FAILED;
	sink_free(&m->s);
	rc = output_close(m->fp, m->path, rc);
	free(m);
	return rc;
}
