/*
 * Tests of the cards side by side (bdcards.h) on cards whose straggler,
 * spreads and telling class are known by construction: the step time as
 * the end of a card's last device work (bd_temporal's work_end, cut by
 * the window), the straggler and fastest and their ties, the class in
 * which the straggler spent the most time more (a busy class, an idle
 * cause, none), the counters' spreads only where two cards have them,
 * and the run's counts and mean spreads.  Then the cards of several ranks
 * (bdranks.h): steps matched by name and occurrence whatever each rank's
 * order, the steps some ranks lack left out and named, the straggler a
 * card of another rank than the first, and the labels.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bdcards.h"
#include "bdranks.h"

#define EV(s, e, c)	{ (s), (e), (c), false, 0 }

/* A step [0, 1000) of a card with events ev[0..n), its idle all of cause. */
static void
card_window(const struct bd_event *ev, size_t n, enum bd_idle cause,
    struct bd_window *w)
{
	memset(w, 0, sizeof(*w));
	w->name = "ProfilerStep#0";
	w->lo = 0;
	w->hi = 1000;
	bd_temporal(ev, n, 0, 1000, &w->tm);
	w->idle[cause] = w->tm.t[OPS_IDLE];
}

static void
test_work_end(void **state)
{
	static const struct bd_event cut[] = {
		EV(100, 200, OPS_COMPUTE), EV(900, 1200, OPS_MEMORY),
	};
	static const struct bd_event before[] = {
		EV(-50, 300, OPS_COMM), EV(1100, 1200, OPS_COMPUTE),
	};
	struct bd_window w;

	(void)state;
	card_window(cut, 2, BD_UNEXPLAINED, &w);
	assert_int_equal(w.tm.work_end, 1000);
	assert_int_equal(bd_xstep_time(&w), 1000);
	card_window(before, 2, BD_UNEXPLAINED, &w);
	assert_int_equal(bd_xstep_time(&w), 300);
	card_window(NULL, 0, BD_UNEXPLAINED, &w);
	assert_int_equal(bd_xstep_time(&w), 0);
}

/*
 * Card 0 computes [0, 300); card 1 computes [0, 300) then moves data
 * [300, 700): it ends last, and data movement (400 ns against none) is
 * its difference from card 3, which does nothing and so is the fastest;
 * card 2 communicates [100, 500).  Busy % of cards 0, 2, 3 (10, 80, 0),
 * energy of cards 1 and 2 only (3.5 J, 1.25 J).
 */
static void
test_straggler(void **state)
{
	static const struct bd_event e0[] = { EV(0, 300, OPS_COMPUTE) };
	static const struct bd_event e1[] = {
		EV(0, 300, OPS_COMPUTE), EV(300, 700, OPS_MEMORY),
	};
	static const struct bd_event e2[] = { EV(100, 500, OPS_COMM) };
	struct bd_window w[4];
	struct bd_xcard c[4];
	struct bd_xstep x;

	(void)state;
	card_window(e0, 1, BD_HOST_WAIT, &w[0]);
	card_window(e1, 2, BD_HOST_WAIT, &w[1]);
	card_window(e2, 1, BD_SYNC, &w[2]);
	card_window(NULL, 0, BD_UNEXPLAINED, &w[3]);
	c[0] = (struct bd_xcard){ 0, &w[0], true, false, 10, 0 };
	c[1] = (struct bd_xcard){ 1, &w[1], false, true, 0, 3.5 };
	c[2] = (struct bd_xcard){ 2, &w[2], true, true, 80, 1.25 };
	c[3] = (struct bd_xcard){ 3, &w[3], true, false, 0, 0 };
	bd_xstep(c, 4, &x);
	assert_string_equal(x.name, "ProfilerStep#0");
	assert_int_equal(x.straggler, 1);
	assert_int_equal(x.fastest, 3);
	assert_true(x.time_ns.has);
	assert_int_equal(x.time_ns.n, 4);
	assert_true(x.time_ns.max == 700 && x.time_ns.min == 0);
	assert_int_equal(x.time_ns.max_card, 1);
	assert_int_equal(x.time_ns.min_card, 3);
	assert_true(x.busy_pct.has);
	assert_int_equal(x.busy_pct.n, 3);
	assert_true(x.busy_pct.min == 0 && x.busy_pct.max == 80);
	assert_int_equal(x.busy_pct.min_card, 3);
	assert_int_equal(x.busy_pct.max_card, 2);
	assert_true(x.energy_j.has);
	assert_true(x.energy_j.min == 1.25 && x.energy_j.max == 3.5);
	assert_int_equal(x.energy_j.min_card, 2);
	assert_int_equal(x.energy_j.max_card, 1);
	assert_int_equal(x.diff, 1);
	assert_string_equal(bd_xclass_name(x.diff), "data movement");
	assert_string_equal(bd_xclass_key(x.diff), "data_movement");
	assert_int_equal(x.diff_straggler_ns, 400);
	assert_int_equal(x.diff_fastest_ns, 0);

	/* one card with energy: no energy spread */
	c[2].has_energy = false;
	bd_xstep(c, 4, &x);
	assert_false(x.energy_j.has);
	assert_int_equal(x.energy_j.n, 1);
}

/*
 * Card 5 computes [0, 100) and [600, 700), waiting on its host between:
 * it ends last, and host wait (500 ns against none) is what it has more
 * of; card 6 computes [0, 400) and is idle, unexplained, after.
 */
static void
test_idle_cause(void **state)
{
	static const struct bd_event a[] = {
		EV(0, 100, OPS_COMPUTE), EV(600, 700, OPS_COMPUTE),
	};
	static const struct bd_event b[] = { EV(0, 400, OPS_COMPUTE) };
	struct bd_window w[2];
	struct bd_xcard c[2];
	struct bd_xstep x;

	(void)state;
	card_window(b, 1, BD_UNEXPLAINED, &w[0]);
	card_window(a, 2, BD_UNEXPLAINED, &w[1]);
	w[1].idle[BD_UNEXPLAINED] = 300;	/* after 700 */
	w[1].idle[BD_HOST_WAIT] = 500;
	c[0] = (struct bd_xcard){ .card = 6, .w = &w[0] };
	c[1] = (struct bd_xcard){ .card = 5, .w = &w[1] };
	bd_xstep(c, 2, &x);
	assert_int_equal(x.straggler, 5);
	assert_int_equal(x.fastest, 6);
	assert_true(x.time_ns.max - x.time_ns.min == 300);
	assert_false(x.busy_pct.has);
	assert_false(x.energy_j.has);
	assert_string_equal(bd_xclass_name(x.diff), "idle: host wait");
	assert_int_equal(x.diff_straggler_ns, 500);
	assert_int_equal(x.diff_fastest_ns, 0);
}

/*
 * Ties: the same end, more busy time is the straggler; the same end and
 * busy time, the lower card is, the higher the fastest, and cards alike
 * in every class have no class that makes the difference.
 */
static void
test_ties(void **state)
{
	static const struct bd_event one[] = { EV(0, 600, OPS_COMPUTE) };
	static const struct bd_event two[] = {
		EV(0, 200, OPS_COMPUTE), EV(400, 600, OPS_COMPUTE),
	};
	struct bd_window w[3];
	struct bd_xcard c[3];
	struct bd_xstep x;

	(void)state;
	card_window(two, 2, BD_UNEXPLAINED, &w[0]);
	card_window(one, 1, BD_UNEXPLAINED, &w[1]);
	c[0] = (struct bd_xcard){ .card = 0, .w = &w[0] };
	c[1] = (struct bd_xcard){ .card = 1, .w = &w[1] };
	bd_xstep(c, 2, &x);
	assert_int_equal(x.straggler, 1);
	assert_int_equal(x.fastest, 0);
	assert_true(x.time_ns.has && x.time_ns.max == x.time_ns.min);
	assert_int_equal(x.time_ns.max_card, 1);
	assert_int_equal(x.time_ns.min_card, 0);
	assert_string_equal(bd_xclass_key(x.diff), "compute");
	assert_int_equal(x.diff_straggler_ns, 600);
	assert_int_equal(x.diff_fastest_ns, 400);

	card_window(one, 1, BD_UNEXPLAINED, &w[0]);
	card_window(one, 1, BD_UNEXPLAINED, &w[2]);
	c[0] = (struct bd_xcard){ .card = 4, .w = &w[0] };
	c[1] = (struct bd_xcard){ .card = 2, .w = &w[1] };
	c[2] = (struct bd_xcard){ .card = 7, .w = &w[2] };
	bd_xstep(c, 3, &x);
	assert_int_equal(x.straggler, 2);
	assert_int_equal(x.fastest, 7);
	assert_int_equal(x.diff, -1);
	assert_string_equal(bd_xclass_name(x.diff), "none");
}

/* Three steps: card 1 straggles twice, card 0 once; the mean spreads. */
static void
test_run(void **state)
{
	struct bd_xstep st[3];
	const int64_t cards[] = { 0, 1, 2 };
	struct bd_xrun r;

	(void)state;
	memset(st, 0, sizeof(st));
	st[0].straggler = 1;
	st[0].time_ns = (struct bd_xrange){ true, 3, 100, 400, 0, 1 };
	st[0].busy_pct = (struct bd_xrange){ true, 2, 20, 60, 2, 1 };
	st[1].straggler = 0;
	st[1].time_ns = (struct bd_xrange){ true, 3, 200, 500, 1, 0 };
	st[1].energy_j = (struct bd_xrange){ true, 3, 1, 1.5, 2, 0 };
	st[2].straggler = 1;
	st[2].time_ns = (struct bd_xrange){ true, 3, 0, 600, 2, 1 };
	st[2].busy_pct = (struct bd_xrange){ true, 3, 10, 20, 2, 1 };
	st[2].energy_j = (struct bd_xrange){ false, 1, 2, 2, 1, 1 };
	bd_xrun(st, 3, cards, 3, &r);
	assert_int_equal(r.nsteps, 3);
	assert_int_equal(r.ncards, 3);
	assert_int_equal(r.cards[2], 2);
	assert_int_equal(r.straggler[0], 1);
	assert_int_equal(r.straggler[1], 2);
	assert_int_equal(r.straggler[2], 0);
	assert_int_equal(r.ntime, 3);
	assert_true(r.time_ns == 400);		/* (300 + 300 + 600) / 3 */
	assert_int_equal(r.nbusy, 2);
	assert_true(r.busy_pct == 25);		/* (40 + 10) / 2 */
	assert_int_equal(r.nenergy, 1);
	assert_true(r.energy_j == 0.5);
	bd_xrun_free(&r);

	bd_xrun(st, 0, cards, 3, &r);
	assert_int_equal(r.ntime, 0);
	assert_int_equal(r.straggler[0], 0);
	bd_xrun_free(&r);
}

/* A rank of one run with the cards card[0..nc), the steps name[0..ns). */
struct fake_rank {
	struct bd_run run;
	struct bd_card cards[2];
	struct bd_step steps[4];
	struct bd_window w[2][4];
};

static void
fake_rank(struct fake_rank *f, const int64_t *card, size_t nc,
    const char *const *name, size_t ns)
{
	memset(f, 0, sizeof(*f));
	for (size_t s = 0; s < ns; s++)
		f->steps[s] = (struct bd_step){ name[s], 0, 1000 };
	for (size_t c = 0; c < nc; c++) {
		f->cards[c].card = card[c];
		f->cards[c].steps = f->w[c];
		for (size_t s = 0; s < ns; s++) {
			card_window(NULL, 0, BD_UNEXPLAINED, &f->w[c][s]);
			f->w[c][s].name = name[s];
		}
	}
	f->run.steps = f->steps;
	f->run.nsteps = ns;
	f->run.res.cards = f->cards;
	f->run.res.ncards = nc;
}

/* Card c of f works [0, end) in step s. */
static void
fake_work(struct fake_rank *f, size_t c, size_t s, int64_t end)
{
	const struct bd_event ev[] = { EV(0, end, OPS_COMPUTE) };
	const char *name = f->w[c][s].name;

	card_window(ev, 1, BD_UNEXPLAINED, &f->w[c][s]);
	f->w[c][s].name = name;
}

/*
 * Rank 0 (cards 0, 1; steps S#0 S#1 S#2) and rank 1 (card 0; steps S#1
 * S#0 S#9): S#0 and S#1 are compared, in rank 0's order; S#2 and S#9 are
 * left out.  In S#0 rank 0's card 1 ends last (500 ns); in S#1 rank 1's
 * card 0 (900 ns against 300 and 400), and rank 0's card 0 is the fastest.
 */
static void
test_ranks(void **state)
{
	static const int64_t c01[] = { 0, 1 }, c0[] = { 0 };
	static const char *const n0[] = { "S#0", "S#1", "S#2" };
	static const char *const n1[] = { "S#1", "S#0", "S#9" };
	struct fake_rank f[2];
	struct bd_rank r[2];
	struct bd_ranks x;

	(void)state;
	fake_rank(&f[0], c01, 2, n0, 3);
	fake_rank(&f[1], c0, 1, n1, 3);
	fake_work(&f[0], 0, 0, 100);
	fake_work(&f[0], 1, 0, 500);
	fake_work(&f[1], 0, 1, 200);		/* rank 1's S#0 */
	fake_work(&f[0], 0, 1, 300);
	fake_work(&f[0], 1, 1, 400);
	fake_work(&f[1], 0, 0, 900);		/* rank 1's S#1 */
	r[0] = (struct bd_rank){ &f[0].run, NULL, true, 0 };
	r[1] = (struct bd_rank){ &f[1].run, NULL, true, 1 };
	assert_true(bd_ranks_across(r, 2, &x));
	assert_int_equal(x.ncards, 3);
	assert_string_equal(x.cards[0].label, "r0c0");
	assert_string_equal(x.cards[1].label, "r0c1");
	assert_string_equal(x.cards[2].label, "r1c0");
	assert_int_equal(x.cards[2].rank, 1);
	assert_int_equal(x.across.nsteps, 2);
	assert_string_equal(x.across.steps[0].name, "S#0");
	assert_int_equal(x.across.steps[0].straggler, 1);
	assert_int_equal(x.across.steps[0].fastest, 0);
	assert_true(x.across.steps[0].time_ns.max == 500);
	assert_true(x.across.steps[0].time_ns.min == 100);
	assert_string_equal(x.across.steps[1].name, "S#1");
	assert_int_equal(x.across.steps[1].straggler, 2);
	assert_string_equal(bd_ranks_card(&x, 2)->label, "r1c0");
	assert_int_equal(x.across.steps[1].fastest, 0);
	assert_true(x.across.steps[1].time_ns.max == 900);
	assert_true(x.across.steps[1].time_ns.min == 300);
	assert_int_equal(x.across.run.straggler[1], 1);
	assert_int_equal(x.across.run.straggler[2], 1);
	assert_true(x.across.run.time_ns == 500);	/* (400 + 600) / 2 */
	assert_int_equal(x.npartial, 2);
	assert_string_equal(x.partial[0].name, "S#2");
	assert_true(x.partial[0].in[0] && !x.partial[0].in[1]);
	assert_int_equal(x.partial[0].nin, 1);
	assert_string_equal(x.partial[1].name, "S#9");
	assert_true(!x.partial[1].in[0] && x.partial[1].in[1]);
	assert_null(bd_ranks_card(&x, 3));
	bd_ranks_free(&x);
}

/*
 * A name twice in one rank, once in the other: the first of each is
 * matched, the second left out.  The ranks' labels: by their place when
 * two of one host share a rank, or one has none; by rank, host first,
 * when the same rank is of two hosts.  One card in all: nothing.
 */
static void
test_ranks_names(void **state)
{
	static const int64_t c0[] = { 0 }, c2[] = { 2 };
	static const char *const twice[] = { "S#0", "S#0" };
	static const char *const once[] = { "S#0" };
	struct fake_rank f[2];
	struct bd_rank r[2];
	struct bd_ranks x;

	(void)state;
	fake_rank(&f[0], c0, 1, twice, 2);
	fake_rank(&f[1], c2, 1, once, 1);
	fake_work(&f[0], 0, 1, 700);
	r[0] = (struct bd_rank){ &f[0].run, NULL, true, 0 };
	r[1] = (struct bd_rank){ &f[1].run, NULL, true, 0 };
	assert_true(bd_ranks_across(r, 2, &x));
	assert_string_equal(x.cards[0].label, "t0c0");
	assert_string_equal(x.cards[1].label, "t1c2");
	assert_int_equal(x.across.nsteps, 1);
	/* the first S#0 of rank 0, where neither card works: a tie */
	assert_true(x.across.steps[0].time_ns.max == 0);
	assert_int_equal(x.across.steps[0].straggler, 0);
	assert_int_equal(x.across.steps[0].fastest, 1);
	assert_int_equal(x.npartial, 1);
	assert_string_equal(x.partial[0].name, "S#0");
	assert_true(x.partial[0].in[0] && !x.partial[0].in[1]);
	bd_ranks_free(&x);

	r[0].host = "hostA";
	r[1].host = "hostB";
	assert_true(bd_ranks_across(r, 2, &x));
	assert_string_equal(x.cards[0].label, "hostA:r0c0");
	assert_string_equal(x.cards[1].label, "hostB:r0c2");
	assert_string_equal(x.rank_label[1], "hostB:r0");
	bd_ranks_free(&x);

	r[0].host = r[1].host = NULL;
	r[1].has_rank = false;
	assert_true(bd_ranks_across(r, 2, &x));
	assert_string_equal(x.cards[1].label, "t1c2");
	bd_ranks_free(&x);

	assert_false(bd_ranks_across(r, 1, &x));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_work_end),
		cmocka_unit_test(test_straggler),
		cmocka_unit_test(test_idle_cause),
		cmocka_unit_test(test_ties),
		cmocka_unit_test(test_run),
		cmocka_unit_test(test_ranks),
		cmocka_unit_test(test_ranks_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
