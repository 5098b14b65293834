/*
 * expo: the text exposition formats Prometheus scrapes, written to a
 * stdio stream.  Pure: no clock, no database.
 *
 * Two formats: OpenMetrics 1.0 (application/openmetrics-text) and the
 * Prometheus text format 0.0.4 (text/plain).  They differ in
 *   - a counter family: OpenMetrics names the family without "_total" and
 *     its sample with it; 0.0.4 names both with "_total";
 *   - "# UNIT" lines, written only for OpenMetrics (0.0.4 has none);
 *   - HELP escaping: OpenMetrics escapes \ " and newline, 0.0.4 only \
 *     and newline;
 *   - timestamps: OpenMetrics in seconds with a fraction, 0.0.4 in
 *     integer milliseconds;
 *   - the closing "# EOF" line, OpenMetrics only.
 * Values are written in the shortest form that reads back as the same
 * double; NaN and infinities as "NaN", "+Inf" and "-Inf".
 *
 * Usage: expo_family, then its samples with expo_sample, for each family;
 * expo_finish at the end.  Every family a caller announces gets HELP and
 * TYPE lines, and UNIT when unit is not "", even when no sample follows.
 */
#ifndef SPYREMON_EXPO_H
#define SPYREMON_EXPO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum expo_format {
	EXPO_OPENMETRICS,
	EXPO_PROMETHEUS,	/* text format 0.0.4 */
};

enum expo_type {
	EXPO_GAUGE,
	EXPO_COUNTER,
};

/* The HTTP Content-Type of each format. */
#define EXPO_CT_OPENMETRICS \
	"application/openmetrics-text; version=1.0.0; charset=utf-8"
#define EXPO_CT_PROMETHEUS	"text/plain; version=0.0.4; charset=utf-8"

struct expo_label {
	const char *name;	/* [a-zA-Z_][a-zA-Z0-9_]* */
	const char *value;	/* any UTF-8; escaped as needed */
};

struct expo {
	FILE *fp;
	enum expo_format fmt;
	bool timestamps;	/* false: stamps given to expo_sample are dropped */
	/* the family being written */
	char name[128];
	enum expo_type type;
};

/* Start writing to fp in fmt; timestamps as expo.timestamps says. */
void expo_init(struct expo *e, FILE *fp, enum expo_format fmt,
    bool timestamps);

/*
 * Start a family: name is the family's name (for a counter, without
 * "_total"); unit "" for none, otherwise the name's last component, as
 * OpenMetrics requires.
 */
void expo_family(struct expo *e, const char *name, enum expo_type type,
    const char *unit, const char *help);

/*
 * One sample of the current family, with n labels (in the order given) and
 * a timestamp in Unix ns (0: none).
 */
void expo_sample(struct expo *e, const struct expo_label *labels, size_t n,
    double value, int64_t ts_ns);

/* End the exposition ("# EOF" for OpenMetrics). */
void expo_finish(struct expo *e);

/* The Content-Type of fmt. */
const char *expo_content_type(enum expo_format fmt);

/*
 * value in the shortest decimal form that reads back as the same double,
 * into buf of at least 32 bytes; returns buf.
 */
char *expo_number(double value, char *buf, size_t len);

#endif
