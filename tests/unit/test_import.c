/*
 * Tests of the parsing behind "spyremon import": telling the two formats
 * apart by their header, spyremon's csv header and rows, time zones and
 * local times (with the hours that daylight saving time skips and
 * repeats), the inference of the interval, --device-map and bus IDs from
 * metric file names.  Expected instants come from timegm on UTC fields,
 * not from the mktime the code uses.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "import_parse.h"

#define SEC	1000000000LL

static char err[IMPORT_ERR_MAX];

/* The Unix time of a UTC date and time. */
static int64_t
utc(int y, int mo, int d, int h, int mi, int s)
{
	struct tm tm = { .tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d,
	    .tm_hour = h, .tm_min = mi, .tm_sec = s };

	return (int64_t)timegm(&tm);
}

static int
detect(const char *line, enum import_format *f)
{
	return import_detect(line, strlen(line), f, err, sizeof(err));
}

/* ---- headers ---- */

static void
test_detect(void **state)
{
	enum import_format f;

	(void)state;
	assert_int_equal(detect("ID,Date (YYYYMMDD),Time (HH:MM:SS),pwr W", &f),
	    0);
	assert_int_equal(f, IMPORT_AIUSMI);
	assert_int_equal(detect("  ID ,Date,Time", &f), 0);
	assert_int_equal(f, IMPORT_AIUSMI);
	assert_int_equal(detect("epoch_ns,time_utc,device,bus_id,interval_ms,"
	    "pwr", &f), 0);
	assert_int_equal(f, IMPORT_CSV);
	assert_int_equal(detect("window,epoch_ns,time_utc,device,bus_id,"
	    "interval_ms", &f), 0);
	assert_int_equal(f, IMPORT_CSV);
	assert_int_equal(detect("IDX,Date,Time", &f), -1);
	assert_int_equal(detect("ts,device,pwr", &f), -1);
	assert_non_null(strstr(err, "\"ts,device,pwr\""));
	assert_int_equal(detect("0,20261202,14:17:13,1.0", &f), -1);
}

static void
test_csv_header(void **state)
{
	struct import_csv_header h;
	const char *l;

	(void)state;
	l = "epoch_ns,time_utc,device,bus_id,interval_ms,pwr,busy";
	assert_int_equal(import_csv_header(l, strlen(l), &h, err, sizeof(err)),
	    0);
	assert_int_equal(h.nlabels, 0);
	assert_int_equal(h.nkeys, 2);
	assert_false(h.coarse);
	assert_int_equal(h.ncells, 7);
	assert_string_equal(h.keys[0], "pwr");
	assert_string_equal(h.keys[1], "busy");

	l = "window,epoch_ns,time_utc,device,bus_id,interval_ms,pwr,coarse";
	assert_int_equal(import_csv_header(l, strlen(l), &h, err, sizeof(err)),
	    0);
	assert_int_equal(h.nlabels, 1);
	assert_int_equal(h.nkeys, 1);
	assert_true(h.coarse);
	assert_int_equal(h.ncells, 8);

	/* no metric at all is a header too */
	l = "epoch_ns,time_utc,device,bus_id,interval_ms";
	assert_int_equal(import_csv_header(l, strlen(l), &h, err, sizeof(err)),
	    0);
	assert_int_equal(h.nkeys, 0);

	l = "epoch_ns,time_utc,device,interval_ms,pwr";
	assert_int_equal(import_csv_header(l, strlen(l), &h, err, sizeof(err)),
	    -1);
	assert_non_null(strstr(err, "expected 'bus_id'"));
	l = "epoch_ns,time_utc,device,bus_id,interval_ms,pwr,pwr";
	assert_int_equal(import_csv_header(l, strlen(l), &h, err, sizeof(err)),
	    -1);
	assert_non_null(strstr(err, "'pwr' appears twice"));
	l = "epoch_ns,time_utc,device,bus_id,interval_ms,pwr W";
	assert_int_equal(import_csv_header(l, strlen(l), &h, err, sizeof(err)),
	    -1);
	assert_non_null(strstr(err, "cell 6"));
	l = "epoch_ns,time_utc,device,bus_id,interval_ms,\"a,b\"";
	assert_int_equal(import_csv_header(l, strlen(l), &h, err, sizeof(err)),
	    -1);
	assert_non_null(strstr(err, "quoted"));
}

/* ---- csv rows ---- */

static int
row(const struct import_csv_header *h, const char *l,
    struct import_csv_row *r)
{
	return import_csv_row(h, l, strlen(l), r, err, sizeof(err));
}

static void
test_csv_row(void **state)
{
	struct import_csv_header h;
	struct import_csv_row r;
	const char *hl = "window,epoch_ns,time_utc,device,bus_id,interval_ms,"
	    "pwr,rdmem,coarse";

	(void)state;
	assert_int_equal(import_csv_header(hl, strlen(hl), &h, err,
	    sizeof(err)), 0);
	assert_int_equal(row(&h, "7,1796217922123456789,"
	    "2026-12-02T13:25:22.123456789Z,1,0000:14:00.0,100,-5.5,,1", &r),
	    0);
	assert_int_equal(r.ts_ns, 1796217922123456789LL);
	assert_int_equal(r.device, 1);
	assert_string_equal(r.bus_id, "0000:14:00.0");
	assert_int_equal(r.interval_ms, 100);
	assert_true(r.coarse);
	assert_true(r.values[0].present);
	assert_int_equal(r.values[0].mant, -55);
	assert_int_equal(r.values[0].scale, 1);
	assert_false(r.values[1].present);

	/* an empty bus ID and coarse 0 */
	assert_int_equal(row(&h, "7,0,1970-01-01T00:00:00.000000000Z,0,,1000,"
	    "1,2.000,0", &r), 0);
	assert_string_equal(r.bus_id, "");
	assert_false(r.coarse);
	assert_int_equal(r.values[1].mant, 2000);
	assert_int_equal(r.values[1].scale, 3);

	assert_int_equal(row(&h, "7,0,1970-01-01T00:00:00Z,0,,1000,1,2", &r),
	    -1);
	assert_non_null(strstr(err, "expected 9 cells, got 8"));
	assert_int_equal(row(&h, "7,0,1970-01-01T00:00:00Z,0,,1000,1,x,0", &r),
	    -1);
	assert_non_null(strstr(err, "column 'rdmem': not a number: \"x\""));
	assert_int_equal(row(&h, "7,1.5,1970-01-01T00:00:00Z,0,,1000,1,2,0",
	    &r), -1);
	assert_non_null(strstr(err, "column 'epoch_ns'"));
	assert_int_equal(row(&h, "7,0,1970-01-01T00:00:01Z,0,,1000,1,2,0", &r),
	    -1);
	assert_non_null(strstr(err, "column 'time_utc': not the time of "
	    "epoch_ns"));
	assert_int_equal(row(&h, "7,0,yesterday,0,,1000,1,2,0", &r), -1);
	assert_non_null(strstr(err, "column 'time_utc': not a time"));
	assert_int_equal(row(&h, "7,0,1970-01-01T00:00:00Z,10000,,1000,1,2,0",
	    &r), -1);
	assert_non_null(strstr(err, "column 'device'"));
	assert_int_equal(row(&h, "7,0,1970-01-01T00:00:00Z,0,,60001,1,2,0",
	    &r), -1);
	assert_non_null(strstr(err, "column 'interval_ms'"));
	assert_int_equal(row(&h, "7,0,1970-01-01T00:00:00Z,0,,1000,1,2,2", &r),
	    -1);
	assert_non_null(strstr(err, "column 'coarse': not 0 or 1"));
	assert_int_equal(row(&h, "7,0,1970-01-01T00:00:00Z,0,,1000,-,2,0", &r),
	    -1);
	assert_non_null(strstr(err, "column 'pwr'"));
	assert_int_equal(row(&h, "7,0,1970-01-01T00:00:00Z,0,\"b\",1000,1,2,0",
	    &r), -1);
	assert_non_null(strstr(err, "quoted"));
}

/* ---- zones and local time ---- */

static void
test_zones(void **state)
{
	(void)state;
	assert_int_equal(import_set_zone("Europe/Berlin", err, sizeof(err)), 0);
	assert_string_equal(getenv("TZ"), "Europe/Berlin");
	assert_int_equal(import_set_zone(":America/New_York", err,
	    sizeof(err)), 0);
	assert_int_equal(import_set_zone("UTC0", err, sizeof(err)), 0);
	assert_int_equal(import_set_zone("CET-1CEST,M3.5.0,M10.5.0/3", err,
	    sizeof(err)), 0);
	assert_int_equal(import_set_zone("<+03>-3", err, sizeof(err)), 0);
	assert_int_equal(import_set_zone("Nowhere/Atlantis", err, sizeof(err)),
	    -1);
	assert_non_null(strstr(err, "--tz Nowhere/Atlantis: not a time zone"));
	assert_int_equal(import_set_zone("../../etc/passwd", err, sizeof(err)),
	    -1);
	assert_int_equal(import_set_zone("Europe", err, sizeof(err)), -1);
	assert_int_equal(import_set_zone("", err, sizeof(err)), -1);
	assert_int_equal(import_set_zone("EST", err, sizeof(err)), 0);
	assert_int_equal(import_set_zone("ES5", err, sizeof(err)), -1);

	/* without --tz, TZ from the environment is checked the same way */
	setenv("TZ", "Mars/Olympus", 1);
	assert_int_equal(import_set_zone(NULL, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "TZ=Mars/Olympus"));
	setenv("TZ", "Asia/Tokyo", 1);
	assert_int_equal(import_set_zone(NULL, err, sizeof(err)), 0);
	/* TZDIR moves the zone files */
	setenv("TZDIR", "/nonexistent", 1);
	assert_int_equal(import_set_zone("Europe/Berlin", err, sizeof(err)),
	    -1);
	unsetenv("TZDIR");
}

static void
test_local_time(void **state)
{
	int64_t t;

	(void)state;
	assert_int_equal(import_set_zone("Europe/Berlin", err, sizeof(err)), 0);
	/* summer: UTC+2; winter: UTC+1 */
	assert_int_equal(import_local_time(20260617, 21 * 3600 + 14 * 60 + 10,
	    INT64_MIN, &t), 0);
	assert_int_equal(t, utc(2026, 6, 17, 19, 14, 10));
	assert_int_equal(import_local_time(20261202, 14 * 3600 + 17 * 60 + 13,
	    INT64_MIN, &t), 0);
	assert_int_equal(t, utc(2026, 12, 2, 13, 17, 13));
	/* 29 March 2026, 02:00 to 03:00 does not exist */
	assert_int_equal(import_local_time(20260329, 2 * 3600 + 30 * 60,
	    INT64_MIN, &t), -1);
	assert_int_equal(import_local_time(20260329, 3 * 3600, INT64_MIN, &t),
	    0);
	assert_int_equal(t, utc(2026, 3, 29, 1, 0, 0));
	/* 25 October 2026, 02:00 to 03:00 comes twice: the earlier after */
	assert_int_equal(import_local_time(20261025, 2 * 3600 + 30 * 60,
	    INT64_MIN, &t), 0);
	assert_int_equal(t, utc(2026, 10, 25, 0, 30, 0));
	assert_int_equal(import_local_time(20261025, 2 * 3600 + 30 * 60,
	    utc(2026, 10, 25, 0, 59, 59), &t), 0);
	assert_int_equal(t, utc(2026, 10, 25, 1, 30, 0));
	/* after both: the earlier */
	assert_int_equal(import_local_time(20261025, 2 * 3600 + 30 * 60,
	    utc(2026, 10, 25, 2, 0, 0), &t), 0);
	assert_int_equal(t, utc(2026, 10, 25, 0, 30, 0));

	assert_int_equal(import_set_zone("America/New_York", err, sizeof(err)),
	    0);
	assert_int_equal(import_local_time(20261202, 9 * 3600, INT64_MIN, &t),
	    0);
	assert_int_equal(t, utc(2026, 12, 2, 14, 0, 0));
	assert_int_equal(import_set_zone("UTC0", err, sizeof(err)), 0);
	assert_int_equal(import_local_time(20261202, 9 * 3600, INT64_MIN, &t),
	    0);
	assert_int_equal(t, utc(2026, 12, 2, 9, 0, 0));
	/* a leap second is no local time mktime gives back */
	assert_int_equal(import_local_time(20161231, 86400 - 60 + 60,
	    INT64_MIN, &t), -1);
}

/* ---- the interval ---- */

static void
test_infer_interval(void **state)
{
	/* two devices, a jittered step, a gap and a device of one row */
	const int64_t ts[] = { 100, 101, 102, 104, 105, 106, 100, 102, 103,
	    104, 500 };
	const int dev[] = { 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2 };
	const int64_t ts2[] = { 10, 12, 14, 20, 25, 30 };
	const int dev2[] = { 0, 0, 0, 1, 1, 1 };
	const int64_t one[] = { 10, 20 };
	const int devone[] = { 0, 1 };

	(void)state;
	assert_int_equal(import_infer_interval(ts, dev, 11), 1);
	/* a tie (2 twice, 5 twice) goes to the shorter */
	assert_int_equal(import_infer_interval(ts2, dev2, 6), 2);
	/* the step between devices does not count */
	assert_int_equal(import_infer_interval(one, devone, 2), 0);
	assert_int_equal(import_infer_interval(one, devone, 1), 0);
	assert_int_equal(import_infer_interval(ts2 + 3, dev2 + 3, 3), 5);
}

/* ---- --device-map and bus IDs ---- */

static void
test_devmap(void **state)
{
	struct import_devmap *m;
	size_t n;

	(void)state;
	assert_int_equal(import_devmap_parse("0=0000:13:00.0,12=0000:1a:00.0",
	    &m, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 2);
	assert_int_equal(m[0].device, 0);
	assert_string_equal(m[0].bus_id, "0000:13:00.0");
	assert_int_equal(m[1].device, 12);
	assert_string_equal(m[1].bus_id, "0000:1a:00.0");
	free(m);
	assert_int_equal(import_devmap_parse("0=a,0=b", &m, &n, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "device 0 is named twice"));
	assert_int_equal(import_devmap_parse("x=a", &m, &n, err, sizeof(err)),
	    -1);
	assert_non_null(strstr(err, "\"x=a\" is not ID=BUSID"));
	assert_int_equal(import_devmap_parse("0", &m, &n, err, sizeof(err)),
	    -1);
	assert_int_equal(import_devmap_parse("0=", &m, &n, err, sizeof(err)),
	    -1);
	assert_int_equal(import_devmap_parse("0=a b", &m, &n, err, sizeof(err)),
	    -1);
	assert_int_equal(import_devmap_parse("10000=a", &m, &n, err,
	    sizeof(err)), -1);
	assert_null(m);
}

static void
test_bus_from_path(void **state)
{
	char bus[IMPORT_BUSID_MAX];

	(void)state;
	assert_int_equal(import_bus_from_path("/tmp/metrics.0000:13:00.0", bus,
	    sizeof(bus)), 0);
	assert_string_equal(bus, "0000:13:00.0");
	assert_int_equal(import_bus_from_path("metrics.0000:14:00.0", bus,
	    sizeof(bus)), 0);
	assert_string_equal(bus, "0000:14:00.0");
	assert_int_equal(import_bus_from_path("/var/run/aiu/metrics.x", bus,
	    sizeof(bus)), 0);
	assert_string_equal(bus, "x");
	assert_int_equal(import_bus_from_path("/tmp/stats.0000:13:00.0", bus,
	    sizeof(bus)), -1);
	assert_int_equal(import_bus_from_path("/tmp/metrics.", bus,
	    sizeof(bus)), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_detect),
		cmocka_unit_test(test_csv_header),
		cmocka_unit_test(test_csv_row),
		cmocka_unit_test(test_zones),
		cmocka_unit_test(test_local_time),
		cmocka_unit_test(test_infer_interval),
		cmocka_unit_test(test_devmap),
		cmocka_unit_test(test_bus_from_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
