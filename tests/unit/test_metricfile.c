/*
 * Tests of metricfile: the files of tests/data/metricfiles decode to the
 * values their README gives, in both byte orders through the same code;
 * every bad state gives its status; the writer's output reads back; the
 * section_types.json loader gives the built-in table.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "metricfile.h"

#define T_MS	1796238131000ULL	/* 2026-12-02T19:02:11Z */

static struct mf_file f;	/* large */

static size_t
load(const char *name, uint8_t *buf, size_t len)
{
	const char *dir = getenv("TEST_DATA");
	char path[512];
	FILE *fp;
	size_t n;

	snprintf(path, sizeof(path), "%s/metricfiles/%s",
	    dir != NULL ? dir : "tests/data", name);
	fp = fopen(path, "rb");
	if (fp == NULL)
		fail_msg("cannot open %s", path);
	n = fread(buf, 1, len, fp);
	fclose(fp);
	return n;
}

static const struct mf_value *
value(const char *name)
{
	for (size_t i = 0; i < f.nval; i++)
		if (strcmp(f.val[i].type->name, name) == 0)
			return &f.val[i];
	return NULL;
}

/* True if name was decoded but has no value. */
static bool
has_absent(const char *name)
{
	const struct mf_value *v = value(name);

	return v != NULL && !v->present;
}

static void
assert_value(const char *name, uint32_t section, int64_t mant, int scale,
    uint32_t nwords)
{
	const struct mf_value *v = value(name);

	if (v == NULL) {
		fail_msg("no value %s", name);
		return;
	}
	assert_true(v->present);
	assert_int_equal(v->section, section);
	assert_int_equal(v->mant, mant);
	assert_int_equal(v->scale, scale);
	assert_int_equal(v->nwords, nwords);
}

/* The README's table, for either reference file. */
static void
assert_reference(void)
{
	assert_int_equal(f.size, 216);
	assert_int_equal(f.nsections, 2);
	assert_memory_equal(f.version, ((uint8_t[]){ 1, 0, 0, 1 }), 4);
	assert_int_equal(f.updated_ms, T_MS);
	assert_int_equal(f.nsec, 2);

	assert_int_equal(f.sec[0].type, 0x10);
	assert_string_equal(f.sec[0].stype->name, "runtime");
	assert_int_equal(f.sec[0].size, 64);
	assert_int_equal(f.sec[0].interval, 100);
	assert_int_equal(f.sec[0].updated_ms, T_MS);
	assert_int_equal(f.sec[0].nvalues, 2);
	assert_int_equal(f.sec[1].type, 0x20);
	assert_string_equal(f.sec[1].stype->name, "perf_counter");
	assert_int_equal(f.sec[1].size, 104);
	assert_int_equal(f.sec[1].interval, 100);
	assert_int_equal(f.sec[1].updated_ms, T_MS);
	assert_int_equal(f.sec[1].nvalues, 3);

	assert_int_equal(f.nval, 5);
	assert_value("avgmem", 0x10, 1073741824LL, 0, 1);
	assert_value("peakmem", 0x10, 2147483648LL, 0, 1);
	assert_value("pwr", 0x20, 420, 1, 1);
	assert_value("rdmem", 0x20, 67174400LL, 0, 2);
	assert_value("wrmem", 0x20, 50372608LL, 0, 3);
	assert_null(value("tempr"));
	assert_null(value("hostcpu"));
	assert_int_equal(f.skipped_sections, 0);
	assert_int_equal(f.skipped_metrics, 0);
}

static void
test_reference_le(void **state)
{
	uint8_t buf[512];
	size_t n = load("reference-le.bin", buf, sizeof(buf));
	char err[256];

	(void)state;
	assert_int_equal(n, 216);
	assert_int_equal(mf_decode(buf, n, MF_ORDER_LITTLE, mf_table_builtin(),
	    &f, err, sizeof(err)), MF_OK);
	assert_reference();
	/* the LE generator's sequence numbers */
	assert_int_equal(f.sec[0].seq, 0x126f7512);
	assert_int_equal(f.sec[1].seq, 0x1385ffe9);
}

static void
test_reference_be(void **state)
{
	uint8_t buf[512];
	size_t n = load("reference-be.bin", buf, sizeof(buf));
	char err[256];

	(void)state;
	assert_int_equal(n, 216);
	assert_int_equal(mf_decode(buf, n, MF_ORDER_BIG, mf_table_builtin(),
	    &f, err, sizeof(err)), MF_OK);
	assert_reference();
	assert_int_equal(f.sec[0].seq, 0x15fc3d82);
	assert_int_equal(f.sec[1].seq, 0x16b3a50f);
}

/* Read in the wrong order, the size field is absurd: never a value. */
static void
test_wrong_order(void **state)
{
	uint8_t buf[512];
	size_t n = load("reference-be.bin", buf, sizeof(buf));
	char err[256];

	(void)state;
	assert_int_not_equal(mf_decode(buf, n, MF_ORDER_LITTLE,
	    mf_table_builtin(), &f, err, sizeof(err)), MF_OK);
	assert_int_equal(f.nval, 0);
}

static void
expect_status(const char *name, size_t want_len, enum mf_status want,
    const char *want_err)
{
	uint8_t buf[512];
	size_t n = load(name, buf, sizeof(buf));
	char err[256];

	assert_int_equal(n, want_len);
	assert_int_equal(mf_decode(buf, n, MF_ORDER_LITTLE, mf_table_builtin(),
	    &f, err, sizeof(err)), want);
	assert_int_equal(f.nval, 0);
	assert_string_equal(err, want_err);
}

static void
test_bad_states(void **state)
{
	(void)state;
	expect_status("updating-le.bin", 216, MF_UPDATING, "being updated");
	expect_status("old-format-le.bin", 216, MF_OLD_FORMAT, "old format");
	expect_status("version-2-le.bin", 216, MF_BAD_VERSION,
	    "layout version 2.0.0.1, this reader knows 1.0.x");
	assert_memory_equal(f.version, ((uint8_t[]){ 2, 0, 0, 1 }), 4);
	expect_status("truncated-le.bin", 100, MF_TRUNCATED,
	    "100 bytes, its header says 216");
}

static void
test_sizes(void **state)
{
	uint8_t buf[512], probe[4] = { 'A', 'i', 'u', 'X' };
	size_t n = load("reference-le.bin", buf, sizeof(buf));
	char err[256];

	(void)state;
	/* a file longer than its size field, by 4 bytes: not a multiple of 8 */
	assert_int_equal(mf_decode(buf, n + 4, MF_ORDER_LITTLE,
	    mf_table_builtin(), &f, err, sizeof(err)), MF_BAD_SIZE);
	assert_string_equal(err, "220 bytes is not a multiple of 8");
	/* a size field that is not a multiple of 8 */
	mf_put_u32(buf + 4, 212, MF_ORDER_LITTLE);
	assert_int_equal(mf_decode(buf, n, MF_ORDER_LITTLE, mf_table_builtin(),
	    &f, err, sizeof(err)), MF_BAD_SIZE);
	assert_string_equal(err, "size field 212 is not a multiple of 8");
	mf_put_u32(buf + 4, 24, MF_ORDER_LITTLE);
	assert_int_equal(mf_decode(buf, n, MF_ORDER_LITTLE, mf_table_builtin(),
	    &f, err, sizeof(err)), MF_BAD_SIZE);
	/* shorter than the header */
	assert_int_equal(mf_decode(buf, 16, MF_ORDER_LITTLE, mf_table_builtin(),
	    &f, err, sizeof(err)), MF_TRUNCATED);
	assert_int_equal(mf_probe(buf, 3), MF_TRUNCATED);
	assert_int_equal(mf_probe(probe, 4), MF_BAD_MAGIC);
	assert_int_equal(mf_decode(probe, 4, MF_ORDER_LITTLE,
	    mf_table_builtin(), &f, err, sizeof(err)), MF_BAD_MAGIC);
	/* a section that runs past the file */
	n = load("reference-le.bin", buf, sizeof(buf));
	mf_put_u32(buf + 32 + 12, 112, MF_ORDER_LITTLE);
	assert_int_equal(mf_decode(buf, n, MF_ORDER_LITTLE, mf_table_builtin(),
	    &f, err, sizeof(err)), MF_BAD_LAYOUT);
	/* a metric whose words run past its section */
	n = load("reference-le.bin", buf, sizeof(buf));
	mf_put_u32(buf + 0x9c, 9, MF_ORDER_LITTLE);	/* rdmem: 9 words */
	assert_int_equal(mf_decode(buf, n, MF_ORDER_LITTLE, mf_table_builtin(),
	    &f, err, sizeof(err)), MF_BAD_LAYOUT);
	assert_non_null(strstr(err, "metric 0x12"));
}

/* Unknown, mismatched and repeated sections and unknown metrics are skipped. */
static void
test_skips(void **state)
{
	static const uint64_t w1[] = { 7 }, w2[] = { 1, 2, 3 }, w3[] = { 455 };
	const struct mf_wmetric m1[] = { { 0x99, 1, w1 }, { 0x10, 1, w3 } };
	const struct mf_wmetric m2[] = { { 0x11, 3, w2 } };
	const struct mf_wsection s[] = {
		{ 0x77, 1, T_MS, 100, 1, m1 },	/* unknown section */
		{ 0x20, 2, T_MS, 100, 2, m1 },	/* unknown metric, then pwr */
		{ 0x20, 3, T_MS, 100, 1, m2 },	/* repeats: skipped */
		{ 0x10, 4, T_MS, 100, 1, m2 },	/* header type altered below */
	};
	uint8_t buf[1024];
	uint32_t off[4];
	size_t n;
	char err[256];

	(void)state;
	n = mf_write(buf, sizeof(buf), MF_ORDER_LITTLE, T_MS, s, 4, off);
	assert_int_equal(n, mf_write_size(s, 4));
	mf_put_u32(buf + off[3], 0x11, MF_ORDER_LITTLE);
	assert_int_equal(mf_decode(buf, n, MF_ORDER_LITTLE, mf_table_builtin(),
	    &f, err, sizeof(err)), MF_OK);
	assert_int_equal(f.nsec, 4);
	assert_int_equal(f.skipped_sections, 3);
	assert_int_equal(f.skipped_metrics, 1);
	assert_int_equal(f.nval, 1);
	assert_value("pwr", 0x20, 455, 1, 1);
	assert_int_equal(f.sec[1].seq, 2);
}

/* Written in either order, a file reads back to what was written. */
static void
test_roundtrip(void **state)
{
	static const uint64_t pwr[] = { 611 }, temp[] = { 480, 523, 499 };
	static const uint64_t rd[] = { 3, 4 }, cpu[] = { 10, 11 };
	static const uint64_t big[] = { UINT64_MAX, UINT64_MAX };
	const struct mf_wmetric perf[] = { { 0x10, 1, pwr }, { 0x11, 3, temp },
	    { 0x12, 2, rd }, { 0x14, 0, NULL }, { 0x15, 2, big } };
	const struct mf_wmetric host[] = { { 0x01, 2, cpu } };
	const struct mf_wsection s[] = {
		{ 0x01, 9, T_MS + 5, 10, 1, host },
		{ 0x20, 10, T_MS + 6, 10, 5, perf },
	};
	enum mf_order orders[] = { MF_ORDER_LITTLE, MF_ORDER_BIG,
	    MF_ORDER_NATIVE };
	uint8_t buf[1024];
	char err[256];

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		size_t n = mf_write(buf, sizeof(buf), orders[i], T_MS + 7, s, 2,
		    NULL);
		assert_int_equal(n % 8, 0);
		assert_int_equal(mf_decode(buf, n, orders[i],
		    mf_table_builtin(), &f, err, sizeof(err)), MF_OK);
		assert_int_equal(f.updated_ms, T_MS + 7);
		assert_int_equal(f.sec[0].seq, 9);
		assert_int_equal(f.sec[1].updated_ms, T_MS + 6);
		assert_int_equal(f.sec[1].interval, 10);
		assert_value("hostcpu", 0x01, 10500, 3, 2);	/* avg 10.5 */
		assert_value("pwr", 0x20, 611, 1, 1);
		assert_value("tempr", 0x20, 523, 1, 3);		/* max */
		assert_value("rdmem", 0x20, 7 * 1024, 0, 2);
		assert_true(has_absent("rxpci"));		/* no words */
		assert_true(has_absent("txpci"));		/* overflow */
	}
	assert_int_equal(mf_write(buf, 100, MF_ORDER_LITTLE, 0, s, 2, NULL), 0);
}

/* The reference's section_types.json loads to the built-in table. */
static void
test_table_json(void **state)
{
	static struct mf_table t;
	const struct mf_table *b = mf_table_builtin();
	const char *dir = getenv("TEST_DATA");
	char path[512], err[512];
	FILE *fp;

	(void)state;
	snprintf(path, sizeof(path), "%s/metricfiles/section_types.json",
	    dir != NULL ? dir : "tests/data");
	assert_int_equal(mf_table_load(path, &t, err, sizeof(err)), 0);
	assert_string_equal(t.version, "1.0.0.1");
	assert_int_equal(t.nsections, b->nsections);
	assert_int_equal(t.nmetrics, b->nmetrics);
	for (size_t i = 0; i < b->nmetrics; i++) {
		const struct mf_metric_type *m = mf_table_metric(&t,
		    b->metrics[i].section, b->metrics[i].id);
		assert_non_null(m);
		assert_string_equal(m->name, b->metrics[i].name);
		assert_int_equal(m->vtype, b->metrics[i].vtype);
		assert_int_equal(m->summ, b->metrics[i].summ);
	}
	for (size_t i = 0; i < b->nsections; i++)
		assert_string_equal(mf_table_section(&t,
		    b->sections[i].id)->name, b->sections[i].name);

	/* a bad table is refused whole, naming the file and the entry */
	snprintf(path, sizeof(path), "%s/test_metricfile.json",
	    getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("{\"section_type\":[{\"name\":\"perf_counter\",\"id\":\"0x20\"}],"
	    "\"metric_type\":[{\"section\":\"perf_counter\",\"name\":\"pwr\","
	    "\"id\":\"0x10\",\"type\":\"watts\",\"summarizer\":\"first\"}]}",
	    fp);
	fclose(fp);
	t.nmetrics = 99;
	assert_int_equal(mf_table_load(path, &t, err, sizeof(err)), -1);
	assert_int_equal(t.nmetrics, 99);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "metric_type[0] (pwr): unknown \"type\""));
	fp = fopen(path, "w");
	fputs("{\"section_type\": [", fp);
	fclose(fp);
	assert_int_equal(mf_table_load(path, &t, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not JSON"));
	remove(path);
	assert_int_equal(mf_table_load("/nonexistent/x.json", &t, err,
	    sizeof(err)), -1);
	assert_string_equal(err, "/nonexistent/x.json: No such file or "
	    "directory");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reference_le),
		cmocka_unit_test(test_reference_be),
		cmocka_unit_test(test_wrong_order),
		cmocka_unit_test(test_bad_states),
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_skips),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_table_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
