/*
 * summary_read: a window's summary read back from the window_summary and
 * window_summary_bw tables (summary.h, spyremon-schema(5)); the store
 * writes them (store/summary_write.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema.h"
#include "pragma.h"
#include "summary.h"

static double
opt_double(sqlite3_stmt *s, int i, bool *has)
{
	*has = sqlite3_column_type(s, i) != SQLITE_NULL;
	return sqlite3_column_double(s, i);
}

static void
copy_text(sqlite3_stmt *s, int i, char *buf, size_t len)
{
	const unsigned char *t = sqlite3_column_text(s, i);

	snprintf(buf, len, "%s", t != NULL ? (const char *)t : "");
}

static int
user_version(sqlite3 *db)
{
	int64_t v;

	return sql_pragma_int(db, "user_version", &v) == 0 && v >= 0 &&
	    v <= INT32_MAX ? (int)v : -1;
}

/*
 * True if db has the summary tables (and the windows' column) as this
 * build reads them: the first builds that stored summaries kept no
 * power_n, and a file of theirs that no daemon has migrated yet is read
 * as one without stored summaries, each computed when asked.
 */
static bool
has_summaries(sqlite3 *db)
{
	sqlite3_stmt *s;
	bool yes = false;

	if (sqlite3_prepare_v2(db, "SELECT (SELECT count(*) FROM sqlite_master "
	    "WHERE type = 'table' AND name IN ('" SCHEMA_T_SUMMARY "', '"
	    SCHEMA_T_SUMMARY_BW "')) = 2 AND EXISTS (SELECT 1 FROM "
	    "pragma_table_info('" SCHEMA_T_WINDOWS "') WHERE name = "
	    "'summarized_ns') AND EXISTS (SELECT 1 FROM pragma_table_info('"
	    SCHEMA_T_SUMMARY "') WHERE name = 'power_n')", -1, &s, NULL) !=
	    SQLITE_OK)
		return false;
	if (sqlite3_step(s) == SQLITE_ROW)
		yes = sqlite3_column_int(s, 0) != 0;
	sqlite3_finalize(s);
	return yes;
}

static int
load_bw(sqlite3 *db, struct summary *sm)
{
	sqlite3_stmt *s;
	int rc;

	if (sqlite3_prepare_v2(db, "SELECT device, metric, mean, max, bytes "
	    "FROM " SCHEMA_T_SUMMARY_BW " WHERE window_id = ?1", -1, &s,
	    NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(s, 1, sm->window_id);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int device = sqlite3_column_int(s, 0);
		const char *m = (const char *)sqlite3_column_text(s, 1);

		for (size_t i = 0; i < sm->ncards; i++) {
			if (sm->cards[i].device != device)
				continue;
			for (int b = 0; m != NULL && b < SUMMARY_NBW; b++) {
				struct summary_bw *w = &sm->cards[i].bw[b];

				if (strcmp(m, summary_bw_keys[b]) != 0)
					continue;
				w->has = true;
				w->mean = sqlite3_column_double(s, 2);
				w->max = sqlite3_column_double(s, 3);
				w->bytes = sqlite3_column_double(s, 4);
			}
		}
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : -1;
}

int
summary_load(sqlite3 *db, int64_t id, struct summary *sm, bool *found)
{
	sqlite3_stmt *s;
	int rc;
	bool dummy;

	memset(sm, 0, sizeof(*sm));
	*found = false;
	sm->window_id = id;
	/*
	 * A database before schema 4 has no summaries; nor has one that a
	 * build with version 4 reserved and empty took to version 5.
	 */
	if (user_version(db) < 4 || !has_summaries(db))
		return 0;
	if (sqlite3_prepare_v2(db, "SELECT summarized_ns, begin_ns, end_ns "
	    "FROM " SCHEMA_T_WINDOWS " WHERE id = ?1 AND summarized_ns IS NOT "
	    "NULL", -1, &s, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		sm->computed_ns = sqlite3_column_int64(s, 0);
		sm->begin_ns = sqlite3_column_int64(s, 1);
		sm->end_ns = sqlite3_column_int64(s, 2);
	}
	sqlite3_finalize(s);
	if (rc == SQLITE_DONE)
		return 0;
	if (rc != SQLITE_ROW)
		return -1;
	if (sqlite3_prepare_v2(db, "SELECT " SUMMARY_CARD_COLUMNS " FROM "
	    SCHEMA_T_SUMMARY " WHERE window_id = ?1 ORDER BY device", -1, &s,
	    NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct summary_card *c;
		void *p = realloc(sm->cards, (sm->ncards + 1) *
		    sizeof(*sm->cards));
		int i = 0;

		if (p == NULL) {
			rc = SQLITE_NOMEM;
			break;
		}
		sm->cards = p;
		c = &sm->cards[sm->ncards++];
		memset(c, 0, sizeof(*c));
		c->device = sqlite3_column_int(s, i++);
		sm->computed_ns = sqlite3_column_int64(s, i++);
		sm->begin_ns = sqlite3_column_int64(s, i++);
		sm->end_ns = sqlite3_column_int64(s, i++);
		sm->idle_lookback_ns = sqlite3_column_int64(s, i++);
		c->samples = sqlite3_column_int64(s, i++);
		c->covered_ns = sqlite3_column_int64(s, i++);
		c->gaps = sqlite3_column_int64(s, i++);
		c->gap_ns = sqlite3_column_int64(s, i++);
		c->max_interval_ms = sqlite3_column_int64(s, i++);
		c->busy_samples = sqlite3_column_int64(s, i++);
		c->coarse_samples = sqlite3_column_int64(s, i++);
		c->has_power = sqlite3_column_type(s, i) != SQLITE_NULL;
		copy_text(s, i++, c->energy_j, sizeof(c->energy_j));
		c->power_mean = opt_double(s, i++, &dummy);
		c->power_min = opt_double(s, i++, &dummy);
		c->power_max = opt_double(s, i++, &dummy);
		c->power_p95 = opt_double(s, i++, &dummy);
		c->power_n = sqlite3_column_int64(s, i++);
		c->power_sd = opt_double(s, i++, &dummy);
		c->gtemp_max = opt_double(s, i++, &c->has_gtemp);
		c->busy_mean = opt_double(s, i++, &c->has_busy);
		c->actmem_peak = opt_double(s, i++, &c->has_actmem);
		c->peakmem_peak = opt_double(s, i++, &c->has_peakmem);
		c->idle_w = opt_double(s, i++, &c->has_idle);
		c->idle_samples = sqlite3_column_int64(s, i++);
		c->net_energy_j = opt_double(s, i++, &dummy);
		copy_text(s, i++, c->zero_while_busy, sizeof(c->zero_while_busy));
		copy_text(s, i++, c->unreliable, sizeof(c->unreliable));
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE || load_bw(db, sm) == -1) {
		summary_free(sm);
		return -1;
	}
	*found = true;
	sm->stored = true;
	return 0;
}

bool
summary_stored_energy(sqlite3 *db, int64_t id, double *j)
{
	sqlite3_stmt *s;
	bool ok = false;

	if (sqlite3_prepare_v2(db, "SELECT (SELECT total(CAST(energy_j AS "
	    "REAL)) FROM window_summary WHERE window_id = ?1) FROM windows "
	    "WHERE id = ?1 AND summarized_ns IS NOT NULL", -1, &s, NULL) !=
	    SQLITE_OK)
		return false;
	sqlite3_bind_int64(s, 1, id);
	if (sqlite3_step(s) == SQLITE_ROW) {
		*j = sqlite3_column_double(s, 0);
		ok = true;
	}
	sqlite3_finalize(s);
	return ok;
}
