/*
 * energy: exact integrals and means of piecewise constant values
 * (energy.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "energy.h"

__extension__ typedef unsigned __int128 energy_uint;

/* 10^n for 0 <= n <= 38, the largest power of ten in 128 bits. */
static energy_uint
pow10u(int n)
{
	energy_uint p = 1;

	while (n-- > 0)
		p *= 10;
	return p;
}

void
energy_init(struct energy_acc *a)
{
	memset(a, 0, sizeof(*a));
}

int64_t
energy_overlap(int64_t lo, int64_t hi, int64_t span_lo, int64_t span_hi)
{
	int64_t b = lo > span_lo ? lo : span_lo;
	int64_t e = hi < span_hi ? hi : span_hi;

	return e > b ? e - b : 0;
}

/* Bring a's sum to scale s >= a->scale. */
static bool
rescale(struct energy_acc *a, int s)
{
	energy_int p = (energy_int)pow10u(s - a->scale);

	if (__builtin_mul_overflow(a->sum, p, &a->sum))
		return false;
	a->scale = s;
	return true;
}

/* mant1 / 10^s1 > mant2 / 10^s2, exactly (both scales <= 18). */
static bool
greater(int64_t m1, int s1, int64_t m2, int s2)
{
	int s = s1 > s2 ? s1 : s2;

	return (energy_int)m1 * (energy_int)pow10u(s - s1) >
	    (energy_int)m2 * (energy_int)pow10u(s - s2);
}

int64_t
energy_add(struct energy_acc *a, int64_t mant, int scale, int64_t lo_ns,
    int64_t hi_ns, int64_t span_lo, int64_t span_hi)
{
	energy_int term;
	int64_t ov;

	if (scale < 0 || scale > ENERGY_SCALE_MAX) {
		a->overflow = true;
		return 0;
	}
	if (!(hi_ns > span_lo && lo_ns < span_hi))
		return 0;
	a->nvalues++;
	if (!a->has_max || greater(mant, scale, a->max_mant, a->max_scale)) {
		a->has_max = true;
		a->max_mant = mant;
		a->max_scale = scale;
	}
	if ((ov = energy_overlap(lo_ns, hi_ns, span_lo, span_hi)) == 0 ||
	    a->overflow)
		return ov;
	if (scale > a->scale && !rescale(a, scale)) {
		a->overflow = true;
		return ov;
	}
	/* |mant| < 2^63, 10^18 < 2^60, ov < 2^63: the product can overflow */
	if (__builtin_mul_overflow((energy_int)mant,
	    (energy_int)pow10u(a->scale - scale), &term) ||
	    __builtin_mul_overflow(term, (energy_int)ov, &term) ||
	    __builtin_add_overflow(a->sum, term, &a->sum) ||
	    __builtin_add_overflow(a->covered_ns, ov, &a->covered_ns))
		a->overflow = true;
	return ov;
}

/* The decimal digits of v, most significant first; returns their count. */
static size_t
utoa128(energy_uint v, char *buf)
{
	char rev[40];
	size_t n = 0;

	do {
		rev[n++] = (char)('0' + (int)(v % 10));
		v /= 10;
	} while (v != 0);
	for (size_t i = 0; i < n; i++)
		buf[i] = rev[n - 1 - i];
	return n;
}

bool
energy_decimal(energy_int num, int64_t den, int scale, int digits, bool trim,
    char *buf, size_t len)
{
	/* digits of the rounded result: up to 39 for q and 40 more */
	char d[96];
	energy_uint mag, D, q, r;
	size_t n, intlen, i;
	int extra;
	bool neg;
	char *p = buf;

	if (len > 0)
		buf[0] = '\0';
	if (den <= 0 || scale < 0 || scale > 38 || digits < 0 || digits > 40)
		return false;
	mag = num < 0 ? -(energy_uint)num : (energy_uint)num;
	/*
	 * The result is round(mag * 10^extra / D): with digits >= scale,
	 * extra digits come by long division by den; with fewer, D holds
	 * the powers of ten that are divided away.
	 */
	if (digits >= scale) {
		extra = digits - scale;
		D = (energy_uint)den;
	} else {
		energy_uint p10 = pow10u(scale - digits);

		extra = 0;
		if (__builtin_mul_overflow((energy_uint)den, p10, &D))
			return false;
	}
	q = mag / D;
	r = mag % D;
	n = utoa128(q, d);
	/* with extra > 0, D = den < 2^63: r * 10 cannot overflow */
	for (int k = 0; k < extra; k++) {
		r *= 10;
		d[n++] = (char)('0' + (int)(r / D));
		r %= D;
	}
	if (r >= D - r) {
		/* round half away from zero: carry through the digits */
		for (i = n; i > 0; i--) {
			if (d[i - 1] != '9') {
				d[i - 1]++;
				break;
			}
			d[i - 1] = '0';
		}
		if (i == 0) {
			memmove(d + 1, d, n++);
			d[0] = '1';
		}
	}
	/* at least one integer digit */
	if (n < (size_t)digits + 1) {
		size_t pad = (size_t)digits + 1 - n;

		memmove(d + pad, d, n);
		memset(d, '0', pad);
		n += pad;
	}
	intlen = n - (size_t)digits;
	if (trim) {
		while (n > intlen && d[n - 1] == '0')
			n--;
	}
	for (i = 0; i < n && d[i] == '0'; i++)
		;
	neg = num < 0 && i < n;
	/* sign, digits, point, NUL */
	if (len < (neg ? 1 : 0) + n + (n > intlen ? 1 : 0) + 1)
		return false;
	if (neg)
		*p++ = '-';
	memcpy(p, d, intlen);
	p += intlen;
	if (n > intlen) {
		*p++ = '.';
		memcpy(p, d + intlen, n - intlen);
		p += n - intlen;
	}
	*p = '\0';
	return true;
}

bool
energy_integral(const struct energy_acc *a, char *buf, size_t len)
{
	if (len > 0)
		buf[0] = '\0';
	if (a->nvalues == 0 || a->overflow)
		return false;
	return energy_decimal(a->sum, 1, a->scale + 9, a->scale + 9, true,
	    buf, len);
}

bool
energy_integral_fixed(const struct energy_acc *a, int digits, char *buf,
    size_t len)
{
	if (len > 0)
		buf[0] = '\0';
	if (a->nvalues == 0 || a->overflow)
		return false;
	return energy_decimal(a->sum, 1, a->scale + 9, digits, false, buf, len);
}

bool
energy_mean(const struct energy_acc *a, int digits, bool trim, char *buf,
    size_t len)
{
	if (len > 0)
		buf[0] = '\0';
	if (a->covered_ns == 0 || a->overflow)
		return false;
	return energy_decimal(a->sum, a->covered_ns, a->scale, digits, trim,
	    buf, len);
}

bool
energy_max(const struct energy_acc *a, int digits, char *buf, size_t len)
{
	if (len > 0)
		buf[0] = '\0';
	if (!a->has_max)
		return false;
	return energy_decimal(a->max_mant, 1, a->max_scale,
	    digits < 0 ? a->max_scale : digits, false, buf, len);
}

/*
 * A REAL cell x (the natural value times 10^decimals, stored so when it
 * had more digits than decimals) as mant / 10^scale: the shortest decimal
 * that reads back as x.  False if x is not finite or out of range.
 */
/* Powers of ten that are exact doubles, for the fast path below. */
static const double exact10[] = {
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9,
};

/* 2^52: below it every integer is a double, and doubles are 1 or less apart. */
#define EXACT_INT_MAX	4503599627370496.0

/*
 * The fast path of energy_real_value: x as m / 10^f with the fewest
 * fraction digits f < 10 such that |m| < 2^52 and m / 10^f, correctly
 * rounded (IEEE division of two exact doubles), is x again: the decimal
 * reads back as x, as strtod would read it.  Then the spacing of the
 * doubles near x is at most 2^-52 |x| < 10^-f, so no other decimal of f
 * digits reads back as x, and none of fewer (f is the least): it is the
 * decimal the slow path's shortest %e finds.  Trailing zeros of a whole m
 * are dropped down to the scale 0, as the slow path does.  False if there
 * is no such m.
 */
static bool
real_fast(double x, int decimals, int64_t *mant, int *scale)
{
	for (int f = 0; f < (int)(sizeof(exact10) / sizeof(exact10[0])); f++) {
		double y = x * exact10[f], m = nearbyint(y);

		if (fabs(m) >= EXACT_INT_MAX)
			return false;
		if (m / exact10[f] == x) {
			int64_t im = (int64_t)m;
			int s = decimals + f;

			if (s > ENERGY_SCALE_MAX)
				return false;
			while (f == 0 && s > 0 && im != 0 && im % 10 == 0) {
				im /= 10;
				s--;
			}
			*mant = im;
			*scale = s;
			return true;
		}
	}
	return false;
}

bool
energy_real_value(double x, int decimals, int64_t *mant, int *scale)
{
	char buf[48], *p;
	int prec, frac = 0, s;
	long e;
	int64_t m = 0;
	bool neg;

	if (!isfinite(x))
		return false;
	/* printf and strtod below cost microseconds: most values need neither */
	if (real_fast(x, decimals, mant, scale))
		return true;
	for (prec = 1; prec < 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*e", prec - 1, x);
		if (strtod(buf, NULL) == x)
			break;
	}
	snprintf(buf, sizeof(buf), "%.*e", prec - 1, x);
	/* [-]D[.D...]e[+-]X...: up to 17 digits, frac after the point */
	p = buf;
	if ((neg = *p == '-'))
		p++;
	m = *p++ - '0';
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++, frac++)
			m = m * 10 + (*p - '0');
	if (*p != 'e')
		return false;
	e = strtol(p + 1, NULL, 10);
	if (e > 400 || e < -400)
		return false;
	/* x = m * 10^(e - frac), and the value is x / 10^decimals */
	s = decimals + frac - (int)e;
	for (; s < 0; s++)
		if (__builtin_mul_overflow(m, 10, &m))
			return false;
	for (; s > ENERGY_SCALE_MAX; s--)
		m = (m + 5) / 10;
	*mant = neg ? -m : m;
	*scale = s;
	return true;
}
