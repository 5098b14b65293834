/*
 * stats: Welch's t-test and 95 % intervals (stats.h).
 */
#include <math.h>

#include "stats.h"

#define BETACF_ITER	300
#define BETACF_EPS	1e-15
#define TINY		1e-300

/* A value kept away from zero, so that the next division stays finite. */
static double
not_tiny(double v)
{
	return fabs(v) < TINY ? TINY : v;
}

/*
 * One modified-Lentz step with coefficient aa: updates the running
 * terms *c and *d and returns the factor by which the fraction changes.
 */
static double
lentz_step(double aa, double *c, double *d)
{
	*d = 1 / not_tiny(1 + aa * *d);
	*c = not_tiny(1 + aa / *c);
	return *d * *c;
}

/* The continued fraction of the incomplete beta function I_x(a, b). */
static double
betacf(double a, double b, double x)
{
	double qab = a + b, qap = a + 1, qam = a - 1, c = 1, d, h;

	d = 1 / not_tiny(1 - qab * x / qap);
	h = d;
	for (int m = 1; m <= BETACF_ITER; m++) {
		int m2 = 2 * m;
		double aa, del;

		/* The even and the odd term of the fraction, one step each. */
		aa = m * (b - m) * x / ((qam + m2) * (a + m2));
		h *= lentz_step(aa, &c, &d);
		aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
		del = lentz_step(aa, &c, &d);
		h *= del;
		if (fabs(del - 1) < BETACF_EPS)
			break;
	}
	return h;
}

/* The regularized incomplete beta function I_x(a, b). */
static double
betai(double a, double b, double x)
{
	double bt;

	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	bt = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) +
	    b * log(1 - x));
	if (x < (a + 1) / (a + b + 2))
		return bt * betacf(a, b, x) / a;
	return 1 - bt * betacf(b, a, 1 - x) / b;
}

double
stats_t_cdf(double t, double df)
{
	double tail = 0.5 * betai(df / 2, 0.5, df / (df + t * t));

	return t >= 0 ? 1 - tail : tail;
}

double
stats_t975(double df)
{
	double lo = 0, hi = 1000;

	for (int i = 0; i < 200; i++) {
		double mid = (lo + hi) / 2;

		if (stats_t_cdf(mid, df) < 0.975)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

struct stats_sample
stats_of(const double *v, size_t n)
{
	struct stats_sample s = { .n = n };
	double ss = 0;

	for (size_t i = 0; i < n; i++)
		s.mean += v[i];
	if (n > 0)
		s.mean /= (double)n;
	for (size_t i = 0; i < n; i++)
		ss += (v[i] - s.mean) * (v[i] - s.mean);
	if (n > 1)
		s.sd = sqrt(ss / (double)(n - 1));
	return s;
}

double
stats_ci95(const struct stats_sample *s)
{
	if (s->n < 2)
		return 0;
	return stats_t975((double)(s->n - 1)) * s->sd / sqrt((double)s->n);
}

struct stats_welch
stats_welch(const struct stats_sample *a, const struct stats_sample *b)
{
	struct stats_welch w = { .diff = b->mean - a->mean };
	double va, vb, se2, q;

	if (a->n < 2 || b->n < 2)
		return w;
	va = a->sd * a->sd / (double)a->n;
	vb = b->sd * b->sd / (double)b->n;
	se2 = va + vb;
	if (!(se2 > 0))
		return w;
	w.valid = true;
	w.t = w.diff / sqrt(se2);
	w.df = se2 * se2 / (va * va / (double)(a->n - 1) +
	    vb * vb / (double)(b->n - 1));
	w.p = 2 * (1 - stats_t_cdf(fabs(w.t), w.df));
	q = stats_t975(w.df) * sqrt(se2);
	w.ci_lo = w.diff - q;
	w.ci_hi = w.diff + q;
	return w;
}
