/*
 * bestsrc: which of a card's two streams of rows each of its values is
 * taken from, the one rule every reader of samples follows
 * (spyremon-schema(5), "BEST SOURCE").
 *
 * With source.direct on, a card has two streams of rows in samples:
 * aiu-smi's (src NULL) and its metric file's (src 1).  Over the span a
 * command reads, for each card and metric: if the card's file rows in the
 * span carry the metric, its values come from the file rows only;
 * otherwise from the aiu-smi rows only.  Today the one metric both
 * streams store under the same name is pwr; the files' other values
 * (tempr, the *_bytes counters, ...) have names, and so columns, of their
 * own, and busy, pt_act, rsvmem, n_* exist only in aiu-smi's rows.  A
 * card's row figures (how many samples, the time they cover, gaps) count
 * its file rows where it has any in the span, else its aiu-smi rows: the
 * "row source".  Integrals and statistics thus use one source per metric
 * per card, never both.  A database without file rows (source.direct
 * off, or a schema before 6, which has no src column) reads as before.
 *
 * The rule is SQL: a statement built with these pieces selects from
 * samples joined to a per-card table of which metrics its file rows
 * carry over the span bound as ?1, ?2, ?3 (DB_OVERLAPS_SQL's span), so
 * one prepared statement serves span after span:
 *
 *   bestsrc_with(q, cols, n)             "WITH best(...) AS (...) "
 *   "SELECT ts_ns, ..., " bestsrc_col(q, i, cols[i]) ...
 *   bestsrc_from()                       " FROM samples LEFT JOIN best ..."
 *   " WHERE " DB_OVERLAPS_SQL ...
 *
 * The plain pieces (bestsrc_on false) give today's statement exactly.
 */
#ifndef SPYREMON_BESTSRC_H
#define SPYREMON_BESTSRC_H

#include <stdbool.h>
#include <stddef.h>

#include <sqlite3.h>

/*
 * 1 if db's samples has the src column (schema version 6 on), so the rule
 * applies; 0 if not; -1 if the version cannot be read (error in db).
 */
int bestsrc_available(sqlite3 *db);

/*
 * The builder's state: on (the rule applies), the columns named so far
 * in bestsrc_with.
 */
struct bestsrc {
	bool on;
	const char *const *cols;	/* metric column names, NULL entries skipped */
	size_t ncols;
};

/*
 * Start the statement in q: with b->on, "WITH best(bdev, m0, ...) AS
 * (SELECT device, max(col IS NOT NULL), ... FROM samples WHERE src = 1
 * AND <span> GROUP BY device) "; nothing otherwise.  span_sql is the
 * WHERE text of the span over samples' own columns (DB_OVERLAPS_SQL, or
 * another condition on ?1.. and the fixed columns).
 */
void bestsrc_with(sqlite3_str *q, const struct bestsrc *b,
    const char *span_sql);

/*
 * Append the value of b->cols[i] (column col) as the rule selects it: the
 * plain column, or NULL where the other stream is the metric's source.
 */
void bestsrc_col(sqlite3_str *q, const struct bestsrc *b, size_t i);

/*
 * Append an expression true (1) when the row is of its card's row source,
 * 0 when not; always 1 with !b->on.
 */
void bestsrc_row(sqlite3_str *q, const struct bestsrc *b);

/*
 * Append an expression naming the row's source: 0 for aiu-smi, 1 for the
 * metric file (SCHEMA_SRC_*); always 0 with !b->on.
 */
void bestsrc_src(sqlite3_str *q, const struct bestsrc *b);

/* Append " FROM samples" and, with b->on, the join to best. */
void bestsrc_from(sqlite3_str *q, const struct bestsrc *b);

#endif
