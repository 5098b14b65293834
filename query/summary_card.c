/*
 * summary_card: each card's figures (summary_priv.h): a sample row added
 * to its card (its coverage and gaps, the integrals of power, busy and
 * bandwidth, the extremes, the data-quality marks), and once every row
 * is in, the figures finished from the accumulators (energy, means, p95,
 * standard deviation, idle power and net energy).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "summary.h"
#include "summary_priv.h"

#define GIB			1073741824.0

/* The card of device, added in device order if new; NULL out of memory. */
static struct summary_acc *
card_of(struct summary_ctx *x, int device)
{
	struct summary *s = x->s;
	size_t i;
	void *p;

	for (i = 0; i < s->ncards; i++)
		if (s->cards[i].device == device)
			return &x->a[i];
	if ((p = realloc(s->cards, (s->ncards + 1) * sizeof(*s->cards))) ==
	    NULL)
		return NULL;
	s->cards = p;
	if ((p = realloc(x->a, (s->ncards + 1) * sizeof(*x->a))) == NULL)
		return NULL;
	x->a = p;
	for (i = s->ncards; i > 0 && s->cards[i - 1].device > device; i--) {
		s->cards[i] = s->cards[i - 1];
		x->a[i] = x->a[i - 1];
	}
	memset(&s->cards[i], 0, sizeof(s->cards[i]));
	memset(&x->a[i], 0, sizeof(x->a[i]));
	s->cards[i].device = device;
	energy_init(&x->a[i].pwr);
	energy_init(&x->a[i].busy);
	for (int b = 0; b < SUMMARY_NBW; b++)
		energy_init(&x->a[i].bw[b]);
	if (x->nunrel > 0 && (x->a[i].unrel_seen = calloc(x->nunrel,
	    sizeof(bool))) == NULL)
		return NULL;
	s->ncards++;
	for (size_t j = 0; j < s->ncards; j++)
		x->a[j].c = &s->cards[j];
	return &x->a[i];
}

bool
summary_push(double **v, size_t *n, size_t *cap, double x)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 256;
		double *p = realloc(*v, nc * sizeof(*p));

		if (p == NULL)
			return false;
		*v = p;
		*cap = nc;
	}
	(*v)[(*n)++] = x;
	return true;
}

/* Note an uncovered stretch (lo, hi) if it is longer than two intervals. */
void
summary_gap(struct summary_card *c, int64_t lo, int64_t hi, int64_t ival)
{
	if (ival > 0 && hi - lo > 2 * ival) {
		c->gaps++;
		c->gap_ns += hi - lo;
	}
}

/* Append ", " and text to a list in buf. */
static void
list_add(char *buf, size_t len, const char *text)
{
	size_t n = strlen(buf);

	snprintf(buf + n, len - n, "%s%s", n > 0 ? "," : "", text);
}

/* One sample row of summary_select(x, false). */
int
summary_add_row(struct summary_ctx *x, sqlite3_stmt *s)
{
	int64_t b = x->clip_lo, e = x->hi;
	int64_t ts = sqlite3_column_int64(s, 0);
	int64_t ival;
	struct summary_acc *a;
	struct summary_card *c;
	int64_t mant, busy_mant = 0;
	int scale;
	bool busy = false;

	if ((a = card_of(x, sqlite3_column_int(s, 1))) == NULL)
		return summary_nomem();
	c = a->c;
	/* values that are not finite numbers: left out (NULL), counted */
	c->bad_values += sqlite3_column_int64(s, 4 + K_N + (int)x->nunrel);
	if (!summary_row_interval(s, &ival)) {
		c->bad_values++;	/* no time it covers: the whole row */
		return 0;
	}
	/* row figures: the card's row source only (bestsrc.h) */
	if (sqlite3_column_int(s, 3 + K_N + (int)x->nunrel) != 0) {
		c->samples++;
		if (ival / 1000000 > c->max_interval_ms)
			c->max_interval_ms = ival / 1000000;
		c->covered_ns += energy_overlap(ts - ival, ts, b, e);
		/* the stretch before this sample's interval that none covers */
		summary_gap(c, a->last_ts != 0 ? a->last_ts : x->lo, ts - ival,
		    ival);
		a->last_ts = ts;
		a->last_ival = ival;
		if (x->ncoarse > 0 && summary_is_coarse(x, c->device, ts))
			c->coarse_samples++;
	}
	if (x->k[K_PWR].present && summary_row_value(s, 3 + K_PWR,
	    &x->k[K_PWR], &mant, &scale)) {
		double v = summary_as_double(mant, scale);

		energy_add(&a->pwr, mant, scale, ts - ival, ts, b, e);
		if (!c->has_power || v < c->power_min)
			c->power_min = v;
		if (!c->has_power || v > c->power_max)
			c->power_max = v;
		c->has_power = true;
		if (!summary_push(&a->pvals, &a->npvals, &a->pcap, v))
			return summary_nomem();
	}
	if (x->k[K_BUSY].present && summary_row_value(s, 3 + K_BUSY,
	    &x->k[K_BUSY], &busy_mant, &scale)) {
		energy_add(&a->busy, busy_mant, scale, ts - ival, ts, b, e);
		c->has_busy = true;
		if ((busy = busy_mant > 0))
			c->busy_samples++;
	}
	if (x->k[K_GTEMP].present && summary_row_value(s, 3 + K_GTEMP,
	    &x->k[K_GTEMP], &mant, &scale)) {
		double v = summary_as_double(mant, scale);

		if (!c->has_gtemp || v > c->gtemp_max)
			c->gtemp_max = v;
		c->has_gtemp = true;
	}
	for (int k = K_ACTMEM; k <= K_PEAKMEM; k++) {
		bool *has = k == K_ACTMEM ? &c->has_actmem : &c->has_peakmem;
		double *peak = k == K_ACTMEM ? &c->actmem_peak :
		    &c->peakmem_peak;

		if (x->k[k].present && summary_row_value(s, 3 + k, &x->k[k],
		    &mant, &scale)) {
			double v = summary_as_double(mant, scale);

			if (!*has || v > *peak)
				*peak = v;
			*has = true;
		}
	}
	for (int i = 0; i < SUMMARY_NBW; i++) {
		int k = K_BW0 + i;

		if (!x->k[k].present || !summary_row_value(s, 3 + k,
		    &x->k[k], &mant, &scale))
			continue;
		energy_add(&a->bw[i], mant, scale, ts - ival, ts, b, e);
		if (!c->bw[i].has ||
		    summary_as_double(mant, scale) > c->bw[i].max)
			c->bw[i].max = summary_as_double(mant, scale);
		c->bw[i].has = true;
		if (busy) {
			a->bw_busy_seen[i] = true;
			if (mant != 0)
				a->bw_busy_nonzero[i] = true;
		}
	}
	for (size_t u = 0; u < x->nunrel; u++)
		if (sqlite3_column_int(s, 3 + K_N + (int)u) != 0)
			a->unrel_seen[u] = true;
	return 0;
}

static int
dblcmp(const void *p, const void *q)
{
	double a = *(const double *)p, b = *(const double *)q;

	return (a > b) - (a < b);
}

/* The sample standard deviation of v[0..n), 0 for n < 2 (two passes). */
static double
stddev(const double *v, size_t n)
{
	double m = 0, ss = 0;

	if (n < 2)
		return 0;
	for (size_t i = 0; i < n; i++)
		m += v[i];
	m /= (double)n;
	for (size_t i = 0; i < n; i++)
		ss += (v[i] - m) * (v[i] - m);
	return sqrt(ss / (double)(n - 1));
}

/* The integral of a as a double, from its exact decimal. */
static double
integral(const struct energy_acc *a)
{
	char buf[ENERGY_BUFLEN];

	if (!energy_integral(a, buf, sizeof(buf)))
		return 0;
	return strtod(buf, NULL);
}

static double
mean(const struct energy_acc *a)
{
	char buf[ENERGY_BUFLEN];

	if (!energy_mean(a, 9, true, buf, sizeof(buf)))
		return 0;
	return strtod(buf, NULL);
}

/* The figures that come from the accumulators, once every row is in. */
void
summary_finish(struct summary_ctx *x)
{
	for (size_t i = 0; i < x->s->ncards; i++) {
		struct summary_acc *a = &x->a[i];
		struct summary_card *c = a->c;

		if (a->last_ts != 0)
			summary_gap(c, a->last_ts, x->hi, a->last_ival);
		/* intervals that overlap (rows from elsewhere) cover it once */
		if (c->covered_ns > x->span_ns)
			c->covered_ns = x->span_ns;
		if (c->has_power) {
			size_t r;

			energy_integral(&a->pwr, c->energy_j,
			    sizeof(c->energy_j));
			c->power_mean = mean(&a->pwr);
			qsort(a->pvals, a->npvals, sizeof(double), dblcmp);
			/* nearest rank: the ceil(0.95 n)-th smallest */
			r = (a->npvals * 95 + 99) / 100;
			c->power_p95 = a->pvals[r > 0 ? r - 1 : 0];
			c->power_n = (int64_t)a->npvals;
			c->power_sd = stddev(a->pvals, a->npvals);
		}
		if (c->has_busy)
			c->busy_mean = mean(&a->busy);
		for (int b = 0; b < SUMMARY_NBW; b++) {
			if (!c->bw[b].has)
				continue;
			c->bw[b].mean = mean(&a->bw[b]);
			c->bw[b].bytes = integral(&a->bw[b]) * GIB;
			if (a->bw_busy_seen[b] && !a->bw_busy_nonzero[b])
				list_add(c->zero_while_busy,
				    sizeof(c->zero_while_busy),
				    summary_bw_keys[b]);
		}
		for (size_t u = 0; u < x->nunrel; u++)
			if (a->unrel_seen[u])
				list_add(c->unreliable, sizeof(c->unreliable),
				    x->unrel_key[u]);
		if (c->has_power && a->known != NULL && a->known->has) {
			c->idle_w = a->known->idle_w;
			c->idle_samples = a->known->samples;
			c->has_idle = true;
		} else if (c->has_power && a->known == NULL && a->nidle > 0) {
			qsort(a->idle, a->nidle, sizeof(double), dblcmp);
			c->idle_w = a->nidle % 2 ? a->idle[a->nidle / 2] :
			    (a->idle[a->nidle / 2 - 1] +
			    a->idle[a->nidle / 2]) / 2;
			c->idle_samples = (int64_t)a->nidle;
			c->has_idle = true;
		}
		if (c->has_idle)
			c->net_energy_j = summary_energy(c) - c->idle_w *
			    (double)a->pwr.covered_ns / 1e9;
	}
}

void
summary_ctx_free(struct summary_ctx *x)
{
	for (size_t i = 0; x->a != NULL && i < x->s->ncards; i++) {
		free(x->a[i].pvals);
		free(x->a[i].idle);
		free(x->a[i].unrel_seen);
		free(x->a[i].ispan);
		free(x->a[i].fpwr);
	}
	free(x->names);
	free(x->a);
	for (size_t u = 0; u < x->nunrel; u++)
		free(x->unrel_key[u]);
	free(x->unrel_key);
	free(x->unrel);
	free(x->coarse);
}

double
summary_energy(const struct summary_card *c)
{
	return c->has_power ? strtod(c->energy_j, NULL) : 0;
}

void
summary_free(struct summary *s)
{
	if (s == NULL)
		return;
	free(s->cards);
	s->cards = NULL;
	s->ncards = 0;
}
