/*
 * source_rows: the child's output, line by line.
 *
 * Flow: bytes -> csv_lines_feed -> csv_parse_line -> pace_row -> store.
 * A #MetricFiles entry names a card's file to the direct reader (direct.h)
 * as well, when there is one.
 * A row is handed on whole or not at all; every rejected line is counted
 * and logged (rate-limited) with its text.
 */
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "config.h"
#include "direct.h"
#include "pace.h"
#include "source_base.h"
#include "source_rows.h"
#include "timeparse.h"

/* Metrics whose aggregate over an interval is their maximum, not their mean. */
static const char *const max_metrics[] = { "peakmem" };

/* Copy a line for a log message: printable ASCII only, at most 200 bytes. */
static void
printable(const char *line, size_t len, char *buf, size_t buflen)
{
	size_t o = 0;

	for (size_t i = 0; i < len && o + 5 < buflen; i++) {
		unsigned char c = (unsigned char)line[i];
		if (i == 200) {
			memcpy(buf + o, "...", 3);
			o += 3;
			break;
		}
		if (c >= 0x20 && c < 0x7f)
			buf[o++] = (char)c;
		else
			o += (size_t)snprintf(buf + o, buflen - o, "\\x%02x", c);
	}
	buf[o] = '\0';
}

/* aiu-smi's local Date and Time as epoch seconds; cached per hour. */
static int64_t
smi_epoch(struct source *src, int date, int hms)
{
	int hour = hms / 3600;

	if (date != src->cached_date || hour != src->cached_hour) {
		struct tm tm = { .tm_year = date / 10000 - 1900,
		    .tm_mon = date / 100 % 100 - 1, .tm_mday = date % 100,
		    .tm_hour = hour, .tm_isdst = -1 };
		src->cached_hour_epoch = (int64_t)mktime(&tm);
		src->cached_date = date;
		src->cached_hour = hour;
	}
	return src->cached_hour_epoch + hms % 3600;
}

static void
map_header(struct source *src)
{
	const struct csv_parser *p = &src->parser;
	size_t nmetrics = 0;

	src->header_mapped = true;
	for (int c = 0; c < p->ncols; c++) {
		src->col_metric[c] = -1;
		if (p->cols[c].role != CSV_ROLE_METRIC)
			continue;
		if (store_metric(src->st, p->cols[c].key, p->cols[c].unit,
		    &src->col_metric[c]) == -1) {
			log_warnx("cannot add metric '%s' to the catalog; "
			    "rows are dropped until the next header",
			    p->cols[c].key);
			src->header_mapped = false;
			continue;
		}
		/* host-side columns are never zero; they say nothing of the card */
		src->col_card[c] = strncmp(p->cols[c].key, "host", 4) != 0;
		nmetrics++;
		for (size_t k = 0; k < sizeof(max_metrics) /
		    sizeof(max_metrics[0]); k++)
			if (strcmp(p->cols[c].key, max_metrics[k]) == 0)
				pace_set_max(src->pace, src->col_metric[c]);
	}
	src->mapped_generation = p->generation;
	source_describe_ring(src, nmetrics);
}

/* Note aiu-smi's own clock against our stamp, and warn if they disagree. */
static void
cross_check(struct source *src, const struct csv_row *row,
    struct store_sample *s)
{
	int64_t skew = smi_epoch(src, row->date, row->hms) -
	    s->ts_ns / (int64_t)NSEC_PER_SEC;
	unsigned dropped;

	s->have_skew = true;
	s->skew_s = (int32_t)skew;
	if ((skew > 2 || skew < -2 - (int64_t)(src->child_interval_ns /
	    NSEC_PER_SEC)) && ratelimit_pass(&src->skew_rl,
	    now_monotonic_ns(), &dropped))
		log_warnx("aiu-smi's clock differs from ours by %llds "
		    "(device %d); samples keep our stamp",
		    (long long)skew, row->device);
}

static void
handle_row(struct source *src, const struct csv_row *row)
{
	const struct csv_parser *p = &src->parser;
	struct source_device *d;
	struct store_sample s;
	bool all_zero = true;
	size_t n = 0;

	if (!src->header_mapped || src->mapped_generation != p->generation ||
	    row->device < 0 || row->device >= SOURCE_MAX_DEVICES) {
		src->stats.bad_lines++;
		return;
	}
	for (int c = 0; c < p->ncols; c++) {
		const struct csv_value *v = &row->values[c];

		if (src->col_metric[c] < 0)
			continue;
		src->ids[n] = src->col_metric[c];
		src->vals[n].mant = v->mant;
		src->vals[n].scale = v->scale;
		src->vals[n].present = v->present;
		if (v->present && v->mant != 0 && src->col_card[c])
			all_zero = false;
		n++;
	}
	s = (struct store_sample){
		.ts_ns = src->read_stamp_ns,
		.device = row->device,
		.interval_ms = (uint32_t)(src->child_interval_ns / NSEC_PER_MSEC),
		.clock_net_ns = src->clock_net_ns,
		.have_epoch = true,
		.epoch = src->clock_epoch,
		.nvalues = n,
		.metric = src->ids,
		.values = src->vals,
	};
	if (row->have_clock)
		cross_check(src, row, &s);
	src->stats.rows_read++;
	pace_row(src->pace, &s);

	d = &src->dev[row->device];
	d->seen = true;
	d->rows++;
	d->newest_ts_ns = s.ts_ns;
	health_note_row(&d->health, all_zero);
	src->stats.newest_ts_ns = s.ts_ns;
	src->last_row_mono_ns = now_monotonic_ns();
}

static void
handle_map_entry(struct source *src, int device, const char *path)
{
	struct source_device *d;
	char bus[INV_BUSID_MAX] = "";

	if (device < 0 || device >= SOURCE_MAX_DEVICES)
		return;
	d = &src->dev[device];
	if (inventory_busid_from_path(src->cfg->source.metric_files, path, bus,
	    sizeof(bus)) == -1)
		bus[0] = '\0';
	if (!d->seen || strcmp(d->health.path, path) != 0) {
		health_init(&d->health, path);
		log_info("device %d: metric file %s%s%s", device, path,
		    bus[0] ? ", bus " : "", bus);
	}
	d->seen = true;
	if (d->health.file == HEALTH_FILE_UNKNOWN)
		source_check_health(src, device, now_monotonic_ns());
	snprintf(d->bus_id, sizeof(d->bus_id), "%s", bus);
	store_device_map(src->st, device, path, bus, src->read_stamp_ns);
	if (src->direct != NULL)
		direct_add(src->direct, device, path);
}

static void
report_bad(struct source *src, const char *line, size_t len, const char *why)
{
	char text[1024];
	unsigned dropped;

	src->stats.bad_lines++;
	if (!ratelimit_pass(&src->bad_rl, now_monotonic_ns(), &dropped))
		return;
	if (dropped > 0)
		log_warnx("%u more unparsable lines from aiu-smi not shown", dropped);
	printable(line, len, text, sizeof(text));
	log_warnx("aiu-smi line %llu rejected: %s: \"%s\"",
	    (unsigned long long)(src->stats.rows_read + src->stats.bad_lines),
	    why, text);
}

static void
on_stdout_line(void *arg, const char *line, size_t len, bool overlong)
{
	struct source *src = arg;
	struct csv_result *res = &src->res;

	if (overlong) {
		report_bad(src, line, len, "line longer than 4096 bytes");
		return;
	}
	switch (csv_parse_line(&src->parser, line, len, res)) {
	case CSV_ROW:
		handle_row(src, &res->u.row);
		break;
	case CSV_HEADER:
		map_header(src);
		break;
	case CSV_MAP_ENTRY:
		handle_map_entry(src, res->u.map.device, res->u.map.path);
		break;
	case CSV_BAD:
		report_bad(src, line, len, res->error);
		break;
	case CSV_BLANK:
	case CSV_COMMENT:
	case CSV_MAP_BEGIN:
		break;
	}
}

static void
on_stderr_line(void *arg, const char *line, size_t len, bool overlong)
{
	struct source *src = arg;
	char text[1024], pidfield[32];
	const char *fields[] = { pidfield, NULL };
	unsigned dropped;

	(void)overlong;
	if (!ratelimit_pass(&src->stderr_rl, now_monotonic_ns(), &dropped))
		return;
	if (dropped > 0)
		log_warnx("%u more lines of aiu-smi's stderr not shown", dropped);
	printable(line, len, text, sizeof(text));
	snprintf(pidfield, sizeof(pidfield), "CHILD_PID=%d", (int)src->pid);
	log_fields(LOG_WARNING, fields, "aiu-smi[%d]: %s", (int)src->pid, text);
}

void
source_stdout_bytes(struct source *src, const char *buf, size_t n,
    int64_t stamp_ns)
{
	src->read_stamp_ns = stamp_ns;
	csv_lines_feed(&src->out_lines, buf, n, on_stdout_line, src);
}

void
source_stderr_bytes(struct source *src, const char *buf, size_t n)
{
	csv_lines_feed(&src->err_lines, buf, n, on_stderr_line, src);
}

void
source_rows_reset(struct source *src)
{
	if (csv_lines_pending(&src->out_lines) > 0)
		log_warnx("aiu-smi ended in the middle of a line; it is dropped");
	csv_lines_reset(&src->out_lines);
	csv_lines_reset(&src->err_lines);
	csv_parser_init(&src->parser);
	src->header_mapped = false;
}
