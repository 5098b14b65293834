/* format: times, spans, users and values for output (contract in format.h). */
#include "format.h"

#include <err.h>
#include <inttypes.h>
#include <math.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client.h"
#include "metrics.h"
#include "timeparse.h"

#define SECS_PER_DAY	86400

/* Whole numbers of this size or less are exact in a double. */
#define EXACT_INT_MAX	9007199254740992.0	/* 2^53 */

/* Split ns into whole seconds (floored) and the nanoseconds left. */
static void
split_ns(int64_t ns, time_t *secs, int64_t *frac)
{
	*secs = (time_t)(ns / (int64_t)NSEC_PER_SEC);
	*frac = ns % (int64_t)NSEC_PER_SEC;
	if (*frac < 0) {
		*frac += (int64_t)NSEC_PER_SEC;
		(*secs)--;
	}
}

/* The UTC calendar time of ns in *tm; returns its milliseconds (truncated). */
static int
utc_of(int64_t ns, struct tm *tm)
{
	time_t t;
	int64_t frac;

	split_ns(ns, &t, &frac);
	gmtime_r(&t, tm);
	return (int)(frac / (int64_t)NSEC_PER_MSEC);
}

const char *
fmt_time_ms(int64_t ns, char *buf, size_t len)
{
	struct tm tm;
	int n;

	(void)utc_of(ns, &tm);
	/* the date, then the time of day as fmt_clock_ms words it */
	n = snprintf(buf, len, "%04d-%02d-%02dT", tm.tm_year + 1900,
	    tm.tm_mon + 1, tm.tm_mday);
	if (n >= 0 && (size_t)n < len)
		fmt_clock_ms(ns, buf + n, len - (size_t)n);
	return buf;
}

void
fmt_clock_ms(int64_t ns, char *buf, size_t len)
{
	struct tm tm;
	int ms = utc_of(ns, &tm);

	snprintf(buf, len, "%02d:%02d:%02d.%03dZ", tm.tm_hour, tm.tm_min,
	    tm.tm_sec, ms);
}

bool
fmt_same_utc_day(int64_t a, int64_t b)
{
	time_t ta, tb;
	int64_t fa, fb;

	split_ns(a, &ta, &fa);
	split_ns(b, &tb, &fb);
	/* floor division: days before 1970 count too */
	return (ta - (((ta % SECS_PER_DAY) + SECS_PER_DAY) % SECS_PER_DAY)) ==
	    (tb - (((tb % SECS_PER_DAY) + SECS_PER_DAY) % SECS_PER_DAY));
}

void
fmt_span(int64_t ns, char *buf, size_t len)
{
	int64_t ms, s, m, h, d;

	if (ns < 0)
		ns = 0;
	ms = ns / (int64_t)NSEC_PER_MSEC;
	s = ms / 1000;
	m = s / 60;
	h = m / 60;
	d = h / 24;
	if (s < 60)
		snprintf(buf, len, "%" PRId64 ".%03" PRId64 "s", s, ms % 1000);
	else if (m < 60)
		snprintf(buf, len, "%" PRId64 "m%02" PRId64 ".%03" PRId64 "s",
		    m, s % 60, ms % 1000);
	else if (h < 24)
		snprintf(buf, len, "%" PRId64 "h%02" PRId64 "m%02" PRId64 "s",
		    h, m % 60, s % 60);
	else
		snprintf(buf, len, "%" PRId64 "d%02" PRId64 "h%02" PRId64 "m",
		    d, h % 24, m % 60);
}

void
fmt_ago(int64_t ns, char *buf, size_t len)
{
	char a[FMT_BUFLEN];

	if (ns < -FMT_AHEAD_NS) {
		fmt_age(-ns, a, sizeof(a));
		snprintf(buf, len, "%s ahead of the host clock (stepped back?)",
		    a);
	} else {
		fmt_age(ns, a, sizeof(a));
		snprintf(buf, len, "%s ago", a);
	}
}

void
fmt_age(int64_t ns, char *buf, size_t len)
{
	int64_t ds, s, m, h;

	if (ns < 0)
		ns = 0;
	ds = ns / (int64_t)(NSEC_PER_SEC / 10);
	s = ds / 10;
	m = s / 60;
	h = m / 60;
	if (s < 60)
		snprintf(buf, len, "%" PRId64 ".%" PRId64 "s", s, ds % 10);
	else if (m < 60)
		snprintf(buf, len, "%" PRId64 "m%02" PRId64 "s", m, s % 60);
	else if (h < 24)
		snprintf(buf, len, "%" PRId64 "h%02" PRId64 "m", h, m % 60);
	else
		snprintf(buf, len, "%" PRId64 "d%02" PRId64 "h", h / 24, h % 24);
}

void
fmt_size_approx(uint64_t bytes, char *buf, size_t len)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB",
	    "PiB", "EiB" };
	double v = (double)bytes;
	size_t u = 0;

	while (v >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%" PRIu64 " B", bytes);
	else
		snprintf(buf, len, "%.*f %s", v < 10 ? 2 : v < 100 ? 1 : 0, v,
		    units[u]);
}

void
fmt_user(uint32_t uid, char *buf, size_t len)
{
	struct passwd *pw = getpwuid((uid_t)uid);

	if (pw != NULL)
		snprintf(buf, len, "%s", pw->pw_name);
	else
		snprintf(buf, len, "%" PRIu32, uid);
}

/* True if stored is a whole number that an int64_t holds exactly. */
static bool
whole(double stored, int64_t *out)
{
	/* written so that NaN fails too */
	if (!(stored >= -EXACT_INT_MAX && stored <= EXACT_INT_MAX) ||
	    stored != (double)(int64_t)stored)
		return false;
	*out = (int64_t)stored;
	return true;
}

/*
 * mant / 10^decimals with exactly decimals digits, by integer arithmetic
 * two digits at a time (this runs once per value of an export: no
 * printf); the length written, or 0 (buf emptied) if it does not fit.
 */
static size_t
write_scaled(int64_t mant, int decimals, char *buf, size_t len)
{
	static const char pairs[] =
	    "00010203040506070809101112131415161718192021222324"
	    "25262728293031323334353637383940414243444546474849"
	    "50515253545556575859606162636465666768697071727374"
	    "75767778798081828384858687888990919293949596979899";
	uint64_t mag = mant < 0 ? (uint64_t)0 - (uint64_t)mant : (uint64_t)mant;
	char digits[24];	/* 20 digits of a uint64_t, or decimals + 1 <= 19 */
	char *d = digits + sizeof(digits);
	size_t n, i = 0, whole;

	/* least significant first, at least one digit before the point */
	while (mag >= 100) {
		d -= 2;
		memcpy(d, pairs + 2 * (mag % 100), 2);
		mag /= 100;
	}
	if (mag >= 10) {
		d -= 2;
		memcpy(d, pairs + 2 * mag, 2);
	} else
		*--d = (char)('0' + mag);
	while ((n = (size_t)(digits + sizeof(digits) - d)) <= (size_t)decimals)
		*--d = '0';
	if (len < n + 3) {
		if (len > 0)
			buf[0] = '\0';
		return 0;
	}
	if (mant < 0)
		buf[i++] = '-';
	/* a few bytes each: a loop is cheaper than memcpy's call */
	for (whole = n - (size_t)decimals; whole > 0; whole--)
		buf[i++] = *d++;
	if (decimals > 0) {
		buf[i++] = '.';
		for (int k = 0; k < decimals; k++)
			buf[i++] = *d++;
	}
	buf[i] = '\0';
	return i;
}

/* snprintf's length, or what it wrote where buf was too short */
static size_t
written(int n, size_t len)
{
	if (n < 0 || len == 0)
		return 0;
	return (size_t)n < len ? (size_t)n : len - 1;
}

size_t
fmt_value_fixed(double stored, int decimals, char *buf, size_t len)
{
	int64_t mant;

	if (!isfinite(stored) || decimals < 0 || decimals > METRIC_MAX_SCALE)
		return 0;
	if (whole(stored, &mant))
		return write_scaled(mant, decimals, buf, len);
	return written(snprintf(buf, len, "%.*f", decimals,
	    stored / (double)metric_pow10[decimals]), len);
}

size_t
fmt_value_exact(double stored, int decimals, char *buf, size_t len)
{
	double natural;
	int64_t mant;
	int n = 0;

	if (!isfinite(stored) || decimals < 0 || decimals > METRIC_MAX_SCALE)
		return 0;
	if (whole(stored, &mant))
		return write_scaled(mant, decimals, buf, len);
	/* the same division the sample_values view does: stored / 1eN */
	natural = stored / (double)metric_pow10[decimals];
	for (int prec = 1; prec <= 17; prec++) {
		n = snprintf(buf, len, "%.*g", prec, natural);
		if (strtod(buf, NULL) == natural)
			break;
	}
	return written(n, len);
}

char *
fmt_controls(const char *s, bool json)
{
	size_t n = 0;
	char *out, *o;

	for (const char *p = s; *p != '\0'; p++)
		n += (unsigned char)*p < 0x20 || *p == 0x7f ? 6 : 1;
	if ((out = malloc(n + 1)) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	o = out;
	for (const char *p = s; *p != '\0'; p++) {
		unsigned char c = (unsigned char)*p;

		if (c >= 0x20 && c != 0x7f)
			*o++ = (char)c;
		else
			o += sprintf(o, json ? "\\u%04x" : "\\x%02x", c);
	}
	*o = '\0';
	return out;
}

void
fmt_csv_cell(FILE *fp, const char *s)
{
	if (strpbrk(s, ",\"\r\n") == NULL) {
		fputs(s, fp);
		return;
	}
	putc('"', fp);
	for (; *s != '\0'; s++) {
		if (*s == '"')
			putc('"', fp);
		putc(*s, fp);
	}
	putc('"', fp);
}

const char *
fmt_us(int64_t ns, char *buf, size_t len)
{
	uint64_t a = ns < 0 ? -(uint64_t)ns : (uint64_t)ns;
	char *p;

	snprintf(buf, len, "%s%" PRIu64 ".%03" PRIu64, ns < 0 ? "-" : "",
	    a / 1000, a % 1000);
	p = buf + strlen(buf);
	while (p[-1] == '0')
		*--p = '\0';
	if (p[-1] == '.')
		p[-1] = '\0';
	return buf;
}
