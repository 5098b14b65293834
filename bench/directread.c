/*
 * directread: the CPU one direct read of a card's metric file costs, apart
 * from the daemon's timer wake-up and from storing.
 *
 *   make bench && build/bench-directread [ticks] [dir]   (100000, $TMPDIR or /tmp)
 *
 * Writes 8 new-format files like the simulator's (3 sections, 12 metrics,
 * 352 bytes), maps them with direct.c, and times direct_tick over all 8
 * with CLOCK_PROCESS_CPUTIME_ID, three ways in turn, 7 times each:
 *   same     nothing changed: copy, decode, compare, not handed on;
 *   new      every section's sequence number and time moved since the
 *            last read (a store into the map between ticks, not timed):
 *            copy, decode, and one row handed to a sink that drops it;
 *   memcpy   the baseline: only copying each file out of its map.
 * Prints the median ns per card read of each.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "direct.h"
#include "metricfile.h"

#define CARDS	8
#define REPS	7

static uint64_t rows;

static void
sink_row(void *arg, const struct store_sample *s)
{
	(void)arg;
	(void)s;
	rows++;
}

static int
sink_metric(void *arg, const char *key, const char *unit, bool max, int *id)
{
	static int next;

	(void)arg;
	(void)key;
	(void)unit;
	(void)max;
	*id = next++;
	return 0;
}

static double
cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int
cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	long ticks = argc > 1 ? atol(argv[1]) : 100000;
	const char *dir = argc > 2 ? argv[2] : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	static const uint64_t w1[] = { 130 }, w2[] = { 4 }, w3[] = { 6000 },
	    w4[] = { 6100 }, w5[] = { 455 }, w6[] = { 512 }, w7[] = { 9, 5 },
	    w8[] = { 7 };
	const struct mf_wmetric hm[] = { { 1, 1, w1 }, { 2, 1, w2 } };
	const struct mf_wmetric rm[] = { { 0x81, 1, w3 }, { 0x82, 1, w4 } };
	const struct mf_wmetric pm[] = { { 0x10, 1, w5 }, { 0x11, 1, w6 },
	    { 0x12, 2, w7 }, { 0x13, 1, w8 }, { 0x14, 1, w8 }, { 0x15, 1, w8 },
	    { 0x16, 1, w8 }, { 0x17, 1, w8 } };
	struct mf_wsection s[] = { { 1, 1, 1, 10, 2, hm }, { 0x10, 1, 1, 10, 2, rm },
	    { 0x20, 1, 1, 10, 8, pm } };
	struct direct_sink sink = { sink_row, sink_metric, NULL };
	struct direct *d = direct_new(mf_table_builtin(), &sink);
	uint8_t img[1024], *maps[CARDS], copy[1024];
	uint32_t off[3];
	char path[CARDS][512];
	size_t len = mf_write(img, sizeof(img), MF_ORDER_NATIVE, 1, s, 3, off);
	double res[3][REPS];
	uint64_t mono = 1, seq = 1;

	for (int c = 0; c < CARDS; c++) {
		int fd;

		snprintf(path[c], sizeof(path[c]), "%s/bench-directread.%d.%d",
		    dir, (int)getpid(), c);
		fd = open(path[c], O_RDWR | O_CREAT | O_TRUNC, 0644);
		if (fd == -1 || write(fd, img, len) != (ssize_t)len)
			return 1;
		maps[c] = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
		    fd, 0);
		close(fd);
		direct_add(d, c, path[c]);
	}
	direct_tick(d, mono);		/* map, baseline */
	for (int rep = 0; rep < REPS; rep++) {
		double t0, t;

		/* same */
		t = 0;
		for (long i = 0; i < ticks; i++) {
			t0 = cpu_ns();
			direct_tick(d, mono += 1000);
			t += cpu_ns() - t0;
		}
		res[0][rep] = t / ticks / CARDS;
		/* new: bump every section's sequence number and time */
		t = 0;
		for (long i = 0; i < ticks; i++) {
			seq++;
			for (int c = 0; c < CARDS; c++) {
				for (int k = 0; k < 3; k++) {
					mf_put_u32(maps[c] + off[k] + MF_SEC_OFF_SEQ,
					    (uint32_t)seq, MF_ORDER_NATIVE);
					mf_put_u64(maps[c] + off[k] +
					    MF_SEC_OFF_UPDATED, seq, MF_ORDER_NATIVE);
				}
				mf_put_u64(maps[c] + 16, seq, MF_ORDER_NATIVE);
			}
			t0 = cpu_ns();
			direct_tick(d, mono += 1000);
			t += cpu_ns() - t0;
		}
		res[1][rep] = t / ticks / CARDS;
		/* memcpy */
		t = 0;
		for (long i = 0; i < ticks; i++) {
			t0 = cpu_ns();
			for (int c = 0; c < CARDS; c++) {
				memcpy(copy, maps[c], len);
				__asm__ volatile("" : : "r"(copy) : "memory");
			}
			t += cpu_ns() - t0;
		}
		res[2][rep] = t / ticks / CARDS;
	}
	for (int k = 0; k < 3; k++)
		qsort(res[k], REPS, sizeof(double), cmp);
	printf("%d cards, %zu-byte files, %ld ticks x %d runs, medians (ns per card read, "
	    "timer calls included):\n", CARDS, len, ticks, REPS);
	printf("  same sample: %.0f ns\n  new sample:  %.0f ns (%llu rows handed on)\n"
	    "  memcpy only: %.0f ns\n", res[0][REPS / 2], res[1][REPS / 2],
	    (unsigned long long)rows, res[2][REPS / 2]);
	for (int c = 0; c < CARDS; c++)
		unlink(path[c]);
	direct_free(d);
	return 0;
}
