/*
 * json: small conveniences over yajl for reading replies and writing
 * output.  Lookups are tolerant: a member that is missing or of another
 * type reads as absent, so a reply from a newer or older daemon never
 * crashes a printer.
 */
#ifndef SPYREMON_JSON_H
#define SPYREMON_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "jsonw.h"	/* writing: jsonw_str, jsonw_put_* */

/* Member key of object obj, or NULL if obj is not an object or lacks it. */
yajl_val json_get(yajl_val obj, const char *key);

/* Member key as a string, or NULL. */
const char *json_str(yajl_val obj, const char *key);

/* Member key as an integer: true and *out set, or false. */
bool json_int(yajl_val obj, const char *key, int64_t *out);

/* Member key as a number of any kind: true and *out set, or false. */
bool json_num(yajl_val obj, const char *key, double *out);

/* Member key as a boolean: true and *out set, or false. */
bool json_bool(yajl_val obj, const char *key, bool *out);

/* Member key as an array or object, or NULL. */
yajl_val json_array(yajl_val obj, const char *key);
yajl_val json_object(yajl_val obj, const char *key);

/*
 * A generator, pretty-printing with two-space indents if pretty.  Dies
 * when out of memory.
 */
yajl_gen json_gen_new(bool pretty);

/*
 * Write what g generated so far to fp with a newline, and clear g's
 * buffer, ready for another top-level value (as in JSON lines).  -1 if
 * the buffer cannot be had or written.
 */
int json_gen_flush(yajl_gen g, FILE *fp);

/* "key": ns as a number of µs, exactly (format.h's fmt_us). */
void json_put_us(yajl_gen g, const char *key, int64_t ns);

#endif
