/*
 * vllm: a vLLM server's counters, read from /metrics and kept as window
 * metadata.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_tree.h>

#include "httpc.h"
#include "promtext.h"
#include "vllm.h"

const char *const vllm_counter_keys[VLLM_NCOUNTERS] = {
	"requests", "prompt_tokens", "generation_tokens",
};

/* The sample names vLLM exports, in the order of vllm_counter_keys. */
static const char *const sample_names[VLLM_NCOUNTERS] = {
	"vllm:request_success_total", "vllm:prompt_tokens_total",
	"vllm:generation_tokens_total",
};
static const char *const created_names[VLLM_NCOUNTERS] = {
	"vllm:request_success_created", "vllm:prompt_tokens_created",
	"vllm:generation_tokens_created",
};

int
vllm_read(const char *url, struct vllm_counters *c, char *why, size_t whylen)
{
	struct promtext_sum sums[2 * VLLM_NCOUNTERS];
	char pwhy[PROMTEXT_WHY];
	struct httpc_answer a;
	int rc = -1;

	memset(c, 0, sizeof(*c));
	if (httpc_request("GET", url, "/metrics", VLLM_TIMEOUT_MS, &a, why,
	    whylen) == -1)
		return -1;
	for (int i = 0; i < VLLM_NCOUNTERS; i++) {
		sums[i].name = sample_names[i];
		sums[VLLM_NCOUNTERS + i].name = created_names[i];
	}
	if (a.status != 200)
		snprintf(why, whylen, "%s/metrics: HTTP status %d", url,
		    a.status);
	else if (promtext_sums(a.body, a.len, sums, 2 * VLLM_NCOUNTERS, pwhy,
	    sizeof(pwhy)) == -1)
		snprintf(why, whylen, "%s/metrics: %s", url, pwhy);
	else {
		rc = 0;
		for (int i = 0; i < VLLM_NCOUNTERS && rc == 0; i++) {
			if (sums[i].n == 0 || !isfinite(sums[i].sum) ||
			    sums[i].sum < 0) {
				snprintf(why, whylen, "%s/metrics: %s %s", url,
				    sample_names[i], sums[i].n == 0 ? "is "
				    "missing (not a vLLM server?)" :
				    "is not a count");
				rc = -1;
			}
			c->v[i] = sums[i].sum;
		}
		/* the earliest _created of any sample: the counters' start */
		for (int i = 0; i < VLLM_NCOUNTERS; i++) {
			double cr = sums[VLLM_NCOUNTERS + i].sum /
			    (double)(sums[VLLM_NCOUNTERS + i].n ?
			    sums[VLLM_NCOUNTERS + i].n : 1);

			if (sums[VLLM_NCOUNTERS + i].n == 0 || !isfinite(cr))
				continue;
			if (!c->has_created || cr < c->created)
				c->created = cr;
			c->has_created = true;
		}
	}
	httpc_answer_free(&a);
	return rc;
}

size_t
vllm_meta(const struct vllm_counters *c, const char *phase,
    char keys[][PROTO_META_KEY_MAX + 1],
    char values[][PROTO_META_VALUE_MAX + 1])
{
	size_t n = 0;

	for (int i = 0; i < VLLM_NCOUNTERS; i++, n++) {
		snprintf(keys[n], PROTO_META_KEY_MAX + 1, "vllm.%s.%s", phase,
		    vllm_counter_keys[i]);
		/* counts are whole; %.17g keeps any other value exactly */
		snprintf(values[n], PROTO_META_VALUE_MAX + 1, "%.17g", c->v[i]);
	}
	if (c->has_created) {
		snprintf(keys[n], PROTO_META_KEY_MAX + 1, "vllm.%s.created",
		    phase);
		snprintf(values[n++], PROTO_META_VALUE_MAX + 1, "%.17g",
		    c->created);
	}
	return n;
}

/* The number the member key of the object o holds as a string. */
static bool
meta_number(yajl_val o, const char *key, double *out)
{
	const char *path[] = { key, NULL };
	yajl_val v = yajl_tree_get(o, path, yajl_t_string);
	const char *s = v != NULL ? YAJL_GET_STRING(v) : NULL;
	char *end;

	if (s == NULL)
		return false;
	*out = strtod(s, &end);
	return end != s && *end == '\0' && isfinite(*out);
}

bool
vllm_from_meta(const char *meta_json, const char *phase,
    struct vllm_counters *c)
{
	yajl_val o = yajl_tree_parse(meta_json, NULL, 0);
	char key[PROTO_META_KEY_MAX + 1];
	bool ok = o != NULL;

	memset(c, 0, sizeof(*c));
	for (int i = 0; i < VLLM_NCOUNTERS && ok; i++) {
		snprintf(key, sizeof(key), "vllm.%s.%s", phase,
		    vllm_counter_keys[i]);
		ok = meta_number(o, key, &c->v[i]);
	}
	if (ok) {
		snprintf(key, sizeof(key), "vllm.%s.created", phase);
		c->has_created = meta_number(o, key, &c->created);
	}
	yajl_tree_free(o);
	return ok;
}
