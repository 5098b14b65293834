/*
 * import_run: the two passes over an imported file and the checks between
 * them (contract in import_run.h).
 *
 * Lines are cut by csvparse's csv_lines_feed, so that an aiu-smi log is
 * read exactly as the daemon reads aiu-smi's output.  Both passes run the
 * same code on the same lines; the second must find the rows the first
 * kept, in the same order, or the file changed underneath and nothing is
 * committed.
 */
#include "import_run.h"

#include <err.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "metrics.h"
#include "timeparse.h"

#define READ_CHUNK	(64 * 1024)

static void	line_error(struct import_run *, const char *, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * A bad line.  In the first pass and the checks it is shown (up to
 * IMPORT_MAX_ERRORS) and counted; in the second pass it means the file
 * changed since the first.
 */
static void	vline_error(struct import_run *, size_t, const char *, va_list)
    __attribute__((format(printf, 3, 0)));

static void
vline_error(struct import_run *r, size_t line, const char *fmt, va_list ap)
{
	char msg[IMPORT_ERR_MAX + 128];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (r->pass == 2) {
		warnx("%s:%zu: the file changed while it was imported (%s)",
		    r->o->file, line, msg);
		r->stop = true;
		r->status = CLIENT_EXIT_FAILED;
		return;
	}
	if (++r->nerrors <= IMPORT_MAX_ERRORS)
		warnx("%s:%zu: %s", r->o->file, line, msg);
}

static void
line_error(struct import_run *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vline_error(r, r->lineno, fmt, ap);
	va_end(ap);
}

void
import_run_error(struct import_run *r, size_t line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vline_error(r, line, fmt, ap);
	va_end(ap);
}

/* The tally of bad lines, once they are all known; CLIENT_EXIT_*. */
int
import_run_errors(struct import_run *r)
{
	if (r->nerrors == 0)
		return CLIENT_EXIT_OK;
	if (r->nerrors > IMPORT_MAX_ERRORS)
		warnx("%s: %zu more bad lines not shown", r->o->file,
		    r->nerrors - IMPORT_MAX_ERRORS);
	warnx("%s: %zu bad line%s; nothing imported", r->o->file, r->nerrors,
	    r->nerrors > 1 ? "s" : "");
	return CLIENT_EXIT_FAILED;
}

/* A failure that ends the pass at once, already reported. */
static void
stop(struct import_run *r, int status)
{
	r->stop = true;
	r->status = status;
}

static struct import_dev *
dev_get(struct import_run *r, int device)
{
	struct import_dev *d;

	for (size_t i = 0; i < r->ndevs; i++)
		if (r->devs[i].device == device)
			return &r->devs[i];
	d = reallocarray(r->devs, r->ndevs + 1, sizeof(*d));
	if (d == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	r->devs = d;
	d = &r->devs[r->ndevs++];
	memset(d, 0, sizeof(*d));
	d->device = device;
	return d;
}

/* --device-map's bus ID for device, or NULL. */
static const char *
bus_override(const struct import_run *r, int device)
{
	for (size_t i = 0; i < r->o->nmap; i++)
		if (r->o->map[i].device == device)
			return r->o->map[i].bus_id;
	return NULL;
}

/*
 * The index of metric key among r->metrics, adding it in the first pass.
 * A unit the header states is kept as it is: one that differs from the
 * unit spyremon knows the key by, or from the key's unit in an earlier
 * header of the file, is a bad line (the values would be stored under the
 * other unit); "" states none.
 */
static int
metric_index(struct import_run *r, const char *key, const char *unit)
{
	const struct metric_def *known = metric_def_find(key);
	struct import_metric *m;

	if (unit[0] != '\0' && known != NULL && strcmp(unit, known->unit) != 0) {
		line_error(r, "metric '%s' in '%s': spyremon stores %s in '%s' "
		    "and would drop the file's unit", key, unit, key,
		    known->unit);
		return -1;
	}
	for (size_t i = 0; i < r->nmetrics; i++) {
		if (strcmp(r->metrics[i].key, key) != 0)
			continue;
		if (unit[0] != '\0' && r->metrics[i].unit[0] != '\0' &&
		    strcmp(unit, r->metrics[i].unit) != 0) {
			line_error(r, "metric '%s' in '%s', in '%s' at line "
			    "%zu", key, unit, r->metrics[i].unit,
			    r->metrics[i].line);
			return -1;
		}
		if (r->metrics[i].unit[0] == '\0')
			snprintf(r->metrics[i].unit, sizeof(r->metrics[i].unit),
			    "%s", unit);
		return (int)i;
	}
	if (r->pass == 2) {
		line_error(r, "metric '%s' is new", key);
		return -1;
	}
	m = reallocarray(r->metrics, r->nmetrics + 1, sizeof(*m));
	if (m == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	r->metrics = m;
	m = &r->metrics[r->nmetrics];
	snprintf(m->key, sizeof(m->key), "%s", key);
	snprintf(m->unit, sizeof(m->unit), "%s", unit);
	m->line = r->lineno;
	m->id = -1;
	return (int)r->nmetrics++;
}

static void
add_key(struct import_run *r, int64_t ts_ns, int device, uint32_t interval_ms,
    bool coarse)
{
	struct import_key *k;

	if (r->nkeys == r->capkeys) {
		size_t cap = r->capkeys > 0 ? r->capkeys * 2 : 1024;

		if ((k = reallocarray(r->keys, cap, sizeof(*k))) == NULL)
			errx(CLIENT_EXIT_FAILED, "out of memory");
		r->keys = k;
		r->capkeys = cap;
	}
	k = &r->keys[r->nkeys++];
	k->ts_ns = ts_ns;
	k->line = r->lineno;
	k->device = device;
	k->interval_ms = interval_ms;
	k->coarse = coarse;
	k->repeat = false;
}

/* Pass 2: the key the first pass kept for this line, or NULL. */
static const struct import_key *
next_key(struct import_run *r, int device)
{
	const struct import_key *k;

	if (r->next_key >= r->nkeys ||
	    (k = &r->keys[r->next_key])->line != r->lineno ||
	    k->device != device) {
		line_error(r, "a row of device %d that was not there", device);
		return NULL;
	}
	r->next_key++;
	return k;
}

/*
 * Pass 2: record the device's mapping if it changed at this row (the
 * first mapping only if it says something), then append the row.
 */
static void
append(struct import_run *r, const struct import_key *k, size_t n,
    const char *file, const char *bus)
{
	struct import_dev *d = dev_get(r, k->device);
	struct store_sample s = {
		.ts_ns = k->ts_ns, .device = k->device,
		.interval_ms = k->interval_ms, .nvalues = n,
		.metric = r->ids, .values = r->vals,
	};

	if (d->recorded ? strcmp(d->rec_file, file) != 0 ||
	    strcmp(d->rec_bus, bus) != 0 : file[0] != '\0' || bus[0] != '\0') {
		if (storedb_device_map(r->st, k->device, file, bus,
		    k->ts_ns) == -1) {
			stop(r, CLIENT_EXIT_FAILED);
			return;
		}
		d->recorded = true;
		snprintf(d->rec_file, sizeof(d->rec_file), "%s", file);
		snprintf(d->rec_bus, sizeof(d->rec_bus), "%s", bus);
	}
	storedb_append(r->st, &s);
	if (++r->pending == IMPORT_FLUSH_ROWS) {
		r->pending = 0;
		if (storedb_flush(r->st) == -1)
			stop(r, CLIENT_EXIT_FAILED);
	}
}

/* ---- aiu-smi's CSV ---- */

static void
aiusmi_header(struct import_run *r)
{
	for (int i = 0; i < r->parser.ncols; i++) {
		const struct csv_column *c = &r->parser.cols[i];

		r->col_metric[i] = c->role == CSV_ROLE_METRIC ?
		    metric_index(r, c->key, c->unit) : -1;
	}
}

/* Pass 1: the row's stamp from its local Date and Time. */
static void
aiusmi_key(struct import_run *r, const struct csv_row *row)
{
	struct import_dev *d = dev_get(r, row->device);
	int64_t s;

	if (!d->mapped && bus_override(r, row->device) == NULL)
		d->unmapped = true;
	if (import_local_time(row->date, row->hms, d->have_last ? d->last_s :
	    INT64_MIN, &s) == -1) {
		line_error(r, "Date,Time %08d,%02d:%02d:%02d is no time in %s "
		    "(skipped when daylight saving time begins; wrong --tz?)",
		    row->date, row->hms / 3600, row->hms / 60 % 60,
		    row->hms % 60, r->zone);
		return;
	}
	if (s > INT64_MAX / (int64_t)NSEC_PER_SEC ||
	    s < INT64_MIN / (int64_t)NSEC_PER_SEC) {
		line_error(r, "column 'Date': %08d is out of range", row->date);
		return;
	}
	d->have_last = true;
	d->last_s = s;
	add_key(r, s * (int64_t)NSEC_PER_SEC, row->device, 0, true);
}

static void
aiusmi_row(struct import_run *r)
{
	const struct csv_row *row = &r->res.u.row;
	const struct import_key *k;
	const struct import_dev *d;
	const char *bus;
	size_t n = 0;

	if (!row->have_clock) {
		line_error(r, "no Date and Time (\"-\"): the row cannot be "
		    "placed in time");
		return;
	}
	if (r->pass == 1) {
		aiusmi_key(r, row);
		return;
	}
	if ((k = next_key(r, row->device)) == NULL)
		return;
	for (int i = 0; i < r->parser.ncols; i++) {
		const struct csv_value *v = &row->values[i];

		if (r->col_metric[i] < 0)
			continue;
		r->ids[n] = r->metrics[r->col_metric[i]].id;
		r->vals[n].mant = v->mant;
		r->vals[n].scale = v->scale;
		r->vals[n].present = v->present;
		n++;
	}
	d = dev_get(r, row->device);
	if ((bus = bus_override(r, row->device)) == NULL)
		bus = d->mapped ? d->bus : "";
	append(r, k, n, d->mapped ? d->file : "", bus);
}

static void
aiusmi_line(struct import_run *r, const char *line, size_t len)
{
	struct import_dev *d;

	switch (csv_parse_line(&r->parser, line, len, &r->res)) {
	case CSV_BLANK:
	case CSV_COMMENT:
		break;
	case CSV_MAP_BEGIN:
		/* a new block maps every device afresh */
		for (size_t i = 0; i < r->ndevs; i++)
			r->devs[i].mapped = false;
		break;
	case CSV_MAP_ENTRY:
		d = dev_get(r, r->res.u.map.device);
		d->mapped = true;
		snprintf(d->file, sizeof(d->file), "%s", r->res.u.map.path);
		if (import_bus_from_path(d->file, d->bus, sizeof(d->bus)) == -1)
			d->bus[0] = '\0';
		break;
	case CSV_HEADER:
		aiusmi_header(r);
		break;
	case CSV_ROW:
		aiusmi_row(r);
		break;
	case CSV_BAD:
		line_error(r, "%s", r->res.error);
		break;
	}
}

/* ---- spyremon's csv ---- */

static void
csv_header(struct import_run *r, const char *line, size_t len)
{
	char err[IMPORT_ERR_MAX];

	r->have_csv_header = false;
	if (import_csv_header(line, len, &r->ch, err, sizeof(err)) == -1) {
		line_error(r, "%s", err);
		return;
	}
	for (int k = 0; k < r->ch.nkeys; k++)
		if ((r->col_metric[k] = metric_index(r, r->ch.keys[k], "")) < 0)
			return;
	r->have_csv_header = true;
}

static void
csv_line(struct import_run *r, const char *line, size_t len)
{
	struct import_csv_row *row = &r->crow;
	const struct import_key *k;
	char err[IMPORT_ERR_MAX];
	const char *bus;
	size_t i;

	for (i = 0; i < len && (line[i] == ' ' || line[i] == '\t'); i++)
		;
	if (i == len || line[i] == '#')
		return;
	/* rows begin with a number, headers with a name */
	if ((line[i] >= 'a' && line[i] <= 'z') ||
	    (line[i] >= 'A' && line[i] <= 'Z')) {
		csv_header(r, line, len);
		return;
	}
	if (!r->have_csv_header) {
		line_error(r, "data row without a valid header before it");
		return;
	}
	if (import_csv_row(&r->ch, line, len, row, err, sizeof(err)) == -1) {
		line_error(r, "%s", err);
		return;
	}
	if (r->pass == 1) {
		add_key(r, row->ts_ns, row->device, row->interval_ms,
		    row->coarse);
		return;
	}
	if ((k = next_key(r, row->device)) == NULL || k->repeat)
		return;
	for (int j = 0; j < r->ch.nkeys; j++) {
		r->ids[j] = r->metrics[r->col_metric[j]].id;
		r->vals[j].mant = row->values[j].mant;
		r->vals[j].scale = row->values[j].scale;
		r->vals[j].present = row->values[j].present;
	}
	if ((bus = bus_override(r, row->device)) == NULL)
		bus = row->bus_id;
	append(r, k, (size_t)r->ch.nkeys, "", bus);
}

/* ---- reading ---- */

/*
 * The first line that is neither blank nor a comment tells the format.
 * Comments before it go to the aiu-smi parser, which keeps #MetricFiles.
 */
static bool
detect(struct import_run *r, const char *line, size_t len)
{
	char err[IMPORT_ERR_MAX];
	size_t i;

	for (i = 0; i < len && (line[i] == ' ' || line[i] == '\t'); i++)
		;
	if (i == len || line[i] == '#') {
		aiusmi_line(r, line, len);
		return false;
	}
	if (import_detect(line, len, &r->format, err, sizeof(err)) == -1) {
		line_error(r, "%s", err);
		stop(r, CLIENT_EXIT_FAILED);
		return false;
	}
	r->have_format = true;
	if (r->pass == 2)
		return true;
	if (r->format == IMPORT_CSV && (r->o->tz != NULL ||
	    r->o->interval_ms != 0)) {
		warnx("%s is spyremon's csv export, stamped in ns: --tz and "
		    "--interval are for aiu-smi logs", r->o->file);
		stop(r, CLIENT_EXIT_USAGE);
		return false;
	}
	if (r->format == IMPORT_AIUSMI && r->o->tz == NULL &&
	    import_set_zone(NULL, err, sizeof(err)) == -1) {
		warnx("%s", err);
		stop(r, CLIENT_EXIT_USAGE);
		return false;
	}
	return true;
}

static void
on_line(void *arg, const char *line, size_t len, bool overlong)
{
	struct import_run *r = arg;

	r->lineno++;
	if (r->stop)
		return;
	if (overlong) {
		line_error(r, "line longer than %d bytes", CSV_LINE_MAX);
		return;
	}
	if (!r->have_format && !detect(r, line, len))
		return;
	if (r->format == IMPORT_AIUSMI)
		aiusmi_line(r, line, len);
	else
		csv_line(r, line, len);
}

void
import_run_init(struct import_run *r, const struct import_opts *o)
{
	const char *tz = getenv("TZ");

	memset(r, 0, sizeof(*r));
	r->o = o;
	r->zone = o->tz != NULL ? o->tz : tz != NULL && tz[0] != '\0' ? tz :
	    "the local time zone";
}

int
import_run_open(struct import_run *r)
{
	if ((r->fp = fopen(r->o->file, "r")) == NULL) {
		warn("cannot open %s", r->o->file);
		return CLIENT_EXIT_FAILED;
	}
	if ((r->abspath = realpath(r->o->file, NULL)) == NULL &&
	    (r->abspath = strdup(r->o->file)) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	return CLIENT_EXIT_OK;
}

/* What a pass leaves to say once the file is read. */
static int
pass_end(struct import_run *r)
{
	if (r->status != CLIENT_EXIT_OK)
		return r->status;
	if (r->nerrors > 0)
		return import_run_errors(r);
	if (!r->have_format) {
		warnx("%s: %s: no header line", r->o->file, r->lineno == 0 ?
		    "empty" : "only comments");
		return CLIENT_EXIT_FAILED;
	}
	if (r->pass == 1 && r->nkeys == 0) {
		warnx("%s: no data rows", r->o->file);
		return CLIENT_EXIT_FAILED;
	}
	if (r->pass == 2 && r->next_key != r->nkeys) {
		warnx("%s: the file changed while it was imported (%zu rows "
		    "fewer)", r->o->file, r->nkeys - r->next_key);
		return CLIENT_EXIT_FAILED;
	}
	return CLIENT_EXIT_OK;
}

int
import_run_pass(struct import_run *r, int pass)
{
	static char buf[READ_CHUNK];
	size_t n;

	r->pass = pass;
	r->lineno = r->nerrors = r->next_key = r->pending = 0;
	r->stop = r->have_format = r->have_csv_header = false;
	r->status = CLIENT_EXIT_OK;
	csv_parser_init(&r->parser);
	csv_lines_reset(&r->lb);
	for (size_t i = 0; i < r->ndevs; i++) {
		r->devs[i].mapped = false;
		r->devs[i].have_last = false;
	}
	rewind(r->fp);
	while (!r->stop && (n = fread(buf, 1, sizeof(buf), r->fp)) > 0)
		csv_lines_feed(&r->lb, buf, n, on_line, r);
	if (ferror(r->fp)) {
		warn("cannot read %s", r->o->file);
		return CLIENT_EXIT_FAILED;
	}
	/* a last line without its newline */
	if (!r->stop && (csv_lines_pending(&r->lb) > 0 || r->lb.overlong))
		csv_lines_feed(&r->lb, "\n", 1, on_line, r);
	return pass_end(r);
}

void
import_run_free(struct import_run *r)
{
	if (r->fp != NULL)
		fclose(r->fp);
	free(r->abspath);
	free(r->metrics);
	free(r->keys);
	free(r->order);
	free(r->devs);
	free(r->spans);
	free(r->runs);
	free(r->unmapped);
	memset(r, 0, sizeof(*r));
}
