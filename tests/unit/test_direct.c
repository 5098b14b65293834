/*
 * Tests of direct: a card's metric file read through a real map, with the
 * file written by mf_write: the first read is the baseline, new samples
 * carry the writer's stamp and sequence number, repeats are not handed
 * on, jumps count missed updates, words changed under an unchanged header
 * and sections stamped after the file header are dropped as torn, every
 * bad file state gives its state, a re-created file is mapped again and a
 * byte-swapped file is read swapped; an old-format file is a state, not an
 * error, looked at again only when it changes or now and then, and the
 * keys a card's file gives are named.  A FIFO or a device at the path is
 * a state of its own, named as such, and never opened blocking.  The
 * writer's clock is checked: stamps of 1970, 2100, overflowed or of
 * tomorrow, or a row covering 90,000,009 ms, are dropped and counted, and
 * a stepped clock costs one row.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "direct.h"
#include "dstamp.h"
#include "metricfile.h"
#include "schema.h"
#include "timeparse.h"

/* the writer's stamps start a second before now: the reader checks them */
static uint64_t ms0;
#define MS0	ms0
#define RESTAT	(DIRECT_RESTAT_NS + 1)

struct rec {
	size_t rows;
	struct store_sample last;
	struct store_value vals[MF_MAX_VALUES];
	int ids[MF_MAX_VALUES];
	int next_id;
};

static struct rec rec;
static char path[256];
static uint64_t mono;

static void
on_row(void *arg, const struct store_sample *s)
{
	struct rec *r = arg;

	r->rows++;
	r->last = *s;
	memcpy(r->vals, s->values, s->nvalues * sizeof(*s->values));
	memcpy(r->ids, s->metric, s->nvalues * sizeof(*s->metric));
}

static int
on_metric(void *arg, const char *key, const char *unit, bool max, int *id)
{
	struct rec *r = arg;

	(void)key;
	(void)unit;
	(void)max;
	*id = r->next_id++;
	return 0;
}

/* Write the file: one perf_counter section, pwr and rdmem. */
static void
write_file(enum mf_order order, uint32_t seq, uint64_t ms, uint64_t file_ms,
    uint64_t pwr)
{
	uint64_t p[] = { pwr }, rd[] = { 3, 4 };
	struct mf_wmetric m[] = { { 0x10, 1, p }, { 0x12, 2, rd } };
	struct mf_wsection s = { 0x20, seq, ms, 10, 2, m };
	uint8_t buf[512];
	size_t n = mf_write(buf, sizeof(buf), order, file_ms, &s, 1, NULL);
	FILE *f = fopen(path, "r+b");

	if (f == NULL)
		f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, n, f), n);
	fclose(f);
}

/* Overwrite n bytes at off. */
static void
poke(long off, const void *b, size_t n)
{
	FILE *f = fopen(path, "r+b");

	assert_non_null(f);
	fseek(f, off, SEEK_SET);
	assert_int_equal(fwrite(b, 1, n, f), n);
	fclose(f);
}

/* Set the file's mtime to sec seconds since the epoch. */
static void
set_mtime(time_t sec)
{
	struct timespec t[2] = { { sec, 0 }, { sec, 0 } };

	assert_int_equal(utimensat(AT_FDCWD, path, t, 0), 0);
}

static struct direct *
reader(void)
{
	struct direct_sink sink = { on_row, on_metric, &rec };
	struct direct *d = direct_new(mf_table_builtin(), &sink);

	assert_non_null(d);
	direct_add(d, 3, path);
	return d;
}

static int
setup(void **state)
{
	const char *tmp = getenv("TMPDIR");

	(void)state;
	snprintf(path, sizeof(path), "%s/test_direct.%d",
	    tmp != NULL ? tmp : "/tmp", (int)getpid());
	unlink(path);
	memset(&rec, 0, sizeof(rec));
	mono = 1000000000ULL;
	ms0 = (uint64_t)now_realtime_ns() / 1000000ULL - 1000;
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	unlink(path);
	return 0;
}

static void
test_samples(void **state)
{
	struct direct *d;
	const struct direct_card_stats *st;

	(void)state;
	write_file(MF_ORDER_NATIVE, 7, MS0, MS0, 420);
	d = reader();
	assert_false(direct_covers_all(d) && rec.rows > 0);
	assert_true(direct_tick(d, mono));	/* now reading */
	assert_true(direct_reading(d, 3));
	assert_true(direct_covers_all(d));
	assert_int_equal(rec.rows, 0);		/* the baseline */

	write_file(MF_ORDER_NATIVE, 8, MS0 + 10, MS0 + 10, 431);
	assert_false(direct_tick(d, mono += 1000));
	assert_int_equal(rec.rows, 1);
	assert_int_equal(rec.last.ts_ns, (int64_t)(MS0 + 10) * 1000000);
	assert_int_equal(rec.last.src, SCHEMA_SRC_FILE);
	assert_true(rec.last.have_seq);
	assert_int_equal(rec.last.seq, 8);
	assert_int_equal(rec.last.device, 3);
	assert_int_equal(rec.last.interval_ms, 10);
	assert_true(rec.last.arrival_ns > 0);
	assert_int_equal(rec.last.nvalues, 2);
	assert_int_equal(rec.vals[0].mant, 431);	/* pwr, tenths */
	assert_int_equal(rec.vals[0].scale, 1);
	assert_int_equal(rec.vals[1].mant, 7 * 1024);	/* rdmem, bytes */
	assert_string_equal(direct_card(d, 3)->metrics, "pwr rdmem_bytes");

	/* the same sample again: not handed on */
	direct_tick(d, mono += 1000);
	assert_int_equal(rec.rows, 1);
	/* a jump of 3: 2 missed; the row covers the 30 ms since the last */
	write_file(MF_ORDER_NATIVE, 11, MS0 + 40, MS0 + 40, 440);
	direct_tick(d, mono += 1000);
	assert_int_equal(rec.rows, 2);
	assert_int_equal(rec.last.interval_ms, 30);
	st = direct_card(d, 3);
	assert_int_equal(st->duplicates, 1);
	assert_int_equal(st->missed, 2);
	assert_int_equal(st->torn, 0);
	direct_free(d);
}

static void
test_torn(void **state)
{
	struct direct *d;
	uint8_t w[8];

	(void)state;
	write_file(MF_ORDER_NATIVE, 1, MS0, MS0, 400);
	d = reader();
	direct_tick(d, mono);
	write_file(MF_ORDER_NATIVE, 2, MS0 + 10, MS0 + 10, 410);
	direct_tick(d, mono += 1000);
	assert_int_equal(rec.rows, 1);

	/* new words under the old header: dropped, counted */
	mf_put_u64(w, 999, MF_ORDER_NATIVE);
	poke(32 + 8 + 32 + 16, w, 8);		/* pwr's word */
	direct_tick(d, mono += 1000);
	assert_int_equal(rec.rows, 1);
	assert_int_equal(direct_card(d, 3)->torn, 1);

	/* a section stamped after the file header: in progress */
	write_file(MF_ORDER_NATIVE, 3, MS0 + 20, MS0 + 10, 420);
	direct_tick(d, mono += 1000);
	assert_int_equal(rec.rows, 1);
	assert_int_equal(direct_card(d, 3)->torn, 2);
	/* finished: handed on */
	write_file(MF_ORDER_NATIVE, 3, MS0 + 20, MS0 + 20, 420);
	direct_tick(d, mono += 1000);
	assert_int_equal(rec.rows, 2);
	assert_int_equal(rec.vals[0].mant, 420);

	/* '!': being updated, nothing read */
	poke(0, "!", 1);
	direct_tick(d, mono += 1000);
	assert_int_equal(direct_card(d, 3)->updating, 1);
	assert_true(direct_reading(d, 3));
	direct_free(d);
}

/* Lay out both sections in memory, runtime (avgmem) and perf_counter (pwr). */
static void
write_two(uint32_t rt_seq, uint64_t rt_ms, uint64_t avgmem, uint32_t pc_seq,
    uint64_t pc_ms, uint64_t pwr, uint64_t file_ms)
{
	uint64_t a[] = { avgmem }, p[] = { pwr };
	struct mf_wmetric rt[] = { { 0x81, 1, a } }, pc[] = { { 0x10, 1, p } };
	struct mf_wsection sec[] = { { 0x10, rt_seq, rt_ms, 10, 1, rt },
	    { 0x20, pc_seq, pc_ms, 10, 1, pc } };
	uint8_t buf[512];
	size_t n = mf_write(buf, sizeof(buf), MF_ORDER_NATIVE, file_ms, sec, 2,
	    NULL);
	FILE *f = fopen(path, "wb");

	assert_true(n > 0);
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, n, f), n);
	fclose(f);
}

/*
 * The writer caught between two sections: perf_counter already carries a
 * new sample, runtime's words are new but its header is not yet.  Taken
 * as it is, the row would mix two samples; it is dropped as torn (not a
 * duplicate) and the whole sample is handed on at the next read.
 */
static void
test_torn_between_sections(void **state)
{
	struct direct *d;
	const struct direct_card_stats *st;

	(void)state;
	write_two(1, MS0, 100, 1, MS0, 400, MS0);
	d = reader();
	direct_tick(d, mono);			/* the baseline */
	assert_true(direct_reading(d, 3));
	st = direct_card(d, 3);

	write_two(1, MS0, 200, 2, MS0 + 10, 410, MS0 + 10);
	direct_tick(d, mono += 1000);
	assert_int_equal(rec.rows, 0);
	assert_int_equal(st->torn, 1);
	assert_int_equal(st->duplicates, 0);

	write_two(2, MS0 + 10, 200, 2, MS0 + 10, 410, MS0 + 10);
	direct_tick(d, mono += 1000);
	assert_int_equal(rec.rows, 1);
	assert_int_equal(rec.last.seq, 2);
	assert_int_equal(rec.last.nvalues, 2);
	assert_int_equal(rec.vals[0].mant, 200 * 1024 * 1024);	/* avgmem */
	assert_int_equal(rec.vals[1].mant, 410);		/* pwr */
	direct_free(d);
}

/*
 * A reader that starts late: its first read has the header stamped with
 * every section, so the header is known to follow them; the next read
 * catches the writer after runtime's new sample and before perf_counter's
 * and the header's.  Taken, the row would carry runtime's new stamp with
 * the old pwr; it is torn, and the whole sample comes at the next read.
 */
static void
test_torn_first_reads(void **state)
{
	struct direct *d;
	const struct direct_card_stats *st;

	(void)state;
	write_two(1, MS0, 100, 1, MS0, 400, MS0);
	d = reader();
	direct_tick(d, mono);			/* the baseline */
	st = direct_card(d, 3);

	write_two(2, MS0 + 10, 200, 1, MS0, 400, MS0);
	direct_tick(d, mono += 1000);
	assert_int_equal(rec.rows, 0);
	assert_int_equal(st->torn, 1);

	write_two(2, MS0 + 10, 200, 2, MS0 + 10, 410, MS0 + 10);
	direct_tick(d, mono += 1000);
	assert_int_equal(rec.rows, 1);
	assert_int_equal(rec.last.seq, 2);
	assert_int_equal(rec.vals[1].mant, 410);		/* pwr */
	direct_free(d);
}

static void
expect_state(enum direct_state want, const char *why)
{
	struct direct *d = reader();
	const struct direct_card_stats *st;

	direct_tick(d, mono);
	st = direct_card(d, 3);
	assert_int_equal(st->state, want);
	assert_false(direct_covers_all(d));
	if (strstr(st->why, why) == NULL)
		fail_msg("why: %s", st->why);
	assert_non_null(strstr(st->why, path));
	assert_int_equal(rec.rows, 0);
	direct_free(d);
}

static void
test_bad_files(void **state)
{
	uint8_t v[4] = { 2, 0, 0, 1 };
	FILE *f;

	(void)state;
	expect_state(DIRECT_MISSING, "No such file");
	write_file(MF_ORDER_NATIVE, 1, MS0, MS0, 400);
	poke(0, "\0\0\0\0", 4);
	expect_state(DIRECT_OLD_FORMAT, "old format");
	write_file(MF_ORDER_NATIVE, 1, MS0, MS0, 400);
	poke(8, v, 4);
	expect_state(DIRECT_VERSION, "layout version 2.0.0.1");
	write_file(MF_ORDER_NATIVE, 1, MS0, MS0, 400);
	assert_int_equal(truncate(path, 100), 0);
	expect_state(DIRECT_BAD, "truncated");
	write_file(MF_ORDER_NATIVE, 1, MS0, MS0, 400);
	f = fopen(path, "ab");
	fputs("xx", f);		/* size not a multiple of 8 */
	fclose(f);
	expect_state(DIRECT_BAD, "not a multiple of 8");
}

/*
 * A FIFO or a device where the file should be: the state "not a file",
 * whose reason says what it is, never "empty"; a regular file put back is
 * read again.  A FIFO with no writer would block a plain open for good.
 */
static void
test_not_a_file(void **state)
{
	struct direct *d;
	const struct direct_card_stats *st;

	(void)state;
	assert_int_equal(mkfifo(path, 0600), 0);
	expect_state(DIRECT_NOT_FILE, "is a FIFO, not a regular file");
	assert_string_equal(direct_state_name(DIRECT_NOT_FILE), "not a file");
	unlink(path);
	assert_int_equal(symlink("/dev/null", path), 0);
	expect_state(DIRECT_NOT_FILE, "is a character device");
	unlink(path);
	assert_int_equal(mkdir(path, 0700), 0);
	expect_state(DIRECT_NOT_FILE, "is a directory");
	rmdir(path);

	/* read, swapped for a FIFO, then a file again */
	write_file(MF_ORDER_NATIVE, 1, MS0, MS0, 400);
	d = reader();
	direct_tick(d, mono);
	assert_true(direct_reading(d, 3));
	unlink(path);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_true(direct_tick(d, mono += RESTAT));
	st = direct_card(d, 3);
	assert_int_equal(st->state, DIRECT_NOT_FILE);
	assert_non_null(strstr(st->why, "is a FIFO"));
	unlink(path);
	write_file(MF_ORDER_NATIVE, 2, MS0 + 10, MS0 + 10, 410);
	assert_true(direct_tick(d, mono += RESTAT));
	assert_true(direct_reading(d, 3));
	direct_free(d);
}

static void
test_recreated_and_swapped(void **state)
{
	enum mf_order other = mf_get_u32((const uint8_t *)"\1\0\0\0",
	    MF_ORDER_NATIVE) == 1 ? MF_ORDER_BIG : MF_ORDER_LITTLE;
	struct direct *d;

	(void)state;
	write_file(MF_ORDER_NATIVE, 5, MS0, MS0, 400);
	d = reader();
	direct_tick(d, mono);
	/* the workload starts again: a new file, sequence from 1, swapped */
	unlink(path);
	write_file(other, 1, MS0 + 100, MS0 + 100, 500);
	direct_tick(d, mono += 1000);		/* too soon to look: old map */
	assert_int_equal(direct_card(d, 3)->reopened, 0);
	direct_tick(d, mono += RESTAT);
	assert_int_equal(direct_card(d, 3)->reopened, 1);
	assert_true(direct_card(d, 3)->swapped);
	assert_int_equal(rec.rows, 0);		/* a new baseline */
	write_file(other, 2, MS0 + 110, MS0 + 110, 510);
	direct_tick(d, mono += 1000);
	assert_int_equal(rec.rows, 1);
	assert_int_equal(rec.last.seq, 2);
	assert_int_equal(rec.vals[0].mant, 510);

	/* cut short in place, under the map: a failed read, no crash */
	assert_int_equal(truncate(path, 0), 0);
	direct_tick(d, mono += 1000);
	assert_int_equal(direct_card(d, 3)->state, DIRECT_BAD);
	assert_non_null(strstr(direct_card(d, 3)->why, "cut short"));
	write_file(other, 3, MS0 + 120, MS0 + 120, 520);
	direct_tick(d, mono += 1000);		/* mapped again: the baseline */
	assert_true(direct_reading(d, 3));
	write_file(other, 4, MS0 + 130, MS0 + 130, 530);
	direct_tick(d, mono += 1000);
	assert_int_equal(rec.rows, 2);
	assert_int_equal(rec.vals[0].mant, 530);
	direct_free(d);
}

/*
 * An old-format file: a state, never an error; not copied at every tick,
 * only when the stat (every DIRECT_RESTAT_NS) finds another inode, size
 * or mtime, when the last look found it being updated, or every
 * DIRECT_OLD_RECHECK_NS; read directly once it turns new.
 */
static void
test_old_format(void **state)
{
	const struct direct_card_stats *st;
	struct direct *d;
	uint64_t reads;

	(void)state;
	write_file(MF_ORDER_NATIVE, 1, MS0, MS0, 400);
	poke(0, "\0\0\0\0", 4);
	set_mtime(1000);
	d = reader();
	assert_true(direct_tick(d, mono));
	st = direct_card(d, 3);
	assert_int_equal(st->state, DIRECT_OLD_FORMAT);
	assert_int_equal(st->errors, 0);
	assert_int_equal(st->reads, 1);

	/* ticks, and stats that find nothing changed: no copy */
	for (int i = 0; i < 100; i++)
		assert_false(direct_tick(d, mono += 10000000));
	assert_int_equal(st->reads, 1);
	/* mtime moved: looked at once, at the next stat */
	set_mtime(1001);
	direct_tick(d, mono += 10000000);
	direct_tick(d, mono += RESTAT);
	assert_int_equal(st->reads, 2);
	direct_tick(d, mono += RESTAT);
	assert_int_equal(st->reads, 2);
	/* unchanged for DIRECT_OLD_RECHECK_NS: looked at again */
	reads = st->reads;
	for (uint64_t t = 0; t < DIRECT_OLD_RECHECK_NS; t += RESTAT)
		direct_tick(d, mono += RESTAT);
	assert_int_equal(st->reads, reads + 1);
	assert_int_equal(st->state, DIRECT_OLD_FORMAT);
	assert_int_equal(st->errors, 0);

	/* being updated when looked at: looked at again at the next tick */
	poke(0, "!", 1);
	set_mtime(1002);
	direct_tick(d, mono += RESTAT);
	assert_int_equal(st->updating, 1);
	poke(0, "\0", 1);
	set_mtime(1002);
	reads = st->reads;
	direct_tick(d, mono += 10000000);
	assert_int_equal(st->reads, reads + 1);
	assert_int_equal(st->state, DIRECT_OLD_FORMAT);
	assert_int_equal(rec.rows, 0);

	/* turned new in place, with the same mtime: read within the recheck */
	write_file(MF_ORDER_NATIVE, 2, MS0 + 10, MS0 + 10, 410);
	set_mtime(1002);
	direct_tick(d, mono += RESTAT);
	assert_int_equal(st->state, DIRECT_OLD_FORMAT);
	for (uint64_t t = 0; t < DIRECT_OLD_RECHECK_NS &&
	    st->state == DIRECT_OLD_FORMAT; t += RESTAT)
		direct_tick(d, mono += RESTAT);
	assert_true(direct_reading(d, 3));
	assert_int_equal(st->errors, 0);
	write_file(MF_ORDER_NATIVE, 3, MS0 + 20, MS0 + 20, 420);
	direct_tick(d, mono += 10000000);
	assert_int_equal(rec.rows, 1);
	assert_int_equal(rec.vals[0].mant, 420);
	direct_free(d);
}

/* Write sample seq stamped ms; expect it dropped for a reason naming why. */
static void
expect_dropped(struct direct *d, uint32_t seq, uint64_t ms, const char *why)
{
	const struct direct_card_stats *st = direct_card(d, 3);
	uint64_t dropped = st->clock_dropped;
	size_t rows = rec.rows;

	write_file(MF_ORDER_NATIVE, seq, ms, ms, 400 + seq);
	direct_tick(d, mono += 1000);
	assert_int_equal(rec.rows, rows);
	assert_int_equal(st->clock_dropped, dropped + 1);
	if (strstr(st->clock_why, why) == NULL)
		fail_msg("clock_why: %s", st->clock_why);
	assert_true(direct_reading(d, 3));
	assert_true(st->newest_ts_ns <= now_realtime_ns() + DIRECT_CLOCK_AHEAD_NS);
}

/* Write sample seq stamped ms; expect it handed on, covering span ms. */
static void
expect_row(struct direct *d, uint32_t seq, uint64_t ms, uint32_t span)
{
	size_t rows = rec.rows;

	write_file(MF_ORDER_NATIVE, seq, ms, ms, 400 + seq);
	direct_tick(d, mono += 1000);
	assert_int_equal(rec.rows, rows + 1);
	assert_int_equal(rec.last.ts_ns, (int64_t)ms * 1000000);
	assert_int_equal(rec.last.interval_ms, span);
	assert_int_equal(rec.vals[0].mant, 400 + seq);
}

/*
 * The writer's clock: 1970, 2100, an overflowed stamp and tomorrow are
 * not the card's time; nor is a row after a 90,000,009 ms gap; a stamp
 * behind the previous one is dropped once, then taken as the new previous.
 */
static void
test_writer_clock(void **state)
{
	struct direct *d;

	(void)state;
	write_file(MF_ORDER_NATIVE, 1, MS0, MS0, 400);
	d = reader();
	direct_tick(d, mono);			/* the baseline */
	expect_dropped(d, 2, 1000, "behind the host clock");		/* 1970 */
	expect_dropped(d, 3, 4102444800000ULL, "ahead of the host clock");
	expect_dropped(d, 4, UINT64_MAX - 7, "overflowed");
	expect_dropped(d, 5, MS0 + 86400000ULL, "ahead of the host clock");
	expect_row(d, 6, MS0 + 10, 10);	/* the good stamp before: the baseline */
	expect_dropped(d, 7, MS0 + 5, "behind the previous stamp");
	expect_row(d, 8, MS0 + 20, 15);
	assert_int_equal(direct_card(d, 3)->clock_dropped, 5);
	assert_int_equal(direct_card(d, 3)->newest_ts_ns,
	    (int64_t)(MS0 + 20) * 1000000);
	direct_free(d);

	/* a baseline 90,000,009 ms before the next stamp */
	unlink(path);
	write_file(MF_ORDER_NATIVE, 1, MS0 - 90000009ULL + 30, MS0 - 90000009ULL + 30,
	    400);
	d = reader();
	direct_tick(d, mono += RESTAT);
	expect_dropped(d, 2, MS0 + 30, "interval out of range");
	expect_row(d, 3, MS0 + 40, 10);
	direct_free(d);

	/* a baseline stamped in 2100 is no previous stamp */
	unlink(path);
	write_file(MF_ORDER_NATIVE, 1, 4102444800000ULL, 4102444800000ULL, 400);
	d = reader();
	direct_tick(d, mono += RESTAT);
	expect_row(d, 2, MS0 + 50, 1);
	direct_free(d);
}

/*
 * Two updates written in one ms carry one ms stamp: the later row is
 * stored 1 ns after the earlier, and each stamp finds its own row's
 * sequence number and read time again (the later row once found the
 * earlier's, so the database said the wrong update had been read).
 */
static void
test_dstamp_same_ms(void **state)
{
	struct dstamp_ring r = { 0 };
	const struct dstamp *d;
	const int64_t ms = 1796606717122000000LL;

	(void)state;
	assert_int_equal(dstamp_put(&r, ms - 10000000, 52, 1),
	    ms - 10000000);
	assert_int_equal(dstamp_put(&r, ms, 53, 2), ms);
	assert_int_equal(dstamp_put(&r, ms, 54, 3), ms + 1);
	assert_non_null(d = dstamp_get(&r, ms));
	assert_int_equal(d->seq, 53);
	assert_int_equal(d->arrival_ns, 2);
	assert_non_null(d = dstamp_get(&r, ms + 1));
	assert_int_equal(d->seq, 54);
	assert_int_equal(d->arrival_ns, 3);
	/* a third in the same ms, and one that is not after the previous */
	assert_int_equal(dstamp_put(&r, ms, 55, 4), ms + 2);
	assert_int_equal(dstamp_get(&r, ms + 2)->seq, 55);
	/* a step of the host clock back keeps its stamp */
	assert_int_equal(dstamp_put(&r, ms - 3600000000000LL, 56, 5),
	    ms - 3600000000000LL);
	assert_int_equal(dstamp_get(&r, ms - 3600000000000LL)->seq, 56);
	assert_null(dstamp_get(&r, ms + 3));
	/* the store's rule, at its bound: STORE_STEP_BACK_NS back moves */
	assert_int_equal(dstamp_put(&r, ms - 3600000000000LL -
	    STORE_STEP_BACK_NS, 57, 6), ms - 3600000000000LL + 1);
	assert_int_equal(dstamp_put(&r, ms - 3600000000000LL -
	    STORE_STEP_BACK_NS, 58, 7), ms - 3600000000000LL -
	    STORE_STEP_BACK_NS);
	/* the ring forgets all but the newest DSTAMP_RING */
	for (uint32_t k = 0; k < DSTAMP_RING; k++)
		dstamp_put(&r, ms + 1000 + k, 100 + k, 0);
	assert_null(dstamp_get(&r, ms));
	assert_int_equal(dstamp_get(&r, ms + 1000)->seq, 100);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dstamp_same_ms),
		cmocka_unit_test_setup_teardown(test_samples, setup, teardown),
		cmocka_unit_test_setup_teardown(test_torn, setup, teardown),
		cmocka_unit_test_setup_teardown(test_torn_first_reads, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_torn_between_sections,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_writer_clock, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_bad_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_a_file, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_recreated_and_swapped,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_old_format, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
