/*
 * devcounter: calls' energy from the card's charge counter, fitted to the
 * samples (devcounter.h).
 */
#include "devcounter.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int
cmp_reading(const void *a, const void *b)
{
	const struct devcounter_reading *x = a, *y = b;

	if (x->cycles != y->cycles)
		return (x->cycles > y->cycles) - (x->cycles < y->cycles);
	return (x->call > y->call) - (x->call < y->call);
}

double
devcounter_sampled_j(const struct attrib_sample *s, size_t ns, int64_t lo,
    int64_t hi, int64_t *covered)
{
	double j = 0;

	*covered = 0;
	for (size_t k = 0; k < ns && s[k].lo_ns < hi; k++) {
		int64_t a = s[k].lo_ns > lo ? s[k].lo_ns : lo;
		int64_t b = s[k].hi_ns < hi ? s[k].hi_ns : hi;

		if (b <= a)
			continue;
		j += s[k].power_w * (double)(b - a) / 1e9;
		*covered += b - a;
	}
	return j;
}

void
devcounter_fit(struct devcounter_reading *r, size_t n,
    const struct attrib_sample *s, size_t ns, struct devcounter_fit *out)
{
	double sxy = 0, sxx = 0, syy = 0, sres = 0;

	memset(out, 0, sizeof(*out));
	if (n > 1)
		qsort(r, n, sizeof(*r), cmp_reading);
	for (size_t i = 0; i < n; i++) {
		r[i].used = 0;
		r[i].counts = 0;
		r[i].next_ns = r[i].t_ns;
		if (i + 1 == n)
			continue;
		r[i].counts = (uint32_t)(r[i + 1].counter - r[i].counter);
		r[i].next_ns = r[i + 1].t_ns;
		if (r[i].counts >= DEVCOUNTER_BACKWARDS) {
			out->backwards++;
			continue;
		}
		/* read at the same cycle: one reading, no interval */
		if (r[i + 1].cycles == r[i].cycles)
			continue;
		if (r[i].next_ns <= r[i].t_ns) {
			out->untimed++;
			continue;
		}
		{
			int64_t covered;
			double y = devcounter_sampled_j(s, ns, r[i].t_ns,
			    r[i].next_ns, &covered);
			double x = (double)r[i].counts;

			if (covered < r[i].next_ns - r[i].t_ns) {
				out->unsampled++;
				continue;
			}
			r[i].used = 1;
			out->intervals++;
			out->counts += x;
			out->sampled_j += y;
			sxy += x * y;
			sxx += x * x;
			syy += y * y;
		}
	}
	if (sxx > 0)
		out->j_per_count = sxy / sxx;
	for (size_t i = 0; i < n; i++) {
		int64_t covered;
		double y, e;

		if (!r[i].used)
			continue;
		y = devcounter_sampled_j(s, ns, r[i].t_ns, r[i].next_ns,
		    &covered);
		e = y - out->j_per_count * (double)r[i].counts;
		sres += e * e;
	}
	if (out->intervals > 0) {
		out->residual_j = sqrt(sres / (double)out->intervals);
		if (syy > 0)
			out->residual_rel = out->residual_j /
			    sqrt(syy / (double)out->intervals);
	}
}
