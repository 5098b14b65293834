/*
 * table: aligned columns for a person (table.h).
 */
#include <err.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "client.h"
#include "table.h"

#define GAP		2	/* spaces between columns */
#define CUT_MARK	"..."
#define DEFAULT_WIDTH	100
#define WRAP_MIN	30	/* the narrowest a wrapped last column gets */
#define WRAP_LINES	4	/* the most lines a wrapped cell takes */

struct table {
	const struct table_col *cols;
	size_t	 ncols;
	char	**cells;	/* nrows * ncols, row by row; NULL: empty */
	size_t	 nrows, cap;
	size_t	 next;		/* the next cell of the last row */
};

static void *
xcalloc(size_t n, size_t size)
{
	void *p = calloc(n > 0 ? n : 1, size);

	if (p == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	return p;
}

struct table *
table_new(const struct table_col *cols, size_t ncols)
{
	struct table *t = xcalloc(1, sizeof(*t));

	t->cols = cols;
	t->ncols = ncols;
	return t;
}

void
table_free(struct table *t)
{
	if (t == NULL)
		return;
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t);
}

void
table_row(struct table *t)
{
	if (t->nrows == t->cap) {
		t->cap = t->cap > 0 ? 2 * t->cap : 16;
		if ((t->cells = reallocarray(t->cells, t->cap * t->ncols,
		    sizeof(*t->cells))) == NULL)
			errx(CLIENT_EXIT_FAILED, "out of memory");
	}
	memset(&t->cells[t->nrows * t->ncols], 0, t->ncols *
	    sizeof(*t->cells));
	t->nrows++;
	t->next = 0;
}

void
table_cell(struct table *t, const char *s)
{
	char *p;

	if (t->nrows == 0 || t->next >= t->ncols)
		errx(CLIENT_EXIT_FAILED, "table: a cell outside the columns");
	if ((p = strdup(s)) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	t->cells[(t->nrows - 1) * t->ncols + t->next++] = p;
}

void
table_cellf(struct table *t, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) == -1)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	va_end(ap);
	table_cell(t, s);
	free(s);
}

size_t
table_rows(const struct table *t)
{
	return t->nrows;
}

static const char *
cell(const struct table *t, size_t row, size_t col)
{
	const char *s = t->cells[row * t->ncols + col];

	return s != NULL ? s : "";
}

static bool
has_units(const struct table *t)
{
	for (size_t c = 0; c < t->ncols; c++)
		if (t->cols[c].unit != NULL && t->cols[c].unit[0] != '\0')
			return true;
	return false;
}

/* The widest of each column's cells and header lines, in w. */
static void
widths(const struct table *t, bool units, size_t *w)
{
	for (size_t c = 0; c < t->ncols; c++) {
		w[c] = strlen(t->cols[c].name);
		if (units && t->cols[c].unit != NULL &&
		    strlen(t->cols[c].unit) > w[c])
			w[c] = strlen(t->cols[c].unit);
		for (size_t r = 0; r < t->nrows; r++)
			if (strlen(cell(t, r, c)) > w[c])
				w[c] = strlen(cell(t, r, c));
	}
}

/* One line of cells s[0..ncols): padded to w, the last not; no blanks at its end. */
static void
line(const struct table *t, FILE *fp, const char *const *s, const size_t *w)
{
	size_t last = t->ncols - 1, end, col = 0;
	char out[8192];

	/* laid out in out, then written without trailing blanks */
	for (size_t c = 0; c < t->ncols && col < sizeof(out) - 1; c++) {
		size_t n = strlen(s[c]), pad = n < w[c] ? w[c] - n : 0;
		int k;

		if (c > 0)
			col += (size_t)snprintf(out + col, sizeof(out) - col,
			    "%*s", GAP, "");
		if (t->cols[c].align == TABLE_RIGHT)
			k = snprintf(out + col, sizeof(out) - col, "%*s%s",
			    (int)pad, "", s[c]);
		else
			k = snprintf(out + col, sizeof(out) - col, "%s%*s",
			    s[c], c == last ? 0 : (int)pad, "");
		if (k < 0 || (size_t)k >= sizeof(out) - col) {
			col = sizeof(out) - 1;
			break;
		}
		col += (size_t)k;
	}
	for (end = col; end > 0 && out[end - 1] == ' '; end--)
		;
	fwrite(out, 1, end, fp);
	putc('\n', fp);
}

/*
 * The first line of s that fits in room bytes, into buf (at least room +
 * 1 bytes): as many words as fit, or the first word cut with CUT_MARK.
 * Returns the rest of s, past its blanks.
 */
static const char *
wrap_line(const char *s, size_t room, char *buf)
{
	size_t n = 0, word;

	while (s[n] != '\0') {
		word = strcspn(s + n, " ");
		if (n + word > room)
			break;
		n += word;
		if (s[n] == ' ' && n + 1 + strcspn(s + n + 1, " ") <= room)
			n++;
		else
			break;
	}
	if (n == 0) {
		/* a word longer than the room: cut */
		snprintf(buf, room + 1, "%.*s%s", (int)(room -
		    strlen(CUT_MARK)), s, CUT_MARK);
		n = strcspn(s, " ");
	} else {
		memcpy(buf, s, n);
		buf[n] = '\0';
		while (n > 0 && buf[n - 1] == ' ')
			buf[--n] = '\0';
	}
	s += strlen(buf) > n ? strcspn(s, " ") : n;
	return s + strspn(s, " ");
}

void
table_write(const struct table *t, FILE *fp, int width)
{
	const char **s = xcalloc(t->ncols, sizeof(*s));
	size_t *w = xcalloc(t->ncols, sizeof(*w));
	size_t last = t->ncols - 1, start = 0, room = SIZE_MAX;
	bool units = has_units(t);
	char *buf = NULL;

	widths(t, units, w);
	for (size_t c = 0; c < last; c++)
		start += w[c] + GAP;
	/* a last column of text wraps at blanks, at least WRAP_MIN wide */
	if (width > 0 && t->cols[last].align == TABLE_LEFT) {
		room = (size_t)width > start ? (size_t)width - start : 0;
		if (room < WRAP_MIN)
			room = WRAP_MIN;
		buf = xcalloc(room + 1, 1);
	}
	for (size_t c = 0; c < t->ncols; c++)
		s[c] = t->cols[c].name;
	line(t, fp, s, w);
	if (units) {
		for (size_t c = 0; c < t->ncols; c++)
			s[c] = t->cols[c].unit != NULL ? t->cols[c].unit : "";
		line(t, fp, s, w);
	}
	for (size_t r = 0; r < t->nrows; r++) {
		const char *rest = cell(t, r, last);

		for (size_t c = 0; c < t->ncols; c++)
			s[c] = cell(t, r, c);
		if (buf == NULL || strlen(rest) <= room) {
			line(t, fp, s, w);
			continue;
		}
		/* then the rest of the last cell under it, line by line */
		for (int k = 0; *rest != '\0' && k < WRAP_LINES; k++) {
			rest = wrap_line(rest, room, buf);
			if (*rest != '\0' && k + 1 == WRAP_LINES) {
				size_t n = strlen(buf);

				if (n + strlen(CUT_MARK) > room)
					n = room - strlen(CUT_MARK);
				snprintf(buf + n, room + 1 - n, "%s", CUT_MARK);
			}
			s[last] = buf;
			line(t, fp, s, w);
			for (size_t c = 0; c < last; c++)
				s[c] = "";
		}
	}
	free(buf);
	free(s);
	free(w);
}

void
table_write_plain(const struct table *t, FILE *fp)
{
	size_t *w = xcalloc(t->ncols, sizeof(*w));

	widths(t, false, w);
	for (size_t c = 0; c < t->ncols; c++)
		fprintf(fp, c + 1 < t->ncols ? "%-*s  " : "%.*s\n", (int)w[c],
		    t->cols[c].name);
	for (size_t r = 0; r < t->nrows; r++)
		for (size_t c = 0; c < t->ncols; c++)
			if (c + 1 < t->ncols)
				fprintf(fp, "%-*s  ", (int)w[c], cell(t, r, c));
			else
				fprintf(fp, "%s\n", cell(t, r, c));
	free(w);
}

bool
table_for_terminal(FILE *fp)
{
	return fp == stdout && isatty(STDOUT_FILENO) == 1;
}

int
table_width(void)
{
	struct winsize ws;
	const char *env = getenv("COLUMNS");
	long n;
	char *end;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	if (env != NULL && (n = strtol(env, &end, 10)) > 0 && n < 10000 &&
	    *end == '\0')
		return (int)n;
	return DEFAULT_WIDTH;
}

void
table_fixed(char *buf, size_t len, double v, int decimals)
{
	/* no "-0.0" for a value that rounds to zero */
	if (fabs(v) < 0.5 * pow(10, -decimals))
		v = 0;
	snprintf(buf, len, "%.*f", decimals, v);
}

void
table_sig(char *buf, size_t len, double v)
{
	double a = fabs(v);

	table_fixed(buf, len, v, a >= 99.95 ? 1 : a >= 9.995 ? 2 : 3);
}
