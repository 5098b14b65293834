/*
 * compare_ops: two runs' operators side by side (compare_ops.h).
 */
#include <err.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "compare_ops.h"
#include "dbread.h"
#include "opsenergy.h"

/* The entry of name in o, added if new. */
static struct cmp_op *
op_of(struct cmp_ops *o, const char *name)
{
	struct cmp_op *p;

	for (size_t i = 0; i < o->n; i++)
		if (strcmp(o->op[i].name, name) == 0)
			return &o->op[i];
	if ((o->op = reallocarray(o->op, o->n + 1, sizeof(*o->op))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	p = &o->op[o->n++];
	memset(p, 0, sizeof(*p));
	if ((p->name = strdup(name)) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	return p;
}

/* Side k's operators: every trace of rs, every card, summed. */
static int
load_side(sqlite3 *db, const struct db_catalog *cat,
    const struct runsteps *rs, int k, int64_t lookback_ns,
    struct cmp_ops *out)
{
	for (size_t t = 0; t < rs->nt; t++) {
		const struct trace_target *tt = &rs->t[t];
		struct ops_request rq = {
			.path = tt->path, .info = &tt->info,
			.shift_ns = tt->shift_ns, .span_lo = tt->start_ns,
			.span_hi = tt->end_ns, .clock = &tt->epochs, .cat = cat,
			.device_sql = "",
			.idle_lookback_ns = lookback_ns, .none_ok = true,
		};
		struct ops_result res;
		int rc;

		if ((rc = ops_load(db, &rq, &res)) != CLIENT_EXIT_OK) {
			ops_result_free(&res);
			return rc;
		}
		for (size_t i = 0; i < res.nnames; i++) {
			struct cmp_op *p = NULL;

			for (size_t c = 0; c < res.ncards; c++) {
				const struct attrib_op *a = &res.cards[c].a.ops[i];

				if (a->calls == 0)
					continue;
				if (p == NULL)
					p = op_of(out, res.names[i].name);
				p->calls[k] += a->calls;
				p->energy_j[k] += a->energy_j;
				p->bound_j[k] += a->bound_j;
				p->device_ms[k] += (double)a->device_ns / 1e6;
			}
		}
		ops_result_free(&res);
	}
	return CLIENT_EXIT_OK;
}

static double
change_of(const struct cmp_op *p)
{
	return p->energy_j[1] - p->energy_j[0];
}

static int
cmp_change(const void *a, const void *b)
{
	const struct cmp_op *x = a, *y = b;
	double cx = fabs(change_of(x)), cy = fabs(change_of(y));

	if (cx != cy)
		return cx < cy ? 1 : -1;
	return strcmp(x->name, y->name);
}

int
compare_ops_load(sqlite3 *db, const struct runsteps *base,
    const struct runsteps *new, int64_t lookback_ns, struct cmp_ops *out)
{
	struct db_catalog cat;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = db_catalog_load(db, &cat)) != CLIENT_EXIT_OK)
		return rc;
	rc = load_side(db, &cat, base, 0, lookback_ns, out);
	if (rc == CLIENT_EXIT_OK)
		rc = load_side(db, &cat, new, 1, lookback_ns, out);
	db_catalog_free(&cat);
	if (out->n > 1)
		qsort(out->op, out->n, sizeof(*out->op), cmp_change);
	return rc;
}

void
compare_ops_write(FILE *fp, const struct cmp_ops *o, size_t top)
{
	size_t n = o->n < top ? o->n : top;

	fprintf(fp, "%-40s %9s %9s %9s %9s %10s %21s %10s %10s %10s\n",
	    "OPERATOR", "BASE J", "±J", "NEW J", "±J", "CHANGE J",
	    "INTERVAL J", "BASE ms", "NEW ms", "CHANGE ms");
	for (size_t i = 0; i < n; i++) {
		const struct cmp_op *p = &o->op[i];
		double d = change_of(p), b = p->bound_j[0] + p->bound_j[1];
		char iv[64];

		snprintf(iv, sizeof(iv), "[%.4g, %.4g]", d - b, d + b);
		fprintf(fp, "%-40.40s %9.4g %9.3g %9.4g %9.3g %+10.4g %21s "
		    "%10.1f %10.1f %+10.1f\n", p->name, p->energy_j[0],
		    p->bound_j[0], p->energy_j[1], p->bound_j[1], d, iv,
		    p->device_ms[0], p->device_ms[1],
		    p->device_ms[1] - p->device_ms[0]);
	}
	if (o->n > n)
		fprintf(fp, "(%zu more operators)\n", o->n - n);
}

void
compare_ops_json(yajl_gen g, const struct cmp_ops *o, size_t top)
{
	size_t n = o->n < top ? o->n : top;

	yajl_gen_array_open(g);
	for (size_t i = 0; i < n; i++) {
		const struct cmp_op *p = &o->op[i];
		double d = change_of(p), b = p->bound_j[0] + p->bound_j[1];

		yajl_gen_map_open(g);
		jsonw_str(g, "name");
		jsonw_str(g, p->name);
		jsonw_str(g, "base_calls");
		yajl_gen_integer(g, (long long)p->calls[0]);
		jsonw_str(g, "new_calls");
		yajl_gen_integer(g, (long long)p->calls[1]);
		jsonw_str(g, "base_J");
		(void)jsonw_double(g, p->energy_j[0]);
		jsonw_str(g, "base_error_J");
		(void)jsonw_double(g, p->bound_j[0]);
		jsonw_str(g, "new_J");
		(void)jsonw_double(g, p->energy_j[1]);
		jsonw_str(g, "new_error_J");
		(void)jsonw_double(g, p->bound_j[1]);
		jsonw_str(g, "change_J");
		(void)jsonw_double(g, d);
		jsonw_str(g, "change_lo_J");
		(void)jsonw_double(g, d - b);
		jsonw_str(g, "change_hi_J");
		(void)jsonw_double(g, d + b);
		jsonw_str(g, "base_device_ms");
		(void)jsonw_double(g, p->device_ms[0]);
		jsonw_str(g, "new_device_ms");
		(void)jsonw_double(g, p->device_ms[1]);
		jsonw_str(g, "change_device_ms");
		(void)jsonw_double(g, p->device_ms[1] - p->device_ms[0]);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
}

void
compare_ops_free(struct cmp_ops *o)
{
	for (size_t i = 0; i < o->n; i++)
		free(o->op[i].name);
	free(o->op);
	memset(o, 0, sizeof(*o));
}
