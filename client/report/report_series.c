/*
 * report_series: the samples report's plots draw (contracts in report.h),
 * read piece by piece across the epochs of the host clock a window spans
 * (db_window_pieces), each piece drawn on from where the one before
 * ended.
 */
#include <err.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "dbread.h"
#include "pragma.h"
#include "report.h"

const char *const report_series_keys[S_N] = {
	"pwr", "busy", "gtemp", "rdmem", "wrmem", "rxpci", "txpci",
};

static struct cardseries *
series_card(struct series *s, int card)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->c[i].card == card)
			return &s->c[i];
	if ((s->c = realloc(s->c, (s->n + 1) * sizeof(*s->c))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	memset(&s->c[s->n], 0, sizeof(s->c[s->n]));
	s->c[s->n].card = card;
	return &s->c[s->n++];
}

/* Add a sample to c, read from a metric file or not; hint: the samples a
 * card is likely to have. */
static void
series_push(struct cardseries *c, double t0, double t1, const double *v,
    bool file, size_t hint)
{
	if (c->n == c->cap) {
		/* the first guess is right for a card sampled all along */
		c->cap = c->cap ? c->cap * 2 : hint > 1024 ? hint : 1024;
		if ((c->t0 = realloc(c->t0, c->cap * sizeof(double))) == NULL ||
		    (c->t1 = realloc(c->t1, c->cap * sizeof(double))) == NULL ||
		    (c->file = realloc(c->file, c->cap)) == NULL)
			errx(CLIENT_EXIT_FAILED, "out of memory");
		for (int k = 0; k < S_N; k++)
			if ((c->v[k] = realloc(c->v[k], c->cap *
			    sizeof(double))) == NULL)
				errx(CLIENT_EXIT_FAILED, "out of memory");
	}
	c->file[c->n] = file;
	c->nfile += file;
	c->t0[c->n] = t0;
	c->t1[c->n] = t1;
	for (int k = 0; k < S_N; k++)
		c->v[k][c->n] = v[k];
	c->n++;
}

static int
cardcmp(const void *a, const void *b)
{
	const struct cardseries *x = a, *y = b;

	return (x->card > y->card) - (x->card < y->card);
}

/*
 * The rows of one piece p of statement s (bound), drawn from origin on,
 * into out; SQLite's last result code.
 */
static int
load_piece(sqlite3_stmt *s, const struct db_metric *const *m,
    const double *unit, int64_t origin, size_t hint, struct series *out)
{
	int rc;

	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t ts = sqlite3_column_int64(s, 0);
		int64_t iv = sqlite3_column_int64(s, 2);
		int card = sqlite3_column_int(s, 1);
		double v[S_N];

		/* a stamp or interval that is not an integer in range (a
		 * database from elsewhere): no time to draw it at */
		if (sqlite3_column_type(s, 0) != SQLITE_INTEGER ||
		    sqlite3_column_type(s, 2) != SQLITE_INTEGER || iv < 0 ||
		    iv > DB_MAX_INTERVAL_NS / 1000000)
			continue;
		iv *= 1000000;

		/* one sqlite3_column_value per cell: each call is a lookup */
		for (int k = 0; k < S_N; k++) {
			sqlite3_value *sv;

			v[k] = NAN;
			if (m[k] != NULL && sqlite3_value_type(sv =
			    sqlite3_column_value(s, 3 + k)) != SQLITE_NULL)
				v[k] = sqlite3_value_double(sv) / unit[k];
		}
		series_push(series_card(out, card), (double)(ts - iv - origin) /
		    1e9, (double)(ts - origin) / 1e9, v,
		    sqlite3_column_int(s, 3 + S_N) != 0, iv > 0 ?
		    hint / (size_t)iv + 16 : 0);
	}
	return rc;
}

int
report_series_load(sqlite3 *db, const struct db_catalog *cat,
    const struct db_piece *p, size_t np, int64_t pad, struct series *out)
{
	const struct db_metric *m[S_N];
	double unit[S_N];
	sqlite3_stmt *s;
	int64_t offset = 0;
	int rc = SQLITE_DONE;

	memset(out, 0, sizeof(*out));
	for (int k = 0; k < S_N; k++) {
		out->has[k] = (m[k] = db_catalog_find(cat,
		    report_series_keys[k])) != NULL;
		unit[k] = m[k] != NULL ? pow(10, m[k]->decimals) : 1;
	}
	if ((s = db_select_samples(db, m, S_N, "", true)) == NULL)
		return db_error(db, "the samples");
	for (size_t i = 0; i < np && rc == SQLITE_DONE; i++) {
		int64_t lo = p[i].from_ns - (i == 0 ? pad : 0);
		int64_t hi = p[i].hi_ns + (i + 1 == np ? pad : 0);

		/* drawn on from where the piece before ended */
		db_bind_epoch(s, p[i].epoch);
		sqlite3_bind_int64(s, 1, lo);
		sqlite3_bind_int64(s, 2, hi);
		sqlite3_bind_int64(s, 3, hi + DB_MAX_INTERVAL_NS);
		rc = load_piece(s, m, unit, p[i].lo_ns - offset,
		    hi > lo ? (size_t)(hi - lo) : 0, out);
		offset += p[i].hi_ns > p[i].lo_ns ? p[i].hi_ns - p[i].lo_ns : 0;
	}
	/* a damaged page: what was read before it is drawn (the caller says so) */
	if (rc != SQLITE_DONE && sql_is_damage(sqlite3_errcode(db))) {
		out->damaged = true;
		rc = SQLITE_DONE;
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return db_error(db, "the samples");
	if (out->n > 1)	/* out->c is NULL with no samples */
		qsort(out->c, out->n, sizeof(*out->c), cardcmp);
	return CLIENT_EXIT_OK;
}

void
report_series_free(struct series *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->c[i].t0);
		free(s->c[i].file);
		free(s->c[i].t1);
		for (int k = 0; k < S_N; k++)
			free(s->c[i].v[k]);
	}
	free(s->c);
}
