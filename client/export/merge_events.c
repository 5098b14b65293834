/*
 * merge_events: the events a merge adds to a trace (merge_priv.h).
 *
 * Per card, a process on a pid the trace does not use, named by an M
 * process_name event and sorted after the trace's own processes by an M
 * process_sort_index event; in it, one counter track per metric.
 *
 * Track names.  Perfetto's JSON importer (trace_processor, importers/json,
 * the 'C' case) makes one process counter track per member of a C event's
 * args and names it "<name> <member key>" (with " id: <id>" after the
 * name when the event has an id); no key is left out, not even a lone
 * "value", so {"name":"pwr (W)","args":{"value":1}} would show as
 * "pwr (W) value".  chrome://tracing shows the name as the counter and
 * the keys as its series.  So the event's name is the metric's key and
 * its one args key is the rest of the track's name, "(W)": Perfetto shows
 * "pwr (W)" exactly, chrome://tracing a counter "pwr" with a series
 * "(W)".
 *
 * Times.  A sample stamped t covering d holds from t - d, so its value is
 * a C event at t - d, written in µs on the trace's own time base; after a
 * card's last sample a final event at min(t, end) repeats the last values
 * so the track ends where the data does.  Only samples overlapping both
 * the requested span and the trace's own span are read (intervals that
 * meet both meet their intersection), and every time is clipped into the
 * trace's span: events that the clipping puts at one time keep only the
 * last value, so each track's times strictly increase.  A NULL value
 * (aiu-smi printed "-") writes no event: the track keeps its last value.
 */
#include <err.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "db.h"
#include "format.h"
#include "hosts.h"
#include "merge_priv.h"
#include "schema.h"
#include "timeparse.h"
#include "target.h"

/* A card's counter track for one metric. */
struct track {
	char	*head;		/* {"ph":"C",...,"args":{"(W)": */
	size_t	 head_len;
	bool	 pending;	/* value at ts is not written yet */
	bool	 wrote;		/* an event of it was written */
	int64_t	 ts;		/* absolute ns */
	char	 value[FMT_BUFLEN];
};

struct card {
	int	 device;
	int64_t	 pid;
	int64_t	 first_ts;	/* of its first sample, for the bus ID */
	int64_t	 last_ns;	/* the latest event time so far */
	int64_t	 final_ns;	/* its last sample's end, clipped */
	int64_t	 slice_end;	/* MERGE_AS_HTA: own end of its last slice */
	char	 name[64];	/* MERGE_AS_HTA: its slices' name, JSON */
	struct track *tracks;	/* one per rq->ncols */
};

struct events {
	const struct merge_request *rq;
	merge_put_fn put;
	void	*arg;
	uint64_t n;
	struct merge_stats *st;
	struct card *cards;
	size_t	 ncards;
	int64_t	 lo_ns, hi_ns;	/* the span samples must overlap */
};

/* A growing string, for the text written once per card or track. */
struct str {
	char	*p;
	size_t	 len, cap;
};

static void
str_add(struct str *s, const char *p, size_t n)
{
	if (s->len + n + 1 > s->cap) {
		size_t cap = s->cap ? s->cap : 128;

		while (s->len + n + 1 > cap)
			cap *= 2;
		if ((s->p = realloc(s->p, cap)) == NULL)
			errx(CLIENT_EXIT_FAILED, "out of memory");
		s->cap = cap;
	}
	memcpy(s->p + s->len, p, n);
	s->len += n;
	s->p[s->len] = '\0';
}

static void
str_cat(struct str *s, const char *p)
{
	str_add(s, p, strlen(p));
}

static void
str_int(struct str *s, int64_t v)
{
	char b[32];

	str_add(s, b, (size_t)snprintf(b, sizeof(b), "%" PRId64, v));
}

/* p as a JSON string; bytes above 0x7f pass as they are (UTF-8). */
static void
str_json(struct str *s, const char *p)
{
	static const char hex[] = "0123456789abcdef";

	str_add(s, "\"", 1);
	for (; *p != '\0'; p++) {
		unsigned char c = (unsigned char)*p;
		char esc[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };

		if (c == '"' || c == '\\') {
			str_add(s, "\\", 1);
			str_add(s, p, 1);
		} else if (c < 0x20)
			str_add(s, esc, sizeof(esc));
		else
			str_add(s, p, 1);
	}
	str_add(s, "\"", 1);
}

size_t
merge_fmt_us(int64_t ns, char *buf)
{
	uint64_t mag = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	char digits[24];
	size_t n = 0, i = 0;

	/* least significant first; at least "0.000" */
	do {
		digits[n++] = (char)('0' + mag % 10);
		mag /= 10;
	} while (mag != 0 || n < 4);
	if (ns < 0)
		buf[i++] = '-';
	while (n > 0) {
		buf[i++] = digits[--n];
		if (n == 3)
			buf[i++] = '.';
	}
	buf[i] = '\0';
	return i;
}

size_t
merge_fmt_us_prec(int64_t ns, int decimals, char *buf)
{
	int64_t unit = 1, q, rem;
	char digits[24];
	uint64_t mag;
	size_t n = 0, i = 0;
	int want;

	if (decimals >= 3) {
		i = merge_fmt_us(ns, buf);
		for (int k = 3; k < decimals && k < 9; k++)
			buf[i++] = '0';
		buf[i] = '\0';
		return i;
	}
	for (int k = decimals; k < 3; k++)
		unit *= 10;
	q = ns / unit;
	rem = ns % unit;
	if (rem < 0) {
		rem += unit;
		q--;
	}
	if (rem * 2 >= unit)
		q++;
	/* q in units of 10^-decimals µs: its digits, a point before the last */
	mag = q < 0 ? (uint64_t)0 - (uint64_t)q : (uint64_t)q;
	want = decimals < 0 ? 0 : decimals;
	do {
		digits[n++] = (char)('0' + mag % 10);
		mag /= 10;
	} while (mag != 0 || n < (size_t)want + 1);
	if (q < 0)
		buf[i++] = '-';
	while (n > 0) {
		buf[i++] = digits[--n];
		if (want > 0 && n == (size_t)want)
			buf[i++] = '.';
	}
	buf[i] = '\0';
	return i;
}

int
merge_first_pid(bool has_max_pid, int64_t max_pid, size_t ncards,
    int64_t *first)
{
	int64_t f = has_max_pid && max_pid > 0 ? max_pid : 0;

	if (f >= MERGE_PID_MAX || ncards > (uint64_t)(MERGE_PID_MAX - f))
		return -1;
	*first = f + 1;
	return 0;
}

void
merge_series_key(const struct db_metric *m, char *buf, size_t len)
{
	bool unit = m->unit[0] != '\0';

	if (!unit && m->reliable)
		snprintf(buf, len, "value");
	else
		snprintf(buf, len, "(%s%s%s)", m->unit, unit && !m->reliable ?
		    ", " : "", m->reliable ? "" : "unreliable");
}

void
merge_card_name(int device, const char *bus_id, char *buf, size_t len)
{
	if (bus_id != NULL && bus_id[0] != '\0')
		snprintf(buf, len, "Spyre %d \xc2\xb7 %s", device, bus_id);
	else
		snprintf(buf, len, "Spyre %d", device);
}

/*
 * The cards with samples in the span, by device, in ev->cards: of each
 * epoch of the host clock the span reaches (target.h), that epoch's rows
 * only, each card's first stamp in the earliest.
 */
static int
find_cards(sqlite3 *db, struct events *ev)
{
	struct db_key *first;
	size_t n;
	int rc;

	rc = db_trace_first_by_device(db, &ev->rq->t->epochs, ev->lo_ns,
	    ev->hi_ns, ev->rq->device_sql, &first, &n);
	if (rc != CLIENT_EXIT_OK || n == 0) {
		free(first);
		return rc;
	}
	if ((ev->cards = calloc(n, sizeof(*ev->cards))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (size_t i = 0; i < n; i++) {
		struct card *c = &ev->cards[ev->ncards++];

		c->device = first[i].device;
		c->first_ts = first[i].ts_ns;
		c->last_ns = INT64_MIN;
	}
	free(first);
	return CLIENT_EXIT_OK;
}

/* Each card's pid, and each track's head: what its events start with. */
static int
make_tracks(struct events *ev)
{
	const struct merge_request *rq = ev->rq;
	const struct trace_info *in = &rq->t->info;
	struct str s = { 0 };
	char key[FMT_BUFLEN * 2];
	int64_t first;

	if (merge_first_pid(in->has_max_pid, in->max_pid, ev->ncards,
	    &first) == -1) {
		warnx("%s: the trace uses pid %" PRId64 ": no %zu pids above "
		    "it are free for the cards", rq->t->path, in->max_pid,
		    ev->ncards);
		return CLIENT_EXIT_FAILED;
	}
	for (size_t i = 0; i < ev->ncards; i++) {
		struct card *c = &ev->cards[i];

		c->pid = first + (int64_t)i;
		if ((c->tracks = calloc(rq->ncols + 1, sizeof(*c->tracks))) ==
		    NULL)
			errx(CLIENT_EXIT_FAILED, "out of memory");
		c->slice_end = INT64_MIN;
		snprintf(c->name, sizeof(c->name), "\"Spyre %d sample\"",
		    c->device);
		for (size_t m = 0; m < rq->ncols && rq->as == MERGE_AS_HTA;
		    m++) {
			/* the args member: "pwr (W)":, or "x": without a unit */
			merge_series_key(rq->cols[m], key, sizeof(key));
			s.len = 0;
			str_cat(&s, rq->cols[m]->key);
			if (strcmp(key, "value") != 0) {
				str_cat(&s, " ");
				str_cat(&s, key);
			}
			if ((c->tracks[m].head = strdup(s.p)) == NULL)
				errx(CLIENT_EXIT_FAILED, "out of memory");
			s.len = 0;
			str_json(&s, c->tracks[m].head);
			str_cat(&s, ":");
			free(c->tracks[m].head);
			if ((c->tracks[m].head = strdup(s.p)) == NULL)
				errx(CLIENT_EXIT_FAILED, "out of memory");
			c->tracks[m].head_len = s.len;
		}
		for (size_t m = 0; m < rq->ncols && rq->as == MERGE_AS_COUNTERS;
		    m++) {
			s.len = 0;
			str_cat(&s, "{\"ph\":\"C\",\"pid\":");
			str_int(&s, c->pid);
			str_cat(&s, ",\"tid\":");
			str_int(&s, c->pid);
			str_cat(&s, ",\"name\":");
			str_json(&s, rq->cols[m]->key);
			str_cat(&s, ",\"args\":{");
			merge_series_key(rq->cols[m], key, sizeof(key));
			str_json(&s, key);
			str_cat(&s, ":");
			if ((c->tracks[m].head = strdup(s.p)) == NULL)
				errx(CLIENT_EXIT_FAILED, "out of memory");
			c->tracks[m].head_len = s.len;
		}
	}
	free(s.p);
	return CLIENT_EXIT_OK;
}

static void
free_cards(struct events *ev)
{
	for (size_t i = 0; i < ev->ncards; i++) {
		if (ev->cards[i].tracks == NULL)
			continue;
		for (size_t m = 0; m < ev->rq->ncols; m++)
			free(ev->cards[i].tracks[m].head);
		free(ev->cards[i].tracks);
	}
	free(ev->cards);
}

/*
 * Time own_ns as the merged trace writes it (merge.h): whole microseconds,
 * the nearest (a half up), where the original's are integers, else with
 * the original's decimals.  Its length; buf holds MERGE_US_PREC_BUFLEN.
 */
static size_t
fmt_time(const struct events *ev, int64_t own_ns, char *buf)
{
	return merge_fmt_us_prec(own_ns, ev->rq->ts_integer ? 0 :
	    ev->rq->ts_decimals, buf);
}

/* One event's text; the separator before it too. */
static int
put_event(struct events *ev, const char *text, size_t len)
{
	if (ev->put(ev->arg, ev->n == 0 ? "\n" : ",\n", ev->n == 0 ? 1 : 2) ==
	    -1 || ev->put(ev->arg, text, len) == -1)
		return -1;
	ev->n++;
	return 0;
}

/* ',"ts":' and the trace's first time, if the original's M events have one. */
static void
put_metadata_ts(const struct events *ev, struct str *s)
{
	char t[MERGE_US_PREC_BUFLEN];
	size_t n;

	if (!ev->rq->metadata_ts || !ev->rq->t->info.has_span)
		return;
	n = fmt_time(ev, ev->rq->t->info.first_own_ns, t);
	str_cat(s, ",\"ts\":");
	str_add(s, t, n);
}

/* The M events naming and sorting each card's process. */
static int
put_processes(struct events *ev)
{
	struct str s = { 0 };
	char name[128 + HOSTS_NAME_MAX];
	int rc = 0;

	for (size_t i = 0; i < ev->ncards && rc == 0; i++) {
		const struct card *c = &ev->cards[i];

		merge_card_name(c->device, db_devmap_bus_id(ev->rq->map,
		    c->device, c->first_ts), name, sizeof(name));
		if (ev->rq->host != NULL)
			snprintf(name + strlen(name), sizeof(name) -
			    strlen(name), " \xc2\xb7 %s", ev->rq->host);
		s.len = 0;
		str_cat(&s, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":");
		str_int(&s, c->pid);
		str_cat(&s, ",\"tid\":0");
		put_metadata_ts(ev, &s);
		str_cat(&s, ",\"args\":{\"name\":");
		str_json(&s, name);
		str_cat(&s, "}}");
		rc = put_event(ev, s.p, s.len);
		s.len = 0;
		str_cat(&s, "{\"ph\":\"M\",\"name\":\"process_sort_index\","
		    "\"pid\":");
		str_int(&s, c->pid);
		str_cat(&s, ",\"tid\":0");
		put_metadata_ts(ev, &s);
		str_cat(&s, ",\"args\":{\"sort_index\":");
		str_int(&s, (ev->rq->sort_base != 0 ? ev->rq->sort_base :
		    MERGE_SORT_INDEX) + (int64_t)i);
		str_cat(&s, "}}");
		if (rc == 0)
			rc = put_event(ev, s.p, s.len);
	}
	free(s.p);
	return rc;
}

/* A counter event of track tr at absolute time abs_ns. */
static int
put_counter(struct events *ev, struct track *tr, int64_t abs_ns)
{
	char us[MERGE_US_PREC_BUFLEN], tail[MERGE_US_PREC_BUFLEN + 16];
	size_t n;

	n = fmt_time(ev, trace_target_own(ev->rq->t, abs_ns), us);
	memcpy(tail, "},\"ts\":", 7);
	memcpy(tail + 7, us, n);
	tail[7 + n] = '}';
	if (put_event(ev, tr->head, tr->head_len) == -1 ||
	    ev->put(ev->arg, tr->value, strlen(tr->value)) == -1 ||
	    ev->put(ev->arg, tail, 8 + n) == -1)
		return -1;
	tr->wrote = true;
	if (ev->st->lo_ns == 0 || abs_ns < ev->st->lo_ns)
		ev->st->lo_ns = abs_ns;
	if (abs_ns > ev->st->hi_ns)
		ev->st->hi_ns = abs_ns;
	return 0;
}

/* A row drawn: counted, with its interval and whether it is coarse. */
static void
count_row(struct merge_stats *st, const struct merge_request *rq, int device,
    int64_t ts_ns, int64_t iv_ms)
{
	if (st->samples == 0 || iv_ms < st->min_iv_ms)
		st->min_iv_ms = iv_ms;
	if (iv_ms > st->max_iv_ms)
		st->max_iv_ms = iv_ms;
	st->samples++;
	if (rq->coarse != NULL && db_coarse_has(rq->coarse, device, ts_ns))
		st->coarse++;
}

/* Write the pending value of tr, if any. */
static int
flush_track(struct events *ev, struct track *tr)
{
	if (!tr->pending)
		return 0;
	tr->pending = false;
	return put_counter(ev, tr, tr->ts);
}

static int
cmp_card(const void *key, const void *elem)
{
	int d = *(const int *)key, e = ((const struct card *)elem)->device;

	return (d > e) - (d < e);
}

/*
 * One sample row, stamped t in the trace's time: its values become
 * pending on its card's tracks.
 */
static int
take_row(struct events *ev, sqlite3_stmt *s, int64_t t)
{
	const struct merge_request *rq = ev->rq;
	int64_t stamp = sqlite3_column_int64(s, 0);
	int device = sqlite3_column_int(s, 1);
	int64_t d = sqlite3_column_int64(s, 2) * (int64_t)NSEC_PER_MSEC;
	int64_t at, end;
	struct card *c;

	/*
	 * db_select_samples: whether the row is of its card's row source
	 * (bestsrc.h).  A row of the other stream (a read card's aiu-smi
	 * row, with busy and the like, interleaved with its finer file
	 * rows) keeps its own time on its own tracks.
	 */
	bool rowsrc = sqlite3_column_int(s, 3 + (int)rq->ncols + 1) != 0;
	int64_t at0;

	c = bsearch(&device, ev->cards, ev->ncards, sizeof(*c), cmp_card);
	if (c == NULL)	/* not in the snapshot's first query: cannot be */
		return 0;
	count_row(ev->st, rq, device, stamp, d / (int64_t)NSEC_PER_MSEC);
	/* clipped into the span; never before the card's previous event */
	at = t - d < rq->t->start_ns ? rq->t->start_ns : t - d;
	if (at > rq->t->end_ns)
		at = rq->t->end_ns;
	end = t < rq->t->end_ns ? t : rq->t->end_ns;
	at0 = at;
	if (rowsrc) {
		if (at < c->last_ns)
			at = c->last_ns;
		c->last_ns = at;
		c->final_ns = end > at ? end : at;
	} else if (end > c->final_ns)
		c->final_ns = end;
	for (size_t m = 0; m < rq->ncols; m++) {
		struct track *tr = &c->tracks[m];
		sqlite3_value *v = sqlite3_column_value(s, 3 + (int)m);

		if (sqlite3_value_type(v) == SQLITE_NULL)
			continue;
		/* the other stream: never before the track's previous event */
		if (!rowsrc)
			at = at0 > tr->ts ? at0 : tr->ts;
		/* a later value at the same time replaces the pending one */
		if (tr->pending && tr->ts != at && flush_track(ev, tr) == -1)
			return -1;
		if (!fmt_value_exact(sqlite3_value_double(v),
		    rq->cols[m]->decimals, tr->value, sizeof(tr->value)))
			continue;
		tr->pending = true;
		tr->ts = at;
	}
	return 0;
}

int
merge_decimals(const struct merge_request *rq)
{
	return rq->ts_integer ? 0 : rq->ts_decimals;
}

int64_t
merge_round_ns(int64_t t, int decimals)
{
	int64_t unit = 1, q, rem;

	for (int k = decimals; k < 3; k++)
		unit *= 10;
	q = t / unit;
	rem = t % unit;
	if (rem < 0) {
		rem += unit;
		q--;
	}
	return (q + (rem * 2 >= unit)) * unit;
}

/* t rounded as fmt_time writes it, in ns. */
static int64_t
round_time(const struct events *ev, int64_t t)
{
	return merge_round_ns(t, merge_decimals(ev->rq));
}

/*
 * MERGE_AS_HTA: a row's values become its card's latest, and a row of
 * the card's row source a slice over its interval (merge.h), with every
 * latest value in its args; t is its stamp in the trace's time.
 */
static int
take_row_hta(struct events *ev, sqlite3_stmt *s, int64_t t)
{
	const struct merge_request *rq = ev->rq;
	const struct trace_info *in = &rq->t->info;
	int64_t stamp = sqlite3_column_int64(s, 0);
	int device = sqlite3_column_int(s, 1);
	int64_t d = sqlite3_column_int64(s, 2) * (int64_t)NSEC_PER_MSEC;
	bool rowsrc = sqlite3_column_int(s, 3 + (int)rq->ncols + 1) != 0;
	char a[MERGE_US_PREC_BUFLEN], b[MERGE_US_PREC_BUFLEN];
	int64_t at, end, r0, r1;
	struct card *c;
	struct str x = { 0 };
	bool any = false;
	int rc = 0;

	c = bsearch(&device, ev->cards, ev->ncards, sizeof(*c), cmp_card);
	if (c == NULL)
		return 0;
	count_row(ev->st, rq, device, stamp, d / (int64_t)NSEC_PER_MSEC);
	for (size_t m = 0; m < rq->ncols; m++) {
		sqlite3_value *v = sqlite3_column_value(s, 3 + (int)m);

		if (sqlite3_value_type(v) != SQLITE_NULL &&
		    !fmt_value_exact(sqlite3_value_double(v),
		    rq->cols[m]->decimals, c->tracks[m].value,
		    sizeof(c->tracks[m].value)))
			c->tracks[m].value[0] = '\0';
	}
	if (!rowsrc)
		return 0;
	/* own times, clipped: into the span, after the card's last slice */
	at = t - d < rq->t->start_ns ? rq->t->start_ns : t - d;
	end = t < rq->t->end_ns ? t : rq->t->end_ns;
	if (end <= at)
		return 0;
	at = trace_target_own(rq->t, at);
	end = trace_target_own(rq->t, end);
	if (in->has_first_slice && at < in->first_slice_own_ns)
		at = in->first_slice_own_ns;
	if (at < c->slice_end)
		at = c->slice_end;
	r0 = round_time(ev, at);
	r1 = round_time(ev, end);
	if (r1 <= r0)
		return 0;
	c->slice_end = end;
	str_cat(&x, "{\"ph\":\"X\",\"cat\":\"" MERGE_HTA_CAT "\",\"name\":");
	str_cat(&x, c->name);
	str_cat(&x, ",\"pid\":");
	str_int(&x, c->pid);
	str_cat(&x, ",\"tid\":");
	str_int(&x, c->pid);
	str_cat(&x, ",\"ts\":");
	str_add(&x, a, fmt_time(ev, r0, a));
	str_cat(&x, ",\"dur\":");
	str_add(&x, b, fmt_time(ev, r1 - r0, b));
	str_cat(&x, ",\"args\":{");
	for (size_t m = 0; m < rq->ncols; m++) {
		struct track *tr = &c->tracks[m];

		if (tr->value[0] == '\0')
			continue;
		if (any)
			str_cat(&x, ",");
		str_add(&x, tr->head, tr->head_len);
		str_cat(&x, tr->value);
		tr->wrote = any = true;
	}
	str_cat(&x, "}}");
	if (put_event(ev, x.p, x.len) == -1)
		rc = -1;
	free(x.p);
	ev->st->slices++;
	/* the span covered, absolute */
	r0 += rq->t->start_ns - trace_target_own(rq->t, rq->t->start_ns);
	r1 += rq->t->start_ns - trace_target_own(rq->t, rq->t->start_ns);
	if (ev->st->lo_ns == 0 || r0 < ev->st->lo_ns)
		ev->st->lo_ns = r0;
	if (r1 > ev->st->hi_ns)
		ev->st->hi_ns = r1;
	return rc;
}

/* The pending values, and each card's final events. */
static int
finish_cards(struct events *ev)
{
	for (size_t i = 0; i < ev->ncards; i++) {
		struct card *c = &ev->cards[i];

		for (size_t m = 0; m < ev->rq->ncols; m++) {
			struct track *tr = &c->tracks[m];

			if (!tr->pending && tr->value[0] == '\0')
				continue;
			if (flush_track(ev, tr) == -1)
				return -1;
			if (c->final_ns > tr->ts &&
			    put_counter(ev, tr, c->final_ns) == -1)
				return -1;
		}
	}
	return 0;
}

/*
 * Every sample's events, then the final ones: each epoch of the host
 * clock's samples in turn, in the trace's time (target.h).
 */
static int
put_counters(sqlite3 *db, struct events *ev)
{
	struct db_trace_cursor k;
	sqlite3_stmt *s;
	int rc;

	if ((s = db_select_samples(db, ev->rq->cols, ev->rq->ncols,
	    ev->rq->device_sql, true)) == NULL)
		return db_error(db, "the samples");
	db_trace_cursor_open(&k, s, &ev->rq->t->epochs, ev->lo_ns, ev->hi_ns,
	    DB_MAX_INTERVAL_NS);
	while ((rc = db_trace_cursor_step(&k)) == SQLITE_ROW)
		if ((ev->rq->as == MERGE_AS_HTA ? take_row_hta(ev, s,
		    db_trace_cursor_ts(&k)) : take_row(ev, s,
		    db_trace_cursor_ts(&k))) == -1) {
			db_trace_cursor_close(&k);
			sqlite3_finalize(s);
			return CLIENT_EXIT_FAILED;
		}
	db_trace_cursor_close(&k);
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return db_error(db, "the samples");
	if (ev->rq->as == MERGE_AS_HTA)
		return CLIENT_EXIT_OK;
	return finish_cards(ev) == -1 ? CLIENT_EXIT_FAILED : CLIENT_EXIT_OK;
}

int
merge_events_write(sqlite3 *db, const struct merge_request *rq,
    merge_put_fn put, void *arg, struct merge_stats *st)
{
	struct events ev = { .rq = rq, .put = put, .arg = arg, .st = st };
	int rc;

	memset(st, 0, sizeof(*st));
	st->as = rq->as;
	/* samples overlapping both spans overlap their intersection */
	ev.lo_ns = rq->lo_ns > rq->t->start_ns ? rq->lo_ns : rq->t->start_ns;
	ev.hi_ns = rq->hi_ns < rq->t->end_ns ? rq->hi_ns : rq->t->end_ns;
	if (ev.lo_ns > ev.hi_ns)
		return CLIENT_EXIT_OK;
	if ((rc = find_cards(db, &ev)) == CLIENT_EXIT_OK && ev.ncards > 0 &&
	    (rc = make_tracks(&ev)) == CLIENT_EXIT_OK) {
		if (put_processes(&ev) == -1)
			rc = CLIENT_EXIT_FAILED;
		else
			rc = put_counters(db, &ev);
	}
	st->events = ev.n;
	st->cards = ev.ncards;
	/* a card has no tracks when make_tracks failed before its own */
	for (size_t i = 0; i < ev.ncards; i++)
		for (size_t m = 0; m < rq->ncols &&
		    ev.cards[i].tracks != NULL; m++)
			st->tracks += ev.cards[i].tracks[m].wrote;
	free_cards(&ev);
	return rc;
}
