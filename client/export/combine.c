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
 * incremental reader), and every element of its events array is rewritten
 * from a yajl tree of its own bytes: what is held is one event and one
 * chunk, never the trace.
 */
#include <err.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

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
	char	*key;		/* "i" + the integer's text, or "s" + the string */
	int64_t	 pid;
	bool	 named;		/* the trace gave it a process_name */
};

/* The state of the whole combined merge. */
struct combine {
	const struct merge_rank *ranks;	/* all of them */
	const struct merge_rank *r;	/* the rank being copied */
	size_t	 rank;			/* its index */
	char	 label[LABEL_MAX];	/* "rank R · HOST · " */
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

static int
pidcmp(const void *a, const void *b)
{
	return strcmp(((const struct pid *)a)->key,
	    ((const struct pid *)b)->key);
}

/* The output pid of v (an integer or string pid), made on first sight. */
static struct pid *
pid_of(struct combine *c, yajl_val v)
{
	struct pid k, *p;
	size_t at;

	if (YAJL_IS_NUMBER(v)) {
		if (asprintf(&k.key, "i%s", v->u.number.r) == -1)
			errx(CLIENT_EXIT_FAILED, "out of memory");
	} else if (YAJL_IS_STRING(v)) {
		if (asprintf(&k.key, "s%s", v->u.string) == -1)
			errx(CLIENT_EXIT_FAILED, "out of memory");
	} else
		return NULL;
	if ((p = bsearch(&k, c->pids, c->npids, sizeof(k), pidcmp)) != NULL) {
		free(k.key);
		return p;
	}
	if (c->npids == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 16;
		if ((c->pids = reallocarray(c->pids, c->cap,
		    sizeof(*c->pids))) == NULL)
			errx(CLIENT_EXIT_FAILED, "out of memory");
	}
	for (at = c->npids; at > 0 && pidcmp(&c->pids[at - 1], &k) > 0; at--)
		;
	memmove(&c->pids[at + 1], &c->pids[at], (c->npids - at) *
	    sizeof(*c->pids));
	k.pid = c->next_pid++;
	k.named = false;
	c->pids[at] = k;
	c->npids++;
	return &c->pids[at];
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

/* ts as µs after the common base, or as written if it is not a number. */
static void
gen_ts(struct combine *c, yajl_val v)
{
	char us[MERGE_US_BUFLEN];
	int64_t own;
	size_t n;

	if (!YAJL_IS_NUMBER(v) || trace_parse_decimal(v->u.number.r,
	    strlen(v->u.number.r), 3, &own) != 0) {
		json_gen_value(c->g, v);
		return;
	}
	n = merge_fmt_us(own + c->r->t->shift_ns - c->base_ns, us);
	yajl_gen_number(c->g, us, n);
}

/* A process_name's args, the name after the rank's label. */
static void
gen_name_args(struct combine *c, yajl_val args)
{
	char *name;

	yajl_gen_map_open(c->g);
	for (size_t i = 0; YAJL_IS_OBJECT(args) && i < args->u.object.len;
	    i++) {
		yajl_val v = args->u.object.values[i];

		jsonw_str(c->g, args->u.object.keys[i]);
		if (strcmp(args->u.object.keys[i], "name") != 0 ||
		    !YAJL_IS_STRING(v)) {
			json_gen_value(c->g, v);
			continue;
		}
		if (asprintf(&name, "%s%s", c->label, v->u.string) == -1)
			errx(CLIENT_EXIT_FAILED, "out of memory");
		jsonw_str(c->g, name);
		free(name);
	}
	yajl_gen_map_close(c->g);
}

/* Rewrite one event of the current rank (see the top of the file). */
static int
rewrite(struct combine *c, const char *text, uint64_t offset)
{
	char why[256];
	yajl_val ev, pidv;
	const char *ph, *name;
	struct pid *p = NULL;
	bool pname;

	if ((ev = yajl_tree_parse(text, why, sizeof(why))) == NULL ||
	    !YAJL_IS_OBJECT(ev)) {
		warnx("%s: the event at byte %" PRIu64 " of the uncompressed "
		    "stream: %s", c->r->t->path, offset, ev == NULL ? why :
		    "not an object");
		yajl_tree_free(ev);
		return -1;
	}
	ph = json_str(ev, "ph");
	name = json_str(ev, "name");
	pname = ph != NULL && strcmp(ph, "M") == 0 && name != NULL &&
	    strcmp(name, PROC_NAME) == 0;
	if (ph != NULL && strcmp(ph, "M") == 0 && name != NULL &&
	    strcmp(name, PROC_SORT) == 0) {
		yajl_tree_free(ev);
		return 0;
	}
	if ((pidv = json_get(ev, "pid")) != NULL)
		p = pid_of(c, pidv);
	yajl_gen_map_open(c->g);
	for (size_t i = 0; i < ev->u.object.len; i++) {
		const char *k = ev->u.object.keys[i];
		yajl_val v = ev->u.object.values[i];

		jsonw_str(c->g, k);
		if (strcmp(k, "pid") == 0 && p != NULL)
			yajl_gen_integer(c->g, p->pid);
		else if (strcmp(k, "ts") == 0)
			gen_ts(c, v);
		else if (strcmp(k, "args") == 0 && pname)
			gen_name_args(c, v);
		else
			json_gen_value(c->g, v);
	}
	yajl_gen_map_close(c->g);
	if (pname && p != NULL)
		p->named = true;
	yajl_tree_free(ev);
	return put_gen(c);
}

/* trace_options.on_event: the event's bytes are in hold. */
static void
on_event(const struct trace_event *ev, void *arg)
{
	struct combine *c = arg;
	char *text;
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
	if ((text = strndup(c->hold + at, (size_t)ev->length)) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	if (rewrite(c, text, ev->offset) == -1)
		c->rc = CLIENT_EXIT_FAILED;
	free(text);
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

		if (!p->named) {
			if (asprintf(&name, "%spid %s", c->label, p->key + 1) ==
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
	};
	struct after a = { .c = c };
	uint64_t n;
	int rc;

	t.shift_ns = c->base_ns;
	t.info.has_max_pid = true;
	t.info.max_pid = CARD_PIDS + (int64_t)i * CARD_BLOCK;
	rc = merge_events_write(r->db, &rq, put_after, &a, &n);
	c->nevents += n;
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
	if ((span = calloc(n, sizeof(*span))) == NULL ||
	    (c.g = json_gen_new(false)) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
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
