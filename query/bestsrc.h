/*
 * bestsrc: which of a card's two streams of rows each of its values is
 * taken from, the one rule every reader of samples follows
 * (spyremon-schema(5), "BEST SOURCE").
 *
 * With source.direct on, a card has two streams of rows in samples:
 * aiu-smi's (src NULL) and its metric file's (src 1).  Over the span a
 * command reads, for each card and metric: if the card's newest file row
 * in the span carries the metric, its values come from the file rows
 * only; otherwise from the aiu-smi rows only.  (A file row holds every
 * value its file gives, so the newest tells which metrics the file gives;
 * it is found from the index of file rows alone.)  Today the one metric both
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
 * samples joined to a per-card table of which metrics its newest file row
 * carries over the span bound as ?1, ?2, ?3 (DB_OVERLAPS_SQL's span), so
 * one prepared statement serves span after span:
 *
 *   bestsrc_with(q, cols, n)             "WITH best(...) AS (...) "
 *   "SELECT ts_ns, ..., " bestsrc_col(q, i, cols[i]) ...
 *   bestsrc_from()                       " FROM samples LEFT JOIN best ..."
 *   " WHERE " DB_OVERLAPS_SQL ...
 *
 * The plain pieces (bestsrc_on false) give the plain statement, each
 * value guarded to be a finite number.
 */
#ifndef SPYREMON_BESTSRC_H
#define SPYREMON_BESTSRC_H

#include <stdbool.h>
#include <stddef.h>

#include <sqlite3.h>

/*
 * The builder's state for one database: on (the rule applies: the
 * database may hold file rows), indexed (the index of file rows, schema
 * version 7 on), and the metric columns the statement reads.
 */
struct bestsrc {
	bool on;
	bool indexed;
	const char *const *cols;	/* metric column names, NULL entries skipped */
	size_t ncols;
};

/*
 * Set *b for db and the columns cols[0..ncols).  on is false before
 * schema version 6 (no src column) and, from version 7 on, when the
 * database holds no file row at all (one probe of the index), so that
 * such a database is read with the plain statements and at their
 * cost; a version 6 database (no index) is always on.  0, or -1 if the
 * schema cannot be read (error in db).
 */
int bestsrc_init(sqlite3 *db, struct bestsrc *b, const char *const *cols,
    size_t ncols);

/*
 * Append " FROM samples WHERE <the file rows> AND ": through their index
 * where there is one.  For b->on only.
 */
void bestsrc_file_rows(sqlite3_str *q, const struct bestsrc *b);

/*
 * Start the statement in q: with b->on, "WITH bl(bdev, bts) AS (each
 * card's newest file row in <span>), best(bdev, m0, ...) AS (SELECT bdev,
 * col IS NOT NULL, ... of that row) "; nothing otherwise.  span_sql is the
 * WHERE text of the span over samples' own columns (DB_OVERLAPS_SQL, or
 * another condition on ?1.. and the fixed columns).
 */
void bestsrc_with(sqlite3_str *q, const struct bestsrc *b,
    const char *span_sql);

/*
 * Append the value of b->cols[i] (column col) as the rule selects it: the
 * plain column, or NULL where the other stream is the metric's source,
 * and NULL where it is not a finite number (text, a blob, an infinity).
 */
void bestsrc_col(sqlite3_str *q, const struct bestsrc *b, size_t i);

/*
 * Append the number of the row's values among b's columns that are
 * neither NULL nor a finite number (text, a blob, an infinity: from a
 * database written elsewhere), whatever stream the rule takes: what
 * bestsrc_col leaves out as NULL.
 */
void bestsrc_bad(sqlite3_str *q, const struct bestsrc *b);

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
