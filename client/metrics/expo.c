/*
 * expo: the OpenMetrics and Prometheus 0.0.4 text formats (expo.h).
 */
#include "expo.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void
expo_init(struct expo *e, FILE *fp, enum expo_format fmt, bool timestamps)
{
	memset(e, 0, sizeof(*e));
	e->fp = fp;
	e->fmt = fmt;
	e->timestamps = timestamps;
}

const char *
expo_content_type(enum expo_format fmt)
{
	return fmt == EXPO_OPENMETRICS ? EXPO_CT_OPENMETRICS :
	    EXPO_CT_PROMETHEUS;
}

char *
expo_number(double v, char *buf, size_t len)
{
	if (isnan(v))
		snprintf(buf, len, "NaN");
	else if (isinf(v))
		snprintf(buf, len, "%sInf", v > 0 ? "+" : "-");
	else if (v == (double)(int64_t)v && v > -1e15 && v < 1e15)
		snprintf(buf, len, "%.0f", v);	/* whole: all digits, no exponent */
	else {
		/* the fewest digits that read back exactly: 17 always do */
		for (int prec = 1; prec <= 17; prec++) {
			snprintf(buf, len, "%.*g", prec, v);
			if (strtod(buf, NULL) == v)
				break;
		}
	}
	return buf;
}

/*
 * s escaped for a label value (both formats) or a HELP text: backslash and
 * newline always, the double quote in label values and in OpenMetrics
 * HELP.
 */
static void
put_escaped(FILE *fp, const char *s, bool quote)
{
	for (; *s != '\0'; s++) {
		if (*s == '\\')
			fputs("\\\\", fp);
		else if (*s == '\n')
			fputs("\\n", fp);
		else if (*s == '"' && quote)
			fputs("\\\"", fp);
		else
			fputc(*s, fp);
	}
}

void
expo_family(struct expo *e, const char *name, enum expo_type type,
    const char *unit, const char *help)
{
	bool om = e->fmt == EXPO_OPENMETRICS;

	/* 0.0.4 names a counter's family as its samples: with "_total" */
	snprintf(e->name, sizeof(e->name), "%s%s", name,
	    type == EXPO_COUNTER && !om ? "_total" : "");
	e->type = type;
	fprintf(e->fp, "# HELP %s ", e->name);
	put_escaped(e->fp, help, om);
	fprintf(e->fp, "\n# TYPE %s %s\n", e->name,
	    type == EXPO_COUNTER ? "counter" : "gauge");
	if (om && unit[0] != '\0')
		fprintf(e->fp, "# UNIT %s %s\n", e->name, unit);
}

void
expo_sample(struct expo *e, const struct expo_label *labels, size_t n,
    double value, int64_t ts_ns)
{
	char num[40];

	fputs(e->name, e->fp);
	if (e->type == EXPO_COUNTER && e->fmt == EXPO_OPENMETRICS)
		fputs("_total", e->fp);
	if (n > 0) {
		fputc('{', e->fp);
		for (size_t i = 0; i < n; i++) {
			fprintf(e->fp, "%s%s=\"", i > 0 ? "," : "",
			    labels[i].name);
			put_escaped(e->fp, labels[i].value, true);
			fputc('"', e->fp);
		}
		fputc('}', e->fp);
	}
	fprintf(e->fp, " %s", expo_number(value, num, sizeof(num)));
	if (e->timestamps && ts_ns > 0) {
		/* whole milliseconds, the resolution Prometheus stores */
		int64_t ms = ts_ns / 1000000;

		if (e->fmt == EXPO_OPENMETRICS)
			fprintf(e->fp, " %" PRId64 ".%03" PRId64, ms / 1000,
			    ms % 1000);
		else
			fprintf(e->fp, " %" PRId64, ms);
	}
	fputc('\n', e->fp);
}

void
expo_finish(struct expo *e)
{
	if (e->fmt == EXPO_OPENMETRICS)
		fputs("# EOF\n", e->fp);
}
