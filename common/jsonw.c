/*
 * jsonw: JSON members over yajl (contract in jsonw.h).
 */
#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonw.h"
#include "timeparse.h"

void
jsonw_str(yajl_gen g, const char *s)
{
	size_t len = strlen(s);
	char *clean;

	if (yajl_gen_string(g, (const unsigned char *)s, len) !=
	    yajl_gen_invalid_string)
		return;
	if ((clean = strdup(s)) == NULL) {
		yajl_gen_null(g);
		return;
	}
	for (char *p = clean; *p != '\0'; p++)
		if ((unsigned char)*p >= 0x80)
			*p = '?';
	yajl_gen_string(g, (const unsigned char *)clean, len);
	free(clean);
}

void
jsonw_put_str(yajl_gen g, const char *key, const char *value)
{
	jsonw_str(g, key);
	jsonw_str(g, value);
}

void
jsonw_put_str_or_null(yajl_gen g, const char *key, const char *value)
{
	jsonw_str(g, key);
	if (value == NULL || value[0] == '\0')
		yajl_gen_null(g);
	else
		jsonw_str(g, value);
}

void
jsonw_put_int(yajl_gen g, const char *key, int64_t value)
{
	jsonw_str(g, key);
	yajl_gen_integer(g, value);
}

void
jsonw_put_int_or_null(yajl_gen g, const char *key, bool has, int64_t value)
{
	jsonw_str(g, key);
	if (has)
		yajl_gen_integer(g, value);
	else
		yajl_gen_null(g);
}

bool
jsonw_double(yajl_gen g, double v)
{
	if (!isfinite(v)) {
		yajl_gen_null(g);
		return true;
	}
	yajl_gen_double(g, v);
	return false;
}

/* True if num is JSON's number grammar and strtod reads it as finite. */
static bool
json_finite_number(const char *num)
{
	const char *p = num;

	if (*p == '-')
		p++;
	if (!isdigit((unsigned char)*p))
		return false;
	if (*p == '0')
		p++;
	else
		while (isdigit((unsigned char)*p))
			p++;
	if (*p == '.') {
		if (!isdigit((unsigned char)*++p))
			return false;
		while (isdigit((unsigned char)*p))
			p++;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!isdigit((unsigned char)*p))
			return false;
		while (isdigit((unsigned char)*p))
			p++;
	}
	return *p == '\0' && isfinite(strtod(num, NULL));
}

bool
jsonw_number(yajl_gen g, const char *num)
{
	if (num == NULL || !json_finite_number(num)) {
		yajl_gen_null(g);
		return true;
	}
	yajl_gen_number(g, num, strlen(num));
	return false;
}

/* JSON numbers have no range, but yajl_gen_integer is signed. */
void
jsonw_put_uint(yajl_gen g, const char *key, uint64_t value)
{
	char num[24];

	jsonw_str(g, key);
	snprintf(num, sizeof(num), "%" PRIu64, value);
	yajl_gen_number(g, num, strlen(num));
}

void
jsonw_put_bool(yajl_gen g, const char *key, bool value)
{
	jsonw_str(g, key);
	yajl_gen_bool(g, value);
}

void
jsonw_put_null(yajl_gen g, const char *key)
{
	jsonw_str(g, key);
	yajl_gen_null(g);
}

void
jsonw_put_time(yajl_gen g, const char *key, bool has, int64_t ns)
{
	char buf[64];

	jsonw_str(g, key);
	if (!has) {
		yajl_gen_null(g);
		return;
	}
	format_time_utc(ns, buf, sizeof(buf));
	jsonw_str(g, buf);
}

void
jsonw_put_double_or_null(yajl_gen g, const char *key, bool has, double value)
{
	jsonw_str(g, key);
	if (has)
		(void)jsonw_double(g, value);
	else
		yajl_gen_null(g);
}

void
jsonw_value(yajl_gen g, yajl_val v)
{
	switch (v->type) {
	case yajl_t_string:
		jsonw_str(g, v->u.string);
		break;
	case yajl_t_number:
		yajl_gen_number(g, v->u.number.r, strlen(v->u.number.r));
		break;
	case yajl_t_object:
		yajl_gen_map_open(g);
		for (size_t i = 0; i < v->u.object.len; i++) {
			jsonw_str(g, v->u.object.keys[i]);
			jsonw_value(g, v->u.object.values[i]);
		}
		yajl_gen_map_close(g);
		break;
	case yajl_t_array:
		yajl_gen_array_open(g);
		for (size_t i = 0; i < v->u.array.len; i++)
			jsonw_value(g, v->u.array.values[i]);
		yajl_gen_array_close(g);
		break;
	case yajl_t_true:
	case yajl_t_false:
		yajl_gen_bool(g, v->type == yajl_t_true);
		break;
	case yajl_t_null:
	case yajl_t_any:
	default:
		yajl_gen_null(g);
		break;
	}
}
