/* timeparse: durations, sizes and times, parsed exactly with integers. */
#include "timeparse.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

struct unit {
	const char *name;
	uint64_t mult;
};

static const struct unit duration_units[] = {
	{ "ns", 1 },
	{ "us", NSEC_PER_USEC },
	{ "ms", NSEC_PER_MSEC },
	{ "s", NSEC_PER_SEC },
	{ "m", 60 * NSEC_PER_SEC },
	{ "h", 3600 * NSEC_PER_SEC },
	{ "d", 86400 * NSEC_PER_SEC },
	{ "w", 7 * 86400 * NSEC_PER_SEC },
	{ NULL, 0 },
};

static const struct unit size_units[] = {
	{ "", 1 }, { "B", 1 },
	{ "KiB", 1ULL << 10 }, { "MiB", 1ULL << 20 },
	{ "GiB", 1ULL << 30 }, { "TiB", 1ULL << 40 },
	{ "K", 1ULL << 10 }, { "M", 1ULL << 20 },
	{ "G", 1ULL << 30 }, { "T", 1ULL << 40 },
	{ "kB", 1000ULL }, { "MB", 1000000ULL },
	{ "GB", 1000000000ULL }, { "TB", 1000000000000ULL },
	{ NULL, 0 },
};

/*
 * Read "digits[.digits]" at *sp and multiply exactly by mult (an integer
 * number of base units per unit), rejecting overflow and fractions that do
 * not come out whole in base units.  Advances *sp past the number.
 */
static int
scan_scaled(const char **sp, uint64_t mult, uint64_t *out)
{
	const char *s = *sp;
	uint64_t whole = 0, frac = 0, frac_div = 1;
	bool digits = false;

	while (isdigit((unsigned char)*s)) {
		uint64_t digit = (uint64_t)(*s++ - '0');

		if (whole > (UINT64_MAX - digit) / 10)
			return -1;
		whole = whole * 10 + digit;
		digits = true;
	}
	if (*s == '.') {
		s++;
		while (isdigit((unsigned char)*s)) {
			if (frac_div > UINT64_MAX / 10)
				return -1;
			frac = frac * 10 + (uint64_t)(*s++ - '0');
			frac_div *= 10;
			digits = true;
		}
	}
	if (!digits)
		return -1;
	if (mult != 0 && whole > UINT64_MAX / mult)
		return -1;
	/* frac * mult must divide exactly by frac_div */
	if (frac != 0) {
		__extension__ unsigned __int128 f = (unsigned __int128)frac * mult;
		if (f % frac_div != 0)
			return -1;
		f /= frac_div;
		if ((uint64_t)f > UINT64_MAX - whole * mult)
			return -1;
		*out = whole * mult + (uint64_t)f;
	} else
		*out = whole * mult;
	*sp = s;
	return 0;
}

/* Length of the alphabetic unit at s. */
static size_t
unit_len(const char *s)
{
	size_t n = 0;

	while (isalpha((unsigned char)s[n]))
		n++;
	return n;
}

static const struct unit *
find_unit(const struct unit *units, const char *s, size_t n)
{
	for (; units->name != NULL; units++)
		if (strlen(units->name) == n && strncmp(units->name, s, n) == 0)
			return units;
	return NULL;
}

int
parse_duration(const char *s, uint64_t *out_ns)
{
	uint64_t total = 0;
	bool any = false;

	if (s == NULL)
		return -1;
	while (*s != '\0') {
		const char *num = s, *u;
		const struct unit *unit;
		uint64_t v;
		size_t n;

		while (isdigit((unsigned char)*s) || *s == '.')
			s++;
		u = s;
		n = unit_len(u);
		if (n == 0 || (unit = find_unit(duration_units, u, n)) == NULL)
			return -1;
		s = num;
		if (scan_scaled(&s, unit->mult, &v) == -1 || s != u)
			return -1;
		if (v > UINT64_MAX - total)
			return -1;
		total += v;
		s = u + n;
		any = true;
	}
	if (!any)
		return -1;
	*out_ns = total;
	return 0;
}

int
parse_size(const char *s, uint64_t *out_bytes)
{
	const struct unit *unit;
	const char *u;
	uint64_t v;

	if (s == NULL)
		return -1;
	u = s;
	while (isdigit((unsigned char)*u) || *u == '.')
		u++;
	if (u == s || unit_len(u) != strlen(u))
		return -1;
	if ((unit = find_unit(size_units, u, strlen(u))) == NULL)
		return -1;
	if (scan_scaled(&s, unit->mult, &v) == -1 || s != u)
		return -1;
	*out_bytes = v;
	return 0;
}

/* Read exactly n digits as an int. */
static int
read_digits(const char **sp, int n, int *out)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)(*sp)[i]))
			return -1;
		v = v * 10 + ((*sp)[i] - '0');
	}
	*sp += n;
	*out = v;
	return 0;
}

static bool
is_leap_year(int y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* Reject dates such as Feb 30 that mktime and days_from_civil would roll over. */
static bool
valid_date(int y, int m, int d)
{
	static const int mdays[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };

	if (m < 1 || m > 12 || d < 1)
		return false;
	return d <= mdays[m - 1] + (m == 2 && is_leap_year(y));
}

/* Days since 1970-01-01 for a proleptic Gregorian date (Howard Hinnant's algorithm). */
static int64_t
days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	const int64_t era = (y >= 0 ? y : y - 399) / 400;
	const unsigned yoe = (unsigned)(y - era * 400);
	const unsigned doy = (153 * (m + (m > 2 ? (unsigned)-3 : 9)) + 2) / 5 + d - 1;
	const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

/*
 * sec seconds and frac (0 <= frac < 1 s) ns past the epoch, in ns, unless
 * that falls outside int64 (before 1677-09-21 or after 2262-04-11).
 */
static int
seconds_to_ns(int64_t sec, int64_t frac, int64_t *out_ns)
{
	const int64_t ns = (int64_t)NSEC_PER_SEC;
	const int64_t max_sec = INT64_MAX / ns, min_sec = INT64_MIN / ns - 1;

	if (sec > max_sec || (sec == max_sec && frac > INT64_MAX % ns))
		return -1;
	if (sec < min_sec || (sec == min_sec && frac - ns < INT64_MIN % ns))
		return -1;
	/* below zero, borrow a second so the product cannot overflow */
	if (sec < 0)
		*out_ns = (sec + 1) * ns + (frac - ns);
	else
		*out_ns = sec * ns + frac;
	return 0;
}

int
parse_time(const char *s, int64_t *out_ns)
{
	int Y, M, D, h = 0, mi = 0, sec = 0;
	int64_t frac = 0, frac_mul = 100000000, secs;
	bool have_zone = false;
	int64_t zone_off = 0;
	const char *p = s;

	if (s == NULL || *s == '\0')
		return -1;
	if (strspn(s, "0123456789") == strlen(s)) {
		uint64_t v = 0;
		if (strlen(s) > 19)
			return -1;
		for (; *p; p++)
			v = v * 10 + (uint64_t)(*p - '0');
		if (v > INT64_MAX)
			return -1;
		*out_ns = (int64_t)v;
		return 0;
	}
	if (read_digits(&p, 4, &Y) || *p++ != '-' || read_digits(&p, 2, &M) ||
	    *p++ != '-' || read_digits(&p, 2, &D))
		return -1;
	if (*p == 'T' || *p == ' ') {
		p++;
		if (read_digits(&p, 2, &h) || *p++ != ':' || read_digits(&p, 2, &mi))
			return -1;
		if (*p == ':') {
			p++;
			if (read_digits(&p, 2, &sec))
				return -1;
			if (*p == '.' || *p == ',') {
				p++;
				if (!isdigit((unsigned char)*p))
					return -1;
				while (isdigit((unsigned char)*p)) {
					if (frac_mul == 0)
						return -1;
					frac += (*p++ - '0') * frac_mul;
					frac_mul /= 10;
				}
			}
		}
	}
	if (*p == 'Z') {
		have_zone = true;
		p++;
	} else if (*p == '+' || *p == '-') {
		int zh, zm, sign = *p++ == '-' ? -1 : 1;
		if (read_digits(&p, 2, &zh))
			return -1;
		if (*p == ':')
			p++;
		if (read_digits(&p, 2, &zm) || zh > 23 || zm > 59)
			return -1;
		have_zone = true;
		zone_off = sign * (zh * 3600 + zm * 60);
	}
	if (*p != '\0' || !valid_date(Y, M, D) || h > 23 || mi > 59 || sec > 60)
		return -1;
	if (have_zone) {
		int64_t days = days_from_civil(Y, (unsigned)M, (unsigned)D);
		secs = days * 86400 + h * 3600 + mi * 60 + sec - zone_off;
	} else {
		/* mktime sets tm_wday only on success: -1 is also a real time */
		struct tm tm = { .tm_year = Y - 1900, .tm_mon = M - 1,
		    .tm_mday = D, .tm_hour = h, .tm_min = mi, .tm_sec = sec,
		    .tm_isdst = -1, .tm_wday = -1 };
		time_t t = mktime(&tm);
		if (t == (time_t)-1 && tm.tm_wday == -1)
			return -1;
		secs = (int64_t)t;
	}
	return seconds_to_ns(secs, frac, out_ns);
}

static void
format_exact(uint64_t v, const struct unit *units, size_t nunits,
    char *buf, size_t len)
{
	/* units are in increasing order; use the largest that divides v */
	for (size_t i = nunits; i-- > 0;) {
		if (units[i].mult != 0 && v % units[i].mult == 0 &&
		    (v != 0 || i == 0)) {
			snprintf(buf, len, "%llu%s",
			    (unsigned long long)(v / units[i].mult), units[i].name);
			return;
		}
	}
	snprintf(buf, len, "%llu", (unsigned long long)v);
}

void
format_duration(uint64_t ns, char *buf, size_t len)
{
	/* skip weeks: "14d" reads better than "2w" in a config */
	format_exact(ns, duration_units, 7, buf, len);
	if (ns == 0)
		snprintf(buf, len, "0s");
}

void
format_size(uint64_t bytes, char *buf, size_t len)
{
	static const struct unit iec[] = {
		{ "B", 1 }, { "KiB", 1ULL << 10 }, { "MiB", 1ULL << 20 },
		{ "GiB", 1ULL << 30 }, { "TiB", 1ULL << 40 },
	};
	format_exact(bytes, iec, 5, buf, len);
}

void
format_time_utc(int64_t ns, char *buf, size_t len)
{
	time_t t = (time_t)(ns / (int64_t)NSEC_PER_SEC);
	int64_t frac = ns % (int64_t)NSEC_PER_SEC;
	struct tm tm;

	if (frac < 0) {
		frac += (int64_t)NSEC_PER_SEC;
		t--;
	}
	gmtime_r(&t, &tm);
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%09lldZ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec, (long long)frac);
}

int64_t
now_realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * (int64_t)NSEC_PER_SEC + ts.tv_nsec;
}

uint64_t
now_monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}
