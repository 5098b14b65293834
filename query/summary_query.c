/*
 * summary_query: what a summary reads, and how (summary_priv.h): the
 * catalog's columns of the metrics summarized and its unreliable ones,
 * the coarse runs of imported samples, the statements of the window's
 * samples and of the idle look-back under the one rule (bestsrc.h), and
 * a row's stamp, interval and values.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bestsrc.h"
#include "dbread.h"
#include "schema.h"
#include "pragma.h"
#include "summary.h"
#include "summary_priv.h"

const char *const summary_bw_keys[SUMMARY_NBW] = {
	"rdmem", "wrmem", "rxpci", "txpci", "rdrdma", "wrrdma",
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

int
summary_nomem(void)
{
	errno = ENOMEM;
	return -1;
}

/* The columns of the metrics read, and the unreliable ones. */
int
summary_load_catalog(struct summary_ctx *x)
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
		struct summary_col c = { .present = true, .decimals = dec };

		if (key == NULL || col == NULL || dec < 0 ||
		    dec > ENERGY_SCALE_MAX)
			continue;
		snprintf(c.col, sizeof(c.col), "%s", col);
		for (int k = 0; k < K_N; k++)
			if (strcmp(key, key_of(k)) == 0)
				x->k[k] = c;
		if (sqlite3_column_int(s, 3) == 0) {
			struct summary_col *u = realloc(x->unrel,
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
				return summary_nomem();
			}
			u[x->nunrel++] = c;
		}
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* The coarse runs of imported samples that overlap the window. */
int
summary_load_coarse(struct summary_ctx *x)
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
	sqlite3_bind_int64(s, 2, x->s->end_ns + SUMMARY_MAX_INTERVAL_NS);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		void *p = realloc(x->coarse, (x->ncoarse + 1) *
		    sizeof(*x->coarse));

		if (p == NULL) {
			sqlite3_finalize(s);
			return summary_nomem();
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

bool
summary_is_coarse(const struct summary_ctx *x, int device, int64_t ts)
{
	for (size_t i = 0; i < x->ncoarse; i++)
		if (x->coarse[i].device == device && ts >= x->coarse[i].lo &&
		    ts <= x->coarse[i].hi)
			return true;
	return false;
}

/* Column i of s as mant / 10^scale with c's decimals; false if NULL. */
bool
summary_row_value(sqlite3_stmt *s, int i, const struct summary_col *c,
    int64_t *mant, int *scale)
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

double
summary_as_double(int64_t mant, int scale)
{
	double v = (double)mant;

	while (scale-- > 0)
		v /= 10;
	return v;
}

/* The columns the rule chooses among: k[] in order, then unrel[]. */
int
summary_rule_columns(struct summary_ctx *x)
{
	if ((x->names = calloc(K_N + x->nunrel, sizeof(*x->names))) == NULL)
		return summary_nomem();
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
sqlite3_stmt *
summary_select(struct summary_ctx *x, bool idle)
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
 * SUMMARY_MAX_INTERVAL_NS] (a database written elsewhere may hold anything).
 */
bool
summary_row_interval(sqlite3_stmt *s, int64_t *ival_ns)
{
	int64_t ival = sqlite3_column_int64(s, 2);

	if (sqlite3_column_type(s, 0) != SQLITE_INTEGER ||
	    sqlite3_column_type(s, 2) != SQLITE_INTEGER || ival < 0 ||
	    ival > SUMMARY_MAX_INTERVAL_NS / 1000000)
		return false;
	*ival_ns = ival * 1000000;
	return true;
}
