/*
 * A database of DAYS days at 1 Hz from 8 cards, written through the store,
 * with one closed one-hour window tagged "bench-hour" in the middle.
 *
 *   make B=build bench                 (builds build/bench-mkdb)
 *   build/bench-mkdb [-w HZ] DB DAYS
 *
 * DB must not exist.  Every metric of metric_defs gets a value on every
 * row: a bounded random walk over the metric's usual range, so values
 * change from second to second as a card's do, and have the magnitudes
 * (hence the SQLite varint sizes) of real ones.  Stamps are whole seconds
 * from 2025-01-01T00:00:00Z plus an arrival jitter of up to 2 ms, with
 * the cards of one interval a few microseconds apart, as the daemon stamps
 * one aiu-smi line after another.  -w HZ samples the window's hour at HZ
 * instead (the daemon samples at source.window_interval inside windows),
 * with interval_ms set to match.
 *
 * Rows go through store_append and store_flush in batches of 65536.  The
 * window is written with store_window_begin/end as the daemon does.
 * Prints the rows, the window (id, begin_ns, end_ns), the file size and
 * the time taken.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "metrics.h"
#include "storedb.h"
#include "timeparse.h"

#define CARDS		8
#define BATCH		65536
#define T0_S		1735689600LL	/* 2025-01-01T00:00:00Z */
#define WINDOW_S	3600
#define WINDOW_TAG	"bench-hour"
#define MAX_METRICS	64

/* The usual range of a metric and its current value on each card. */
struct walk {
	double lo, hi;
	double x[CARDS];
	int64_t pow10;		/* 10^decimals */
};

static uint64_t rng = 88172645463325252ULL;

static double
uniform(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / (double)(1ULL << 53);
}

static void
walk_init(struct walk *w, const struct metric_def *d)
{
	w->lo = 0.0;
	w->hi = 100.0;
	if (strcmp(d->key, "hostcpu") == 0)
		w->hi = 800.0;
	else if (strcmp(d->unit, "W") == 0)
		w->lo = 20.0, w->hi = 75.0;
	else if (strcmp(d->unit, "C") == 0)
		w->lo = 30.0, w->hi = 90.0;
	else if (strcmp(d->unit, "GiB/s") == 0)
		w->hi = 40.0;
	else if (strcmp(d->unit, "Mreq/s") == 0)
		w->hi = 400.0;
	else if (strcmp(d->unit, "MiB") == 0)
		w->hi = 65536.0;
	w->pow10 = 1;
	for (int i = 0; i < d->decimals; i++)
		w->pow10 *= 10;
	for (int c = 0; c < CARDS; c++)
		w->x[c] = w->lo + (w->hi - w->lo) * uniform();
}

/* The next value of the walk on card c: a step of up to 2 % of the range. */
static void
walk_step(struct walk *w, int c, struct store_value *v)
{
	double x = w->x[c] + (w->hi - w->lo) * 0.04 * (uniform() - 0.5);

	if (x < w->lo)
		x = 2 * w->lo - x;
	if (x > w->hi)
		x = 2 * w->hi - x;
	w->x[c] = x;
	v->mant = (int64_t)(x * (double)w->pow10);
	v->scale = 0;
	v->present = true;
	for (int64_t p = w->pow10; p > 1; p /= 10)
		v->scale++;
}

struct gen {
	struct store *st;
	struct walk walks[MAX_METRICS];
	int ids[MAX_METRICS];
	struct store_value vals[MAX_METRICS];
	uint64_t rows, pending;
};

static void
gen_row(struct gen *g, int64_t ts_ns, int card, uint32_t interval_ms)
{
	struct store_sample s = {
		.ts_ns = ts_ns, .device = card, .interval_ms = interval_ms,
		.nvalues = metric_ndefs, .metric = g->ids, .values = g->vals,
	};

	for (size_t m = 0; m < metric_ndefs; m++)
		walk_step(&g->walks[m], card, &g->vals[m]);
	storedb_append(g->st, &s);
	g->rows++;
	if (++g->pending == BATCH) {
		if (storedb_flush(g->st) == -1)
			fatalx(1, "store_flush");
		g->pending = 0;
	}
}

/* One interval's rows, one per card, stamped from t_ns on. */
static void
gen_interval(struct gen *g, int64_t t_ns, uint32_t interval_ms)
{
	int64_t jitter = (int64_t)(uniform() * 2e6);

	for (int c = 0; c < CARDS; c++)
		gen_row(g, t_ns + jitter + c * 15000, c, interval_ms);
}

static void
usage(void)
{
	fprintf(stderr, "usage: bench-mkdb [-w HZ] DB DAYS\n");
	exit(2);
}

int
main(int argc, char *argv[])
{
	static struct gen g;
	int64_t days, secs, wbegin_s, wbegin_ns, wend_ns, wid, t0, t1;
	long hz = 1;
	struct store_stats ss;
	struct stat sb;
	char busid[32];
	int ch;

	log_init("bench-mkdb", 0);
	while ((ch = getopt(argc, argv, "w:")) != -1) {
		if (ch != 'w' || (hz = strtol(optarg, NULL, 10)) < 1 || hz > 100)
			usage();
	}
	argc -= optind;
	argv += optind;
	if (argc != 2 || (days = strtoll(argv[1], NULL, 10)) < 1)
		usage();
	if (stat(argv[0], &sb) == 0)
		fatalx(1, "%s exists", argv[0]);
	if (metric_ndefs > MAX_METRICS)
		fatalx(1, "more than %d metrics", MAX_METRICS);
	secs = days * 86400;
	wbegin_s = T0_S + secs / 2;
	/* mid-interval edges: the window's first and last rows are partial */
	wbegin_ns = wbegin_s * (int64_t)NSEC_PER_SEC + 500000000;
	wend_ns = wbegin_ns + WINDOW_S * (int64_t)NSEC_PER_SEC;

	t0 = (int64_t)now_monotonic_ns();
	if (storedb_open(argv[0], BATCH, &g.st) == -1)
		fatalx(1, "store_open %s", argv[0]);
	for (size_t m = 0; m < metric_ndefs; m++) {
		walk_init(&g.walks[m], &metric_defs[m]);
		if (storedb_metric(g.st, metric_defs[m].key, metric_defs[m].unit,
		    &g.ids[m]) == -1)
			fatalx(1, "store_metric %s", metric_defs[m].key);
	}
	for (int c = 0; c < CARDS; c++) {
		snprintf(busid, sizeof(busid), "0000:%02x:00.0", 0x13 + c);
		if (storedb_device_map(g.st, c, "/sys/bench/metrics", busid,
		    T0_S * (int64_t)NSEC_PER_SEC) == -1)
			fatalx(1, "store_device_map");
	}
	for (int64_t s = T0_S; s < T0_S + secs; s++) {
		if (hz > 1 && s >= wbegin_s && s <= wbegin_s + WINDOW_S) {
			for (long k = 0; k < hz; k++)
				gen_interval(&g, s * (int64_t)NSEC_PER_SEC +
				    k * (int64_t)NSEC_PER_SEC / hz,
				    (uint32_t)(1000 / hz));
			continue;
		}
		gen_interval(&g, s * (int64_t)NSEC_PER_SEC, 1000);
	}
	if (storedb_flush(g.st) == -1)
		fatalx(1, "store_flush");
	if (storedb_window_begin(g.st, WINDOW_TAG, 0, (int32_t)getpid(),
	    wbegin_ns, "{\"workload\":\"bench\",\"commit\":\"abc123\"}",
	    NULL, 0, &wid) == -1 || storedb_window_end(g.st, wid, wend_ns,
	    STORE_ENDED_MARK, NULL) == -1)
		fatalx(1, "store_window");
	/* complete, as the daemon makes it once its rows are in: an export of
	 * a window never completed says so with exit status 7 */
	if (storedb_windows_summarize_due(g.st, now_realtime_ns(), 0,
	    3600 * (int64_t)NSEC_PER_SEC) == -1)
		fatalx(1, "store_windows_summarize_due");
	storedb_get_stats(g.st, &ss);
	if (ss.rows_dropped != 0)
		fatalx(1, "%" PRIu64 " rows dropped", ss.rows_dropped);
	storedb_close(g.st);
	t1 = (int64_t)now_monotonic_ns();
	if (stat(argv[0], &sb) == -1)
		fatal(1, "%s", argv[0]);
	printf("rows %" PRIu64 "\nwindow %" PRId64 " %s %" PRId64 " %" PRId64
	    "\nbytes %lld\nseconds %.1f\nrows_per_s %.0f\n", g.rows, wid,
	    WINDOW_TAG, wbegin_ns, wend_ns, (long long)sb.st_size,
	    (double)(t1 - t0) / 1e9, (double)g.rows / ((double)(t1 - t0) / 1e9));
	return 0;
}
