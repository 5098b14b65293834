/* bestsrc: the one rule for a card's two streams of rows (bestsrc.h). */
#include "bestsrc.h"

#include "schema.h"

int
bestsrc_available(sqlite3 *db)
{
	sqlite3_stmt *s;
	int v = -1;

	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &s, NULL) !=
	    SQLITE_OK)
		return -1;
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	return v < 0 ? -1 : v >= 6;
}

void
bestsrc_with(sqlite3_str *q, const struct bestsrc *b, const char *span_sql)
{
	if (!b->on)
		return;
	/* bdev, not device: the join then leaves no name ambiguous */
	sqlite3_str_appendall(q, "WITH best(bdev");
	for (size_t i = 0; i < b->ncols; i++)
		sqlite3_str_appendf(q, ", m%d", (int)i);
	sqlite3_str_appendall(q, ") AS (SELECT " SCHEMA_C_DEVICE);
	for (size_t i = 0; i < b->ncols; i++) {
		if (b->cols[i] != NULL)
			sqlite3_str_appendf(q, ", max(\"%w\" IS NOT NULL)",
			    b->cols[i]);
		else
			sqlite3_str_appendall(q, ", 0");
	}
	sqlite3_str_appendf(q, " FROM " SCHEMA_T_SAMPLES " WHERE " SCHEMA_C_SRC
	    " = %d AND %s GROUP BY " SCHEMA_C_DEVICE ") ", SCHEMA_SRC_FILE,
	    span_sql);
}

void
bestsrc_col(sqlite3_str *q, const struct bestsrc *b, size_t i)
{
	if (b->cols[i] == NULL)
		sqlite3_str_appendall(q, "NULL");
	else if (!b->on)
		sqlite3_str_appendf(q, "\"%w\"", b->cols[i]);
	else
		/*
		 * A file row's value is the file's; an aiu-smi row's counts
		 * unless the card's file rows carry the metric.
		 */
		sqlite3_str_appendf(q, "CASE WHEN " SCHEMA_C_SRC " IS NOT NULL "
		    "OR m%d IS NOT 1 THEN \"%w\" END", (int)i, b->cols[i]);
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
