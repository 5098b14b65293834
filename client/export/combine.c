/*
 * combine: several traces, one per rank, merged into one Chrome trace
 * with each rank's host's cards (merge.h, merge_combined_write).
 *
 * The output:
 *
 *   {"traceEvents":[<rank 0's events>, <rank 1's>, ..., <names and sort
 *    indexes of the processes>, <the cards' processes and counters>],
 *    "displayTimeUnit":"ms","baseTimeNanoseconds":BASE,
 *    "spyremonRanks":[{"trace":PATH,"host":H,"rank":R,"pids":[LO,HI]},...]}
 *
 * BASE is the whole second before the earliest trace's first event, and
 * every ts is in µs after it, written exactly (three decimals, integer
 * arithmetic), so the ranks line up on the samples' clock as each trace
 * was placed (target.h).  A ts that is 0 under the trace's own base
 * (Kineto clamps negative times to 0) moves with the rest; dur and other
 * members are kept as written.
 *
 * Processes: each rank's pids, integer or string, are renumbered in the
 * order first seen into a block of new integer pids of its own (LO..HI),
 * so no two ranks share a process.  A rank's process_name events are kept
 * with "rank R · HOST · " before the name; a pid without one is named
 * "rank R · HOST · pid P".  The traces' process_sort_index events are
 * dropped for one per new pid in rank order, so each rank's processes
 * stay together; the cards follow, each named "Spyre D · BUS · HOST".
 * Flow events keep their ids: ids of two ranks may meet.
 *
 * Each trace is read once more, streamed (trace_stream into the
 * incremental reader), and every element of its events array is copied
 * from its own bytes with three values changed in place (merge_json_scan
 * finds them): pid, ts, and a process name's args.name, so every other
 * byte of an event stays as written.  What is held is the bytes since
 * the last event copied and one chunk, never the trace.  Parsing each
 * event into a yajl tree and generating it anew made the combined merge
 * 10.6 times as slow as merging the ranks one by one; this way it is 1.6
 * times (bench/README.md, combine.sh).
 */
#include <err.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_gen.h>

#include "client.h"
#include "hosts.h"
#include "json.h"
#include "merge.h"
#include "merge_priv.h"
#include "target.h"
#include "timeparse.h"
#include "trace.h"

#define CHUNK		(256 * 1024)
/*
 * The cards of rank i take the pids above CARD_PIDS + i * CARD_BLOCK and
 * the sort indexes from MERGE_SORT_INDEX + i * CARD_BLOCK: below
 * MERGE_PID_MAX for up to CARD_RANKS ranks; the ranks' own processes
 * stay below CARD_PIDS.
 */
#define CARD_PIDS	0x40000000
#define CARD_BLOCK	0x10000
#define CARD_RANKS	16000
#define LABEL_MAX	(HOSTS_NAME_MAX + 64)
#define PROC_NAME	"process_name"
#define PROC_SORT	"process_sort_index"

/* A pid of one rank: its original text, and its number in the output. */
struct pid {
	char	*key;		/* the value's JSON text: 1074 or "Spans" */
	int64_t	 pid;
	bool	 named;		/* the trace gave it a process_name */
};

/* The state of the whole combined merge. */
struct combine {
	const struct merge_rank *ranks;	/* all of them */
	const struct merge_rank *r;	/* the rank being copied */
	size_t	 rank;			/* its index */
	char	 label[LABEL_MAX];	/* "rank R · HOST · " */
	char	 label_json[LABEL_MAX * 6];	/* the same, escaped for JSON */
	int64_t	 base_ns;
	struct merge_sink *out;
	uint64_t nevents;		/* written, all ranks */
	struct pid *pids;		/* this rank's, sorted by key */
	size_t	 npids, cap;
	int64_t	 next_pid;
	/* the bytes of the current chunk and what is left of earlier ones */
	char	*hold;
	size_t	 held;			/* bytes in hold */
	size_t	 hold_cap;
	uint64_t hold_off;		/* stream offset of hold[0] */
	uint64_t done;			/* the end of the last event copied */
	int	 rc;			/* CLIENT_EXIT_OK until a failure */
	yajl_gen g;
};

/* ---- reading an event's text (merge_priv.h) ---- */

static size_t
skip_ws(const char *s, size_t i, size_t n)
{
	while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' ||
	    s[i] == '\r'))
		i++;
	return i;
}

/* s[i] is a '"': the index just past the string's closing quote, or n. */
static size_t
string_end(const char *s, size_t i, size_t n)
{
	for (i++; i < n; i++) {
		if (s[i] == '\\')
			i++;
		else if (s[i] == '"')
			return i + 1;
	}
	return n;
}

/* The index just past the value that starts at s[i]. */
static size_t
value_end(const char *s, size_t i, size_t n)
{
	size_t depth = 0;

	if (i < n && s[i] == '"')
		return string_end(s, i, n);
	if (i < n && (s[i] == '{' || s[i] == '[')) {
		for (; i < n; i++) {
			if (s[i] == '"')
				i = string_end(s, i, n) - 1;
			else if (s[i] == '{' || s[i] == '[')
				depth++;
			else if ((s[i] == '}' || s[i] == ']') && --depth == 0)
				return i + 1;
		}
		return n;
	}
	while (i < n && s[i] != ',' && s[i] != '}' && s[i] != ']' &&
	    s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r')
		i++;
	return i;
}

int
merge_json_scan(const char *s, size_t n, const char *const *keys,
    size_t nkeys, struct merge_json_value *out)
{
	size_t i, ks, klen, vs;

	for (size_t k = 0; k < nkeys; k++)
		out[k].p = NULL, out[k].n = 0;
	if ((i = skip_ws(s, 0, n)) >= n || s[i] != '{')
		return -1;
	if ((i = skip_ws(s, i + 1, n)) < n && s[i] == '}')
		return 0;
	for (;;) {
		if (i >= n || s[i] != '"')
			return -1;
		ks = i + 1;
		if ((i = string_end(s, i, n)) >= n)
			return -1;
		klen = i - 1 - ks;
		if ((i = skip_ws(s, i, n)) >= n || s[i] != ':')
			return -1;
		vs = i = skip_ws(s, i + 1, n);
		if ((i = value_end(s, i, n)) == vs)
			return -1;
		for (size_t k = 0; k < nkeys; k++)
			if (klen > 0 && keys[k][0] == s[ks] &&
			    strlen(keys[k]) == klen &&
			    memcmp(s + ks, keys[k], klen) == 0) {
				out[k].p = s + vs;	/* the last one wins */
				out[k].n = i - vs;
			}
		if ((i = skip_ws(s, i, n)) < n && s[i] == ',') {
			i = skip_ws(s, i + 1, n);
			continue;
		}
		return i < n && s[i] == '}' ? 0 : -1;
	}
}

/* s as the inside of a JSON string (no quotes), in buf. */
static void
json_escape(const char *s, char *buf, size_t len)
{
	size_t o = 0;

	for (; *s != '\0' && o + 7 < len; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\') {
			buf[o++] = '\\';
			buf[o++] = (char)ch;
		} else if (ch < 0x20)
			o += (size_t)snprintf(buf + o, len - o, "\\u%04x", ch);
		else
			buf[o++] = (char)ch;
	}
	buf[o] = '\0';
}

/* Compare pid text k[0..n) with a pid's key. */
static int
keycmp(const char *k, size_t n, const char *key)
{
	int d = strncmp(k, key, n);

	return d != 0 ? d : key[n] == '\0' ? 0 : -1;
}

/*
 * The output pid of the pid whose JSON text is v[0..n), an integer or a
 * string, made on first sight; NULL for any other value.
 */
static struct pid *
pid_of(struct combine *c, const char *v, size_t n)
{
	size_t lo = 0, hi = c->npids, mid;
	struct pid *p;
	int d;

	if (n == 0 || !(v[0] == '"' || v[0] == '-' || (v[0] >= '0' &&
	    v[0] <= '9')))
		return NULL;
	while (lo < hi) {
		mid = (lo + hi) / 2;
		if ((d = keycmp(v, n, c->pids[mid].key)) == 0)
			return &c->pids[mid];
		if (d < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (c->npids == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 16;
		if ((c->pids = reallocarray(c->pids, c->cap,
		    sizeof(*c->pids))) == NULL)
			errx(CLIENT_EXIT_FAILED, "out of memory");
	}
	memmove(&c->pids[lo + 1], &c->pids[lo], (c->npids - lo) *
	    sizeof(*c->pids));
	p = &c->pids[lo];
	if ((p->key = strndup(v, n)) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	p->pid = c->next_pid++;
	p->named = false;
	c->npids++;
	return p;
}

/* Write one event's text, with the separator before it. */
static int
put_event(struct combine *c, const char *p, size_t n)
{
	if (merge_sink_put(c->out, c->nevents == 0 ? "\n" : ",\n",
	    c->nevents == 0 ? 1 : 2) == -1 ||
	    merge_sink_put(c->out, p, n) == -1)
		return -1;
	c->nevents++;
	return 0;
}

/* Write what the generator holds as one event, and clear it. */
static int
put_gen(struct combine *c)
{
	const unsigned char *buf;
	size_t len;
	int rc = 0;

	if (yajl_gen_get_buf(c->g, &buf, &len) == yajl_gen_status_ok)
		rc = put_event(c, (const char *)buf, len);
	yajl_gen_clear(c->g);
	yajl_gen_reset(c->g, NULL);
	return rc;
}

/* One change to an event's text: n bytes at at become text. */
struct patch {
	size_t	 at, n;
	const char *text;
	size_t	 len;
};

static int
patchcmp(const void *a, const void *b)
{
	size_t x = ((const struct patch *)a)->at;
	size_t y = ((const struct patch *)b)->at;

	return (x > y) - (x < y);
}

/* Is the raw JSON text v[0..n) the string s? (s has no escapes) */
static bool
raw_is(const char *v, size_t n, const char *s)
{
	size_t len = strlen(s);

	return v != NULL && n == len + 2 && v[0] == '"' &&
	    memcmp(v + 1, s, len) == 0 && v[n - 1] == '"';
}

enum { K_PID, K_TS, K_PH, K_NAME, K_ARGS, K_N };

/*
 * Rewrite one event of the current rank (see the top of the file): its
 * text is copied with the pid, the ts and a process name's args.name
 * changed in place, so every other byte stays as written.
 */
static int
rewrite(struct combine *c, const char *text, size_t len, uint64_t offset)
{
	static const char *const keys[K_N] = {
		[K_PID] = "pid", [K_TS] = "ts", [K_PH] = "ph",
		[K_NAME] = "name", [K_ARGS] = "args",
	};
	static const char *const name_key[1] = { "name" };
	struct merge_json_value v[K_N], nv;
	struct patch pt[3];
	char pidtext[24], us[MERGE_US_BUFLEN];
	size_t np = 0, pos = 0;
	struct pid *p = NULL;
	bool meta, pname;
	int64_t own;

	if (merge_json_scan(text, len, keys, K_N, v) == -1) {
		warnx("%s: the event at byte %" PRIu64 " of the uncompressed "
		    "stream is not a JSON object", c->r->t->path, offset);
		return -1;
	}
	meta = raw_is(v[K_PH].p, v[K_PH].n, "M");
	if (meta && raw_is(v[K_NAME].p, v[K_NAME].n, PROC_SORT))
		return 0;
	pname = meta && raw_is(v[K_NAME].p, v[K_NAME].n, PROC_NAME);
	if (v[K_PID].p != NULL &&
	    (p = pid_of(c, v[K_PID].p, v[K_PID].n)) != NULL) {
		pt[np].at = (size_t)(v[K_PID].p - text);
		pt[np].n = v[K_PID].n;
		pt[np].text = pidtext;
		pt[np++].len = (size_t)snprintf(pidtext, sizeof(pidtext),
		    "%" PRId64, p->pid);
	}
	if (v[K_TS].p != NULL && trace_parse_decimal(v[K_TS].p, v[K_TS].n, 3,
	    &own) == 0) {
		pt[np].at = (size_t)(v[K_TS].p - text);
		pt[np].n = v[K_TS].n;
		pt[np].text = us;
		pt[np++].len = merge_fmt_us(own + c->r->t->shift_ns -
		    c->base_ns, us);
	}
	if (pname && v[K_ARGS].p != NULL && merge_json_scan(v[K_ARGS].p,
	    v[K_ARGS].n, name_key, 1, &nv) == 0 && nv.p != NULL &&
	    nv.p[0] == '"') {
		/* the label goes right after the name's opening quote */
		pt[np].at = (size_t)(nv.p + 1 - text);
		pt[np].n = 0;
		pt[np].text = c->label_json;
		pt[np++].len = strlen(c->label_json);
		if (p != NULL)
			p->named = true;
	}
	qsort(pt, np, sizeof(*pt), patchcmp);
	if (merge_sink_put(c->out, c->nevents == 0 ? "\n" : ",\n",
	    c->nevents == 0 ? 1 : 2) == -1)
		return -1;
	for (size_t i = 0; i < np; i++) {
		if (merge_sink_put(c->out, text + pos, pt[i].at - pos) == -1 ||
		    merge_sink_put(c->out, pt[i].text, pt[i].len) == -1)
			return -1;
		pos = pt[i].at + pt[i].n;
	}
	if (merge_sink_put(c->out, text + pos, len - pos) == -1)
		return -1;
	c->nevents++;
	return 0;
}

/* trace_options.on_event: the event's bytes are in hold. */
static void
on_event(const struct trace_event *ev, void *arg)
{
	struct combine *c = arg;
	size_t at;

	if (c->rc != CLIENT_EXIT_OK)
		return;
	if (ev->offset < c->hold_off || ev->offset + ev->length >
	    c->hold_off + c->held) {
		warnx("%s: an event at byte %" PRIu64 " is not where it was "
		    "read", c->r->t->path, ev->offset);
		c->rc = CLIENT_EXIT_FAILED;
		return;
	}
	at = (size_t)(ev->offset - c->hold_off);
	if (rewrite(c, c->hold + at, (size_t)ev->length, ev->offset) == -1)
		c->rc = CLIENT_EXIT_FAILED;
	c->done = ev->offset + ev->length;
}

/* Drop the held bytes before the end of the last event copied. */
static void
hold_trim(struct combine *c)
{
	size_t drop;

	if (c->done <= c->hold_off)
		return;
	drop = (size_t)(c->done - c->hold_off);
	memmove(c->hold, c->hold + drop, c->held - drop);
	c->held -= drop;
	c->hold_off = c->done;
}

/* Append n bytes to hold. */
static void
hold_add(struct combine *c, const char *p, size_t n)
{
	if (c->held + n > c->hold_cap) {
		c->hold_cap = (c->held + n) * 2;
		if ((c->hold = realloc(c->hold, c->hold_cap)) == NULL)
			errx(CLIENT_EXIT_FAILED, "out of memory");
	}
	memcpy(c->hold + c->held, p, n);
	c->held += n;
}

/* Copy the events of rank c->r, rewritten. */
static int
copy_rank(struct combine *c)
{
	struct trace_options opts = { .on_event = on_event, .arg = c };
	struct trace_reader *rd = NULL;
	struct trace_stream *ts;
	struct trace_info info = { 0 };
	struct trace_error err;
	char *buf, msg[384];
	ssize_t n;
	int trc = TRACE_OK;

	c->held = 0;
	c->hold_off = c->done = 0;
	if ((ts = trace_stream_open(c->r->t->path, &err)) == NULL) {
		warnx("%s: %s", c->r->t->path, trace_strerror(&err, msg,
		    sizeof(msg)));
		return CLIENT_EXIT_FAILED;
	}
	if ((buf = malloc(CHUNK)) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	if ((trc = trace_reader_new(&opts, &rd, &err)) != TRACE_OK)
		goto out;
	while (c->rc == CLIENT_EXIT_OK) {
		if ((n = trace_stream_read(ts, buf, CHUNK, &err)) == -1) {
			trc = TRACE_ERR_IO;
			break;
		}
		if (n == 0) {
			trc = trace_reader_finish(rd, &info, &err);
			break;
		}
		hold_add(c, buf, (size_t)n);
		if ((trc = trace_reader_feed(rd, buf, (size_t)n, &err)) !=
		    TRACE_OK)
			break;
		hold_trim(c);
	}
out:
	if (trc != TRACE_OK && c->rc == CLIENT_EXIT_OK) {
		warnx("%s: %s", c->r->t->path, trace_strerror(&err, msg,
		    sizeof(msg)));
		c->rc = CLIENT_EXIT_FAILED;
	}
	trace_info_free(&info);
	trace_reader_free(rd);
	trace_stream_close(ts);
	free(buf);
	return c->rc;
}

/* An M event of pid p: {"ph":"M","name":NAME,"pid":P,"tid":0,"args":{KEY:...}} */
static int
put_meta(struct combine *c, const char *name, int64_t pid, const char *key,
    const char *str, int64_t num)
{
	yajl_gen_map_open(c->g);
	jsonw_str(c->g, "ph");
	jsonw_str(c->g, "M");
	jsonw_str(c->g, "name");
	jsonw_str(c->g, name);
	jsonw_str(c->g, "pid");
	yajl_gen_integer(c->g, pid);
	jsonw_str(c->g, "tid");
	yajl_gen_integer(c->g, 0);
	jsonw_str(c->g, "args");
	yajl_gen_map_open(c->g);
	jsonw_str(c->g, key);
	if (str != NULL)
		jsonw_str(c->g, str);
	else
		yajl_gen_integer(c->g, num);
	yajl_gen_map_close(c->g);
	yajl_gen_map_close(c->g);
	return put_gen(c);
}

/* The names of the rank's unnamed processes, and every sort index. */
static int
put_processes(struct combine *c)
{
	char *name;
	int rc = 0;

	for (size_t i = 0; i < c->npids && rc == 0; i++) {
		const struct pid *p = &c->pids[i];
		const char *k = p->key;
		int klen = (int)strlen(k);

		if (k[0] == '"') {	/* a string pid: its text, unquoted */
			k++;
			klen -= 2;
		}
		if (!p->named) {
			if (asprintf(&name, "%spid %.*s", c->label, klen, k) ==
			    -1)
				errx(CLIENT_EXIT_FAILED, "out of memory");
			rc = put_meta(c, PROC_NAME, p->pid, "name", name, 0);
			free(name);
		}
		if (rc == 0)
			rc = put_meta(c, PROC_SORT, p->pid, "sort_index", NULL,
			    p->pid);
	}
	return rc;
}

/* A merge_put_fn that writes a ',' first when events came before. */
struct after {
	struct combine *c;
	bool started;
};

static int
put_after(void *arg, const char *p, size_t n)
{
	struct after *a = arg;

	if (!a->started) {
		a->started = true;
		if (a->c->nevents > 0 && merge_sink_put(a->c->out, ",", 1) ==
		    -1)
			return -1;
	}
	return merge_sink_put(a->c->out, p, n);
}

/* The cards of rank i's host, on pids of their own (CARD_PIDS). */
static int
put_cards(struct combine *c, size_t i, size_t ncols, const char *device_sql)
{
	const struct merge_rank *r = &c->ranks[i];
	struct trace_target t = *r->t;	/* shallow: read only */
	struct merge_request rq = {
		.t = &t, .cols = r->cols, .ncols = ncols, .map = r->map,
		.host = r->host,
		.sort_base = MERGE_SORT_INDEX + (int64_t)i * CARD_BLOCK,
		.device_sql = device_sql, .lo_ns = r->lo_ns, .hi_ns = r->hi_ns,
		.ts_decimals = 3,	/* ns: the ranks' traces may differ */
	};
	struct after a = { .c = c };
	struct merge_stats st;
	int rc;

	t.shift_ns = c->base_ns;
	t.info.has_max_pid = true;
	t.info.max_pid = CARD_PIDS + (int64_t)i * CARD_BLOCK;
	rc = merge_events_write(r->db, &rq, put_after, &a, &st);
	c->nevents += st.events;
	return rc;
}

/* The header members after the events, and the closing brace. */
static int
put_tail(struct combine *c, const int64_t (*span)[2], size_t n)
{
	const unsigned char *buf;
	size_t len;
	int rc = -1;

	yajl_gen_map_open(c->g);
	jsonw_str(c->g, "displayTimeUnit");
	jsonw_str(c->g, "ms");
	jsonw_str(c->g, "baseTimeNanoseconds");
	yajl_gen_integer(c->g, c->base_ns);
	jsonw_str(c->g, "spyremonRanks");
	yajl_gen_array_open(c->g);
	for (size_t i = 0; i < n; i++) {
		const struct trace_target *t = c->ranks[i].t;

		yajl_gen_map_open(c->g);
		jsonw_str(c->g, "trace");
		jsonw_str(c->g, t->path);
		jsonw_str(c->g, "host");
		jsonw_str(c->g, c->ranks[i].host);
		jsonw_str(c->g, "rank");
		if (t->info.has_rank)
			yajl_gen_integer(c->g, t->info.rank);
		else
			yajl_gen_null(c->g);
		jsonw_str(c->g, "pids");
		yajl_gen_array_open(c->g);
		yajl_gen_integer(c->g, span[i][0]);
		yajl_gen_integer(c->g, span[i][1]);
		yajl_gen_array_close(c->g);
		yajl_gen_map_close(c->g);
	}
	yajl_gen_array_close(c->g);
	yajl_gen_map_close(c->g);
	/* the object's text less its '{': it continues the document */
	if (yajl_gen_get_buf(c->g, &buf, &len) == yajl_gen_status_ok &&
	    merge_sink_put(c->out, "\n],", 3) == 0 &&
	    merge_sink_put(c->out, (const char *)buf + 1, len - 1) == 0 &&
	    merge_sink_put(c->out, "\n", 1) == 0)
		rc = 0;
	yajl_gen_clear(c->g);
	return rc;
}

/* The rank's label: "rank R · HOST · ", or "trace N · HOST · " without a rank. */
static void
make_label(struct combine *c, size_t i)
{
	const struct trace_target *t = c->ranks[i].t;

	if (t->info.has_rank)
		snprintf(c->label, sizeof(c->label), "rank %" PRId64
		    " \xc2\xb7 %s \xc2\xb7 ", t->info.rank, c->ranks[i].host);
	else
		snprintf(c->label, sizeof(c->label), "trace %zu \xc2\xb7 %s "
		    "\xc2\xb7 ", i, c->ranks[i].host);
	json_escape(c->label, c->label_json, sizeof(c->label_json));
}

int
merge_combined_write(const struct merge_rank *r, size_t n, size_t ncols,
    const char *device_sql, const char *out_path)
{
	struct combine c = { .ranks = r, .next_pid = 1, .rc = CLIENT_EXIT_OK };
	int64_t (*span)[2], first = INT64_MAX;
	int rc = CLIENT_EXIT_OK;

	if (n > CARD_RANKS) {
		warnx("--merge: at most %d traces in one combined trace",
		    CARD_RANKS);
		return CLIENT_EXIT_USAGE;
	}
	for (size_t i = 0; i < n; i++)
		if (r[i].t->start_ns < first)
			first = r[i].t->start_ns;
	/* the whole second before the first event: no ts is 0 */
	c.base_ns = first - (first % (int64_t)NSEC_PER_SEC + (int64_t)
	    NSEC_PER_SEC) % (int64_t)NSEC_PER_SEC;
	if (c.base_ns == first)
		c.base_ns -= (int64_t)NSEC_PER_SEC;
	if ((span = calloc(n, sizeof(*span))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	c.g = json_gen_new(false);
	if ((c.out = merge_sink_open(out_path)) == NULL) {
		free(span);
		yajl_gen_free(c.g);
		return CLIENT_EXIT_FAILED;
	}
	if (merge_sink_put(c.out, "{\"traceEvents\":[", 16) == -1)
		rc = CLIENT_EXIT_FAILED;
	for (size_t i = 0; i < n && rc == CLIENT_EXIT_OK; i++) {
		c.rank = i;
		c.r = &r[i];
		make_label(&c, i);
		span[i][0] = c.next_pid;
		if ((rc = copy_rank(&c)) == CLIENT_EXIT_OK &&
		    put_processes(&c) == -1)
			rc = CLIENT_EXIT_FAILED;
		span[i][1] = c.next_pid - 1;
		for (size_t k = 0; k < c.npids; k++)
			free(c.pids[k].key);
		c.npids = 0;
		if (rc == CLIENT_EXIT_OK && c.next_pid >= CARD_PIDS) {
			warnx("%s: too many processes for one combined trace",
			    r[i].t->path);
			rc = CLIENT_EXIT_FAILED;
		}
	}
	for (size_t i = 0; i < n && rc == CLIENT_EXIT_OK; i++)
		rc = put_cards(&c, i, ncols, device_sql);
	if (rc == CLIENT_EXIT_OK && put_tail(&c, (const int64_t (*)[2])span,
	    n) == -1)
		rc = CLIENT_EXIT_FAILED;
	rc = merge_sink_close(c.out, rc);
	free(c.pids);
	free(c.hold);
	free(span);
	yajl_gen_free(c.g);
	return rc;
}
