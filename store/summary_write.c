/*
 * summary_write: a window's summary written into the window_summary and
 * window_summary_bw tables (store_priv.h; the figures in summary.h, the
 * tables in spyremon-schema(5)); query/summary_read.c reads it back.
 */
#include "store_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema.h"
#include "summary.h"

static void
bind_opt(sqlite3_stmt *s, int i, bool has, double v)
{
	if (has)
		sqlite3_bind_double(s, i, v);
	else
		sqlite3_bind_null(s, i);
}

static int
write_card(sqlite3 *db, sqlite3_stmt *s, sqlite3_stmt *bw,
    const struct summary *sm, const struct summary_card *c)
{
	int i = 1;

	sqlite3_reset(s);
	sqlite3_bind_int64(s, i++, sm->window_id);
	sqlite3_bind_int(s, i++, c->device);
	sqlite3_bind_int64(s, i++, sm->computed_ns);
	sqlite3_bind_int64(s, i++, sm->begin_ns);
	sqlite3_bind_int64(s, i++, sm->end_ns);
	sqlite3_bind_int64(s, i++, sm->idle_lookback_ns);
	sqlite3_bind_int64(s, i++, c->samples);
	sqlite3_bind_int64(s, i++, c->covered_ns);
	sqlite3_bind_int64(s, i++, c->gaps);
	sqlite3_bind_int64(s, i++, c->gap_ns);
	sqlite3_bind_int64(s, i++, c->max_interval_ms);
	sqlite3_bind_int64(s, i++, c->busy_samples);
	sqlite3_bind_int64(s, i++, c->coarse_samples);
	if (c->has_power)
		sqlite3_bind_text(s, i++, c->energy_j, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, i++);
	bind_opt(s, i++, c->has_power, c->power_mean);
	bind_opt(s, i++, c->has_power, c->power_min);
	bind_opt(s, i++, c->has_power, c->power_max);
	bind_opt(s, i++, c->has_power, c->power_p95);
	sqlite3_bind_int64(s, i++, c->power_n);
	bind_opt(s, i++, c->has_power, c->power_sd);
	bind_opt(s, i++, c->has_gtemp, c->gtemp_max);
	bind_opt(s, i++, c->has_busy, c->busy_mean);
	bind_opt(s, i++, c->has_actmem, c->actmem_peak);
	bind_opt(s, i++, c->has_peakmem, c->peakmem_peak);
	bind_opt(s, i++, c->has_idle, c->idle_w);
	sqlite3_bind_int64(s, i++, c->idle_samples);
	bind_opt(s, i++, c->has_idle, c->net_energy_j);
	sqlite3_bind_text(s, i++, c->zero_while_busy, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, i++, c->unreliable, -1, SQLITE_STATIC);
	if (sqlite3_step(s) != SQLITE_DONE)
		return -1;
	for (int b = 0; b < SUMMARY_NBW; b++) {
		if (!c->bw[b].has)
			continue;
		sqlite3_reset(bw);
		sqlite3_bind_int64(bw, 1, sm->window_id);
		sqlite3_bind_int(bw, 2, c->device);
		sqlite3_bind_text(bw, 3, summary_bw_keys[b], -1, SQLITE_STATIC);
		sqlite3_bind_double(bw, 4, c->bw[b].mean);
		sqlite3_bind_double(bw, 5, c->bw[b].max);
		sqlite3_bind_double(bw, 6, c->bw[b].bytes);
		if (sqlite3_step(bw) != SQLITE_DONE)
			return -1;
	}
	(void)db;
	return 0;
}

int
summary_write(sqlite3 *db, const struct summary *sm)
{
	static const char *const clear[] = {
		"DELETE FROM " SCHEMA_T_SUMMARY " WHERE window_id = ?1",
		"DELETE FROM " SCHEMA_T_SUMMARY_BW " WHERE window_id = ?1",
		"UPDATE " SCHEMA_T_WINDOWS " SET summarized_ns = ?2 "
		    "WHERE id = ?1",
	};
	sqlite3_stmt *s = NULL, *bw = NULL;
	int rc = -1;

	for (size_t k = 0; k < sizeof(clear) / sizeof(clear[0]); k++) {
		if (sqlite3_prepare_v2(db, clear[k], -1, &s, NULL) != SQLITE_OK)
			return -1;
		sqlite3_bind_int64(s, 1, sm->window_id);
		if (k == 2)
			sqlite3_bind_int64(s, 2, sm->computed_ns);
		if (sqlite3_step(s) != SQLITE_DONE) {
			sqlite3_finalize(s);
			return -1;
		}
		sqlite3_finalize(s);
	}
	if (sqlite3_prepare_v2(db, "INSERT INTO " SCHEMA_T_SUMMARY
	    " (window_id, " SUMMARY_CARD_COLUMNS ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, "
	    "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", -1, &s,
	    NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "INSERT INTO " SCHEMA_T_SUMMARY_BW
	    " (window_id, device, metric, mean, max, bytes) VALUES "
	    "(?, ?, ?, ?, ?, ?)", -1, &bw, NULL) != SQLITE_OK)
		goto done;
	for (size_t i = 0; i < sm->ncards; i++)
		if (write_card(db, s, bw, sm, &sm->cards[i]) == -1)
			goto done;
	rc = 0;
done:
	sqlite3_finalize(s);
	sqlite3_finalize(bw);
	return rc;
}
