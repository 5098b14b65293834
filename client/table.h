/*
 * table: rows of text in aligned columns, for a person: the one layout of
 * the tables of export --steps, summary and windows.
 *
 * A table is built row by row, cell by cell, and written whole, since the
 * widths depend on every row.  Two layouts: table_write, for a terminal,
 * writes the columns' names, a second header line of their units (when
 * any column has one), numbers aligned right and text left, and wraps
 * the last column to a width; table_write_plain writes what spyremon wrote
 * before the first (names only, every column aligned left, nothing cut),
 * which scripts reading a pipe may depend on.
 */
#ifndef SPYREMON_TABLE_H
#define SPYREMON_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum table_align {
	TABLE_LEFT,		/* text */
	TABLE_RIGHT,		/* numbers */
};

struct table_col {
	const char *name;	/* the header */
	const char *unit;	/* under it, or NULL: "W", "%", "GiB/s" */
	enum table_align align;
};

struct table;

/* A table of ncols columns (cols is kept, not copied). Never NULL. */
struct table *table_new(const struct table_col *cols, size_t ncols);
void table_free(struct table *t);

/* Start a row; its cells are then given in order, those not given empty. */
void table_row(struct table *t);
void table_cell(struct table *t, const char *s);
void table_cellf(struct table *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The rows so far. */
size_t table_rows(const struct table *t);

/*
 * For a person: columns two spaces apart, the header's names then units,
 * the last column not padded.  With width > 0, a last column of text
 * longer than to end at width wraps at blanks onto lines of its own
 * (at least 30 bytes wide, at most 4 lines); a word, or the fourth line,
 * that does not fit ends in "...".
 */
void table_write(const struct table *t, FILE *fp, int width);

/* The plain layout: names, every column left, the last not padded. */
void table_write_plain(const struct table *t, FILE *fp);

/*
 * Whether a table for a person is the output's default: fp is stdout and
 * a terminal.  Elsewhere (a pipe, a file) each command writes what it
 * wrote before there were such tables.
 */
bool table_for_terminal(FILE *fp);

/* The width to fit a table to: the terminal's, else $COLUMNS, else 100. */
int table_width(void);

/*
 * A number for a table: table_fixed with decimals digits after the point;
 * table_sig with 1 to 3, enough for four significant digits below 1000
 * ("868.8", "25.53", "2.553"), for energies.  Into buf (len bytes).
 */
void table_fixed(char *buf, size_t len, double v, int decimals);
void table_sig(char *buf, size_t len, double v);

#endif
