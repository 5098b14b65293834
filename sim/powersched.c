/*
 * powersched: a schedule of per-card power that the simulated cards follow
 * instead of their model (--power-schedule), and the log of the power they
 * drew, millisecond by millisecond (--power-log).
 *
 * The schedule is a step function per card: spans [start, end) of epoch
 * ns with a power each, a later line winning where spans overlap, the
 * card's idle power outside them.  Every figure the simulator reports of
 * a scheduled card is the exact mean of that function over the interval
 * the figure describes, so a test knows the truth to the nanosecond.
 */
#include "sim.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

struct span {
	int64_t	 lo_ns, hi_ns;
	double	 watts;
};

struct sim_powersched {
	struct span *spans[SIM_CARDS_MAX];	/* in file order */
	size_t	 nspans[SIM_CARDS_MAX];
	double	 idle_w[SIM_CARDS_MAX];
	bool	 scheduled[SIM_CARDS_MAX];
	int	 ncards;
};

static void
add_span(struct sim_powersched *ps, int card, const struct span *sp)
{
	struct span *n = realloc(ps->spans[card],
	    (ps->nspans[card] + 1) * sizeof(*n));

	if (n == NULL)
		fatal(1, "memory");
	n[ps->nspans[card]++] = *sp;
	ps->spans[card] = n;
	ps->scheduled[card] = true;
}

/* One line: "card start_ns end_ns watts"; false if it is not one. */
static bool
parse_line(const char *line, int ncards, int *card, struct span *sp)
{
	long long lo, hi;
	double w;
	int c, used = 0;

	if (sscanf(line, "%d %lld %lld %lf %n", &c, &lo, &hi, &w, &used) != 4 ||
	    line[used] != '\0')
		return false;
	if (c < 0 || c >= ncards || lo < 0 || hi <= lo || !(w >= 0) ||
	    w > 1000.0)
		return false;
	*card = c;
	sp->lo_ns = lo;
	sp->hi_ns = hi;
	sp->watts = w;
	return true;
}

struct sim_powersched *
sim_powersched_load(const char *path, int ncards)
{
	struct sim_powersched *ps;
	char line[256];
	unsigned lineno = 0;
	FILE *f;

	f = fopen(path, "r");
	if (f == NULL)
		fatal(2, "--power-schedule: %s", path);
	ps = calloc(1, sizeof(*ps));
	if (ps == NULL)
		fatal(1, "memory");
	ps->ncards = ncards;
	while (fgets(line, sizeof(line), f) != NULL) {
		struct span sp;
		int card;

		lineno++;
		line[strcspn(line, "\r\n")] = '\0';
		if (line[0] == '#' || line[strspn(line, " \t")] == '\0')
			continue;
		if (!parse_line(line, ncards, &card, &sp))
			fatalx(2, "--power-schedule: %s line %u: not 'card "
			    "start_ns end_ns watts' with card 0..%d, "
			    "start < end and watts 0..1000", path, lineno,
			    ncards - 1);
		add_span(ps, card, &sp);
	}
	if (ferror(f))
		fatal(2, "--power-schedule: %s", path);
	fclose(f);
	return ps;
}

void
sim_powersched_free(struct sim_powersched *ps)
{
	if (ps == NULL)
		return;
	for (int i = 0; i < SIM_CARDS_MAX; i++)
		free(ps->spans[i]);
	free(ps);
}

bool
sim_powersched_has(const struct sim_powersched *ps, int card)
{
	return ps != NULL && card >= 0 && card < SIM_CARDS_MAX &&
	    ps->scheduled[card];
}

void
sim_powersched_set_idle(struct sim_powersched *ps, int card, double watts)
{
	ps->idle_w[card] = watts;
}

/* The power of card at instant t: the last span holding t, else idle. */
static double
power_at(const struct sim_powersched *ps, int card, int64_t t)
{
	for (size_t i = ps->nspans[card]; i-- > 0;) {
		const struct span *sp = &ps->spans[card][i];

		if (sp->lo_ns <= t && t < sp->hi_ns)
			return sp->watts;
	}
	return ps->idle_w[card];
}

/* The next instant after t where card's power may change; hi if none. */
static int64_t
next_edge(const struct sim_powersched *ps, int card, int64_t t, int64_t hi)
{
	int64_t next = hi;

	for (size_t i = 0; i < ps->nspans[card]; i++) {
		const struct span *sp = &ps->spans[card][i];

		if (sp->lo_ns > t && sp->lo_ns < next)
			next = sp->lo_ns;
		if (sp->hi_ns > t && sp->hi_ns < next)
			next = sp->hi_ns;
	}
	return next;
}

double
sim_powersched_energy(const struct sim_powersched *ps, int card, int64_t lo,
    int64_t hi)
{
	double j = 0;

	for (int64_t t = lo; t < hi;) {
		int64_t next = next_edge(ps, card, t, hi);

		j += power_at(ps, card, t) * (double)(next - t) / 1e9;
		t = next;
	}
	return j;
}

double
sim_powersched_mean(const struct sim_powersched *ps, int card, int64_t lo,
    int64_t hi)
{
	if (hi <= lo)
		return power_at(ps, card, lo);
	return sim_powersched_energy(ps, card, lo, hi) * 1e9 / (double)(hi - lo);
}
