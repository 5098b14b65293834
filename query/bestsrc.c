/* bestsrc: the one rule for a card's two streams of rows (bestsrc.h). */
#include "bestsrc.h"

#include "schema.h"
#include "pragma.h"

int
bestsrc_init(sqlite3 *db, struct bestsrc *b, const char *const *cols,
    size_t ncols)
{
	sqlite3_stmt *s;
	int rc;

	*b = (struct bestsrc){ .cols = cols, .ncols = ncols };
	/*
	 * The index came with version 7 and src with 6, but a file's own
	 * tables say whether it has them: a build on another line wrote
	 * version 7 without the index (spyremon-schema(5), "Versions").
	 */
	if ((rc = sql_index_exists(db, SCHEMA_I_FILE)) == -1)
		return -1;
	if (rc == 0) {
		b->on = sql_column_exists(db, SCHEMA_T_SAMPLES, SCHEMA_C_SRC);
		return 0;
	}
	b->indexed = true;
	/* the index holds only file rows: its first entry, if any */
	if (sqlite3_prepare_v2(db, "SELECT EXISTS (SELECT 1 FROM "
	    SCHEMA_T_SAMPLES " INDEXED BY " SCHEMA_I_FILE " WHERE " SCHEMA_C_SRC
	    " IS NOT NULL)", -1, &s, NULL) != SQLITE_OK)
		return -1;
	if ((rc = sqlite3_step(s)) == SQLITE_ROW)
		b->on = sqlite3_column_int(s, 0) != 0;
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? 0 : -1;
}

void
bestsrc_file_rows(sqlite3_str *q, const struct bestsrc *b)
{
	sqlite3_str_appendf(q, " FROM " SCHEMA_T_SAMPLES "%s WHERE " SCHEMA_C_SRC
	    " IS NOT NULL AND ", b->indexed ? " INDEXED BY " SCHEMA_I_FILE : "");
}

void
bestsrc_with(sqlite3_str *q, const struct bestsrc *b, const char *span_sql)
{
	if (!b->on)
		return;
	/*
	 * bl: each card's newest file row in the span (from the index
	 * alone, where there is one); best: which metrics it carries (one
	 * lookup per card).  bdev, not device: the join to samples then
	 * leaves no name ambiguous.
	 */
	sqlite3_str_appendall(q, "WITH bl(bdev, bts) AS (SELECT "
	    SCHEMA_C_DEVICE ", max(" SCHEMA_C_TS ")");
	bestsrc_file_rows(q, b);
	sqlite3_str_appendf(q, "%s GROUP BY " SCHEMA_C_DEVICE "), best(bdev",
	    span_sql);
	for (size_t i = 0; i < b->ncols; i++)
		sqlite3_str_appendf(q, ", m%d", (int)i);
	sqlite3_str_appendall(q, ") AS (SELECT bdev");
	for (size_t i = 0; i < b->ncols; i++) {
		if (b->cols[i] != NULL)
			sqlite3_str_appendf(q, ", \"%w\" IS NOT NULL",
			    b->cols[i]);
		else
			sqlite3_str_appendall(q, ", 0");
	}
	sqlite3_str_appendall(q, " FROM bl JOIN " SCHEMA_T_SAMPLES " ON "
	    SCHEMA_C_TS " = bts AND " SCHEMA_C_DEVICE " = bdev) ");
}

/* The SQL condition that column col holds a finite number. */
#define FINITE_SQL(col) "typeof(\"%w\") IN ('integer', 'real') AND \"%w\" " \
	"BETWEEN -1e308 AND 1e308"

void
bestsrc_col(sqlite3_str *q, const struct bestsrc *b, size_t i)
{
	const char *c = b->cols[i];

	if (c == NULL)
		sqlite3_str_appendall(q, "NULL");
	else if (!b->on)
		sqlite3_str_appendf(q, "CASE WHEN " FINITE_SQL(c) " THEN \"%w\" "
		    "END", c, c, c);
	else
		/*
		 * One stream per metric: the file rows' values where the
		 * card's newest file row carries the metric, aiu-smi's where
		 * it does not (or the card has no file row).
		 */
		sqlite3_str_appendf(q, "CASE WHEN (" SCHEMA_C_SRC " IS NOT NULL) "
		    "= (m%d IS 1) AND " FINITE_SQL(c) " THEN \"%w\" END", (int)i,
		    c, c, c);
}

void
bestsrc_bad(sqlite3_str *q, const struct bestsrc *b)
{
	sqlite3_str_appendall(q, "(0");
	for (size_t i = 0; i < b->ncols; i++)
		if (b->cols[i] != NULL)
			sqlite3_str_appendf(q, " + CASE WHEN \"%w\" IS NULL OR ("
			    FINITE_SQL(c) ") THEN 0 ELSE 1 END", b->cols[i],
			    b->cols[i], b->cols[i]);
	sqlite3_str_appendall(q, ")");
}

void
bestsrc_row(sqlite3_str *q, const struct bestsrc *b)
{
	sqlite3_str_appendall(q, b->on ? "(" SCHEMA_C_SRC " IS NOT NULL OR "
	    "bdev IS NULL)" : "1");
}

void
bestsrc_src(sqlite3_str *q, const struct bestsrc *b)
{
	sqlite3_str_appendall(q, b->on ? "(" SCHEMA_C_SRC " IS NOT NULL)" :
	    "0");
}

void
bestsrc_from(sqlite3_str *q, const struct bestsrc *b)
{
	sqlite3_str_appendall(q, " FROM " SCHEMA_T_SAMPLES);
	if (b->on)
		sqlite3_str_appendall(q, " LEFT JOIN best ON bdev = "
		    SCHEMA_T_SAMPLES "." SCHEMA_C_DEVICE);
}
