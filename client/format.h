/*
 * format: how spyremon writes times, durations, users and metric values.
 *
 * Everything here is independent of the locale: spyremon never calls
 * setlocale(3), so the C locale is in force and "%f" writes '.'; values
 * that are whole numbers are written with integer arithmetic anyway.
 */
#ifndef SPYREMON_FORMAT_H
#define SPYREMON_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Big enough for every string written here. */
#define FMT_BUFLEN	64

/* UTC with milliseconds (truncated): 2026-12-02T10:26:12.123Z */
const char *fmt_time_ms(int64_t ns, char *buf, size_t len);

/* The time of day of fmt_time_ms alone: 10:26:12.123Z */
void fmt_clock_ms(int64_t ns, char *buf, size_t len);

/* True if a and b fall on the same UTC day. */
bool fmt_same_utc_day(int64_t a, int64_t b);

/*
 * A span for a person, to the millisecond below a minute and coarser
 * above: "0.042s", "49.333s", "2m05.120s", "1h02m05s", "3d04h05m".
 * A negative span is written as 0.
 */
void fmt_span(int64_t ns, char *buf, size_t len);

/* ns as µs, exactly ("12.5", "-3", "0.001"), into buf; returns buf. */
const char *fmt_us(int64_t ns, char *buf, size_t len);

/*
 * An age for a person, short: "0.3s" to "59.9s" to a tenth (truncated),
 * then "2m05s", "1h02m", "3d04h".  A negative age is written as 0.
 */
void fmt_age(int64_t ns, char *buf, size_t len);

/*
 * How long ago a sample of age ns (the host clock now less its stamp)
 * was stamped, with fmt_age's words: "0.3s ago"; a stamp ahead of the
 * clock by more than FMT_AHEAD_NS, which a step of the host clock back
 * leaves, "1h00m ahead of the host clock (stepped back?)", never "0s".
 */
#define FMT_AHEAD_NS	2000000000LL	/* 2 s */
void fmt_ago(int64_t ns, char *buf, size_t len);

/* A size for a person, to about three digits: "812 B", "12.3 MiB". */
void fmt_size_approx(uint64_t bytes, char *buf, size_t len);

/* The user's name, or the number if the system has none. */
void fmt_user(uint32_t uid, char *buf, size_t len);

/*
 * A stored metric value (the natural value times 10^decimals, as the
 * samples table keeps it; 0 <= decimals <= 18) in natural units.
 *
 * fmt_value_fixed writes exactly decimals digits after the point, as
 * aiu-smi prints it, rounding a stored value that has a fraction.
 *
 * fmt_value_exact loses nothing: a whole stored value is written with
 * exactly decimals digits; one with a fraction as the shortest decimal
 * that reads back as stored / 10^decimals computed in double precision,
 * which is what the sample_values view gives.
 *
 * Both return the length written (as strlen(buf)), or 0 if stored is
 * not finite (buf untouched) or buf is too short (buf emptied).
 */
size_t fmt_value_fixed(double stored, int decimals, char *buf, size_t len);
size_t fmt_value_exact(double stored, int decimals, char *buf, size_t len);

/*
 * A copy of s (from a database: a tag, metadata) with every control
 * character (C0 and DEL) written out visibly, "\\x1b" as text, or as
 * "\\u001b" for JSON text (valid inside a JSON string, and still shown
 * visibly), so that nothing written to a terminal or a report moves the
 * cursor or rings the bell.  Never NULL (exits on no memory).
 */
char *fmt_controls(const char *s, bool json);

/* s to fp as one CSV cell, quoted when it holds a comma, a quote or a
 * line break (RFC 4180). */
void fmt_csv_cell(FILE *fp, const char *s);

#endif
