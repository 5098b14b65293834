/*
 * import_parse: headers, rows, local times and intervals of the files
 * "spyremon import" reads (contract in import_parse.h).
 *
 * Nothing here touches a database or prints: every error is a message in
 * the caller's buffer, which the command prefixes with FILE:LINE.
 */
#include "import_parse.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "inventory.h"
#include "timeparse.h"

#define DEVICE_ID_MAX	9999
#define QUOTE_MAX	64	/* bytes of a bad cell quoted in a message */
#define TIME_CELL_MAX	64
#define DEVMAP_MAX	256	/* devices --device-map may name */
#define ZONEINFO_DIR	"/usr/share/zoneinfo"

/* The fixed columns of spyremon's csv, from epoch_ns on. */
static const char *const fixed_cols[] = {
	"epoch_ns", "time_utc", "device", "bus_id", "interval_ms",
};
#define NFIXED		(sizeof(fixed_cols) / sizeof(fixed_cols[0]))
#define COARSE_COL	"coarse"

/* One cell of a line: [s, e). */
struct cell {
	const char *s, *e;
};

static int	fail(char *, size_t, const char *, ...)
	__attribute__((format(printf, 3, 4)));

static int
fail(char *err, size_t err_len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, err_len, fmt, ap);
	va_end(ap);
	return -1;
}

static int
quote_len(const struct cell *c)
{
	ptrdiff_t n = c->e - c->s;

	return (int)(n > QUOTE_MAX ? QUOTE_MAX : n);
}

static bool
cell_is(const struct cell *c, const char *text)
{
	size_t n = strlen(text);

	return (size_t)(c->e - c->s) == n && memcmp(c->s, text, n) == 0;
}

/*
 * Cut line into at most max cells; *n is the number the line has, which
 * may exceed max (only the first max are stored).
 */
static void
split(const char *line, size_t len, struct cell *cells, int max, int *n)
{
	const char *s = line, *e = line + len, *c;

	*n = 0;
	for (;;) {
		if ((c = memchr(s, ',', (size_t)(e - s))) == NULL)
			c = e;
		if (*n < max) {
			cells[*n].s = s;
			cells[*n].e = c;
		}
		(*n)++;
		if (c == e)
			break;
		s = c + 1;
	}
}

/* ---- detecting the format ---- */

int
import_detect(const char *line, size_t len, enum import_format *out,
    char *err, size_t err_len)
{
	struct cell cells[CSV_COLS_MAX + 8];
	const char *s = line, *e = line + len;
	int n;

	while (s < e && (*s == ' ' || *s == '\t'))
		s++;
	/* csvparse's rule for aiu-smi's header: "ID", blanks, a comma */
	if (e - s >= 2 && s[0] == 'I' && s[1] == 'D') {
		const char *p = s + 2;

		while (p < e && (*p == ' ' || *p == '\t'))
			p++;
		if (p < e && *p == ',') {
			*out = IMPORT_AIUSMI;
			return 0;
		}
	}
	split(line, len, cells, (int)(sizeof(cells) / sizeof(cells[0])), &n);
	for (int i = 0; i < n && i < (int)(sizeof(cells) / sizeof(cells[0]));
	    i++) {
		if (cell_is(&cells[i], fixed_cols[0])) {
			*out = IMPORT_CSV;
			return 0;
		}
	}
	return fail(err, err_len, "not a header of aiu-smi's CSV (ID,Date "
	    "(YYYYMMDD),Time (HH:MM:SS),...) nor of spyremon's csv export "
	    "(epoch_ns,time_utc,device,bus_id,interval_ms,...): \"%.*s\"%s",
	    (int)(len > QUOTE_MAX ? QUOTE_MAX : len), line,
	    len > QUOTE_MAX ? "..." : "");
}

/* ---- spyremon's csv ---- */

static bool
is_key_text(const struct cell *c)
{
	for (const char *p = c->s; p < c->e; p++)
		if (*p <= ' ' || *p > '~')
			return false;
	return c->e > c->s;
}

int
import_csv_header(const char *line, size_t len, struct import_csv_header *h,
    char *err, size_t err_len)
{
	struct cell cells[CSV_COLS_MAX + NFIXED + 8];
	const int max = (int)(sizeof(cells) / sizeof(cells[0]));
	int n, first, last;

	memset(h, 0, sizeof(*h));
	split(line, len, cells, max, &n);
	if (n > max)
		return fail(err, err_len, "header has more than %d cells", max);
	for (int i = 0; i < n; i++)
		if (cells[i].s < cells[i].e && *cells[i].s == '"')
			return fail(err, err_len, "header cell %d: quoted cells "
			    "are not supported", i + 1);
	for (first = 0; first < n; first++)
		if (cell_is(&cells[first], fixed_cols[0]))
			break;
	if (first == n)
		return fail(err, err_len, "header has no epoch_ns column");
	for (size_t j = 1; j < NFIXED; j++) {
		int i = first + (int)j;

		if (i >= n || !cell_is(&cells[i], fixed_cols[j]))
			return fail(err, err_len, "header cell %d: expected "
			    "'%s' after '%s'", i + 1, fixed_cols[j],
			    fixed_cols[j - 1]);
	}
	last = n;
	if (n > first + (int)NFIXED && cell_is(&cells[n - 1], COARSE_COL)) {
		h->coarse = true;
		last = n - 1;
	}
	h->nlabels = first;
	h->ncells = n;
	for (int i = first + (int)NFIXED; i < last; i++) {
		const struct cell *c = &cells[i];
		char *key;

		if (h->nkeys == CSV_COLS_MAX)
			return fail(err, err_len, "header has more than %d "
			    "metrics", CSV_COLS_MAX);
		key = h->keys[h->nkeys];
		if (!is_key_text(c))
			return fail(err, err_len, "header cell %d: not a "
			    "metric key: \"%.*s\"", i + 1, quote_len(c), c->s);
		if (c->e - c->s >= CSV_KEY_MAX)
			return fail(err, err_len, "header cell %d: key longer "
			    "than %d bytes", i + 1, CSV_KEY_MAX - 1);
		memcpy(key, c->s, (size_t)(c->e - c->s));
		key[c->e - c->s] = '\0';
		for (int k = 0; k < h->nkeys; k++)
			if (strcmp(h->keys[k], key) == 0)
				return fail(err, err_len, "header: metric '%s' "
				    "appears twice", key);
		for (size_t k = 0; k < NFIXED; k++)
			if (strcmp(fixed_cols[k], key) == 0)
				return fail(err, err_len, "header: '%s' "
				    "appears twice", key);
		h->nkeys++;
	}
	return 0;
}

/* A whole cell as an integer in [min, max]. */
static int
cell_int(const struct cell *c, int64_t min, int64_t max, int64_t *out)
{
	struct csv_value v;

	if (csv_parse_value(c->s, (size_t)(c->e - c->s), &v) == -1 ||
	    !v.present || v.scale != 0 || v.mant < min || v.mant > max ||
	    (c->e > c->s && *c->s == '+'))
		return -1;
	*out = v.mant;
	return 0;
}

static int
bad_cell(char *err, size_t err_len, const char *col, const char *what,
    const struct cell *c)
{
	return fail(err, err_len, "column '%s': %s: \"%.*s\"%s", col, what,
	    quote_len(c), c->s, c->e - c->s > QUOTE_MAX ? "..." : "");
}

/* The cells of the fixed columns, cells[0] being epoch_ns. */
static int
csv_fixed(const struct cell *cells, struct import_csv_row *row, char *err,
    size_t err_len)
{
	char text[TIME_CELL_MAX];
	int64_t v, t;
	size_t n;

	if (cell_int(&cells[0], INT64_MIN, INT64_MAX, &v) == -1)
		return bad_cell(err, err_len, "epoch_ns", "not an integer",
		    &cells[0]);
	row->ts_ns = v;
	n = (size_t)(cells[1].e - cells[1].s);
	if (n >= sizeof(text))
		return bad_cell(err, err_len, "time_utc", "not a time",
		    &cells[1]);
	memcpy(text, cells[1].s, n);
	text[n] = '\0';
	if (parse_time(text, &t) == -1)
		return bad_cell(err, err_len, "time_utc", "not a time",
		    &cells[1]);
	if (t != row->ts_ns)
		return bad_cell(err, err_len, "time_utc", "not the time of "
		    "epoch_ns", &cells[1]);
	if (cell_int(&cells[2], 0, DEVICE_ID_MAX, &v) == -1)
		return bad_cell(err, err_len, "device", "not a device ID",
		    &cells[2]);
	row->device = (int)v;
	n = (size_t)(cells[3].e - cells[3].s);
	if (n >= sizeof(row->bus_id) ||
	    (n > 0 && !is_key_text(&cells[3])))
		return bad_cell(err, err_len, "bus_id", "not a bus ID",
		    &cells[3]);
	memcpy(row->bus_id, cells[3].s, n);
	row->bus_id[n] = '\0';
	if (cell_int(&cells[4], 0, IMPORT_INTERVAL_MAX_MS, &v) == -1)
		return bad_cell(err, err_len, "interval_ms", "not a number "
		    "of milliseconds up to 60000", &cells[4]);
	row->interval_ms = (uint32_t)v;
	return 0;
}

int
import_csv_row(const struct import_csv_header *h, const char *line,
    size_t len, struct import_csv_row *row, char *err, size_t err_len)
{
	struct cell cells[CSV_COLS_MAX + NFIXED + 8];
	const struct cell *c;
	int n;

	split(line, len, cells, (int)(sizeof(cells) / sizeof(cells[0])), &n);
	if (n != h->ncells)
		return fail(err, err_len, "expected %d cells, got %d",
		    h->ncells, n);
	for (int i = 0; i < n; i++)
		if (cells[i].s < cells[i].e && *cells[i].s == '"')
			return fail(err, err_len, "cell %d: quoted cells are "
			    "not supported", i + 1);
	if (csv_fixed(&cells[h->nlabels], row, err, err_len) == -1)
		return -1;
	c = &cells[h->nlabels + (int)NFIXED];
	for (int k = 0; k < h->nkeys; k++, c++) {
		struct csv_value *v = &row->values[k];

		if (c->s == c->e) {
			v->mant = 0;
			v->scale = 0;
			v->present = false;
		} else if (csv_parse_value(c->s, (size_t)(c->e - c->s),
		    v) == -1 || !v->present)
			return bad_cell(err, err_len, h->keys[k],
			    "not a number", c);
	}
	row->coarse = false;
	if (h->coarse) {
		if (cell_is(c, "1"))
			row->coarse = true;
		else if (!cell_is(c, "0"))
			return bad_cell(err, err_len, COARSE_COL, "not 0 or 1",
			    c);
	}
	return 0;
}

/* ---- time zones and local time ---- */

/*
 * A POSIX TZ string, checked as far as its standard name and offset:
 * three or more letters, or <...>, then a signed hour.  glibc reads what
 * it can of anything else and silently falls back to UTC.
 */
static bool
posix_tz(const char *s)
{
	const char *p = s;

	if (*p == '<') {
		while (*++p != '\0' && *p != '>')
			;
		if (*p != '>' || p - s < 4)
			return false;
		p++;
	} else {
		while ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z'))
			p++;
		if (p - s < 3)
			return false;
	}
	if (*p == '+' || *p == '-')
		p++;
	return *p >= '0' && *p <= '9';
}

/* An Olson name: a regular file under the zoneinfo directory. */
static bool
zone_file(const char *name)
{
	const char *dir = getenv("TZDIR");
	char path[PATH_MAX];
	struct stat sb;

	if (name[0] == '\0' || name[0] == '/' || strstr(name, "..") != NULL)
		return false;
	if (dir == NULL || dir[0] == '\0')
		dir = ZONEINFO_DIR;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >=
	    sizeof(path))
		return false;
	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

int
import_set_zone(const char *zone, char *err, size_t err_len)
{
	const char *name;
	bool from_env = zone == NULL;

	if (zone == NULL && ((zone = getenv("TZ")) == NULL || zone[0] == '\0')) {
		tzset();
		return 0;
	}
	name = zone[0] == ':' ? zone + 1 : zone;
	if (!zone_file(name) && !posix_tz(name))
		return fail(err, err_len, "%s%s: not a time zone (an Olson name "
		    "such as Europe/Berlin, under %s, or a POSIX TZ string)",
		    from_env ? "TZ=" : "--tz ", zone, ZONEINFO_DIR);
	if (!from_env && setenv("TZ", zone, 1) == -1)
		return fail(err, err_len, "--tz %s: %s", zone, strerror(errno));
	tzset();
	return 0;
}

/* mktime of the local time in tm; true if it names that very time. */
static bool
local_exact(const struct tm *want, int isdst, time_t *out)
{
	struct tm tm = *want, back;

	tm.tm_isdst = isdst;
	*out = mktime(&tm);
	if (localtime_r(out, &back) == NULL)
		return false;
	return back.tm_year == want->tm_year && back.tm_mon == want->tm_mon &&
	    back.tm_mday == want->tm_mday && back.tm_hour == want->tm_hour &&
	    back.tm_min == want->tm_min && back.tm_sec == want->tm_sec;
}

int
import_local_time(int date, int hms, int64_t after_s, int64_t *out_s)
{
	struct tm want = { 0 }, tm;
	time_t t, alt;

	want.tm_year = date / 10000 - 1900;
	want.tm_mon = date / 100 % 100 - 1;
	want.tm_mday = date % 100;
	want.tm_hour = hms / 3600;
	want.tm_min = hms / 60 % 60;
	want.tm_sec = hms % 60;
	if (!local_exact(&want, -1, &t))
		return -1;
	/* the same wall time under the other offset, if the zone has one */
	if (localtime_r(&t, &tm) != NULL && tm.tm_isdst >= 0 &&
	    local_exact(&want, !tm.tm_isdst, &alt) && alt != t) {
		time_t lo = t < alt ? t : alt, hi = t < alt ? alt : t;

		t = lo > after_s || hi <= after_s ? lo : hi;
	}
	*out_s = t;
	return 0;
}

/* ---- the interval of a log ---- */

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

int64_t
import_infer_interval(const int64_t *ts_s, const int *device, size_t n)
{
	int64_t *d, best = 0;
	size_t nd = 0, run, best_run = 0;

	if (n < 2)
		return 0;
	if ((d = calloc(n, sizeof(*d))) == NULL)
		return -1;
	for (size_t i = 1; i < n; i++)
		if (device[i] == device[i - 1] && ts_s[i] > ts_s[i - 1])
			d[nd++] = ts_s[i] - ts_s[i - 1];
	qsort(d, nd, sizeof(*d), cmp_i64);
	/* sorted ascending: a later run must be longer to win a tie */
	for (size_t i = 0; i < nd; i += run) {
		for (run = 1; i + run < nd && d[i + run] == d[i]; run++)
			;
		if (run > best_run) {
			best_run = run;
			best = d[i];
		}
	}
	free(d);
	return best;
}

/* ---- bus IDs ---- */

/* A bus ID as a cell or option gives it: printable, no blank or comma. */
static bool
bus_text(const char *s, size_t n)
{
	struct cell c = { s, s + n };

	return n > 0 && n < IMPORT_BUSID_MAX && is_key_text(&c) &&
	    memchr(s, ',', n) == NULL;
}

int
import_devmap_parse(const char *arg, struct import_devmap **out, size_t *n,
    char *err, size_t err_len)
{
	struct cell cells[DEVMAP_MAX];
	struct import_devmap *m;
	int ncells;

	*out = NULL;
	*n = 0;
	split(arg, strlen(arg), cells, DEVMAP_MAX, &ncells);
	if (ncells > DEVMAP_MAX)
		return fail(err, err_len, "--device-map: more than %d devices",
		    DEVMAP_MAX);
	if ((m = calloc((size_t)ncells, sizeof(*m))) == NULL)
		return fail(err, err_len, "out of memory");
	for (int i = 0; i < ncells; i++) {
		const struct cell *c = &cells[i];
		const char *eq = memchr(c->s, '=', (size_t)(c->e - c->s));
		struct cell id = { c->s, eq != NULL ? eq : c->e };
		int64_t dev;

		if (eq == NULL || cell_int(&id, 0, DEVICE_ID_MAX, &dev) == -1 ||
		    !bus_text(eq + 1, (size_t)(c->e - eq - 1))) {
			free(m);
			return fail(err, err_len, "--device-map: \"%.*s\" is "
			    "not ID=BUSID, such as 0=0000:13:00.0",
			    quote_len(c), c->s);
		}
		for (size_t k = 0; k < *n; k++)
			if (m[k].device == (int)dev) {
				free(m);
				return fail(err, err_len, "--device-map: "
				    "device %d is named twice", (int)dev);
			}
		m[*n].device = (int)dev;
		memcpy(m[*n].bus_id, eq + 1, (size_t)(c->e - eq - 1));
		m[*n].bus_id[c->e - eq - 1] = '\0';
		(*n)++;
	}
	*out = m;
	return 0;
}

int
import_bus_from_path(const char *path, char *buf, size_t len)
{
	const char *slash = strrchr(path, '/');
	int dirlen = slash != NULL ? (int)(slash - path + 1) : 0;
	char pattern[CSV_PATH_MAX + 32];

	if ((size_t)snprintf(pattern, sizeof(pattern), "%.*smetrics.%%BUSID",
	    dirlen, path) >= sizeof(pattern))
		return -1;
	return inventory_busid_from_path(pattern, path, buf, len);
}
