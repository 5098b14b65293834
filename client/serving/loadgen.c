/*
 * loadgen: completions sent to a vLLM server, several in flight at once
 * (contract in loadgen.h).
 */
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "httpc.h"
#include "loadgen.h"

#define WORD	"hello"

char *
loadgen_prompt(long words)
{
	size_t wl = strlen(WORD);
	char *s;

	if (words < 1)
		words = 1;
	if ((s = malloc((size_t)words * (wl + 1))) == NULL)
		return NULL;
	for (long i = 0; i < words; i++) {
		memcpy(s + (size_t)i * (wl + 1), WORD, wl);
		s[(size_t)i * (wl + 1) + wl] = ' ';
	}
	s[(size_t)words * (wl + 1) - 1] = '\0';
	return s;
}

char *
loadgen_body(const char *model, long prompt_tokens, long output_tokens,
    size_t *len)
{
	char *prompt = loadgen_prompt(prompt_tokens), *out = NULL;
	const unsigned char *buf;
	yajl_gen g;

	if (prompt == NULL || (g = yajl_gen_alloc(NULL)) == NULL) {
		free(prompt);
		return NULL;
	}
	yajl_gen_map_open(g);
	yajl_gen_string(g, (const unsigned char *)"model", 5);
	yajl_gen_string(g, (const unsigned char *)model, strlen(model));
	yajl_gen_string(g, (const unsigned char *)"prompt", 6);
	yajl_gen_string(g, (const unsigned char *)prompt, strlen(prompt));
	yajl_gen_string(g, (const unsigned char *)"max_tokens", 10);
	yajl_gen_integer(g, output_tokens);
	/* vLLM's own option: generate max_tokens whatever the model says */
	yajl_gen_string(g, (const unsigned char *)"ignore_eos", 10);
	yajl_gen_bool(g, 1);
	yajl_gen_string(g, (const unsigned char *)"stream", 6);
	yajl_gen_bool(g, 0);
	yajl_gen_map_close(g);
	if (yajl_gen_get_buf(g, &buf, len) == yajl_gen_status_ok &&
	    (out = malloc(*len + 1)) != NULL) {
		memcpy(out, buf, *len);
		out[*len] = '\0';
	}
	yajl_gen_free(g);
	free(prompt);
	return out;
}

/* body parsed as a JSON object, or NULL with why. */
static yajl_val
parse_object(const char *body, size_t len, char *why, size_t whylen)
{
	char err[128], *text;
	yajl_val v;

	if ((text = strndup(body, len)) == NULL) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	v = yajl_tree_parse(text, err, sizeof(err));
	free(text);
	if (v == NULL || !YAJL_IS_OBJECT(v)) {
		snprintf(why, whylen, "the answer is not a JSON object");
		yajl_tree_free(v);
		return NULL;
	}
	return v;
}

int
loadgen_parse_completion(const char *body, size_t len, double *prompt,
    double *completion, char *why, size_t whylen)
{
	const char *pp[] = { "usage", "prompt_tokens", NULL };
	const char *cp[] = { "usage", "completion_tokens", NULL };
	yajl_val o = parse_object(body, len, why, whylen), p, c;
	int rc = -1;

	if (o == NULL)
		return -1;
	p = yajl_tree_get(o, pp, yajl_t_number);
	c = yajl_tree_get(o, cp, yajl_t_number);
	if (p == NULL || c == NULL)
		snprintf(why, whylen, "the answer has no usage.%s",
		    p == NULL ? "prompt_tokens" : "completion_tokens");
	else if (!isfinite(*prompt = YAJL_GET_DOUBLE(p)) || *prompt < 0 ||
	    !isfinite(*completion = YAJL_GET_DOUBLE(c)) || *completion < 0)
		snprintf(why, whylen, "the answer's usage is not a count");
	else
		rc = 0;
	yajl_tree_free(o);
	return rc;
}

int
loadgen_parse_models(const char *body, size_t len, const char *model,
    char *first, size_t firstlen, bool *found, char *list, size_t listlen,
    char *why, size_t whylen)
{
	const char *dp[] = { "data", NULL }, *ip[] = { "id", NULL };
	yajl_val o = parse_object(body, len, why, whylen), d;
	size_t ll = 0, n = 0;

	*found = false;
	first[0] = list[0] = '\0';
	if (o == NULL)
		return -1;
	if ((d = yajl_tree_get(o, dp, yajl_t_array)) == NULL) {
		snprintf(why, whylen, "the answer has no \"data\" list");
		yajl_tree_free(o);
		return -1;
	}
	for (size_t i = 0; i < d->u.array.len; i++) {
		yajl_val id = yajl_tree_get(d->u.array.values[i], ip,
		    yajl_t_string);
		const char *s = id != NULL ? YAJL_GET_STRING(id) : NULL;

		if (s == NULL)
			continue;
		if (n++ == 0)
			snprintf(first, firstlen, "%s", s);
		if (model != NULL && strcmp(s, model) == 0)
			*found = true;
		if (ll < listlen)
			ll += (size_t)snprintf(list + ll, listlen - ll, "%s%s",
			    ll > 0 ? ", " : "", s);
	}
	yajl_tree_free(o);
	if (n == 0) {
		snprintf(why, whylen, "the server lists no model");
		return -1;
	}
	return 0;
}

void
loadgen_excerpt(const char *body, size_t len, char *out, size_t outlen)
{
	size_t o = 0;

	for (size_t i = 0; i < len && o + 4 < outlen; i++) {
		unsigned char ch = (unsigned char)body[i];

		if (o >= LOADGEN_EXCERPT) {
			memcpy(out + o, "...", 3);
			o += 3;
			break;
		}
		out[o++] = ch < 0x20 || ch == 0x7f ? ' ' : (char)ch;
	}
	while (o > 0 && out[o - 1] == ' ')
		o--;
	out[o] = '\0';
}

int
loadgen_model(const char *url, const char *model, int timeout_ms, char *out,
    size_t outlen, char *why, size_t whylen)
{
	char first[256], list[512], pwhy[LOADGEN_WHY], ex[LOADGEN_EXCERPT + 4];
	struct httpc_answer a;
	bool found;
	int rc = -1;

	if (httpc_request("GET", url, "/v1/models", timeout_ms, &a, why,
	    whylen) == -1)
		return -1;
	if (a.status != 200) {
		loadgen_excerpt(a.body, a.len, ex, sizeof(ex));
		snprintf(why, whylen, "%s/v1/models: HTTP status %d: %s", url,
		    a.status, ex);
	} else if (loadgen_parse_models(a.body, a.len, model, first,
	    sizeof(first), &found, list, sizeof(list), pwhy, sizeof(pwhy)) ==
	    -1)
		snprintf(why, whylen, "%s/v1/models: %s", url, pwhy);
	else if (model != NULL && !found)
		snprintf(why, whylen, "%s does not serve model '%s' (it serves: "
		    "%s)", url, model, list);
	else {
		snprintf(out, outlen, "%s", model != NULL ? model : first);
		rc = 0;
	}
	httpc_answer_free(&a);
	return rc;
}

/* One request's outcome into r; false if it failed. */
static bool
account(struct httpc_conn *c, int step, long idx, struct loadgen_result *r)
{
	char why[LOADGEN_WHY], ex[LOADGEN_EXCERPT + 4];
	double p, g;
	bool ok = false;

	if (step == -1)
		snprintf(why, sizeof(why), "%s", c->why);
	else if (c->answer.status != 200) {
		loadgen_excerpt(c->answer.body, c->answer.len, ex, sizeof(ex));
		snprintf(why, sizeof(why), "%.200s: HTTP status %d: %s",
		    c->where, c->answer.status, ex);
	} else if (loadgen_parse_completion(c->answer.body, c->answer.len, &p,
	    &g, ex, sizeof(ex)) == -1)
		snprintf(why, sizeof(why), "%.200s: %s", c->where, ex);
	else {
		r->prompt_tokens += p;
		r->completion_tokens += g;
		ok = true;
	}
	if (ok)
		r->ok++;
	else if (r->failed++ == 0)
		snprintf(r->first_error, sizeof(r->first_error), "request %ld: "
		    "%.450s", idx + 1, why);
	httpc_conn_free(c);
	return ok;
}

int
loadgen_run(const struct loadgen_opts *o, struct loadgen_result *r,
    void (*progress)(void *arg, long done, long n), void *arg)
{
	int cc = o->concurrency < 1 ? 1 : o->concurrency;
	struct httpc_conn *conn = calloc((size_t)cc, sizeof(*conn));
	struct pollfd *pfd = calloc((size_t)cc, sizeof(*pfd));
	long *idx = calloc((size_t)cc, sizeof(*idx)), next = 0, done = 0;
	size_t blen;
	char *body = loadgen_body(o->model, o->prompt_tokens, o->output_tokens,
	    &blen);

	memset(r, 0, sizeof(*r));
	if (conn == NULL || pfd == NULL || idx == NULL || body == NULL) {
		snprintf(r->first_error, sizeof(r->first_error),
		    "out of memory");
		r->failed = o->n;
		free(conn), free(pfd), free(idx), free(body);
		return -1;
	}
	for (int i = 0; i < cc; i++) {
		conn[i].state = HTTPC_DONE;	/* a free slot */
		conn[i].fd = -1;
	}
	while (done < o->n) {
		int64_t now = httpc_now_ms(), wait = 1000;
		int np = 0;

		/* fill the free slots */
		for (int i = 0; i < cc && next < o->n; i++) {
			if (conn[i].state != HTTPC_DONE || conn[i].fd != -1)
				continue;
			idx[i] = next++;
			if (httpc_start(&conn[i], "POST", o->url,
			    "/v1/completions", body, blen, o->timeout_ms) == -1) {
				account(&conn[i], -1, idx[i], r);
				conn[i].state = HTTPC_DONE;
				done++;
				if (progress != NULL)
					progress(arg, done, o->n);
			}
		}
		for (int i = 0; i < cc; i++) {
			pfd[i].fd = -1;
			pfd[i].events = pfd[i].revents = 0;
			if (conn[i].state >= HTTPC_DONE)
				continue;
			pfd[i].fd = conn[i].fd;
			pfd[i].events = httpc_events(&conn[i]);
			if (conn[i].deadline - now < wait)
				wait = conn[i].deadline - now;
			np++;
		}
		if (np == 0)
			continue;
		/* a failed poll (EINTR) changes nothing: the deadlines decide */
		(void)poll(pfd, (nfds_t)cc, wait < 0 ? 0 : (int)wait);
		now = httpc_now_ms();
		for (int i = 0; i < cc; i++) {
			int st;

			if (conn[i].state >= HTTPC_DONE)
				continue;
			if (pfd[i].revents != 0)
				st = httpc_step(&conn[i], pfd[i].revents);
			else if (conn[i].deadline <= now)
				st = httpc_timeout(&conn[i]);
			else
				continue;
			if (st == 1)
				continue;
			account(&conn[i], st, idx[i], r);
			conn[i].state = HTTPC_DONE;
			done++;
			if (progress != NULL)
				progress(arg, done, o->n);
		}
	}
	free(conn);
	free(pfd);
	free(idx);
	free(body);
	return r->failed == 0 ? 0 : -1;
}
