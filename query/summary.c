/*
 * summary: a window's figures per card, computed from its samples, stored
 * and loaded (summary.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bestsrc.h"
#include "dbread.h"
#include "schema.h"
#include "pragma.h"
#include "summary.h"

const char *const summary_bw_keys[SUMMARY_NBW] = {
	"rdmem", "wrmem", "rxpci", "txpci", "rdrdma", "wrrdma",
};

/* No interval is longer than 60 s (spyremond.yaml(5)). */
#define MAX_INTERVAL_NS		(60 * 1000000000LL)
#define GIB			1073741824.0

/* The metrics read, in the order of the SELECT's columns after the fixed three. */
enum {
	K_PWR, K_GTEMP, K_BUSY, K_BW0,
	K_ACTMEM = K_BW0 + SUMMARY_NBW, K_PEAKMEM, K_N
};

/* A metric's column, or absent. */
struct col {
	bool	 present;
	char	 col[64];
	int	 decimals;
};

/* Per card, while the samples are read. */
struct acc {
	struct summary_card *c;
	struct energy_acc pwr, busy, bw[SUMMARY_NBW];
	double	*pvals;			/* power values, for p95 */
	size_t	 npvals, pcap;
	int64_t	 last_ts;		/* 0 before the first sample */
	int64_t	 last_ival;
	bool	 bw_busy_seen[SUMMARY_NBW];	/* a value while busy > 0 */
	bool	 bw_busy_nonzero[SUMMARY_NBW];
	bool	*unrel_seen;		/* per unreliable column */
	double	*idle;			/* idle power values */
	size_t	 nidle, icap;
	/* the rule's file rows: idle when an aiu-smi idle row covers them */
	struct span { int64_t lo, hi; double v; } *ispan, *fpwr;
	size_t	 nispan, iscap, nfpwr, fpcap;
	const struct summary_idle_card *known;	/* from the cache, or NULL */
};

struct ctx {
	sqlite3	*db;
	struct summary *s;
	struct col k[K_N];
	struct col *unrel;		/* the catalog's unreliable metrics */
	char	**unrel_key;
	size_t	 nunrel;
	struct bestsrc b;		/* the rule (bestsrc.h) */
	const char **names;		/* b's columns: k[], then unrel[] */
	struct acc *a;			/* parallel to s->cards */
	struct { int device; int64_t lo, hi; } *coarse;
	size_t	 ncoarse;
	int64_t	 lo, hi;		/* the piece being read (db_window_pieces) */
	int64_t	 clip_lo;		/* where its rows' intervals are cut: lo,
					   or for a piece a step began its
					   from_ns (every row of its epoch is
					   the window's, the first one's
					   interval reaching back over the
					   step included) */
	int64_t	 span_ns;		/* the pieces' time together */
};

static const char *const fixed_keys[K_N] = {
	[K_PWR] = "pwr", [K_GTEMP] = "gtemp", [K_BUSY] = "busy",
	[K_ACTMEM] = "actmem", [K_PEAKMEM] = "peakmem",
};

static const char *
key_of(int k)
{
	return k >= K_BW0 && k < K_BW0 + SUMMARY_NBW ?
	    summary_bw_keys[k - K_BW0] : fixed_keys[k];
}

static int
nomem(sqlite3 *db)
{
	(void)db;
	errno = ENOMEM;
	return -1;
}


/* The columns of the metrics read, and the unreliable ones. */
static int
load_catalog(struct ctx *x)
{
	sqlite3_stmt *s;
	int rc;

	if (sqlite3_prepare_v2(x->db, "SELECT key, col, decimals, reliable "
	    "FROM " SCHEMA_T_METRICS " ORDER BY id", -1, &s, NULL) != SQLITE_OK)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *key = (const char *)sqlite3_column_text(s, 0);
		const char *col = (const char *)sqlite3_column_text(s, 1);
		int dec = sqlite3_column_int(s, 2);
		struct col c = { .present = true, .decimals = dec };

		if (key == NULL || col == NULL || dec < 0 ||
		    dec > ENERGY_SCALE_MAX)
			continue;
		snprintf(c.col, sizeof(c.col), "%s", col);
		for (int k = 0; k < K_N; k++)
			if (strcmp(key, key_of(k)) == 0)
				x->k[k] = c;
		if (sqlite3_column_int(s, 3) == 0) {
			struct col *u = realloc(x->unrel,
			    (x->nunrel + 1) * sizeof(*u));
			char **uk = realloc(x->unrel_key,
			    (x->nunrel + 1) * sizeof(*uk));

			if (u != NULL)
				x->unrel = u;
			if (uk != NULL)
				x->unrel_key = uk;
			if (u == NULL || uk == NULL ||
			    (uk[x->nunrel] = strdup(key)) == NULL) {
				sqlite3_finalize(s);
				return nomem(x->db);
			}
			u[x->nunrel++] = c;
		}
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* The coarse runs of imported samples that overlap the window. */
static int
load_coarse(struct ctx *x)
{
	sqlite3_stmt *s;
	int rc;

	if (sql_table_exists(x->db, SCHEMA_T_IMPORTS) != 1)
		return 0;
	if (sqlite3_prepare_v2(x->db, "SELECT device, first_ns, last_ns FROM "
	    SCHEMA_T_IMPORTS " WHERE coarse = 1 AND last_ns >= ?1 AND "
	    "first_ns <= ?2", -1, &s, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(s, 1, x->s->begin_ns);
	sqlite3_bind_int64(s, 2, x->s->end_ns + MAX_INTERVAL_NS);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		void *p = realloc(x->coarse, (x->ncoarse + 1) *
		    sizeof(*x->coarse));

		if (p == NULL) {
			sqlite3_finalize(s);
			return nomem(x->db);
		}
		x->coarse = p;
		x->coarse[x->ncoarse].device = sqlite3_column_int(s, 0);
		x->coarse[x->ncoarse].lo = sqlite3_column_int64(s, 1);
		x->coarse[x->ncoarse].hi = sqlite3_column_int64(s, 2);
		x->ncoarse++;
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : -1;
}

static bool
is_coarse(const struct ctx *x, int device, int64_t ts)
{
	for (size_t i = 0; i < x->ncoarse; i++)
		if (x->coarse[i].device == device && ts >= x->coarse[i].lo &&
		    ts <= x->coarse[i].hi)
			return true;
	return false;
}

/* The card of device, added in device order if new; NULL out of memory. */
static struct acc *
card_of(struct ctx *x, int device)
{
	struct summary *s = x->s;
	size_t i;
	void *p;

	for (i = 0; i < s->ncards; i++)
		if (s->cards[i].device == device)
			return &x->a[i];
	if ((p = realloc(s->cards, (s->ncards + 1) * sizeof(*s->cards))) ==
	    NULL)
		return NULL;
	s->cards = p;
	if ((p = realloc(x->a, (s->ncards + 1) * sizeof(*x->a))) == NULL)
		return NULL;
	x->a = p;
	for (i = s->ncards; i > 0 && s->cards[i - 1].device > device; i--) {
		s->cards[i] = s->cards[i - 1];
		x->a[i] = x->a[i - 1];
	}
	memset(&s->cards[i], 0, sizeof(s->cards[i]));
	memset(&x->a[i], 0, sizeof(x->a[i]));
	s->cards[i].device = device;
	energy_init(&x->a[i].pwr);
	energy_init(&x->a[i].busy);
	for (int b = 0; b < SUMMARY_NBW; b++)
		energy_init(&x->a[i].bw[b]);
	if (x->nunrel > 0 && (x->a[i].unrel_seen = calloc(x->nunrel,
	    sizeof(bool))) == NULL)
		return NULL;
	s->ncards++;
	for (size_t j = 0; j < s->ncards; j++)
		x->a[j].c = &s->cards[j];
	return &x->a[i];
}

/* Column i of s as mant / 10^scale with c's decimals; false if NULL. */
static bool
value(sqlite3_stmt *s, int i, const struct col *c, int64_t *mant, int *scale)
{
	switch (sqlite3_column_type(s, i)) {
	case SQLITE_INTEGER:
		*mant = sqlite3_column_int64(s, i);
		*scale = c->decimals;
		return true;
	case SQLITE_FLOAT:
		return energy_real_value(sqlite3_column_double(s, i),
		    c->decimals, mant, scale);
	default:
		return false;
	}
}

static double
as_double(int64_t mant, int scale)
{
	double v = (double)mant;

	while (scale-- > 0)
		v /= 10;
	return v;
}

static bool
push(double **v, size_t *n, size_t *cap, double x)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 256;
		double *p = realloc(*v, nc * sizeof(*p));

		if (p == NULL)
			return false;
		*v = p;
		*cap = nc;
	}
	(*v)[(*n)++] = x;
	return true;
}

/* Note an uncovered stretch (lo, hi) if it is longer than two intervals. */
static void
gap(struct summary_card *c, int64_t lo, int64_t hi, int64_t ival)
{
	if (ival > 0 && hi - lo > 2 * ival) {
		c->gaps++;
		c->gap_ns += hi - lo;
	}
}

/* Append ", " and text to a list in buf. */
static void
list_add(char *buf, size_t len, const char *text)
{
	size_t n = strlen(buf);

	snprintf(buf + n, len - n, "%s%s", n > 0 ? "," : "", text);
}

/* The columns the rule chooses among: k[] in order, then unrel[]. */
static int
rule_columns(struct ctx *x)
{
	if ((x->names = calloc(K_N + x->nunrel, sizeof(*x->names))) == NULL)
		return nomem(x->db);
	for (int k = 0; k < K_N; k++)
		x->names[k] = x->k[k].present ? x->k[k].col : NULL;
	for (size_t u = 0; u < x->nunrel; u++)
		x->names[K_N + u] = x->unrel[u].col;
	return bestsrc_init(x->db, &x->b, x->names, K_N + x->nunrel);
}

/*
 * The window's samples: ts, device, interval, the K_N values and whether
 * each unreliable column holds one, as the rule selects them, then
 * whether the row is of its card's row source, then how many of its
 * values are not finite numbers (bestsrc_bad).  Idle (the look-back
 * span, ?1 < ts <= ?2): ts, device, interval, pwr; with the rule also
 * the row's source, and file rows whatever aiu-smi's busy, by device and
 * time, since an aiu-smi row's busy tells whether the file rows its
 * interval covers were idle.
 */
static sqlite3_stmt *
select_samples(struct ctx *x, bool idle)
{
	static const char idle_span[] = SCHEMA_C_TS " > ?1 AND " SCHEMA_C_TS
	    " <= ?2";
	static const char win_span[] = SCHEMA_C_TS " > ?1 AND " SCHEMA_C_TS
	    " < ?3 AND " SCHEMA_C_TS " - " SCHEMA_C_INTERVAL " * 1000000 < ?2";
	sqlite3_str *q = sqlite3_str_new(x->db);
	struct bestsrc pb = x->b;
	sqlite3_stmt *s = NULL;
	char *sql;

	if (idle) {
		/* only pwr: the first of b's columns */
		pb.ncols = 1;
		bestsrc_with(q, &pb, idle_span);
		sqlite3_str_appendall(q, "SELECT " SCHEMA_C_TS ", "
		    SCHEMA_C_DEVICE ", " SCHEMA_C_INTERVAL ", ");
		bestsrc_col(q, &pb, K_PWR);
		sqlite3_str_appendall(q, ", ");
		bestsrc_src(q, &pb);
		bestsrc_from(q, &pb);
		sqlite3_str_appendf(q, " WHERE %s AND ", idle_span);
		if (pb.on)
			sqlite3_str_appendf(q, "(" SCHEMA_C_SRC " IS NOT NULL "
			    "OR \"%w\" = 0) ORDER BY " SCHEMA_C_DEVICE ", "
			    SCHEMA_C_TS, x->k[K_BUSY].col);
		else
			sqlite3_str_appendf(q, "\"%w\" = 0", x->k[K_BUSY].col);
	} else {
		bestsrc_with(q, &x->b, win_span);
		sqlite3_str_appendall(q, "SELECT " SCHEMA_C_TS ", "
		    SCHEMA_C_DEVICE ", " SCHEMA_C_INTERVAL);
		for (int k = 0; k < K_N; k++) {
			sqlite3_str_appendall(q, ", ");
			bestsrc_col(q, &x->b, (size_t)k);
		}
		for (size_t u = 0; u < x->nunrel; u++) {
			sqlite3_str_appendall(q, ", (");
			bestsrc_col(q, &x->b, K_N + u);
			sqlite3_str_appendall(q, ") IS NOT NULL");
		}
		sqlite3_str_appendall(q, ", ");
		bestsrc_row(q, &x->b);
		sqlite3_str_appendall(q, ", ");
		bestsrc_bad(q, &x->b);
		bestsrc_from(q, &x->b);
		/* the samples whose interval overlaps (?1, ?2), of one
		 * epoch of the host clock (db_bind_epoch) */
		sqlite3_str_appendf(q, " WHERE %s%s", win_span,
		    db_epoch_sql(x->db));
	}
	if ((sql = sqlite3_str_finish(q)) == NULL)
		return NULL;
	if (sqlite3_prepare_v2(x->db, sql, -1, &s, NULL) != SQLITE_OK)
		s = NULL;
	sqlite3_free(sql);
	return s;
}

/*
 * The row's interval in ns into *ival_ns: false unless both its stamp
 * and its interval are integers and the interval is within [0,
 * MAX_INTERVAL_NS] (a database written elsewhere may hold anything).
 */
static bool
row_interval(sqlite3_stmt *s, int64_t *ival_ns)
{
	int64_t ival = sqlite3_column_int64(s, 2);

	if (sqlite3_column_type(s, 0) != SQLITE_INTEGER ||
	    sqlite3_column_type(s, 2) != SQLITE_INTEGER || ival < 0 ||
	    ival > MAX_INTERVAL_NS / 1000000)
		return false;
	*ival_ns = ival * 1000000;
	return true;
}

/* One sample row of select_samples(x, false). */
static int
add_row(struct ctx *x, sqlite3_stmt *s)
{
	int64_t b = x->clip_lo, e = x->hi;
	int64_t ts = sqlite3_column_int64(s, 0);
	int64_t ival;
	struct acc *a;
	struct summary_card *c;
	int64_t mant, busy_mant = 0;
	int scale;
	bool busy = false;

	if ((a = card_of(x, sqlite3_column_int(s, 1))) == NULL)
		return nomem(x->db);
	c = a->c;
	/* values that are not finite numbers: left out (NULL), counted */
	c->bad_values += sqlite3_column_int64(s, 4 + K_N + (int)x->nunrel);
	if (!row_interval(s, &ival)) {
		c->bad_values++;	/* no time it covers: the whole row */
		return 0;
	}
	/* row figures: the card's row source only (bestsrc.h) */
	if (sqlite3_column_int(s, 3 + K_N + (int)x->nunrel) != 0) {
		c->samples++;
		if (ival / 1000000 > c->max_interval_ms)
			c->max_interval_ms = ival / 1000000;
		c->covered_ns += energy_overlap(ts - ival, ts, b, e);
		/* the stretch before this sample's interval that none covers */
		gap(c, a->last_ts != 0 ? a->last_ts : x->lo, ts - ival, ival);
		a->last_ts = ts;
		a->last_ival = ival;
		if (x->ncoarse > 0 && is_coarse(x, c->device, ts))
			c->coarse_samples++;
	}
	if (x->k[K_PWR].present && value(s, 3 + K_PWR, &x->k[K_PWR], &mant,
	    &scale)) {
		double v = as_double(mant, scale);

		energy_add(&a->pwr, mant, scale, ts - ival, ts, b, e);
		if (!c->has_power || v < c->power_min)
			c->power_min = v;
		if (!c->has_power || v > c->power_max)
			c->power_max = v;
		c->has_power = true;
		if (!push(&a->pvals, &a->npvals, &a->pcap, v))
			return nomem(x->db);
	}
	if (x->k[K_BUSY].present && value(s, 3 + K_BUSY, &x->k[K_BUSY],
	    &busy_mant, &scale)) {
		energy_add(&a->busy, busy_mant, scale, ts - ival, ts, b, e);
		c->has_busy = true;
		if ((busy = busy_mant > 0))
			c->busy_samples++;
	}
	if (x->k[K_GTEMP].present && value(s, 3 + K_GTEMP, &x->k[K_GTEMP],
	    &mant, &scale)) {
		double v = as_double(mant, scale);

		if (!c->has_gtemp || v > c->gtemp_max)
			c->gtemp_max = v;
		c->has_gtemp = true;
	}
	for (int k = K_ACTMEM; k <= K_PEAKMEM; k++) {
		bool *has = k == K_ACTMEM ? &c->has_actmem : &c->has_peakmem;
		double *peak = k == K_ACTMEM ? &c->actmem_peak :
		    &c->peakmem_peak;

		if (x->k[k].present && value(s, 3 + k, &x->k[k], &mant,
		    &scale)) {
			double v = as_double(mant, scale);

			if (!*has || v > *peak)
				*peak = v;
			*has = true;
		}
	}
	for (int i = 0; i < SUMMARY_NBW; i++) {
		int k = K_BW0 + i;

		if (!x->k[k].present || !value(s, 3 + k, &x->k[k], &mant,
		    &scale))
			continue;
		energy_add(&a->bw[i], mant, scale, ts - ival, ts, b, e);
		if (!c->bw[i].has || as_double(mant, scale) > c->bw[i].max)
			c->bw[i].max = as_double(mant, scale);
		c->bw[i].has = true;
		if (busy) {
			a->bw_busy_seen[i] = true;
			if (mant != 0)
				a->bw_busy_nonzero[i] = true;
		}
	}
	for (size_t u = 0; u < x->nunrel; u++)
		if (sqlite3_column_int(s, 3 + K_N + (int)u) != 0)
			a->unrel_seen[u] = true;
	return 0;
}

static int
dblcmp(const void *p, const void *q)
{
	double a = *(const double *)p, b = *(const double *)q;

	return (a > b) - (a < b);
}

/* The sample standard deviation of v[0..n), 0 for n < 2 (two passes). */
static double
stddev(const double *v, size_t n)
{
	double m = 0, ss = 0;

	if (n < 2)
		return 0;
	for (size_t i = 0; i < n; i++)
		m += v[i];
	m /= (double)n;
	for (size_t i = 0; i < n; i++)
		ss += (v[i] - m) * (v[i] - m);
	return sqrt(ss / (double)(n - 1));
}

/* The integral of a as a double, from its exact decimal. */
static double
integral(const struct energy_acc *a)
{
	char buf[ENERGY_BUFLEN];

	if (!energy_integral(a, buf, sizeof(buf)))
		return 0;
	return strtod(buf, NULL);
}

static double
mean(const struct energy_acc *a)
{
	char buf[ENERGY_BUFLEN];

	if (!energy_mean(a, 9, true, buf, sizeof(buf)))
		return 0;
	return strtod(buf, NULL);
}

static bool
push_span(struct span **v, size_t *n, size_t *cap, struct span x)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 256;
		struct span *p = realloc(*v, nc * sizeof(*p));

		if (p == NULL)
			return false;
		*v = p;
		*cap = nc;
	}
	(*v)[(*n)++] = x;
	return true;
}

/* A read met a damaged page: keep SQLite's message (the first one). */
static void
note_damage(struct ctx *x)
{
	if (!x->s->damaged)
		snprintf(x->s->damage, sizeof(x->s->damage), "%s",
		    sqlite3_errmsg(x->db));
	x->s->damaged = true;
}

/*
 * The read of the window's rows (s, bound) stopped at a damaged page
 * after the row stamped last_ts (0: before any).  Read the stamps back
 * from the window's far end down to the damage, and go on with s from
 * the earliest of them, so that the rows after the damage count too;
 * estimate the rows lost in between from each card's interval.
 */
static int
read_past_damage(struct ctx *x, sqlite3_stmt *s, int64_t last_ts)
{
	int64_t lo = last_ts != 0 ? last_ts : x->lo, first = 0;
	int step;

	note_damage(x);
	x->s->unread_rows = -1;
	if (summary_after_damage(x->db, lo, x->hi + MAX_INTERVAL_NS,
	    &first) == -1)
		return -1;
	if (first != 0 && first > lo) {
		sqlite3_reset(s);
		sqlite3_bind_int64(s, 1, first);
		while ((step = sqlite3_step(s)) == SQLITE_ROW)
			if (add_row(x, s) == -1)
				return -1;
		if (step != SQLITE_DONE && !sql_is_damage(sqlite3_errcode(x->db)))
			return -1;
	}
	/* the span no row could be read in, and each card's cadence */
	if (x->s->ncards > 0) {
		int64_t hi = first != 0 ? first : x->hi;

		if (hi > x->hi)
			hi = x->hi;
		if (lo < x->lo)
			lo = x->lo;
		x->s->unread_rows = 0;
		for (size_t i = 0; i < x->s->ncards; i++) {
			int64_t ival = x->s->cards[i].max_interval_ms * 1000000;

			if (ival > 0 && hi > lo)
				x->s->unread_rows += (hi - lo - 1) / ival;
		}
	}
	return 0;
}

int
summary_after_damage(sqlite3 *db, int64_t after_ns, int64_t below_ns,
    int64_t *first)
{
	sqlite3_stmt *back;
	int64_t at = 0;
	int step;

	*first = 0;
	if (sqlite3_prepare_v2(db, "SELECT " SCHEMA_C_TS " FROM "
	    SCHEMA_T_SAMPLES " WHERE " SCHEMA_C_TS " > ?1 AND " SCHEMA_C_TS
	    " < ?2 ORDER BY " SCHEMA_C_TS " DESC", -1, &back, NULL) !=
	    SQLITE_OK)
		return -1;
	sqlite3_bind_int64(back, 1, after_ns);
	sqlite3_bind_int64(back, 2, below_ns);
	while ((step = sqlite3_step(back)) == SQLITE_ROW)
		at = sqlite3_column_int64(back, 0);
	sqlite3_finalize(back);
	if (step != SQLITE_DONE && !sql_is_damage(sqlite3_errcode(db)))
		return -1;
	/*
	 * Read back to the damage, or through to after_ns (then the damage
	 * is where this order does not lead: nothing after it to add).
	 */
	*first = step == SQLITE_DONE ? below_ns : at;
	return 0;
}

void
summary_damage_note(const struct summary *s, const char *file, char *buf,
    size_t len)
{
	if (s->unread_rows >= 0)
		snprintf(buf, len, "about %lld rows " SUMMARY_DAMAGE_MARK
		    "%s): %s", (long long)s->unread_rows, file, s->damage);
	else
		snprintf(buf, len, "rows " SUMMARY_DAMAGE_MARK "%s): %s", file,
		    s->damage);
}

bool
summary_damage_find(const char *end_note, char *buf, size_t len)
{
	const char *m, *from, *to;

	if (end_note == NULL || (m = strstr(end_note, SUMMARY_DAMAGE_MARK)) ==
	    NULL)
		return false;
	/* notes are joined with "; ": the sentence is the one around m */
	for (from = m; from > end_note && !(from[-1] == ' ' &&
	    from - 1 > end_note && from[-2] == ';'); from--)
		;
	if ((to = strstr(m, "; ")) == NULL)
		to = m + strlen(m);
	if (len > 0)
		snprintf(buf, len, "%.*s", (int)(to - from), from);
	return true;
}

/*
 * With the rule: keep an aiu-smi row's interval (busy 0: the query's
 * condition) and a file row's power, to be matched by idle_file_rows.
 */
static int
note_idle(struct ctx *x, struct acc *a, sqlite3_stmt *s)
{
	int64_t ts = sqlite3_column_int64(s, 0);
	int64_t ival;
	int64_t mant;
	int scale;

	if (!row_interval(s, &ival))
		return 0;
	if (sqlite3_column_int(s, 4) == 0)
		return push_span(&a->ispan, &a->nispan, &a->iscap,
		    (struct span){ ts - ival, ts, 0 }) ? 0 : -1;
	if (!value(s, 3, &x->k[K_PWR], &mant, &scale))
		return 0;
	return push_span(&a->fpwr, &a->nfpwr, &a->fpcap,
	    (struct span){ ts, ts, as_double(mant, scale) }) ? 0 : -1;
}

/*
 * A file row is idle when an aiu-smi row with busy 0 covers its stamp:
 * both lists are in time order (the query's), so one merge walk.
 */
static int
idle_file_rows(struct acc *a)
{
	size_t j = 0;

	for (size_t i = 0; i < a->nfpwr; i++) {
		int64_t t = a->fpwr[i].hi;

		while (j < a->nispan && a->ispan[j].hi < t)
			j++;
		if (j < a->nispan && a->ispan[j].lo < t &&
		    !push(&a->idle, &a->nidle, &a->icap, a->fpwr[i].v))
			return -1;
	}
	return 0;
}

/*
 * The idle power of each card: the median of its power values with busy
 * 0; under the rule, a card whose power comes from its file rows takes
 * those of them that an aiu-smi row with busy 0 covers.
 */
static int
learn_idle(struct ctx *x)
{
	sqlite3_stmt *s;
	int64_t lo, hi;
	int rc;

	if (!x->k[K_PWR].present || !x->k[K_BUSY].present)
		return 0;
	if ((s = select_samples(x, true)) == NULL)
		return -1;
	summary_idle_span(x->s, &lo, &hi);
	sqlite3_bind_int64(s, 1, lo);
	sqlite3_bind_int64(s, 2, hi);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int device = sqlite3_column_int(s, 1);
		int64_t mant;
		int scale;
		size_t i;

		for (i = 0; i < x->s->ncards; i++)
			if (x->s->cards[i].device == device)
				break;
		if (i == x->s->ncards)
			continue;
		if (x->b.on && note_idle(x, &x->a[i], s) == -1) {
			sqlite3_finalize(s);
			return nomem(x->db);
		}
		if ((x->b.on && sqlite3_column_int(s, 4) != 0) ||
		    !value(s, 3, &x->k[K_PWR], &mant, &scale))
			continue;
		if (!push(&x->a[i].idle, &x->a[i].nidle, &x->a[i].icap,
		    as_double(mant, scale))) {
			sqlite3_finalize(s);
			return nomem(x->db);
		}
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE && sql_is_damage(sqlite3_errcode(x->db))) {
		/*
		 * The look-back is cut: no idle figures rather than wrong
		 * ones.  The window's own rows are whole (not damaged).
		 */
		for (size_t i = 0; i < x->s->ncards; i++)
			x->a[i].nidle = x->a[i].nfpwr = x->a[i].nispan = 0;
		return 0;
	}
	if (rc != SQLITE_DONE)
		return -1;
	for (size_t i = 0; i < x->s->ncards; i++)
		if (idle_file_rows(&x->a[i]) == -1)
			return nomem(x->db);
	return 0;
}

/* The figures that come from the accumulators, once every row is in. */
static void
finish(struct ctx *x)
{
	for (size_t i = 0; i < x->s->ncards; i++) {
		struct acc *a = &x->a[i];
		struct summary_card *c = a->c;

		if (a->last_ts != 0)
			gap(c, a->last_ts, x->hi, a->last_ival);
		/* intervals that overlap (rows from elsewhere) cover it once */
		if (c->covered_ns > x->span_ns)
			c->covered_ns = x->span_ns;
		if (c->has_power) {
			size_t r;

			energy_integral(&a->pwr, c->energy_j,
			    sizeof(c->energy_j));
			c->power_mean = mean(&a->pwr);
			qsort(a->pvals, a->npvals, sizeof(double), dblcmp);
			/* nearest rank: the ceil(0.95 n)-th smallest */
			r = (a->npvals * 95 + 99) / 100;
			c->power_p95 = a->pvals[r > 0 ? r - 1 : 0];
			c->power_n = (int64_t)a->npvals;
			c->power_sd = stddev(a->pvals, a->npvals);
		}
		if (c->has_busy)
			c->busy_mean = mean(&a->busy);
		for (int b = 0; b < SUMMARY_NBW; b++) {
			if (!c->bw[b].has)
				continue;
			c->bw[b].mean = mean(&a->bw[b]);
			c->bw[b].bytes = integral(&a->bw[b]) * GIB;
			if (a->bw_busy_seen[b] && !a->bw_busy_nonzero[b])
				list_add(c->zero_while_busy,
				    sizeof(c->zero_while_busy),
				    summary_bw_keys[b]);
		}
		for (size_t u = 0; u < x->nunrel; u++)
			if (a->unrel_seen[u])
				list_add(c->unreliable, sizeof(c->unreliable),
				    x->unrel_key[u]);
		if (c->has_power && a->known != NULL && a->known->has) {
			c->idle_w = a->known->idle_w;
			c->idle_samples = a->known->samples;
			c->has_idle = true;
		} else if (c->has_power && a->known == NULL && a->nidle > 0) {
			qsort(a->idle, a->nidle, sizeof(double), dblcmp);
			c->idle_w = a->nidle % 2 ? a->idle[a->nidle / 2] :
			    (a->idle[a->nidle / 2 - 1] +
			    a->idle[a->nidle / 2]) / 2;
			c->idle_samples = (int64_t)a->nidle;
			c->has_idle = true;
		}
		if (c->has_idle)
			c->net_energy_j = summary_energy(c) - c->idle_w *
			    (double)a->pwr.covered_ns / 1e9;
	}
}

static void
ctx_free(struct ctx *x)
{
	for (size_t i = 0; x->a != NULL && i < x->s->ncards; i++) {
		free(x->a[i].pvals);
		free(x->a[i].idle);
		free(x->a[i].unrel_seen);
		free(x->a[i].ispan);
		free(x->a[i].fpwr);
	}
	free(x->names);
	free(x->a);
	for (size_t u = 0; u < x->nunrel; u++)
		free(x->unrel_key[u]);
	free(x->unrel_key);
	free(x->unrel);
	free(x->coarse);
}

/* Point each card at its cached idle figures; false if the cache does not fit. */
static bool
idle_from_cache(struct ctx *x, const struct summary_idle_cache *cache)
{
	if (!summary_idle_cache_fits(cache, x->s))
		return false;
	for (size_t i = 0; i < x->s->ncards; i++)
		x->a[i].known = summary_idle_cache_card(cache,
		    x->s->cards[i].device);
	return true;
}

int
summary_compute(sqlite3 *db, int64_t id, int64_t begin_ns, int64_t end_ns,
    int64_t idle_lookback_ns, int64_t now_ns, struct summary *out)
{
	return summary_compute_cached(db, id, begin_ns, end_ns,
	    idle_lookback_ns, now_ns, NULL, out);
}

int
summary_compute_cached(sqlite3 *db, int64_t id, int64_t begin_ns,
    int64_t end_ns, int64_t idle_lookback_ns, int64_t now_ns,
    struct summary_idle_cache *cache, struct summary *out)
{
	struct ctx x = { .db = db, .s = out };
	struct db_piece *p = NULL;
	size_t np = 0;
	int64_t last_ts = 0;
	bool reused;
	sqlite3_stmt *s = NULL;
	int rc = -1, step = SQLITE_DONE;

	memset(out, 0, sizeof(*out));
	out->window_id = id;
	out->begin_ns = begin_ns;
	out->end_ns = end_ns < begin_ns ? begin_ns : end_ns;
	out->computed_ns = now_ns;
	out->idle_lookback_ns = idle_lookback_ns < 0 ? 0 : idle_lookback_ns;
	/* one piece per epoch of the host clock the window spans */
	if (db_window_pieces_of(db, id, begin_ns, end_ns, &p, &np) == -1)
		goto done;
	for (size_t i = 0; i < np; i++)
		x.span_ns += p[i].hi_ns > p[i].lo_ns ? p[i].hi_ns - p[i].lo_ns :
		    0;
	/* a step crossed it: as long as its pieces, from its begin */
	if (np > 1)
		out->end_ns = begin_ns + x.span_ns;
	if (load_catalog(&x) == -1 || load_coarse(&x) == -1 ||
	    rule_columns(&x) == -1 || (s = select_samples(&x, false)) == NULL)
		goto done;
	for (size_t i = 0; i < np && step == SQLITE_DONE; i++) {
		x.lo = p[i].lo_ns;
		x.clip_lo = i > 0 ? p[i].from_ns : p[i].lo_ns;
		x.hi = p[i].hi_ns < p[i].lo_ns ? p[i].lo_ns : p[i].hi_ns;
		/* each card's gaps from the piece's start */
		for (size_t c = 0; i > 0 && c < out->ncards; c++) {
			if (x.a[c].last_ts != 0)
				gap(x.a[c].c, x.a[c].last_ts, p[i - 1].hi_ns,
				    x.a[c].last_ival);
			x.a[c].last_ts = 0;
		}
		db_bind_epoch(s, p[i].epoch);
		sqlite3_reset(s);
		sqlite3_bind_int64(s, 1, p[i].from_ns);
		sqlite3_bind_int64(s, 2, x.hi);
		sqlite3_bind_int64(s, 3, x.hi + MAX_INTERVAL_NS);
		while ((step = sqlite3_step(s)) == SQLITE_ROW) {
			last_ts = sqlite3_column_int64(s, 0);
			if (add_row(&x, s) == -1)
				goto done;
		}
	}
	/* a damaged page: the figures of what can be read, and the damage */
	if (step != SQLITE_DONE && (!sql_is_damage(sqlite3_errcode(db)) ||
	    read_past_damage(&x, s, last_ts) == -1))
		goto done;
	reused = cache != NULL && idle_from_cache(&x, cache);
	if (cache != NULL)
		reused ? cache->hits++ : cache->misses++;
	if (!reused && learn_idle(&x) == -1)
		goto done;
	finish(&x);
	if (cache != NULL && !reused)
		summary_idle_cache_keep(out, cache);
	rc = 0;
done:
	sqlite3_finalize(s);
	free(p);
	ctx_free(&x);
	if (rc == -1)
		summary_free(out);
	return rc;
}

double
summary_energy(const struct summary_card *c)
{
	return c->has_power ? strtod(c->energy_j, NULL) : 0;
}

void
summary_free(struct summary *s)
{
	if (s == NULL)
		return;
	free(s->cards);
	s->cards = NULL;
	s->ncards = 0;
}
