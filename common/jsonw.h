/*
 * jsonw: writing JSON with yajl, as spyremond's replies and spyremon's
 * output both do.  Each put_ function writes one member of the object
 * being generated: its key, then its value.  Strings that are not UTF-8
 * (a sysfs or file name, say) are written with every byte >= 0x80 shown
 * as '?', never dropped.
 */
#ifndef SPYREMON_JSONW_H
#define SPYREMON_JSONW_H

#include <stdbool.h>
#include <stdint.h>

#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

/* Write s as a JSON string. */
void jsonw_str(yajl_gen g, const char *s);

/* A member: key, then the value. */
void jsonw_put_str(yajl_gen g, const char *key, const char *value);
void jsonw_put_int(yajl_gen g, const char *key, int64_t value);
void jsonw_put_uint(yajl_gen g, const char *key, uint64_t value);
void jsonw_put_bool(yajl_gen g, const char *key, bool value);
void jsonw_put_null(yajl_gen g, const char *key);

/* value, or null when it is NULL or empty: "unknown" rather than "". */
void jsonw_put_str_or_null(yajl_gen g, const char *key, const char *value);

/*
 * A number value (not a member): v, or null when it is NaN or infinite,
 * which JSON cannot hold; jsonw_number writes the decimal text num, or
 * null when it is not a finite JSON number ("nan", "inf", "1e999").
 * Both return true when they wrote null, for a caller that flags it.
 */
bool jsonw_double(yajl_gen g, double v);
bool jsonw_number(yajl_gen g, const char *num);

/* value if has, else null. */
void jsonw_put_int_or_null(yajl_gen g, const char *key, bool has,
    int64_t value);

/* The time ns as ISO 8601 UTC (format_time_utc) if has, else null. */
void jsonw_put_time(yajl_gen g, const char *key, bool has, int64_t ns);

/* value if has (as jsonw_double writes it), else null. */
void jsonw_put_double_or_null(yajl_gen g, const char *key, bool has,
    double value);

/* A parsed value (yajl_tree) written back as it is, numbers as their text. */
void jsonw_value(yajl_gen g, yajl_val v);

#endif
