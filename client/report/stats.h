/*
 * stats: Welch's t-test for two samples of unequal variance, and the 95 %
 * confidence interval of a mean, for the verdicts of "spyremon compare".
 *
 * The t distribution's CDF comes from the regularized incomplete beta
 * function (continued fraction, as in Numerical Recipes' betacf), exact to
 * about 1e-12; its 0.975 quantile by bisection on the CDF.
 */
#ifndef SPYREMON_STATS_H
#define SPYREMON_STATS_H

#include <stdbool.h>
#include <stddef.h>

/* A sample's mean, standard deviation (n - 1) and size. */
struct stats_sample {
	double	 mean, sd;
	size_t	 n;
};

struct stats_welch {
	bool	 valid;		/* both n >= 2 and some variance */
	double	 t, df, p;	/* two-sided p */
	double	 diff;		/* new mean - base mean */
	double	 ci_lo, ci_hi;	/* 95 % interval of diff */
};

/* The mean and standard deviation of v[0..n). */
struct stats_sample stats_of(const double *v, size_t n);

/* Half the width of the 95 % interval of s's mean (0 for n < 2). */
double stats_ci95(const struct stats_sample *s);

/* Welch's test of new against base. */
struct stats_welch stats_welch(const struct stats_sample *base,
    const struct stats_sample *new);

/* P(T <= t) for Student's t with df degrees of freedom (df > 0). */
double stats_t_cdf(double t, double df);

/* The 0.975 quantile of Student's t with df degrees of freedom. */
double stats_t975(double df);

#endif
