/*
 * Tests of the temporal and idle classes (breakdown.h) on events whose
 * truth is known by construction: the precedence of the classes where
 * events of several streams overlap, the overlap of communication with
 * compute, a window that cuts events, host wait by the launch, the launch
 * gap's threshold (strictly under it), sync cut out of a gap by the host's
 * synchronisation calls, the signed gaps of a stream, and Holistic Trace
 * Analysis's compute rule and temporal breakdown, the verdicts at
 * and under their thresholds, and the pieces of a window in time.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "arrays.h"
#include "breakdown.h"

#define EV(s, e, c)	{ (s), (e), (c), false, 0 }
#define LAUNCHED(s, e, l) { (s), (e), OPS_COMPUTE, true, (l) }

/*
 * compute [0,100), memory [50,150), comm [80,120), other [140,200), in
 * [0,250): compute 0-80, comm 80-120 (compute with it 80-100), memory
 * 120-150, other 150-200, idle 200-250.
 */
static const struct bd_event overlapping[] = {
	EV(0, 100, OPS_COMPUTE), EV(50, 150, OPS_MEMORY),
	EV(80, 120, OPS_COMM), EV(140, 200, OPS_OTHER),
};

static void
test_precedence(void **state)
{
	struct bd_temporal t;

	(void)state;
	bd_temporal(overlapping, 4, 0, 250, &t);
	assert_int_equal(t.span, 250);
	assert_int_equal(t.t[OPS_COMPUTE], 80);
	assert_int_equal(t.t[OPS_COMM], 40);
	assert_int_equal(t.t[OPS_MEMORY], 30);
	assert_int_equal(t.t[OPS_OTHER], 50);
	assert_int_equal(t.t[OPS_IDLE], 50);
	assert_int_equal(t.comm_compute, 20);
	/* a window that cuts them: comm 90-120 (with compute 90-100), memory 120-145 */
	bd_temporal(overlapping, 4, 90, 145, &t);
	assert_int_equal(t.span, 55);
	assert_int_equal(t.t[OPS_COMM], 30);
	assert_int_equal(t.t[OPS_MEMORY], 25);
	assert_int_equal(t.t[OPS_COMPUTE] + t.t[OPS_OTHER] + t.t[OPS_IDLE], 0);
	assert_int_equal(t.comm_compute, 10);
	/* an empty window, and one with no event */
	bd_temporal(overlapping, 4, 300, 300, &t);
	assert_int_equal(t.span, 0);
	bd_temporal(overlapping, 4, 300, 400, &t);
	assert_int_equal(t.t[OPS_IDLE], 100);
}

static void
test_merge(void **state)
{
	struct bd_iv iv[] = { { 50, 60 }, { 0, 10 }, { 5, 20 }, { 20, 30 },
	    { 40, 40 } };
	size_t n;

	(void)state;
	n = bd_merge(iv, 5);
	assert_int_equal(n, 2);
	assert_int_equal(iv[0].start, 0);
	assert_int_equal(iv[0].end, 30);
	assert_int_equal(iv[1].start, 50);
	assert_int_equal(bd_covered(iv, n, 25, 55), 10);
	assert_int_equal(bd_covered(iv, n, 30, 50), 0);
	assert_int_equal(bd_covered(iv, n, -10, 100), 40);
}

/*
 * [0,100); host wait 100-150 (the next launch at 120); launch gap
 * 200-210 (10 < 30); 300-400 with sync calls 320-350 and 380-450: sync
 * 50, unexplained 50; 500-530, exactly the threshold: unexplained.
 */
static void
test_idle_segments(void **state)
{
	struct bd_event ev[] = {
		LAUNCHED(400, 500, 10), EV(0, 100, OPS_COMPUTE),
		LAUNCHED(150, 200, 120), LAUNCHED(210, 300, 50),
		EV(530, 600, OPS_MEMORY), EV(20, 40, OPS_OTHER),
	};
	struct bd_iv sync[] = { { 380, 450 }, { 320, 350 } };
	int64_t idle[BD_NIDLE] = { 0 };
	struct bd_temporal t;
	struct bd_seg *seg;
	size_t nseg, nsync = bd_merge(sync, 2);

	(void)state;
	nseg = bd_idle_segments(ev, 6, 30, sync, nsync, &seg);
	bd_idle_window(seg, nseg, 0, 600, 0, 600, idle);
	assert_int_equal(idle[BD_HOST_WAIT], 50);
	assert_int_equal(idle[BD_LAUNCH_GAP], 10);
	assert_int_equal(idle[BD_SYNC], 50);
	assert_int_equal(idle[BD_UNEXPLAINED], 80);
	bd_temporal(ev, 6, 0, 600, &t);
	assert_int_equal(t.t[OPS_IDLE], 190);
	/* a step from before the first event: 20 unexplained, 50 host wait */
	memset(idle, 0, sizeof(idle));
	bd_idle_window(seg, nseg, 0, 600, -20, 160, idle);
	assert_int_equal(idle[BD_UNEXPLAINED], 20);
	assert_int_equal(idle[BD_HOST_WAIT], 50);
	assert_int_equal(idle[BD_LAUNCH_GAP] + idle[BD_SYNC], 0);
	bd_temporal(ev, 6, -20, 160, &t);
	assert_int_equal(t.t[OPS_IDLE], 70);
	/* a larger threshold takes 300-400 and 500-530 as launch gaps */
	free(seg);
	nseg = bd_idle_segments(ev, 6, 101, sync, nsync, &seg);
	memset(idle, 0, sizeof(idle));
	bd_idle_window(seg, nseg, 0, 600, 0, 600, idle);
	assert_int_equal(idle[BD_HOST_WAIT], 50);
	assert_int_equal(idle[BD_LAUNCH_GAP], 140);
	assert_int_equal(idle[BD_SYNC] + idle[BD_UNEXPLAINED], 0);
	free(seg);
}

/*
 * One stream: an overlap of 10 (a launch gap of -10), host wait 50, a
 * gap of 40 inside a sync call (sync), then 600 with none (unexplained).
 */
static void
test_stream(void **state)
{
	const struct bd_event ev[] = {
		EV(0, 100, OPS_COMPUTE), EV(90, 150, OPS_COMPUTE),
		LAUNCHED(200, 260, 160), LAUNCHED(300, 400, 100),
		EV(1000, 1100, OPS_COMPUTE),
	};
	const struct bd_iv sync[] = { { 250, 320 } };
	int64_t idle[BD_NIDLE] = { 0 };

	(void)state;
	bd_stream_idle(ev, 5, 30, sync, 1, idle);
	assert_int_equal(idle[BD_LAUNCH_GAP], -10);
	assert_int_equal(idle[BD_HOST_WAIT], 50);
	assert_int_equal(idle[BD_SYNC], 40);
	assert_int_equal(idle[BD_UNEXPLAINED], 600);
	/* a launch at the previous end is not after it */
	memset(idle, 0, sizeof(idle));
	bd_stream_idle((const struct bd_event[]){ EV(0, 100, OPS_COMPUTE),
	    LAUNCHED(120, 130, 100) }, 2, 30, NULL, 0, idle);
	assert_int_equal(idle[BD_LAUNCH_GAP], 20);
	assert_int_equal(idle[BD_HOST_WAIT], 0);
}

static void
test_names(void **state)
{
	(void)state;
	assert_true(bd_hta_is_compute("volta_sgemm_128x64_nn"));
	assert_true(bd_hta_is_compute("aten::mm"));
	assert_true(bd_hta_is_compute("void at::AsyncKernel"));
	assert_false(bd_hta_is_compute("ncclKernel_AllReduce_RING_LL_Sum_float"));
	assert_false(bd_hta_is_compute("void foo<ncclKernel>"));
	assert_false(bd_hta_is_compute("Memcpy HtoD (Pageable -> Device)"));
	assert_false(bd_hta_is_compute("Memset (Device)"));
	assert_false(bd_hta_is_compute("Event Sync"));
	assert_false(bd_hta_is_compute("cudaLaunchKernel"));
	assert_false(bd_hta_is_compute("hipMemcpyAsync"));
	assert_false(bd_hta_is_compute("my_dma_copy"));
	assert_true(bd_hta_is_compute("DMA_in"));	/* case matters */
	assert_true(bd_is_sync_call("cudaDeviceSynchronize"));
	assert_true(bd_is_sync_call("cudaStreamSynchronize"));
	assert_true(bd_is_sync_call("aten::synchronize"));
	assert_true(bd_is_sync_call("aten::_local_scalar_dense"));
	assert_false(bd_is_sync_call("cudaLaunchKernel"));
	assert_string_equal(bd_idle_name(BD_LAUNCH_GAP), "launch gap");
}

/* span 0-40, busy 0-20 and 30-40: idle 10, compute 0-10 and 30-40 */
static void
test_hta_temporal(void **state)
{
	struct bd_hta_event ev[] = {
		{ 30, 40, true }, { 0, 10, true }, { 5, 20, false },
	};
	struct bd_hta_temporal t;

	(void)state;
	bd_hta_temporal(ev, 3, &t);
	assert_int_equal(t.span, 40);
	assert_int_equal(t.idle, 10);
	assert_int_equal(t.compute, 20);
	assert_int_equal(t.non_compute, 10);
	bd_hta_temporal(ev, 0, &t);
	assert_int_equal(t.span, 0);
}

/* the verdicts, each at and under its threshold */
static void
test_verdict(void **state)
{
	struct bd_temporal t = { .span = 1000 };
	int64_t idle[BD_NIDLE] = { 0 };
	char why[256];

	(void)state;
	t.t[OPS_IDLE] = 500;
	idle[BD_HOST_WAIT] = 200;
	idle[BD_LAUNCH_GAP] = 50;
	idle[BD_UNEXPLAINED] = 250;
	assert_int_equal(bd_verdict(&t, idle, why, sizeof(why)), BD_HOST_BOUND);
	assert_string_equal(why, "idle 50.0 % >= 50 %; host wait + launch "
	    "gap 50.0 % of idle >= 50 %");
	idle[BD_LAUNCH_GAP] = 49;
	idle[BD_UNEXPLAINED] = 251;
	assert_int_equal(bd_verdict(&t, idle, why, sizeof(why)), BD_IDLE);
	t.t[OPS_IDLE] = 499;
	t.t[OPS_COMM] = 501;
	assert_int_equal(bd_verdict(&t, idle, why, sizeof(why)), BD_COMM_BOUND);
	assert_string_equal(why, "communication 50.1 % >= 50 %");
	t.t[OPS_COMM] = 0;
	t.t[OPS_MEMORY] = 501;
	assert_int_equal(bd_verdict(&t, idle, why, sizeof(why)), BD_DATA_BOUND);
	t.t[OPS_MEMORY] = 0;
	t.t[OPS_COMPUTE] = 501;
	assert_int_equal(bd_verdict(&t, idle, why, sizeof(why)),
	    BD_COMPUTE_BOUND);
	t.t[OPS_COMPUTE] = 250;
	t.t[OPS_MEMORY] = 251;
	assert_int_equal(bd_verdict(&t, idle, why, sizeof(why)), BD_MIXED);
	assert_string_equal(why, "none >= 50 %: compute 25.0, data movement "
	    "25.1, communication 0.0, other 0.0, idle 49.9 %");
	t.span = 0;
	assert_int_equal(bd_verdict(&t, idle, why, sizeof(why)), BD_IDLE);
	assert_string_equal(bd_verdict_name(BD_DATA_BOUND),
	    "data-movement-bound");
}

/* The busy % alone as evidence. */
static struct bd_evidence
busy(double pct)
{
	return (struct bd_evidence){ .has_busy = true, .busy_pct = pct };
}

static bool
contradicts_busy(const struct bd_temporal *t, double pct, char *why,
    size_t len)
{
	struct bd_evidence ev = busy(pct);

	return bd_contradicts(t, &ev, why, len);
}

/* the counters against the trace, each rule at and past its threshold */
static void
test_contradicts(void **state)
{
	struct bd_temporal t = { .span = 1000 };
	struct bd_evidence none = { .has_busy = false };
	char why[256] = "";

	(void)state;
	t.t[OPS_COMPUTE] = 500;
	t.t[OPS_IDLE] = 500;
	assert_true(contradicts_busy(&t, 9.9, why, sizeof(why)));
	assert_string_equal(why, "mean busy 9.9 % < 10 % while the trace has "
	    "compute 50.0 % >= 50 % of the span");
	assert_false(contradicts_busy(&t, 10, why, sizeof(why)));
	/* no busy %: no rule of it applies */
	assert_false(bd_contradicts(&t, &none, why, sizeof(why)));
	t.t[OPS_COMPUTE] = 499;
	t.t[OPS_IDLE] = 501;
	assert_false(contradicts_busy(&t, 0, why, sizeof(why)));
	t.t[OPS_COMPUTE] = 100;
	t.t[OPS_IDLE] = 900;
	assert_true(contradicts_busy(&t, 50, why, sizeof(why)));
	assert_string_equal(why, "mean busy 50.0 % >= 50 % while the trace has "
	    "the card idle 90.0 % >= 90 % of the span");
	assert_false(contradicts_busy(&t, 49.9, why, sizeof(why)));
	t.t[OPS_COMPUTE] = 101;
	t.t[OPS_IDLE] = 899;
	assert_false(contradicts_busy(&t, 100, why, sizeof(why)));
	t.span = 0;
	assert_false(contradicts_busy(&t, 0, why, sizeof(why)));
}

/*
 * Data movement the counters do not see: memory and PCIe both quiet, PCIe
 * against the link (a 16 GT/s x16 link, 31.5 GB/s: 1 % is 0.293 GiB/s)
 * or, the link unknown, under 0.1 GiB/s; each at and past its threshold.
 */
static void
test_contradicts_data(void **state)
{
	struct bd_temporal t = { .span = 1000 };
	struct bd_evidence ev = {
		.has_busy = true, .busy_pct = 30, .has_mem = true,
		.mem_gibps = 0.05, .has_pcie = true, .rx_gibps = 0.2,
		.tx_gibps = 0, .has_link = true,
		.link_gbps = 16.0 * 16 * 128 / 130 / 8,
	};
	char why[256] = "";

	(void)state;
	t.t[OPS_MEMORY] = 500;
	t.t[OPS_IDLE] = 500;
	assert_true(bd_contradicts(&t, &ev, why, sizeof(why)));
	assert_string_equal(why, "the trace has data movement 50.0 % >= 50 % "
	    "of the span while memory moves 0.050 GiB/s < 0.1 GiB/s and PCIe "
	    "rx 0.68 %, tx 0.00 % < 1 % of the link");
	t.t[OPS_MEMORY] = 499;
	t.t[OPS_IDLE] = 501;
	assert_false(bd_contradicts(&t, &ev, why, sizeof(why)));
	t.t[OPS_MEMORY] = 900;
	t.t[OPS_IDLE] = 100;
	ev.mem_gibps = 0.1;
	assert_false(bd_contradicts(&t, &ev, why, sizeof(why)));
	ev.mem_gibps = 0.099;
	/* just over and just under 1 % of the link, 0.01 * 31.5e9 / 2^30 */
	ev.tx_gibps = 1.001 * 0.01 * ev.link_gbps * 1e9 / 1073741824.0;
	assert_false(bd_contradicts(&t, &ev, why, sizeof(why)));
	ev.tx_gibps = 0.999 * 0.01 * ev.link_gbps * 1e9 / 1073741824.0;
	assert_true(bd_contradicts(&t, &ev, why, sizeof(why)));
	/* the link unknown: 0.1 GiB/s each way */
	ev.has_link = false;
	ev.rx_gibps = 0.099;
	ev.tx_gibps = 0;
	assert_true(bd_contradicts(&t, &ev, why, sizeof(why)));
	assert_string_equal(why, "the trace has data movement 90.0 % >= 50 % "
	    "of the span while memory moves 0.099 GiB/s < 0.1 GiB/s and PCIe "
	    "rx 0.099, tx 0.000 GiB/s < 0.1 GiB/s (link unknown)");
	ev.rx_gibps = 0.1;
	assert_false(bd_contradicts(&t, &ev, why, sizeof(why)));
	/* without memory or PCIe counters the rule does not apply */
	ev.rx_gibps = 0;
	ev.has_mem = false;
	assert_false(bd_contradicts(&t, &ev, why, sizeof(why)));
	ev.has_mem = true;
	ev.has_pcie = false;
	assert_false(bd_contradicts(&t, &ev, why, sizeof(why)));
}

static int
intcmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/*
 * The pieces of a window tile it, each class's add up to bd_temporal's
 * and bd_idle_window's figures, and neighbours differ in class: on
 * test_idle_segments' events over windows that cut them, and on events
 * drawn at random (a fixed seed) over windows before, across and after
 * them.
 */
static void
check_pieces(const struct bd_event *ev, size_t n, const struct bd_seg *seg,
    size_t nseg, int64_t first, int64_t last, int64_t lo, int64_t hi)
{
	int64_t idle[BD_NIDLE] = { 0 }, got[OPS_NCAT] = { 0 },
	    got_idle[BD_NIDLE] = { 0 };
	struct bd_temporal t;
	struct bd_piece *p;
	size_t np;

	np = bd_pieces(ev, n, seg, nseg, first, last, lo, hi, &p);
	bd_temporal(ev, n, lo, hi, &t);
	bd_idle_window(seg, nseg, first, last, lo, hi, idle);
	if (hi <= lo)
		assert_int_equal(np, 0);
	for (size_t i = 0; i < np; i++) {
		assert_true(p[i].end > p[i].start);
		assert_int_equal(p[i].start, i == 0 ? lo : p[i - 1].end);
		if (i > 0)
			assert_true(p[i].cat != p[i - 1].cat ||
			    (p[i].cat == OPS_IDLE && p[i].idle != p[i - 1].idle));
		got[p[i].cat] += p[i].end - p[i].start;
		if (p[i].cat == OPS_IDLE)
			got_idle[p[i].idle] += p[i].end - p[i].start;
	}
	if (np > 0)
		assert_int_equal(p[np - 1].end, hi);
	for (int c = 0; c < OPS_NCAT; c++)
		assert_int_equal(got[c], t.t[c]);
	for (int c = 0; c < BD_NIDLE; c++)
		assert_int_equal(got_idle[c], idle[c]);
	free(p);
}

static void
test_pieces(void **state)
{
	struct bd_event ev[] = {
		LAUNCHED(400, 500, 10), EV(0, 100, OPS_COMPUTE),
		LAUNCHED(150, 200, 120), LAUNCHED(210, 300, 50),
		EV(530, 600, OPS_MEMORY), EV(20, 40, OPS_OTHER),
	};
	struct bd_iv sync[] = { { 380, 450 }, { 320, 350 } };
	struct bd_event r[40];
	struct bd_piece *p;
	struct bd_seg *seg;
	size_t nseg, np, nsync = bd_merge(sync, 2);
	unsigned seed = 12345;

	(void)state;
	nseg = bd_idle_segments(ev, 6, 30, sync, nsync, &seg);
	/*
	 * before 0 unexplained, 0-100 compute, 100-150 host wait, 150-200
	 * compute, 200-210 launch gap, 210-300 compute, 300-320
	 * unexplained, 320-330 sync
	 */
	np = bd_pieces(ev, 6, seg, nseg, 0, 600, -20, 330, &p);
	assert_int_equal(np, 8);
	assert_int_equal(p[0].cat, OPS_IDLE);
	assert_int_equal(p[0].idle, BD_UNEXPLAINED);
	assert_int_equal(p[0].end, 0);
	assert_int_equal(p[1].cat, OPS_COMPUTE);
	assert_int_equal(p[1].end, 100);
	assert_int_equal(p[2].idle, BD_HOST_WAIT);
	assert_int_equal(p[4].idle, BD_LAUNCH_GAP);
	assert_int_equal(p[6].start, 300);
	assert_int_equal(p[6].idle, BD_UNEXPLAINED);
	assert_int_equal(p[7].start, 320);
	assert_int_equal(p[7].idle, BD_SYNC);
	free(p);
	check_pieces(ev, 6, seg, nseg, 0, 600, 0, 600);
	check_pieces(ev, 6, seg, nseg, 0, 600, 330, 700);
	check_pieces(ev, 6, seg, nseg, 0, 600, 650, 700);
	check_pieces(ev, 6, seg, nseg, 0, 600, 100, 100);
	free(seg);
	for (int round = 0; round < 200; round++) {
		size_t n = 1 + (size_t)(rand_r(&seed) % 40);
		int64_t first, last, lo, hi;

		for (size_t i = 0; i < n; i++) {
			int64_t s = rand_r(&seed) % 1000;

			r[i] = (struct bd_event){ s, s + rand_r(&seed) % 80,
			    (enum ops_category)(rand_r(&seed) % OPS_IDLE),
			    rand_r(&seed) % 2 == 0, s - 50 +
			    rand_r(&seed) % 100 };
		}
		first = r[0].start;
		last = r[0].end;
		for (size_t i = 1; i < n; i++) {
			first = r[i].start < first ? r[i].start : first;
			last = r[i].end > last ? r[i].end : last;
		}
		nseg = bd_idle_segments(r, n, 30, sync, nsync, &seg);
		lo = rand_r(&seed) % 1200 - 100;
		hi = lo + rand_r(&seed) % 600;
		check_pieces(r, n, seg, nseg, first, last, first, last);
		check_pieces(r, n, seg, nseg, first, last, lo, hi);
		free(seg);
	}
}

/* sort_once sorts what is out of order and leaves what is in order */
static void
test_sort(void **state)
{
	int a[] = { 3, 1, 2, 2 }, b[] = { 1, 2, 2, 5 }, c[] = { 7 };

	(void)state;
	sort_once(a, 4, sizeof(int), intcmp);
	assert_int_equal(a[0], 1);
	assert_int_equal(a[1], 2);
	assert_int_equal(a[2], 2);
	assert_int_equal(a[3], 3);
	sort_once(b, 4, sizeof(int), intcmp);
	assert_int_equal(b[3], 5);
	sort_once(c, 1, sizeof(int), intcmp);
	sort_once(c, 0, sizeof(int), intcmp);
	assert_int_equal(c[0], 7);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_precedence),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_idle_segments),
		cmocka_unit_test(test_pieces),
		cmocka_unit_test(test_stream),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_hta_temporal),
		cmocka_unit_test(test_verdict),
		cmocka_unit_test(test_contradicts),
		cmocka_unit_test(test_contradicts_data),
		cmocka_unit_test(test_sort),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
