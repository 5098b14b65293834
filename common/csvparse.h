/*
 * csvparse: aiu-smi's CSV output, one line at a time.  Pure code: no I/O,
 * no allocation, no clock, so that every case is unit-tested.
 *
 * Two layers.  csv_lines_feed() cuts a byte stream (which may split lines
 * anywhere) into lines, strips CR, and bounds line length.  csv_parse_line()
 * classifies one line and, for a data row, parses every cell exactly as
 * decimal text, mapping cells to columns by the most recent header's keys.
 * A row is either parsed whole or rejected whole with a reason: never half.
 */
#ifndef SPYREMON_CSVPARSE_H
#define SPYREMON_CSVPARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CSV_LINE_MAX	4096	/* longer lines are rejected as overlong */
#define CSV_COLS_MAX	128	/* header cells */
#define CSV_KEY_MAX	32	/* key length, including the NUL */
#define CSV_UNIT_MAX	32	/* unit length, including the NUL */
#define CSV_PATH_MAX	512	/* metric file path in #MetricFiles */

/* ---- line assembly ---- */

struct csv_lines {
	char buf[CSV_LINE_MAX + 1];
	size_t len;
	bool overlong;		/* discarding until the next newline */
};

/*
 * Called for every complete line, without its "\n" and any trailing "\r".
 * For an overlong line, overlong is true and line holds its first
 * CSV_LINE_MAX bytes; it is delivered once, as soon as it is known to be
 * too long, and the rest of it up to the newline is discarded.
 * line[len] is '\0', but the line itself may hold NUL bytes (csv_parse_line
 * rejects such a line), so use len.
 */
typedef void csv_line_cb(void *arg, const char *line, size_t len, bool overlong);

/* Append n bytes of stream; call cb for each line they complete. */
void csv_lines_feed(struct csv_lines *lb, const char *data, size_t n,
    csv_line_cb *cb, void *arg);

/*
 * Bytes of an unfinished line held back; 0 after a newline and while the
 * rest of an overlong line is being discarded.
 */
size_t csv_lines_pending(const struct csv_lines *lb);

/* Forget any unfinished line (the child went away mid-line). */
void csv_lines_reset(struct csv_lines *lb);

/* ---- line parsing ---- */

enum csv_role { CSV_ROLE_ID, CSV_ROLE_DATE, CSV_ROLE_TIME, CSV_ROLE_METRIC };

struct csv_column {
	enum csv_role role;
	char key[CSV_KEY_MAX];		/* first word of the header cell */
	char unit[CSV_UNIT_MAX];	/* rest of the cell, trimmed; may be "" */
};

struct csv_parser {
	struct csv_column cols[CSV_COLS_MAX];
	int ncols;			/* 0 until a valid header is seen */
	int id_col, date_col, time_col;	/* -1 when absent; ID is required */
	unsigned generation;		/* bumped by every accepted header */
	bool in_metricfiles;		/* inside a #MetricFiles block */
};

enum csv_kind {
	CSV_BLANK,		/* empty or whitespace */
	CSV_COMMENT,		/* "#..." not otherwise recognised */
	CSV_MAP_BEGIN,		/* "#MetricFiles": a new mapping follows */
	CSV_MAP_ENTRY,		/* "# <id> <path>" inside that block; the
				   block ends at the first other line, and
				   an entry whose ID or path does not fit is
				   CSV_BAD */
	CSV_HEADER,		/* "ID,...": columns replaced, generation bumped */
	CSV_ROW,		/* a data row, parsed whole */
	CSV_BAD,		/* rejected; see error and error_col */
};

/* A cell's value exactly as printed: mant / 10^scale, or missing ("-"). */
struct csv_value {
	int64_t mant;
	int8_t scale;		/* digits after the point, 0..18 */
	bool present;		/* false for "-" */
};

struct csv_row {
	int device;		/* the ID cell */
	bool have_clock;	/* Date and Time both present and valid; "-"
				   in either leaves it false, a malformed one
				   makes the row CSV_BAD */
	int date;		/* YYYYMMDD, 0 without have_clock */
	int hms;		/* HH*3600 + MM*60 + SS, 0 without have_clock */
	struct csv_value values[CSV_COLS_MAX];	/* by column index; ID, Date
						   and Time are not present */
};

struct csv_result {
	enum csv_kind kind;
	union {
		struct csv_row row;			/* CSV_ROW */
		struct {
			int device;
			char path[CSV_PATH_MAX];
		} map;					/* CSV_MAP_ENTRY */
	} u;
	char error[160];	/* CSV_BAD: what is wrong, naming the column key */
	int error_col;		/* CSV_BAD: 0-based cell index, or -1 */
};

/* Start with no header: rows are CSV_BAD until a header line is seen. */
void csv_parser_init(struct csv_parser *p);

/*
 * Classify and parse one line (no newline).  Updates the parser's columns on
 * a valid header.  An invalid header is CSV_BAD and leaves the parser with
 * no header, so that no row is mapped by stale columns.
 */
enum csv_kind csv_parse_line(struct csv_parser *p, const char *line,
    size_t len, struct csv_result *res);

/*
 * Parse one decimal cell ("-12.340", "7", ".5", "-"), already trimmed:
 * [+-]digits[.digits], no exponent, mantissa within int64_t, at most 18
 * digits after the point.  0 on success, -1 otherwise (*out untouched).
 */
int csv_parse_value(const char *s, size_t len, struct csv_value *out);

#endif
