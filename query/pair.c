/*
 * pair: one sample per card per tick from a card's two streams of rows
 * (pair.h).
 *
 * The rows come in stamp order.  Each becomes an entry of a queue, in
 * that order; an aiu-smi row that joins a file row is merged into the
 * file row's entry instead.  The head of the queue goes out once nothing
 * can join it any more: it is no file row, or an aiu-smi row joined it, or
 * a newer file row of its card was read, or a row stamped at or after its
 * stamp plus its interval was read, or the rows are at their end.
 */
#include "pair.h"

#include <err.h>
#include <stdlib.h>
#include <string.h>

#include "dbread.h"
#include "pragma.h"
#include "schema.h"

#define NS_PER_MS	1000000LL
/*
 * How many of its intervals a file row stays the one an aiu-smi row joins:
 * two, so that a read of the file that came a little late or missed one
 * update (its reads and aiu-smi's ticks keep phases of their own) does
 * not split one tick into two samples.
 */
#define JOIN_INTERVALS	2

struct entry {
	struct pair_sample s;		/* its v and from point at the two below */
	double *v;
	unsigned char *from;
	bool file;			/* it holds a file row ... */
	bool closed;			/* ... that no aiu-smi row may join now */
};

/* A card's newest file row in the queue, by its number (see seq). */
struct card {
	int device;
	int64_t seq;			/* -1: none */
};

struct pair_reader {
	sqlite3_stmt *s;
	size_t ncols;
	bool by_source;
	bool eof;
	int64_t after_ts;		/* samples at or before it: not given out */
	int64_t last_ts;		/* the stamp of the last row read */
	int64_t nfile;
	struct entry *q;		/* a ring of cap entries */
	size_t cap, head, n;
	int64_t head_seq;		/* the number of q[head]; rows are numbered */
	struct card *cards;
	size_t ncards;
	struct entry out;		/* the sample last returned */
};

static void *
xcalloc(size_t n, size_t size)
{
	void *p = calloc(n > 0 ? n : 1, size);

	if (p == NULL)
		errx(EXIT_FAILURE, "out of memory");
	return p;
}

static void
entry_alloc(struct entry *e, size_t ncols)
{
	e->v = xcalloc(ncols, sizeof(*e->v));
	e->from = xcalloc(ncols, sizeof(*e->from));
}

int64_t
pair_read_from(sqlite3 *db, int64_t lo_ns)
{
	sqlite3_stmt *s;
	int64_t from = lo_ns;

	if (!sql_column_exists(db, SCHEMA_T_SAMPLES, SCHEMA_C_SRC))
		return lo_ns;	/* a database before direct reads */
	/* the file rows' partial index covers it (spyremon-schema(5)) */
	if (sqlite3_prepare_v2(db, "SELECT max(" SCHEMA_C_INTERVAL ") FROM "
	    SCHEMA_T_SAMPLES " WHERE " SCHEMA_C_SRC " IS NOT NULL AND "
	    SCHEMA_C_TS " > ?1 AND " SCHEMA_C_TS " <= ?2", -1, &s,
	    NULL) != SQLITE_OK)
		return lo_ns;
	sqlite3_bind_int64(s, 1, lo_ns - JOIN_INTERVALS * DB_MAX_INTERVAL_NS);
	sqlite3_bind_int64(s, 2, lo_ns);
	if (sqlite3_step(s) == SQLITE_ROW)
		from = lo_ns - JOIN_INTERVALS * NS_PER_MS *
		    sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return from;
}

struct pair_reader *
pair_open(sqlite3_stmt *s, size_t ncols, bool by_source, int64_t after_ns)
{
	struct pair_reader *p = xcalloc(1, sizeof(*p));

	p->s = s;
	p->ncols = ncols;
	p->by_source = by_source;
	p->after_ts = after_ns;
	p->last_ts = INT64_MIN;
	entry_alloc(&p->out, ncols);
	return p;
}

void
pair_close(struct pair_reader *p)
{
	if (p == NULL)
		return;
	for (size_t i = 0; i < p->cap; i++) {
		free(p->q[i].v);
		free(p->q[i].from);
	}
	free(p->q);
	free(p->cards);
	free(p->out.v);
	free(p->out.from);
	free(p);
}

int64_t
pair_file_rows(const struct pair_reader *p)
{
	return p->nfile;
}

static struct entry *
at_seq(struct pair_reader *p, int64_t seq)
{
	if (seq < p->head_seq || seq >= p->head_seq + (int64_t)p->n)
		return NULL;
	return &p->q[(p->head + (size_t)(seq - p->head_seq)) % p->cap];
}

/* A new entry at the tail (its arrays kept from the slot's last use). */
static struct entry *
push(struct pair_reader *p)
{
	struct entry *e;

	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 64;
		struct entry *q = xcalloc(cap, sizeof(*q));

		for (size_t i = 0; i < p->n; i++)
			q[i] = p->q[(p->head + i) % p->cap];
		for (size_t i = p->n; i < cap; i++)
			entry_alloc(&q[i], p->ncols);
		free(p->q);
		p->q = q;
		p->cap = cap;
		p->head = 0;
	}
	e = &p->q[(p->head + p->n++) % p->cap];
	e->file = e->closed = false;
	return e;
}

static struct card *
card_of(struct pair_reader *p, int device)
{
	for (size_t i = 0; i < p->ncards; i++)
		if (p->cards[i].device == device)
			return &p->cards[i];
	if ((p->cards = realloc(p->cards, (p->ncards + 1) *
	    sizeof(*p->cards))) == NULL)
		errx(EXIT_FAILURE, "out of memory");
	p->cards[p->ncards] = (struct card){ device, -1 };
	return &p->cards[p->ncards++];
}

/* Whether nothing can join e any more. */
static bool
final(const struct pair_reader *p, const struct entry *e)
{
	return !e->file || e->closed || p->eof ||
	    p->last_ts >= e->s.ts_ns + JOIN_INTERVALS * e->s.interval_ms *
	    NS_PER_MS;
}

/* The row of the statement into e, its values from its stream. */
static void
read_row(struct pair_reader *p, struct entry *e, int src, bool row_source)
{
	sqlite3_stmt *s = p->s;
	unsigned char from = src == SCHEMA_SRC_FILE ? PAIR_FILE : PAIR_SMI;

	e->s.ts_ns = sqlite3_column_int64(s, 0);
	e->s.device = sqlite3_column_int(s, 1);
	e->s.interval_ms = sqlite3_column_int64(s, 2);
	e->s.smi_ns = src == SCHEMA_SRC_FILE ? 0 : e->s.ts_ns;
	e->s.file_ns = src == SCHEMA_SRC_FILE ? e->s.ts_ns : 0;
	e->s.row_source = row_source;
	for (size_t i = 0; i < p->ncols; i++) {
		if (sqlite3_column_type(s, 3 + (int)i) == SQLITE_NULL) {
			e->from[i] = PAIR_NONE;
			continue;
		}
		e->v[i] = sqlite3_column_double(s, 3 + (int)i);
		e->from[i] = from;
	}
}

/*
 * The aiu-smi row of the statement, stamped ts, joins file row f if f's
 * value was in force at ts; true if it did.
 */
static bool
join(struct pair_reader *p, struct entry *f, int64_t ts)
{
	sqlite3_stmt *s = p->s;

	if (f == NULL || f->closed || ts >= f->s.ts_ns + JOIN_INTERVALS *
	    f->s.interval_ms * NS_PER_MS)
		return false;
	for (size_t i = 0; i < p->ncols; i++) {
		if (f->from[i] != PAIR_NONE ||
		    sqlite3_column_type(s, 3 + (int)i) == SQLITE_NULL)
			continue;
		f->v[i] = sqlite3_column_double(s, 3 + (int)i);
		f->from[i] = PAIR_SMI;
	}
	f->s.smi_ns = ts;
	f->closed = true;
	return true;
}

/* Read one row into the queue; 1, 0 at the end, -1 on error. */
static int
step(struct pair_reader *p)
{
	sqlite3_stmt *s = p->s;
	struct entry *e;
	struct card *c;
	int rc, src, dev;
	bool row_source;
	int64_t ts;

	if ((rc = sqlite3_step(s)) == SQLITE_DONE) {
		p->eof = true;
		return 0;
	}
	if (rc != SQLITE_ROW)
		return -1;
	ts = sqlite3_column_int64(s, 0);
	dev = sqlite3_column_int(s, 1);
	src = sqlite3_column_int(s, 3 + (int)p->ncols);
	row_source = sqlite3_column_int(s, 4 + (int)p->ncols) != 0;
	p->last_ts = ts;
	if (src == SCHEMA_SRC_FILE && ts > p->after_ts)
		p->nfile++;
	if (p->by_source) {
		read_row(p, push(p), src, row_source);
		return 1;
	}
	c = card_of(p, dev);
	if (src != SCHEMA_SRC_FILE && !row_source &&
	    join(p, at_seq(p, c->seq), ts))
		return 1;
	if (src == SCHEMA_SRC_FILE) {
		if ((e = at_seq(p, c->seq)) != NULL)
			e->closed = true;	/* a newer file row is read */
		c->seq = p->head_seq + (int64_t)p->n;
	}
	e = push(p);
	read_row(p, e, src, row_source);
	e->file = src == SCHEMA_SRC_FILE;
	return 1;
}

int
pair_next(struct pair_reader *p, struct pair_sample *out)
{
	struct entry *e, t;
	int rc;

	do {
		while (p->n == 0 || !final(p, &p->q[p->head])) {
			if (p->eof && p->n == 0)
				return 0;
			if ((rc = step(p)) == -1)
				return -1;
		}
		/* swap the head's arrays with out's: the slot keeps a pair */
		e = &p->q[p->head];
		t = p->out;
		p->out = *e;
		e->v = t.v;
		e->from = t.from;
		p->head = (p->head + 1) % p->cap;
		p->n--;
		p->head_seq++;
	} while (p->out.s.ts_ns <= p->after_ts);
	*out = p->out.s;
	out->v = p->out.v;
	out->from = p->out.from;
	return 1;
}
