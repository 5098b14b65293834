/*
 * csvparse: aiu-smi's CSV output cut into lines and parsed exactly.
 *
 * The daemon parses every row aiu-smi prints, up to some ten thousand a
 * second, so each line is scanned once: cells are found with memchr and
 * numbers are read by hand, without strtod (which is locale-dependent and
 * inexact) and without allocating.
 */
#include "csvparse.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define ERROR_TEXT_MAX	64	/* bytes of a bad cell quoted in errors */
#define DEVICE_ID_MAX	9999

enum decimal_status { DECIMAL_OK, DECIMAL_SYNTAX, DECIMAL_RANGE };

/* ---- line assembly ---- */

/*
 * Hand the first CSV_LINE_MAX bytes of an overlong line to cb now, once,
 * and discard the rest of it as it arrives.
 */
static void
deliver_overlong(struct csv_lines *lb, csv_line_cb *cb, void *arg)
{
	lb->buf[CSV_LINE_MAX] = '\0';
	lb->overlong = true;
	lb->len = 0;
	cb(arg, lb->buf, CSV_LINE_MAX, true);
}

/*
 * Append n bytes that hold no newline to the line being assembled.  The
 * buffer has one byte beyond CSV_LINE_MAX so that a line of exactly
 * CSV_LINE_MAX bytes can keep its "\r" until the "\n" shows it was the end.
 */
static void
append_bytes(struct csv_lines *lb, const char *data, size_t n,
    csv_line_cb *cb, void *arg)
{
	size_t room = sizeof(lb->buf) - lb->len;

	if (n > room) {
		memcpy(lb->buf + lb->len, data, room);
		deliver_overlong(lb, cb, arg);
		return;
	}
	memcpy(lb->buf + lb->len, data, n);
	lb->len += n;
	if (lb->len > CSV_LINE_MAX && lb->buf[CSV_LINE_MAX] != '\r')
		deliver_overlong(lb, cb, arg);
}

/* A newline arrived: deliver the line, or end the discarding of one. */
static void
finish_line(struct csv_lines *lb, csv_line_cb *cb, void *arg)
{
	size_t len = lb->len;

	lb->len = 0;
	if (lb->overlong) {
		lb->overlong = false;
		return;
	}
	if (len > 0 && lb->buf[len - 1] == '\r')
		len--;
	lb->buf[len] = '\0';
	cb(arg, lb->buf, len, false);
}

void
csv_lines_feed(struct csv_lines *lb, const char *data, size_t n,
    csv_line_cb *cb, void *arg)
{
	while (n > 0) {
		const char *nl = memchr(data, '\n', n);
		size_t seg = nl != NULL ? (size_t)(nl - data) : n;

		if (!lb->overlong)
			append_bytes(lb, data, seg, cb, arg);
		if (nl != NULL) {
			finish_line(lb, cb, arg);
			seg++;
		}
		data += seg;
		n -= seg;
	}
}

size_t
csv_lines_pending(const struct csv_lines *lb)
{
	return lb->len;
}

void
csv_lines_reset(struct csv_lines *lb)
{
	lb->len = 0;
	lb->overlong = false;
}

/* ---- line parsing ---- */

static inline bool
is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static inline bool
is_digit(char c)
{
	return (unsigned char)(c - '0') < 10;
}

static void
trim(const char **s, const char **e)
{
	while (*s < *e && is_space(**s))
		(*s)++;
	while (*e > *s && is_space((*e)[-1]))
		(*e)--;
}

/*
 * The end of the cell that starts at s: the next comma, or e.  Cells are a
 * few bytes long, too short for memchr to repay its call.
 */
static inline const char *
cell_end(const char *s, const char *e)
{
	while (s < e && *s != ',')
		s++;
	return s;
}

static enum csv_kind bad(struct csv_result *, int, const char *, ...)
	__attribute__((format(printf, 3, 4)));

static enum csv_kind
bad(struct csv_result *res, int col, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(res->error, sizeof(res->error), fmt, ap);
	va_end(ap);
	res->error_col = col;
	return res->kind = CSV_BAD;
}

/* A rejected cell: the error names its column's key and quotes its text. */
static enum csv_kind
bad_cell(struct csv_result *res, int col, const char *key, const char *what,
    const char *s, const char *e)
{
	size_t n = (size_t)(e - s);

	return bad(res, col, "column '%s': %s: \"%.*s\"%s", key, what,
	    (int)(n > ERROR_TEXT_MAX ? ERROR_TEXT_MAX : n), s,
	    n > ERROR_TEXT_MAX ? "..." : "");
}

/*
 * Read a whole cell [s, e) as an unsigned decimal integer no greater than
 * max; -1 if it is anything else.
 */
static int
parse_uint(const char *s, const char *e, int max, int *out)
{
	int v = 0;

	if (s == e)
		return -1;
	for (; s < e; s++) {
		if (!is_digit(*s))
			return -1;
		v = v * 10 + (*s - '0');
		if (v > max)
			return -1;
	}
	*out = v;
	return 0;
}

static bool
is_missing(const char *s, const char *e)
{
	return e - s == 1 && *s == '-';
}

static int
days_in_month(int year, int month)
{
	static const int days[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31,
	    30, 31 };
	bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;

	return month == 2 && leap ? 29 : days[month - 1];
}

/* "YYYYMMDD" as the integer YYYYMMDD; -1 if malformed or not a date. */
static int
parse_date(const char *s, const char *e, int *out)
{
	int v, year, month, day;

	if (e - s != 8 || parse_uint(s, e, 99999999, &v) == -1)
		return -1;
	year = v / 10000;
	month = v / 100 % 100;
	day = v % 100;
	if (month < 1 || month > 12 || day < 1 ||
	    day > days_in_month(year, month))
		return -1;
	*out = v;
	return 0;
}

/* "HH:MM:SS" as seconds since midnight; -1 if malformed. */
static int
parse_hms(const char *s, const char *e, int *out)
{
	int h, m, sec;

	if (e - s != 8 || s[2] != ':' || s[5] != ':' ||
	    parse_uint(s, s + 2, 23, &h) == -1 ||
	    parse_uint(s + 3, s + 5, 59, &m) == -1 ||
	    parse_uint(s + 6, s + 8, 60, &sec) == -1)
		return -1;
	*out = h * 3600 + m * 60 + sec;
	return 0;
}

/* mag = mag * 10 + digit c; false if that overflows 64 bits. */
static inline bool
push_digit(uint64_t *mag, char c)
{
	return !__builtin_mul_overflow(*mag, 10, mag) &&
	    !__builtin_add_overflow(*mag, (uint64_t)(c - '0'), mag);
}

/*
 * [+-]digits[.digits] with at least one digit, or "-" for a missing value.
 * Syntax is checked to the end before range, so that "12345678901234567890x"
 * is reported as what it is: not a number.
 */
static enum decimal_status
parse_decimal(const char *s, const char *e, struct csv_value *out)
{
	uint64_t mag = 0, limit = INT64_MAX;
	bool neg = false, overflow = false;
	const char *int_start;
	ptrdiff_t scale = 0;

	if (is_missing(s, e)) {
		out->mant = 0;
		out->scale = 0;
		out->present = false;
		return DECIMAL_OK;
	}
	if (s < e && (*s == '-' || *s == '+')) {
		neg = *s++ == '-';
		if (neg)
			limit = (uint64_t)INT64_MAX + 1;
	}
	for (int_start = s; s < e && is_digit(*s); s++)
		overflow |= !push_digit(&mag, *s);
	if (s < e && *s == '.') {
		const char *frac_start = ++s;

		for (; s < e && is_digit(*s); s++)
			overflow |= !push_digit(&mag, *s);
		scale = s - frac_start;
		if (scale == 0)
			return DECIMAL_SYNTAX;
	} else if (s == int_start)
		return DECIMAL_SYNTAX;
	if (s != e)
		return DECIMAL_SYNTAX;
	if (overflow || mag > limit || scale > 18)
		return DECIMAL_RANGE;
	if (neg)
		out->mant = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN :
		    -(int64_t)mag;
	else
		out->mant = (int64_t)mag;
	out->scale = (int8_t)scale;
	out->present = true;
	return DECIMAL_OK;
}

int
csv_parse_value(const char *s, size_t len, struct csv_value *out)
{
	return parse_decimal(s, s + len, out) == DECIMAL_OK ? 0 : -1;
}

void
csv_parser_init(struct csv_parser *p)
{
	memset(p, 0, sizeof(*p));
	p->id_col = p->date_col = p->time_col = -1;
}

/* ---- comments and the #MetricFiles block ---- */

/* Whether [s, e) starts with the word w, followed by the end or a space. */
static bool
starts_with_word(const char *s, const char *e, const char *w)
{
	size_t n = strlen(w);

	return (size_t)(e - s) >= n && memcmp(s, w, n) == 0 &&
	    (s + n == e || is_space(s[n]));
}

/*
 * Inside a #MetricFiles block, "# <id> <path>".  A line of that shape whose
 * ID or path does not fit is CSV_BAD, so that a lost mapping gets reported;
 * any other line is an ordinary comment.  Either way the block ends.
 */
static enum csv_kind
parse_map_entry(struct csv_parser *p, const char *s, const char *e,
    struct csv_result *res)
{
	const char *id = s, *path;
	size_t pathlen;
	int device;

	while (s < e && is_digit(*s))
		s++;
	if (s == id || s == e || !is_space(*s))
		return res->kind = CSV_COMMENT;
	path = s;
	trim(&path, &e);
	if (parse_uint(id, s, DEVICE_ID_MAX, &device) == -1)
		return bad(res, -1, "#MetricFiles: device ID out of range: "
		    "\"%.*s\"", (int)(s - id > ERROR_TEXT_MAX ? ERROR_TEXT_MAX :
		    s - id), id);
	pathlen = (size_t)(e - path);
	if (pathlen >= CSV_PATH_MAX)
		return bad(res, -1, "#MetricFiles: path of device %d longer "
		    "than %d bytes", device, CSV_PATH_MAX - 1);
	res->u.map.device = device;
	memcpy(res->u.map.path, path, pathlen);
	res->u.map.path[pathlen] = '\0';
	p->in_metricfiles = true;
	return res->kind = CSV_MAP_ENTRY;
}

static enum csv_kind
parse_comment(struct csv_parser *p, const char *s, const char *e,
    bool in_block, struct csv_result *res)
{
	for (s++; s < e && is_space(*s); s++)
		;
	if (starts_with_word(s, e, "MetricFiles")) {
		p->in_metricfiles = true;
		return res->kind = CSV_MAP_BEGIN;
	}
	if (in_block)
		return parse_map_entry(p, s, e, res);
	return res->kind = CSV_COMMENT;
}

/* ---- header ---- */

/* "ID," with optional spaces before the comma. */
static bool
is_header(const char *s, const char *e)
{
	if (e - s < 2 || s[0] != 'I' || s[1] != 'D')
		return false;
	for (s += 2; s < e && is_space(*s); s++)
		;
	return s < e && *s == ',';
}

static enum csv_role
role_of(const char *key)
{
	if (strcmp(key, "ID") == 0)
		return CSV_ROLE_ID;
	if (strcmp(key, "Date") == 0)
		return CSV_ROLE_DATE;
	if (strcmp(key, "Time") == 0)
		return CSV_ROLE_TIME;
	return CSV_ROLE_METRIC;
}

static bool
is_key_char(char c)
{
	return c > ' ' && c <= '~';
}

static bool
is_unit_char(char c)
{
	return (unsigned char)c >= ' ' && c != 0x7f;
}

/* Split header cell [s, e) into p->cols[i]; on error fill res, return -1. */
static int
set_column(struct csv_parser *p, int i, const char *s, const char *e,
    struct csv_result *res)
{
	struct csv_column *col = &p->cols[i];
	const char *k, *u;
	size_t klen, ulen;

	trim(&s, &e);
	for (k = s; k < e && !is_space(*k); k++)
		if (!is_key_char(*k)) {
			bad(res, i, "header cell %d: key is not printable "
			    "ASCII", i);
			return -1;
		}
	klen = (size_t)(k - s);
	u = k;
	trim(&u, &e);
	ulen = (size_t)(e - u);
	if (klen == 0) {
		bad(res, i, "header cell %d: empty key", i);
		return -1;
	}
	if (klen >= CSV_KEY_MAX) {
		bad(res, i, "header cell %d: key longer than %d bytes: "
		    "\"%.*s\"", i, CSV_KEY_MAX - 1, (int)klen, s);
		return -1;
	}
	for (const char *c = u; c < e; c++)
		if (!is_unit_char(*c)) {
			bad(res, i, "header cell %d: control character in "
			    "unit", i);
			return -1;
		}
	memcpy(col->key, s, klen);
	col->key[klen] = '\0';
	if (ulen >= CSV_UNIT_MAX) {
		bad(res, i, "header cell %d: unit of '%s' longer than %d "
		    "bytes", i, col->key, CSV_UNIT_MAX - 1);
		return -1;
	}
	memcpy(col->unit, u, ulen);
	col->unit[ulen] = '\0';
	for (int j = 0; j < i; j++)
		if (strcmp(p->cols[j].key, col->key) == 0) {
			bad(res, i, "header: duplicate key '%s' in cells %d "
			    "and %d", col->key, j, i);
			return -1;
		}
	col->role = role_of(col->key);
	return 0;
}

/*
 * Columns are written straight into the parser: ncols stays 0 until the
 * whole header is accepted, so a rejected header leaves no columns.
 */
static enum csv_kind
parse_header(struct csv_parser *p, const char *s, const char *e,
    struct csv_result *res)
{
	int n = 0;

	p->ncols = 0;
	p->id_col = p->date_col = p->time_col = -1;
	for (;;) {
		const char *ce = cell_end(s, e);

		if (n == CSV_COLS_MAX)
			return bad(res, n, "header has more than %d cells",
			    CSV_COLS_MAX);
		if (set_column(p, n, s, ce, res) == -1)
			return CSV_BAD;
		n++;
		if (ce == e)
			break;
		s = ce + 1;
	}
	for (int i = 0; i < n; i++) {
		if (p->cols[i].role == CSV_ROLE_ID)
			p->id_col = i;
		else if (p->cols[i].role == CSV_ROLE_DATE)
			p->date_col = i;
		else if (p->cols[i].role == CSV_ROLE_TIME)
			p->time_col = i;
	}
	p->ncols = n;
	p->generation++;
	return res->kind = CSV_HEADER;
}

/* ---- data rows ---- */

/*
 * Parse cell i, [s, e) already trimmed, into row.  Date and Time may be "-"
 * (no clock), but a malformed one means a corrupt line.
 */
static int
parse_cell(const struct csv_parser *p, int i, const char *s, const char *e,
    struct csv_row *row, struct csv_result *res)
{
	const struct csv_column *col = &p->cols[i];
	struct csv_value *v = &row->values[i];
	const char *why = NULL;
	enum decimal_status st;

	if (col->role != CSV_ROLE_METRIC) {
		v->mant = 0;
		v->scale = 0;
		v->present = false;
	}
	switch (col->role) {
	case CSV_ROLE_ID:
		if (parse_uint(s, e, DEVICE_ID_MAX, &row->device) == -1)
			why = "not a device ID";
		break;
	case CSV_ROLE_DATE:
		if (!is_missing(s, e) && parse_date(s, e, &row->date) == -1)
			why = "not a date (YYYYMMDD)";
		break;
	case CSV_ROLE_TIME:
		if (!is_missing(s, e) && parse_hms(s, e, &row->hms) == -1)
			why = "not a time (HH:MM:SS)";
		break;
	case CSV_ROLE_METRIC:
		st = parse_decimal(s, e, v);
		if (st != DECIMAL_OK)
			why = st == DECIMAL_RANGE ? "number out of range" :
			    "not a number";
		break;
	}
	if (why == NULL)
		return 0;
	bad_cell(res, i, col->key, why, s, e);
	return -1;
}

/*
 * A row is counted to its end even after a bad cell, because a wrong cell
 * count is the more basic fault and is reported first.
 */
static enum csv_kind
parse_row(const struct csv_parser *p, const char *s, const char *e,
    struct csv_result *res)
{
	struct csv_row *row = &res->u.row;
	bool cell_bad = false;
	int n = 0;

	if (p->ncols == 0)
		return bad(res, -1, "data row before header");
	row->date = -1;
	row->hms = -1;
	for (;;) {
		const char *ce = cell_end(s, e);

		if (n < p->ncols && !cell_bad) {
			const char *ts = s, *te = ce;

			trim(&ts, &te);
			if (parse_cell(p, n, ts, te, row, res) == -1)
				cell_bad = true;
		}
		n++;
		if (ce == e)
			break;
		s = ce + 1;
	}
	if (n != p->ncols)
		return bad(res, -1, "expected %d cells, got %d", p->ncols, n);
	if (cell_bad)
		return CSV_BAD;
	row->have_clock = row->date >= 0 && row->hms >= 0;
	if (!row->have_clock)
		row->date = row->hms = 0;
	return res->kind = CSV_ROW;
}

enum csv_kind
csv_parse_line(struct csv_parser *p, const char *line, size_t len,
    struct csv_result *res)
{
	const char *s = line, *e = line + len;
	bool in_block = p->in_metricfiles;

	res->error[0] = '\0';
	res->error_col = -1;
	p->in_metricfiles = false;
	if (len > 0 && memchr(line, '\0', len) != NULL)
		return bad(res, -1, "line contains a NUL byte");
	trim(&s, &e);
	if (s == e)
		return res->kind = CSV_BLANK;
	if (*s == '#')
		return parse_comment(p, s, e, in_block, res);
	if (is_header(s, e))
		return parse_header(p, s, e, res);
	return parse_row(p, s, e, res);
}
