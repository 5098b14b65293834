/* Tests of csvparse: line assembly and parsing of aiu-smi's CSV. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "csvparse.h"

/* ---- a sink that records every line csv_lines_feed delivers ---- */

#define SINK_LINES	64
#define SINK_POOL	(4 * (CSV_LINE_MAX + 1))

struct sink {
	char pool[SINK_POOL];
	size_t used;
	int n;
	size_t off[SINK_LINES];
	size_t len[SINK_LINES];
	bool overlong[SINK_LINES];
};

static void
sink_line(void *arg, const char *line, size_t len, bool overlong)
{
	struct sink *s = arg;

	assert_true(s->n < SINK_LINES);
	assert_true(s->used + len <= SINK_POOL);
	assert_int_equal(line[len], '\0');
	memcpy(s->pool + s->used, line, len);
	s->off[s->n] = s->used;
	s->len[s->n] = len;
	s->overlong[s->n] = overlong;
	s->used += len;
	s->n++;
}

static struct sink *
sink_new(void)
{
	struct sink *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	return s;
}

static void
assert_line(const struct sink *s, int i, const char *want, size_t wantlen,
    bool overlong)
{
	assert_true(i < s->n);
	assert_int_equal(s->len[i], wantlen);
	assert_memory_equal(s->pool + s->off[i], want, wantlen);
	assert_int_equal(s->overlong[i], overlong);
}

#define ASSERT_LINE(s, i, lit) assert_line((s), (i), (lit), sizeof(lit) - 1, false)

/* ---- line assembly ---- */

static void
test_lines_basic(void **state)
{
	struct csv_lines lb = { .len = 0 };
	struct sink *s = sink_new();
	static const char in[] = "a\nbb\n\nccc\n";

	(void)state;
	csv_lines_feed(&lb, in, sizeof(in) - 1, sink_line, s);
	assert_int_equal(s->n, 4);
	ASSERT_LINE(s, 0, "a");
	ASSERT_LINE(s, 1, "bb");
	ASSERT_LINE(s, 2, "");
	ASSERT_LINE(s, 3, "ccc");
	assert_int_equal(csv_lines_pending(&lb), 0);
	free(s);
}

static void
test_lines_crlf(void **state)
{
	struct csv_lines lb = { .len = 0 };
	struct sink *s = sink_new();
	static const char in[] = "a\r\n\r\nb\rc\r\n";

	(void)state;
	csv_lines_feed(&lb, in, sizeof(in) - 1, sink_line, s);
	/* a "\r" split from its "\n" by a read boundary is still stripped */
	csv_lines_feed(&lb, "dd\r", 3, sink_line, s);
	assert_int_equal(csv_lines_pending(&lb), 3);
	csv_lines_feed(&lb, "\n", 1, sink_line, s);
	assert_int_equal(s->n, 4);
	ASSERT_LINE(s, 0, "a");
	ASSERT_LINE(s, 1, "");
	ASSERT_LINE(s, 2, "b\rc");	/* only a trailing "\r" goes */
	ASSERT_LINE(s, 3, "dd");
	free(s);
}

static void
test_lines_partial_held(void **state)
{
	struct csv_lines lb = { .len = 0 };
	struct sink *s = sink_new();

	(void)state;
	csv_lines_feed(&lb, "abc", 3, sink_line, s);
	assert_int_equal(s->n, 0);
	assert_int_equal(csv_lines_pending(&lb), 3);
	csv_lines_feed(&lb, "", 0, sink_line, s);
	assert_int_equal(s->n, 0);
	csv_lines_feed(&lb, "def\ngh", 6, sink_line, s);
	assert_int_equal(s->n, 1);
	ASSERT_LINE(s, 0, "abcdef");
	assert_int_equal(csv_lines_pending(&lb), 2);
	csv_lines_reset(&lb);
	assert_int_equal(csv_lines_pending(&lb), 0);
	csv_lines_feed(&lb, "i\n", 2, sink_line, s);
	assert_int_equal(s->n, 2);
	ASSERT_LINE(s, 1, "i");
	free(s);
}

/* Input with CRLF, blank lines and a last line still waiting for "\n". */
static const char split_input[] =
    "#MetricFiles\n# 0 /tmp/metrics.0000:13:00.0\r\n\n"
    "ID,pwr W\n0,26.7\r\n\r\n1,-\nx";

static void
assert_split_lines(const struct sink *s, const struct csv_lines *lb)
{
	assert_int_equal(s->n, 7);
	ASSERT_LINE(s, 0, "#MetricFiles");
	ASSERT_LINE(s, 1, "# 0 /tmp/metrics.0000:13:00.0");
	ASSERT_LINE(s, 2, "");
	ASSERT_LINE(s, 3, "ID,pwr W");
	ASSERT_LINE(s, 4, "0,26.7");
	ASSERT_LINE(s, 5, "");
	ASSERT_LINE(s, 6, "1,-");
	assert_int_equal(csv_lines_pending(lb), 1);
}

static void
test_lines_every_split(void **state)
{
	const size_t n = sizeof(split_input) - 1;

	(void)state;
	for (size_t i = 0; i <= n; i++) {
		for (size_t j = i; j <= n; j++) {
			struct csv_lines lb = { .len = 0 };
			struct sink *s = sink_new();

			csv_lines_feed(&lb, split_input, i, sink_line, s);
			csv_lines_feed(&lb, split_input + i, j - i, sink_line, s);
			csv_lines_feed(&lb, split_input + j, n - j, sink_line, s);
			assert_split_lines(s, &lb);
			free(s);
		}
	}
}

static void
test_lines_byte_at_a_time(void **state)
{
	struct csv_lines lb = { .len = 0 };
	struct sink *s = sink_new();

	(void)state;
	for (size_t i = 0; i < sizeof(split_input) - 1; i++)
		csv_lines_feed(&lb, split_input + i, 1, sink_line, s);
	assert_split_lines(s, &lb);
	free(s);
}

/* A buffer of n bytes 'a'..'z' repeating, followed by tail. */
static char *
long_line(size_t n, const char *tail, size_t *total)
{
	size_t tl = strlen(tail);
	char *b = malloc(n + tl + 1);

	assert_non_null(b);
	for (size_t i = 0; i < n; i++)
		b[i] = (char)('a' + i % 26);
	memcpy(b + n, tail, tl + 1);
	*total = n + tl;
	return b;
}

static void
feed_in_chunks(struct csv_lines *lb, const char *b, size_t n, size_t chunk,
    struct sink *s)
{
	for (size_t off = 0; off < n; off += chunk)
		csv_lines_feed(lb, b + off, n - off < chunk ? n - off : chunk,
		    sink_line, s);
}

static void
test_lines_max_length_fits(void **state)
{
	static const char *const tails[] = { "\nnext\n", "\r\nnext\n" };

	(void)state;
	for (size_t t = 0; t < 2; t++) {
		static const size_t chunks[] = { 1, 100, CSV_LINE_MAX,
		    CSV_LINE_MAX + 1, 1 << 16 };

		for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
			struct csv_lines lb = { .len = 0 };
			struct sink *s = sink_new();
			size_t n;
			char *b = long_line(CSV_LINE_MAX, tails[t], &n);

			feed_in_chunks(&lb, b, n, chunks[c], s);
			assert_int_equal(s->n, 2);
			assert_line(s, 0, b, CSV_LINE_MAX, false);
			ASSERT_LINE(s, 1, "next");
			free(b);
			free(s);
		}
	}
}

static void
test_lines_overlong(void **state)
{
	static const size_t lengths[] = { CSV_LINE_MAX + 1, CSV_LINE_MAX + 2,
	    3 * CSV_LINE_MAX + 17 };
	static const size_t chunks[] = { 1, 7, CSV_LINE_MAX - 1, CSV_LINE_MAX,
	    CSV_LINE_MAX + 1, 1 << 16 };

	(void)state;
	for (size_t l = 0; l < sizeof(lengths) / sizeof(lengths[0]); l++) {
		for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
			struct csv_lines lb = { .len = 0 };
			struct sink *s = sink_new();
			size_t n;
			char *b = long_line(lengths[l], "\r\nnext\n", &n);

			feed_in_chunks(&lb, b, n, chunks[c], s);
			assert_int_equal(s->n, 2);
			assert_line(s, 0, b, CSV_LINE_MAX, true);
			ASSERT_LINE(s, 1, "next");
			assert_int_equal(csv_lines_pending(&lb), 0);
			free(b);
			free(s);
		}
	}
}

/* An overlong line is reported at once, not when its newline comes. */
static void
test_lines_overlong_early(void **state)
{
	struct csv_lines lb = { .len = 0 };
	struct sink *s = sink_new();
	size_t n;
	char *b = long_line(CSV_LINE_MAX + 100, "", &n);

	(void)state;
	csv_lines_feed(&lb, b, n, sink_line, s);
	assert_int_equal(s->n, 1);
	assert_line(s, 0, b, CSV_LINE_MAX, true);
	assert_int_equal(csv_lines_pending(&lb), 0);
	csv_lines_feed(&lb, b, n, sink_line, s);	/* more of the same line */
	assert_int_equal(s->n, 1);
	csv_lines_feed(&lb, "tail\nok\n", 8, sink_line, s);
	assert_int_equal(s->n, 2);
	ASSERT_LINE(s, 1, "ok");
	free(b);
	free(s);
}

/* A "\r" just past CSV_LINE_MAX that is not the line's end makes it overlong. */
static void
test_lines_overlong_inner_cr(void **state)
{
	struct csv_lines lb = { .len = 0 };
	struct sink *s = sink_new();
	size_t n;
	char *b = long_line(CSV_LINE_MAX, "\rx\nok\n", &n);

	(void)state;
	feed_in_chunks(&lb, b, n, 1, s);
	assert_int_equal(s->n, 2);
	assert_line(s, 0, b, CSV_LINE_MAX, true);
	ASSERT_LINE(s, 1, "ok");
	free(b);
	free(s);
}

static void
test_lines_reset_while_discarding(void **state)
{
	struct csv_lines lb = { .len = 0 };
	struct sink *s = sink_new();
	size_t n;
	char *b = long_line(CSV_LINE_MAX + 5, "", &n);

	(void)state;
	csv_lines_feed(&lb, b, n, sink_line, s);
	assert_int_equal(s->n, 1);
	csv_lines_reset(&lb);
	csv_lines_feed(&lb, "fresh\n", 6, sink_line, s);
	assert_int_equal(s->n, 2);
	ASSERT_LINE(s, 1, "fresh");
	free(b);
	free(s);
}

static void
test_lines_nul_kept(void **state)
{
	struct csv_lines lb = { .len = 0 };
	struct sink *s = sink_new();
	static const char in[] = "0,1\0002\nnext\n";

	(void)state;
	csv_lines_feed(&lb, in, sizeof(in) - 1, sink_line, s);
	assert_int_equal(s->n, 2);
	assert_line(s, 0, "0,1\0002", 5, false);
	ASSERT_LINE(s, 1, "next");
	free(s);
}

/* ---- parsing ---- */

static enum csv_kind
parse(struct csv_parser *p, const char *line, struct csv_result *res)
{
	return csv_parse_line(p, line, strlen(line), res);
}

/* A parser and result that are too big for comfort on the stack. */
struct fixture {
	struct csv_parser p;
	struct csv_result res;
};

static int
setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return -1;
	csv_parser_init(&f->p);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	free(*state);
	return 0;
}

static void
assert_value(const struct csv_value *v, int64_t mant, int scale)
{
	assert_true(v->present);
	assert_int_equal(v->mant, mant);
	assert_int_equal(v->scale, scale);
}

static void
test_header_keys_units(void **state)
{
	struct fixture *f = *state;
	const struct csv_parser *p = &f->p;

	assert_int_equal(p->ncols, 0);
	assert_int_equal(p->generation, 0);
	assert_int_equal(parse(&f->p, "ID,Date,Time (HH:MM:SS),hostcpu %,"
	    "pwr W,gtemp C,busy %,rdmem GiB/s,n_rdmem Mreq/s", &f->res),
	    CSV_HEADER);
	assert_int_equal(f->res.kind, CSV_HEADER);
	assert_int_equal(p->ncols, 9);
	assert_int_equal(p->generation, 1);
	assert_int_equal(p->id_col, 0);
	assert_int_equal(p->date_col, 1);
	assert_int_equal(p->time_col, 2);
	assert_string_equal(p->cols[0].key, "ID");
	assert_string_equal(p->cols[0].unit, "");
	assert_int_equal(p->cols[0].role, CSV_ROLE_ID);
	assert_string_equal(p->cols[1].key, "Date");
	assert_int_equal(p->cols[1].role, CSV_ROLE_DATE);
	assert_string_equal(p->cols[2].key, "Time");
	assert_string_equal(p->cols[2].unit, "(HH:MM:SS)");
	assert_int_equal(p->cols[2].role, CSV_ROLE_TIME);
	assert_string_equal(p->cols[3].key, "hostcpu");
	assert_string_equal(p->cols[3].unit, "%");
	assert_int_equal(p->cols[3].role, CSV_ROLE_METRIC);
	assert_string_equal(p->cols[4].key, "pwr");
	assert_string_equal(p->cols[4].unit, "W");
	assert_string_equal(p->cols[7].key, "rdmem");
	assert_string_equal(p->cols[7].unit, "GiB/s");
	assert_int_equal(p->cols[7].role, CSV_ROLE_METRIC);
	assert_string_equal(p->cols[8].key, "n_rdmem");
	assert_string_equal(p->cols[8].unit, "Mreq/s");
}

static void
test_header_spacing(void **state)
{
	struct fixture *f = *state;
	const struct csv_parser *p = &f->p;

	assert_int_equal(parse(&f->p, "  ID ,  rdmem   GiB/s  ,busy\t%,"
	    "odd a  b ,x\r", &f->res), CSV_HEADER);
	assert_int_equal(p->ncols, 5);
	assert_string_equal(p->cols[0].key, "ID");
	assert_string_equal(p->cols[1].key, "rdmem");
	assert_string_equal(p->cols[1].unit, "GiB/s");
	assert_string_equal(p->cols[2].key, "busy");
	assert_string_equal(p->cols[2].unit, "%");
	assert_string_equal(p->cols[3].key, "odd");
	assert_string_equal(p->cols[3].unit, "a  b");
	assert_string_equal(p->cols[4].key, "x");
	assert_string_equal(p->cols[4].unit, "");
	assert_int_equal(p->date_col, -1);
	assert_int_equal(p->time_col, -1);
}

/* A rejected header leaves no columns, so rows are not mapped by old ones. */
static void
assert_header_rejected(struct fixture *f, const char *line, int col,
    const char *what)
{
	unsigned gen = f->p.generation;

	assert_int_equal(parse(&f->p, "ID,pwr W", &f->res), CSV_HEADER);
	assert_int_equal(f->p.generation, gen + 1);
	assert_int_equal(parse(&f->p, line, &f->res), CSV_BAD);
	assert_int_equal(f->res.kind, CSV_BAD);
	assert_int_equal(f->p.ncols, 0);
	assert_int_equal(f->p.generation, gen + 1);
	assert_int_equal(f->res.error_col, col);
	assert_non_null(strstr(f->res.error, what));
	assert_int_equal(parse(&f->p, "0,1.0", &f->res), CSV_BAD);
	assert_string_equal(f->res.error, "data row before header");
}

static void
test_header_rejected(void **state)
{
	struct fixture *f = *state;
	char line[8192];
	size_t n;

	assert_header_rejected(f, "ID,,pwr W", 1, "empty key");
	assert_header_rejected(f, "ID,pwr W, ", 2, "empty key");
	assert_header_rejected(f, "ID,pwr W,busy %,pwr kW", 3, "duplicate key 'pwr'");
	assert_header_rejected(f, "ID,Date,ID", 2, "duplicate key 'ID'");
	assert_header_rejected(f, "ID,p\001wr W", 1, "not printable ASCII");
	assert_header_rejected(f, "ID,p\xc3\xa9r W", 1, "not printable ASCII");
	assert_header_rejected(f, "ID,pwr\177 W", 1, "not printable ASCII");
	assert_header_rejected(f, "ID,pwr W\001", 1, "control character");
	/* 31 bytes of key and of unit fit; 32 do not */
	assert_int_equal(parse(&f->p, "ID,k234567890123456789012345678901 "
	    "u234567890123456789012345678901", &f->res), CSV_HEADER);
	assert_string_equal(f->p.cols[1].key, "k234567890123456789012345678901");
	assert_string_equal(f->p.cols[1].unit, "u234567890123456789012345678901");
	assert_header_rejected(f, "ID,k2345678901234567890123456789012 W", 1,
	    "key longer than 31 bytes");
	assert_header_rejected(f, "ID,pwr u2345678901234567890123456789012", 1,
	    "unit of 'pwr' longer than 31 bytes");

	/* CSV_COLS_MAX cells fit, one more does not */
	n = (size_t)snprintf(line, sizeof(line), "ID");
	for (int i = 1; i < CSV_COLS_MAX; i++)
		n += (size_t)snprintf(line + n, sizeof(line) - n, ",m%d u", i);
	assert_int_equal(parse(&f->p, line, &f->res), CSV_HEADER);
	assert_int_equal(f->p.ncols, CSV_COLS_MAX);
	assert_string_equal(f->p.cols[CSV_COLS_MAX - 1].key, "m127");
	snprintf(line + n, sizeof(line) - n, ",extra");
	assert_header_rejected(f, line, CSV_COLS_MAX, "more than 128 cells");
}

static void
test_row_values(void **state)
{
	struct fixture *f = *state;
	const struct csv_row *row = &f->res.u.row;

	assert_int_equal(parse(&f->p, "ID,Date,Time (HH:MM:SS),hostcpu %,"
	    "pwr W,busy %,rdmem GiB/s", &f->res), CSV_HEADER);
	assert_int_equal(parse(&f->p, "  3 , 20260617 ,21:14:10,295.1,26.7,"
	    "100,22.767", &f->res), CSV_ROW);
	assert_int_equal(f->res.kind, CSV_ROW);
	assert_string_equal(f->res.error, "");
	assert_int_equal(row->device, 3);
	assert_true(row->have_clock);
	assert_int_equal(row->date, 20260617);
	assert_int_equal(row->hms, 21 * 3600 + 14 * 60 + 10);
	assert_value(&row->values[3], 2951, 1);
	assert_value(&row->values[4], 267, 1);
	assert_value(&row->values[5], 100, 0);
	assert_value(&row->values[6], 22767, 3);
	assert_false(row->values[0].present);
	assert_false(row->values[1].present);
	assert_false(row->values[2].present);
}

static void
test_row_missing_values(void **state)
{
	struct fixture *f = *state;
	const struct csv_row *row = &f->res.u.row;

	assert_int_equal(parse(&f->p, "ID,Date,Time (HH:MM:SS),pwr W,rsvmem",
	    &f->res), CSV_HEADER);
	assert_int_equal(parse(&f->p, "9999,20260617,00:00:00,-,0", &f->res),
	    CSV_ROW);
	assert_int_equal(row->device, 9999);
	assert_false(row->values[3].present);
	assert_value(&row->values[4], 0, 0);
	/* "-" for Date or Time means no clock, not a corrupt row */
	assert_int_equal(parse(&f->p, "1,-,21:14:10,1.5,-", &f->res), CSV_ROW);
	assert_false(row->have_clock);
	assert_value(&row->values[3], 15, 1);
	assert_false(row->values[4].present);
	assert_int_equal(parse(&f->p, "1,20260617,-,1.5,-", &f->res), CSV_ROW);
	assert_false(row->have_clock);
}

static void
test_row_no_clock_columns(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(parse(&f->p, "ID,pwr W", &f->res), CSV_HEADER);
	assert_int_equal(parse(&f->p, "0,26.7", &f->res), CSV_ROW);
	assert_false(f->res.u.row.have_clock);
	assert_value(&f->res.u.row.values[1], 267, 1);
}

static void
test_row_cell_count(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(parse(&f->p, "ID,pwr W,busy %", &f->res), CSV_HEADER);
	assert_int_equal(parse(&f->p, "0,1,2,3", &f->res), CSV_BAD);
	assert_string_equal(f->res.error, "expected 3 cells, got 4");
	assert_int_equal(f->res.error_col, -1);
	assert_int_equal(parse(&f->p, "0,1", &f->res), CSV_BAD);
	assert_string_equal(f->res.error, "expected 3 cells, got 2");
	assert_int_equal(parse(&f->p, "0,1,", &f->res), CSV_BAD);
	assert_non_null(strstr(f->res.error, "not a number: \"\""));
	assert_int_equal(f->res.error_col, 2);
	/* the count is the more basic fault, even after a bad cell */
	assert_int_equal(parse(&f->p, "0,abc,2,3", &f->res), CSV_BAD);
	assert_string_equal(f->res.error, "expected 3 cells, got 4");
	/* and a bad row does not disturb the header */
	assert_int_equal(parse(&f->p, "0,1,2", &f->res), CSV_ROW);
	assert_int_equal(f->p.generation, 1);
}

static void
test_row_not_a_number(void **state)
{
	static const char *const cells[] = { "abc", "1e5", "nan", "inf",
	    "-inf", "5.", "1.2.3", "--1", "+", "0x10", "1 2", "1,5", ".",
	    "-.", "+-1", "١" };
	struct fixture *f = *state;
	char line[64], want[128];

	assert_int_equal(parse(&f->p, "ID,busy %,pwr W", &f->res), CSV_HEADER);
	for (size_t i = 0; i < sizeof(cells) / sizeof(cells[0]); i++) {
		snprintf(line, sizeof(line), "0,1,%s", cells[i]);
		assert_int_equal(parse(&f->p, line, &f->res), CSV_BAD);
		if (strchr(cells[i], ',') != NULL) {
			assert_string_equal(f->res.error,
			    "expected 3 cells, got 4");
			continue;
		}
		snprintf(want, sizeof(want), "column 'pwr': not a number: "
		    "\"%s\"", cells[i]);
		assert_string_equal(f->res.error, want);
		assert_int_equal(f->res.error_col, 2);
	}
}

static void
test_row_bad_cell_quoted_briefly(void **state)
{
	struct fixture *f = *state;
	char line[512];

	assert_int_equal(parse(&f->p, "ID,pwr W", &f->res), CSV_HEADER);
	memset(line, 'z', sizeof(line));
	memcpy(line, "0,", 2);
	line[sizeof(line) - 1] = '\0';
	assert_int_equal(parse(&f->p, line, &f->res), CSV_BAD);
	assert_int_equal(f->res.error_col, 1);
	assert_true(strlen(f->res.error) < sizeof(f->res.error));
	assert_non_null(strstr(f->res.error, "column 'pwr': not a number: \"zzz"));
	assert_non_null(strstr(f->res.error, "zzz\"..."));
}

static void
test_values_exact(void **state)
{
	static const struct {
		const char *text;
		int64_t mant;
		int scale;
	} ok[] = {
		{ "0", 0, 0 },
		{ "7", 7, 0 },
		{ "-12.340", -12340, 3 },
		{ "-0.5", -5, 1 },
		{ "-.5", -5, 1 },
		{ ".5", 5, 1 },
		{ "0.5", 5, 1 },
		{ "+3", 3, 0 },
		{ "-0", 0, 0 },
		{ "007.0", 70, 1 },
		{ "0.123456789012345678", 123456789012345678, 18 },
		{ "9223372036854775807", INT64_MAX, 0 },
		{ "-9223372036854775808", INT64_MIN, 0 },
		{ "922337203685477580.7", INT64_MAX, 1 },
		{ "-9.223372036854775808", INT64_MIN, 18 },
	};
	static const char *const bad_values[] = { "", " 5", "5 ", "abc", "5.",
	    "1e5", "nan", "inf", "--1", "+", ".", "-.", "1.2.3",
	    "9223372036854775808", "-9223372036854775809",
	    "92233720368547758.08", "99999999999999999999999",
	    "0.1234567890123456789", "1.0000000000000000000" };
	struct csv_value v;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		memset(&v, 0xa5, sizeof(v));
		assert_int_equal(csv_parse_value(ok[i].text,
		    strlen(ok[i].text), &v), 0);
		assert_value(&v, ok[i].mant, ok[i].scale);
	}
	for (size_t i = 0; i < sizeof(bad_values) / sizeof(bad_values[0]); i++) {
		struct csv_value before;

		memset(&v, 0xa5, sizeof(v));
		before = v;
		assert_int_equal(csv_parse_value(bad_values[i],
		    strlen(bad_values[i]), &v), -1);
		assert_memory_equal(&v, &before, sizeof(v));
	}
	assert_int_equal(csv_parse_value("-", 1, &v), 0);
	assert_false(v.present);
	/* the length bounds the cell: what follows it is not read */
	assert_int_equal(csv_parse_value("12x", 2, &v), 0);
	assert_value(&v, 12, 0);
}

static void
test_row_out_of_range(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(parse(&f->p, "ID,rdmem GiB/s", &f->res), CSV_HEADER);
	assert_int_equal(parse(&f->p, "0,9223372036854775808", &f->res), CSV_BAD);
	assert_string_equal(f->res.error, "column 'rdmem': number out of "
	    "range: \"9223372036854775808\"");
	assert_int_equal(f->res.error_col, 1);
	assert_int_equal(parse(&f->p, "0,0.1234567890123456789", &f->res),
	    CSV_BAD);
	assert_int_equal(f->res.error_col, 1);
	assert_int_equal(parse(&f->p, "0,-9223372036854775808", &f->res), CSV_ROW);
	assert_value(&f->res.u.row.values[1], INT64_MIN, 0);
}

static void
test_row_bad_id_date_time(void **state)
{
	static const struct {
		const char *line;
		int col;
		const char *error;
	} cases[] = {
		{ "-1,20260617,21:14:10,1", 0, "column 'ID': not a device ID: \"-1\"" },
		{ "10000,20260617,21:14:10,1", 0, "not a device ID" },
		{ "x,20260617,21:14:10,1", 0, "not a device ID" },
		{ ",20260617,21:14:10,1", 0, "not a device ID" },
		{ "-,20260617,21:14:10,1", 0, "not a device ID" },
		{ "1.0,20260617,21:14:10,1", 0, "not a device ID" },
		{ "0,20260230,21:14:10,1", 1, "column 'Date': not a date (YYYYMMDD): \"20260230\"" },
		{ "0,20230229,21:14:10,1", 1, "not a date" },
		{ "0,20261301,21:14:10,1", 1, "not a date" },
		{ "0,20260001,21:14:10,1", 1, "not a date" },
		{ "0,20260600,21:14:10,1", 1, "not a date" },
		{ "0,20260431,21:14:10,1", 1, "not a date" },
		{ "0,2026061,21:14:10,1", 1, "not a date" },
		{ "0,202606170,21:14:10,1", 1, "not a date" },
		{ "0,2026-06-17,21:14:10,1", 1, "not a date" },
		{ "0,020260617,21:14:10,1", 1, "not a date" },
		{ "0,20260617,24:00:00,1", 2, "column 'Time': not a time (HH:MM:SS): \"24:00:00\"" },
		{ "0,20260617,21:60:00,1", 2, "not a time" },
		{ "0,20260617,21:14:61,1", 2, "not a time" },
		{ "0,20260617,21:14,1", 2, "not a time" },
		{ "0,20260617,1:14:10,1", 2, "not a time" },
		{ "0,20260617,21-14-10,1", 2, "not a time" },
		{ "0,20260617,2a:14:10,1", 2, "not a time" },
		{ "0,20260617,21:14:100,1", 2, "not a time" },
	};
	struct fixture *f = *state;

	assert_int_equal(parse(&f->p, "ID,Date,Time,pwr W", &f->res), CSV_HEADER);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(parse(&f->p, cases[i].line, &f->res), CSV_BAD);
		assert_int_equal(f->res.error_col, cases[i].col);
		if (strstr(f->res.error, cases[i].error) == NULL)
			fail_msg("%s: error \"%s\" lacks \"%s\"", cases[i].line,
			    f->res.error, cases[i].error);
	}
	/* leap days and the edges of the ranges are dates and times */
	assert_int_equal(parse(&f->p, "0,20240229,23:59:59,1", &f->res), CSV_ROW);
	assert_int_equal(f->res.u.row.date, 20240229);
	assert_int_equal(f->res.u.row.hms, 86399);
	assert_int_equal(parse(&f->p, "0,20000229,00:00:00,1", &f->res), CSV_ROW);
	assert_int_equal(f->res.u.row.hms, 0);
	assert_int_equal(parse(&f->p, "0,21000229,00:00:00,1", &f->res), CSV_BAD);
	assert_int_equal(parse(&f->p, "0,20261231,12:00:00,1", &f->res), CSV_ROW);
}

static void
test_nul_in_line(void **state)
{
	struct fixture *f = *state;
	static const char row[] = "0,1\0002";
	static const char comment[] = "# a\000b";

	assert_int_equal(parse(&f->p, "ID,pwr W", &f->res), CSV_HEADER);
	assert_int_equal(csv_parse_line(&f->p, row, sizeof(row) - 1, &f->res),
	    CSV_BAD);
	assert_non_null(strstr(f->res.error, "NUL"));
	assert_int_equal(csv_parse_line(&f->p, comment, sizeof(comment) - 1,
	    &f->res), CSV_BAD);
	/* the same row without the NUL is fine, so the NUL is the reason */
	assert_int_equal(parse(&f->p, "0,12", &f->res), CSV_ROW);
}

static void
test_row_before_header(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(parse(&f->p, "0,20260617,21:14:10,1.0", &f->res), CSV_BAD);
	assert_string_equal(f->res.error, "data row before header");
	assert_int_equal(f->res.error_col, -1);
}

static void
test_header_change(void **state)
{
	struct fixture *f = *state;
	const struct csv_parser *p = &f->p;
	const struct csv_row *row = &f->res.u.row;

	assert_int_equal(parse(&f->p, "ID,pwr W,busy %", &f->res), CSV_HEADER);
	assert_int_equal(p->generation, 1);
	assert_int_equal(parse(&f->p, "0,26.7,100", &f->res), CSV_ROW);
	assert_int_equal(parse(&f->p, "ID,Date,Time (HH:MM:SS),rdmem GiB/s,"
	    "pwr W", &f->res), CSV_HEADER);
	assert_int_equal(p->generation, 2);
	assert_int_equal(p->ncols, 5);
	assert_string_equal(p->cols[1].key, "Date");
	assert_string_equal(p->cols[3].key, "rdmem");
	assert_string_equal(p->cols[4].key, "pwr");
	assert_int_equal(p->date_col, 1);
	assert_int_equal(p->time_col, 2);
	assert_int_equal(parse(&f->p, "0,26.7,100", &f->res), CSV_BAD);
	assert_string_equal(f->res.error, "expected 5 cells, got 3");
	assert_int_equal(parse(&f->p, "1,20260617,21:14:10,22.767,26.7",
	    &f->res), CSV_ROW);
	assert_int_equal(row->device, 1);
	assert_value(&row->values[3], 22767, 3);
	assert_value(&row->values[4], 267, 1);
	/* the same header again is still a new header */
	assert_int_equal(parse(&f->p, "ID,Date,Time (HH:MM:SS),rdmem GiB/s,"
	    "pwr W", &f->res), CSV_HEADER);
	assert_int_equal(p->generation, 3);
	/* a header that drops Date and Time forgets their columns */
	assert_int_equal(parse(&f->p, "ID,pwr W", &f->res), CSV_HEADER);
	assert_int_equal(p->date_col, -1);
	assert_int_equal(p->time_col, -1);
}

static void
test_blank_and_comments(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(parse(&f->p, "", &f->res), CSV_BLANK);
	assert_int_equal(parse(&f->p, "  \t ", &f->res), CSV_BLANK);
	assert_int_equal(parse(&f->p, "\r", &f->res), CSV_BLANK);
	assert_int_equal(parse(&f->p, "#", &f->res), CSV_COMMENT);
	assert_int_equal(parse(&f->p, "# aiu-smi 1.2", &f->res), CSV_COMMENT);
	assert_int_equal(parse(&f->p, "  # indented", &f->res), CSV_COMMENT);
	/* outside a #MetricFiles block, an entry-shaped line is a comment */
	assert_int_equal(parse(&f->p, "# 0 /tmp/metrics.0000:13:00.0",
	    &f->res), CSV_COMMENT);
	assert_int_equal(parse(&f->p, "#MetricFilesX", &f->res), CSV_COMMENT);
	/* "ID" alone, or "IDs,...", is not a header */
	assert_int_equal(parse(&f->p, "IDs,pwr W", &f->res), CSV_BAD);
	assert_int_equal(f->p.ncols, 0);
}

static void
test_metricfiles_block(void **state)
{
	struct fixture *f = *state;
	struct csv_result *res = &f->res;

	assert_int_equal(parse(&f->p, "#MetricFiles", res), CSV_MAP_BEGIN);
	assert_true(f->p.in_metricfiles);
	assert_int_equal(parse(&f->p, "# 0 /tmp/metrics.0000:13:00.0", res),
	    CSV_MAP_ENTRY);
	assert_int_equal(res->u.map.device, 0);
	assert_string_equal(res->u.map.path, "/tmp/metrics.0000:13:00.0");
	assert_int_equal(parse(&f->p, "#  12\t/var/tmp/a b  \r", res),
	    CSV_MAP_ENTRY);
	assert_int_equal(res->u.map.device, 12);
	assert_string_equal(res->u.map.path, "/var/tmp/a b");
	assert_int_equal(parse(&f->p, "#9999 /p", res), CSV_MAP_ENTRY);
	assert_int_equal(res->u.map.device, 9999);
	assert_true(f->p.in_metricfiles);
	/* the text table's column line ends the block */
	assert_int_equal(parse(&f->p, "#ID Date      Time     hostcpu", res),
	    CSV_COMMENT);
	assert_false(f->p.in_metricfiles);
	assert_int_equal(parse(&f->p, "# 1 /tmp/metrics.0000:12:00.0", res),
	    CSV_COMMENT);

	/* so do a header, a blank line and an entry without a path */
	assert_int_equal(parse(&f->p, "# MetricFiles", res), CSV_MAP_BEGIN);
	assert_int_equal(parse(&f->p, "ID,pwr W", res), CSV_HEADER);
	assert_false(f->p.in_metricfiles);
	assert_int_equal(parse(&f->p, "# 1 /x", res), CSV_COMMENT);
	assert_int_equal(parse(&f->p, "#MetricFiles", res), CSV_MAP_BEGIN);
	assert_int_equal(parse(&f->p, "", res), CSV_BLANK);
	assert_int_equal(parse(&f->p, "# 1 /x", res), CSV_COMMENT);
	assert_int_equal(parse(&f->p, "#MetricFiles", res), CSV_MAP_BEGIN);
	assert_int_equal(parse(&f->p, "# 1", res), CSV_COMMENT);
	assert_int_equal(parse(&f->p, "# 1 /x", res), CSV_COMMENT);
	/* a second #MetricFiles starts a new block */
	assert_int_equal(parse(&f->p, "#MetricFiles", res), CSV_MAP_BEGIN);
	assert_int_equal(parse(&f->p, "#MetricFiles", res), CSV_MAP_BEGIN);
	assert_int_equal(parse(&f->p, "# 3 /y", res), CSV_MAP_ENTRY);
	assert_int_equal(res->u.map.device, 3);
}

static void
test_metricfiles_bad_entry(void **state)
{
	struct fixture *f = *state;
	struct csv_result *res = &f->res;
	char line[CSV_PATH_MAX + 16];
	size_t n;

	assert_int_equal(parse(&f->p, "#MetricFiles", res), CSV_MAP_BEGIN);
	assert_int_equal(parse(&f->p, "# 10000 /tmp/m", res), CSV_BAD);
	assert_non_null(strstr(res->error, "device ID out of range"));
	assert_false(f->p.in_metricfiles);

	/* a path of CSV_PATH_MAX - 1 bytes fits, one more does not */
	assert_int_equal(parse(&f->p, "#MetricFiles", res), CSV_MAP_BEGIN);
	n = (size_t)snprintf(line, sizeof(line), "# 4 ");
	memset(line + n, 'p', CSV_PATH_MAX - 1);
	line[n + CSV_PATH_MAX - 1] = '\0';
	assert_int_equal(parse(&f->p, line, res), CSV_MAP_ENTRY);
	assert_int_equal(strlen(res->u.map.path), CSV_PATH_MAX - 1);
	line[n + CSV_PATH_MAX - 1] = 'p';
	line[n + CSV_PATH_MAX] = '\0';
	assert_int_equal(parse(&f->p, line, res), CSV_BAD);
	assert_non_null(strstr(res->error, "path of device 4"));
}

/* aiu-smi without -s prints a table; none of its lines may pass as rows. */
static void
test_text_mode(void **state)
{
	static const char *const table[] = {
		"  0 20260617  21:14:10   295.1     5.0   26.7   50.6    100   22.767    0.103",
		"  1 20260617  21:14:10   295.1     5.0   26.3   49.4    100   22.753    0.111",
	};
	struct fixture *f = *state;

	assert_int_equal(parse(&f->p, "#ID Date      Time     hostcpu hostmem"
	    "    pwr  gtemp   busy    rdmem    wrmem", &f->res), CSV_COMMENT);
	assert_int_equal(f->p.ncols, 0);
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(parse(&f->p, table[i], &f->res), CSV_BAD);
		assert_string_equal(f->res.error, "data row before header");
	}
	/* after a CSV header the cell count gives them away */
	assert_int_equal(parse(&f->p, "ID,Date,Time,hostcpu %,hostmem %,pwr W,"
	    "gtemp C,busy %,rdmem GiB/s,wrmem GiB/s", &f->res), CSV_HEADER);
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(parse(&f->p, table[i], &f->res), CSV_BAD);
		assert_string_equal(f->res.error, "expected 10 cells, got 1");
	}
}

/* A whole stream through both layers, as the daemon runs it. */
struct stream {
	struct csv_parser p;
	struct csv_result res;
	int kinds[CSV_BAD + 1];
	int64_t pwr_sum;
};

static void
stream_line(void *arg, const char *line, size_t len, bool overlong)
{
	struct stream *st = arg;

	assert_false(overlong);
	st->kinds[csv_parse_line(&st->p, line, len, &st->res)]++;
	if (st->res.kind == CSV_ROW)
		st->pwr_sum += st->res.u.row.values[3].mant;
}

static void
test_stream(void **state)
{
	static const char in[] =
	    "#MetricFiles\r\n"
	    "# 0 /tmp/metrics.0000:13:00.0\r\n"
	    "# 1 /tmp/metrics.0000:12:00.0\r\n"
	    "ID,Date,Time (HH:MM:SS),pwr W\r\n"
	    "0,20260617,21:14:10,26.7\r\n"
	    "1,20260617,21:14:10,26.3\r\n"
	    "0,20260617,21:14:11,-\r\n"
	    "1,20260617,21:14:11,abc\r\n"
	    "\r\n"
	    "1,20260617,21:14:12,1.0\r\n";
	struct csv_lines lb = { .len = 0 };
	struct stream *st = calloc(1, sizeof(*st));

	(void)state;
	assert_non_null(st);
	csv_parser_init(&st->p);
	for (size_t off = 0; off < sizeof(in) - 1; off += 5)
		csv_lines_feed(&lb, in + off, sizeof(in) - 1 - off < 5 ?
		    sizeof(in) - 1 - off : 5, stream_line, st);
	assert_int_equal(csv_lines_pending(&lb), 0);
	assert_int_equal(st->kinds[CSV_MAP_BEGIN], 1);
	assert_int_equal(st->kinds[CSV_MAP_ENTRY], 2);
	assert_int_equal(st->kinds[CSV_HEADER], 1);
	assert_int_equal(st->kinds[CSV_ROW], 4);
	assert_int_equal(st->kinds[CSV_BAD], 1);
	assert_int_equal(st->kinds[CSV_BLANK], 1);
	assert_int_equal(st->pwr_sum, 267 + 263 + 0 + 10);
	free(st);
}

#define TEST_FIXTURE(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines_basic),
		cmocka_unit_test(test_lines_crlf),
		cmocka_unit_test(test_lines_partial_held),
		cmocka_unit_test(test_lines_every_split),
		cmocka_unit_test(test_lines_byte_at_a_time),
		cmocka_unit_test(test_lines_max_length_fits),
		cmocka_unit_test(test_lines_overlong),
		cmocka_unit_test(test_lines_overlong_early),
		cmocka_unit_test(test_lines_overlong_inner_cr),
		cmocka_unit_test(test_lines_reset_while_discarding),
		cmocka_unit_test(test_lines_nul_kept),
		TEST_FIXTURE(test_header_keys_units),
		TEST_FIXTURE(test_header_spacing),
		TEST_FIXTURE(test_header_rejected),
		TEST_FIXTURE(test_row_values),
		TEST_FIXTURE(test_row_missing_values),
		TEST_FIXTURE(test_row_no_clock_columns),
		TEST_FIXTURE(test_row_cell_count),
		TEST_FIXTURE(test_row_not_a_number),
		TEST_FIXTURE(test_row_bad_cell_quoted_briefly),
		cmocka_unit_test(test_values_exact),
		TEST_FIXTURE(test_row_out_of_range),
		TEST_FIXTURE(test_row_bad_id_date_time),
		TEST_FIXTURE(test_nul_in_line),
		TEST_FIXTURE(test_row_before_header),
		TEST_FIXTURE(test_header_change),
		TEST_FIXTURE(test_blank_and_comments),
		TEST_FIXTURE(test_metricfiles_block),
		TEST_FIXTURE(test_metricfiles_bad_entry),
		TEST_FIXTURE(test_text_mode),
		cmocka_unit_test(test_stream),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
