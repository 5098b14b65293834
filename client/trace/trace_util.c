/*
 * trace_util: exact decimal times and numbers, step names and the words
 * for results (contracts in trace.h and trace_priv.h).
 */
#include <inttypes.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"
#include "trace_priv.h"

/* --- exact decimals -------------------------------------------------- */

/* The digits of a JSON number: [ib, ie) before the point, [fb, fe) after. */
struct decimal {
	bool	 neg;
	const char *ib, *ie, *fb, *fe;
	int64_t	 exp;		/* saturated at +-EXP_LIMIT */
};

#define EXP_LIMIT	100000

static bool
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool
decimal_split(const char *s, size_t len, struct decimal *d)
{
	const char *p = s, *end = s + len;
	bool eneg = false;

	memset(d, 0, sizeof(*d));
	if (p < end && *p == '-') {
		d->neg = true;
		p++;
	}
	for (d->ib = p; p < end && is_digit(*p); p++)
		continue;
	if ((d->ie = p) == d->ib)
		return false;
	d->fb = d->fe = p;
	if (p < end && *p == '.') {
		for (d->fb = ++p; p < end && is_digit(*p); p++)
			continue;
		if ((d->fe = p) == d->fb)
			return false;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		if (++p < end && (*p == '+' || *p == '-'))
			eneg = *p++ == '-';
		if (p == end || !is_digit(*p))
			return false;
		for (; p < end && is_digit(*p); p++)
			if (d->exp < EXP_LIMIT)
				d->exp = d->exp * 10 + (*p - '0');
		if (eneg)
			d->exp = -d->exp;
	}
	return p == end;
}

/* Digit i of the number's digit string (integer digits, then fraction). */
static int
decimal_digit(const struct decimal *d, int64_t i)
{
	int64_t ni = d->ie - d->ib;

	return i < ni ? d->ib[i] - '0' : d->fb[i - ni] - '0';
}

/*
 * The common case in one pass: at most 19 digits (they fit in 64 bits
 * unsigned), no exponent, and no more fraction digits than scale.  false
 * leaves the rest to the general path, which also rejects what is
 * malformed.
 */
static bool
decimal_fast(const char *s, size_t len, int scale, int64_t *out)
{
	const char *p = s, *end = s + len, *digits, *point = NULL;
	uint64_t acc = 0;
	int nfrac = 0;
	bool neg;

	if ((neg = p < end && *p == '-'))
		p++;
	for (digits = p; p < end && is_digit(*p); p++)
		acc = acc * 10 + (uint64_t)(*p - '0');
	if (p == digits)
		return false;
	if (p < end && *p == '.') {
		for (point = p++; p < end && is_digit(*p); p++)
			acc = acc * 10 + (uint64_t)(*p - '0');
		nfrac = (int)(p - point - 1);
		if (nfrac == 0)
			return false;
	}
	/* 19 digits fit in 64 bits unsigned */
	if (p != end || (p - digits) - (point != NULL) > 19 || scale < nfrac)
		return false;
	for (; nfrac < scale; nfrac++)
		if (__builtin_mul_overflow(acc, 10, &acc))
			return false;
	if (acc > (uint64_t)INT64_MAX)
		return false;
	*out = neg ? -(int64_t)acc : (int64_t)acc;
	return true;
}

int
trace_parse_decimal(const char *s, size_t len, int scale, int64_t *out)
{
	struct decimal d;
	uint64_t acc = 0;
	int64_t n, keep, i;

	if (decimal_fast(s, len, scale, out))
		return 0;
	if (!decimal_split(s, len, &d))
		return -1;
	n = (d.ie - d.ib) + (d.fe - d.fb);
	/* value = digits * 10^(exp - fraction digits + scale) */
	keep = n + d.exp - (d.fe - d.fb) + scale;
	for (i = 0; i < n && i < keep; i++)
		if (__builtin_mul_overflow(acc, 10, &acc) ||
		    __builtin_add_overflow(acc, (uint64_t)decimal_digit(&d, i),
		    &acc))
			return -2;
	for (; i < keep && acc != 0; i++)
		if (__builtin_mul_overflow(acc, 10, &acc))
			return -2;
	/* the first digit dropped rounds the rest: halves away from zero */
	if (keep >= 0 && keep < n && decimal_digit(&d, keep) >= 5)
		acc++;
	if (acc > (uint64_t)INT64_MAX)
		return -2;
	*out = d.neg ? -(int64_t)acc : (int64_t)acc;
	return 0;
}

int
trace_number_value(const char *s, size_t len, int scale, const char *what,
    int64_t *out, char *msg, size_t msglen)
{
	switch (trace_parse_decimal(s, len, scale, out)) {
	case 0:
		return TRACE_OK;
	case -2:
		snprintf(msg, msglen, "%s %.*s is out of range", what,
		    (int)(len > 64 ? 64 : len), s);
		return TRACE_ERR_LIMIT;
	default:
		snprintf(msg, msglen, "%s %.*s is not a number", what,
		    (int)(len > 64 ? 64 : len), s);
		return TRACE_ERR_SYNTAX;
	}
}

bool
trace_integer_value(const char *s, size_t len, int64_t *out)
{
	return trace_parse_decimal(s, len, 0, out) == 0 &&
	    memchr(s, '.', len) == NULL && memchr(s, 'e', len) == NULL &&
	    memchr(s, 'E', len) == NULL;
}

/* --- step names ------------------------------------------------------ */

#define MATCH_SLOTS	512
#define MATCH_NAME	54	/* longer names are matched every time */

struct match_slot {
	uint32_t hash;
	uint8_t	 len;		/* 0: empty slot */
	bool	 match;
	char	 name[MATCH_NAME];
};

struct step_matcher {
	regex_t	 re;
	struct match_slot slot[MATCH_SLOTS];
};

int
step_matcher_new(const char *pattern, struct step_matcher **out,
    struct trace_error *err)
{
	struct step_matcher *m;
	char *anchored;
	int rc;

	if ((m = calloc(1, sizeof(*m))) == NULL ||
	    asprintf(&anchored, "^(%s)$", pattern) == -1) {
		free(m);
		snprintf(err->msg, sizeof(err->msg), "out of memory");
		return TRACE_ERR_NOMEM;
	}
	rc = regcomp(&m->re, anchored, REG_EXTENDED | REG_NOSUB);
	free(anchored);
	if (rc != 0) {
		char why[128];

		regerror(rc, &m->re, why, sizeof(why));
		snprintf(err->msg, sizeof(err->msg), "step pattern %s: %s",
		    pattern, why);
		regfree(&m->re);
		free(m);
		return TRACE_ERR_PATTERN;
	}
	*out = m;
	return TRACE_OK;
}

static uint32_t
name_hash(const char *s, size_t len)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

bool
step_matcher_match(struct step_matcher *m, const char *name, size_t len)
{
	struct match_slot *slot;
	uint32_t h;
	bool match;

	if (len == 0 || len > MATCH_NAME)
		return regexec(&m->re, name, 0, NULL, 0) == 0;
	h = name_hash(name, len);
	slot = &m->slot[h % MATCH_SLOTS];
	if (slot->len == len && slot->hash == h &&
	    memcmp(slot->name, name, len) == 0)
		return slot->match;
	match = regexec(&m->re, name, 0, NULL, 0) == 0;
	slot->hash = h;
	slot->len = (uint8_t)len;
	slot->match = match;
	memcpy(slot->name, name, len);
	return match;
}

void
step_matcher_free(struct step_matcher *m)
{
	if (m == NULL)
		return;
	regfree(&m->re);
	free(m);
}

/* --- results --------------------------------------------------------- */

void
trace_info_free(struct trace_info *info)
{
	for (size_t i = 0; i < info->nsteps; i++)
		free(info->steps[i].name);
	free(info->steps);
	for (size_t i = 0; i < info->ndevices; i++)
		free(info->devices[i].name);
	free(info->devices);
	memset(info, 0, sizeof(*info));
}

const char *
trace_strerror(const struct trace_error *err, char *buf, size_t len)
{
	if (!err->has_offset)
		snprintf(buf, len, "%s", err->msg);
	else if (err->compressed)
		snprintf(buf, len, "%s (at offset %" PRIu64 " of the "
		    "uncompressed stream)", err->msg, err->offset);
	else
		snprintf(buf, len, "%s (at byte %" PRIu64 ")", err->msg,
		    err->offset);
	return buf;
}

const char *
trace_dialect_name(enum trace_dialect d)
{
	switch (d) {
	case TRACE_DIALECT_BASE:
		return "base-relative";
	case TRACE_DIALECT_ABSOLUTE:
		return "absolute";
	case TRACE_DIALECT_RELATIVE:
		return "relative";
	case TRACE_DIALECT_LEGACY:
		return "legacy-array";
	}
	return "unknown";
}

const char *
trace_dialect_text(enum trace_dialect d)
{
	switch (d) {
	case TRACE_DIALECT_BASE:
		return "baseTimeNanoseconds + relative µs";
	case TRACE_DIALECT_ABSOLUTE:
		return "absolute Unix-epoch µs, no base";
	case TRACE_DIALECT_RELATIVE:
		return "trace object without a base whose times are not "
		    "epoch times: no absolute time";
	case TRACE_DIALECT_LEGACY:
		return "top-level array (profiler without Kineto), times "
		    "relative to the profiler's start: no absolute time";
	}
	return "unknown";
}

/* --- the absence of absolute time ------------------------------------- */

void
trace_explain_no_time(const struct trace_info *in, char *buf, size_t len)
{
	const char *why;

	if (!in->has_span) {
		snprintf(buf, len, "the trace has no timed events");
		return;
	}
	if (in->dialect == TRACE_DIALECT_LEGACY)
		why = "the trace is a bare JSON array, written by a profiler "
		    "without Kineto, and its ts count from the profiler's start";
	else
		why = "the trace has no baseTimeNanoseconds and its ts are "
		    "not Unix-epoch times";
	snprintf(buf, len, "%s; give --trace-start TIME (the absolute time "
	    "of ts = 0) or --align-window TAG|ID (its first event at that "
	    "window's begin) to line it up with samples", why);
}
