/* json: yajl lookups and output (contract in json.h). */
#include "json.h"

#include <err.h>
#include <string.h>

#include "client.h"
#include "format.h"
#include "jsonw.h"

yajl_val
json_get(yajl_val obj, const char *key)
{
	if (obj == NULL || !YAJL_IS_OBJECT(obj))
		return NULL;
	for (size_t i = 0; i < obj->u.object.len; i++)
		if (strcmp(obj->u.object.keys[i], key) == 0)
			return obj->u.object.values[i];
	return NULL;
}

const char *
json_str(yajl_val obj, const char *key)
{
	yajl_val v = json_get(obj, key);

	return v != NULL && YAJL_IS_STRING(v) ? v->u.string : NULL;
}

bool
json_int(yajl_val obj, const char *key, int64_t *out)
{
	yajl_val v = json_get(obj, key);

	if (v == NULL || !YAJL_IS_INTEGER(v))
		return false;
	*out = v->u.number.i;
	return true;
}

bool
json_num(yajl_val obj, const char *key, double *out)
{
	yajl_val v = json_get(obj, key);

	if (v == NULL || !YAJL_IS_NUMBER(v))
		return false;
	if (YAJL_IS_INTEGER(v))
		*out = (double)v->u.number.i;
	else if (YAJL_IS_DOUBLE(v))
		*out = v->u.number.d;
	else
		return false;
	return true;
}

bool
json_bool(yajl_val obj, const char *key, bool *out)
{
	yajl_val v = json_get(obj, key);

	if (v == NULL || !(YAJL_IS_TRUE(v) || YAJL_IS_FALSE(v)))
		return false;
	*out = YAJL_IS_TRUE(v);
	return true;
}

yajl_val
json_array(yajl_val obj, const char *key)
{
	yajl_val v = json_get(obj, key);

	return v != NULL && YAJL_IS_ARRAY(v) ? v : NULL;
}

yajl_val
json_object(yajl_val obj, const char *key)
{
	yajl_val v = json_get(obj, key);

	return v != NULL && YAJL_IS_OBJECT(v) ? v : NULL;
}

yajl_gen
json_gen_new(bool pretty)
{
	yajl_gen g = yajl_gen_alloc(NULL);

	if (g == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	if (pretty) {
		yajl_gen_config(g, yajl_gen_beautify, 1);
		yajl_gen_config(g, yajl_gen_indent_string, "  ");
	}
	return g;
}

int
json_gen_flush(yajl_gen g, FILE *fp)
{
	const unsigned char *buf;
	size_t len;

	if (yajl_gen_get_buf(g, &buf, &len) != yajl_gen_status_ok)
		return -1;
	/* beautified output ends in a newline already */
	if (fwrite(buf, 1, len, fp) != len ||
	    ((len == 0 || buf[len - 1] != '\n') && putc('\n', fp) == EOF))
		return -1;
	yajl_gen_clear(g);
	/* ready for the next top-level value, as in JSON lines */
	yajl_gen_reset(g, NULL);
	return 0;
}

void
json_put_us(yajl_gen g, const char *key, int64_t ns)
{
	char buf[32];

	jsonw_str(g, key);
	jsonw_number(g, fmt_us(ns, buf, sizeof(buf)));
}
