/*
 * serving: energy per request and per token of a window over a vLLM
 * server.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_tree.h>

#include "dbread.h"
#include "jsonw.h"
#include "serving.h"
#include "vllm.h"

/*
 * The end's readings of window id: in its own metadata, merged in as it
 * ended; in a database written before that, in the newest VLLM_END_TAG
 * window naming it.
 */
static bool
end_readings(sqlite3 *db, int64_t id, const char *meta,
    struct vllm_counters *c)
{
	struct db_window_filter f = { .tag = VLLM_END_TAG, .newest_first = true };
	struct db_window *w = NULL;
	char idtext[24];
	bool found = false;
	size_t n = 0;

	if (vllm_from_meta(meta, "end", c))
		return true;
	snprintf(idtext, sizeof(idtext), "%" PRId64, id);
	if (db_windows_read(db, &f, &w, &n) != 0)
		return false;
	for (size_t i = 0; i < n && !found; i++) {
		yajl_val o = yajl_tree_parse(w[i].meta, NULL, 0);
		const char *path[] = { "vllm.window", NULL };
		yajl_val v = o != NULL ? yajl_tree_get(o, path, yajl_t_string) :
		    NULL;
		const char *s = v != NULL ? YAJL_GET_STRING(v) : NULL;

		if (s != NULL)
			found = strcmp(s, idtext) == 0 &&
			    vllm_from_meta(w[i].meta, "end", c);
		yajl_tree_free(o);
	}
	db_windows_free(w, n);
	return found;
}

/* Whether the counters went back or restarted; if so, note says how. */
static bool
restarted(const struct vllm_counters *b, const struct vllm_counters *e,
    char *note, size_t len)
{
	for (int i = 0; i < VLLM_NCOUNTERS; i++)
		if (e->v[i] < b->v[i]) {
			snprintf(note, len, "the vLLM server's %s counter went "
			    "backwards in the window (%.17g at its begin, %.17g "
			    "at its end): the server restarted, so its counts "
			    "over the window are not known and no serving "
			    "figure is given", vllm_counter_keys[i], b->v[i],
			    e->v[i]);
			return true;
		}
	/* a restart that served more than before is seen by its start */
	if (b->has_created && e->has_created && e->created != b->created) {
		snprintf(note, len, "the vLLM server's counters were started "
		    "anew in the window (their creation time moved from %.3f to "
		    "%.3f): the server restarted, so its counts over the window "
		    "are not known and no serving figure is given", b->created,
		    e->created);
		return true;
	}
	return false;
}

/* gross and net energy over d, in out[0] and out[1]; false if d is 0. */
static bool
per(const struct serving *s, double d, double scale, double out[2])
{
	if (d <= 0)
		return false;
	out[0] = s->energy_j / d * scale;
	out[1] = s->has_net ? s->net_j / d * scale : NAN;
	return true;
}

void
serving_compute(sqlite3 *db, const struct winsum *ws, struct serving *out)
{
	struct vllm_counters b, e;
	char url[PROTO_META_VALUE_MAX + 1];

	memset(out, 0, sizeof(*out));
	if (winsum_meta(ws, "vllm.url", url, sizeof(url)) == NULL)
		return;
	snprintf(out->url, sizeof(out->url), "%s", url);
	out->state = SERVING_NO_END;
	if (!vllm_from_meta(ws->w.meta, "begin", &b)) {
		snprintf(out->note, sizeof(out->note), "the window's metadata "
		    "has vllm.url but not every vllm.begin.* counter");
		return;
	}
	if (!end_readings(db, ws->w.id, ws->w.meta, &e)) {
		snprintf(out->note, sizeof(out->note), "%s", ws->w.open ?
		    "the window is open: the vLLM server's counters are read "
		    "again when it ends (mark end)" : "no readings of the vLLM "
		    "server's counters at the window's end (mark end could not "
		    "read or keep them)");
		return;
	}
	if (restarted(&b, &e, out->note, sizeof(out->note))) {
		out->state = SERVING_RESTARTED;
		return;
	}
	out->state = SERVING_OK;
	out->requests = e.v[0] - b.v[0];
	out->prompt_tokens = e.v[1] - b.v[1];
	out->generation_tokens = e.v[2] - b.v[2];
	out->seconds = (double)winsum_duration(ws) / 1e9;
	if (out->seconds > 0) {
		out->tokens_per_s = (out->prompt_tokens +
		    out->generation_tokens) / out->seconds;
		out->generation_per_s = out->generation_tokens / out->seconds;
	}
	out->energy_j = winsum_energy(ws);
	out->has_net = winsum_net_energy(ws, &out->net_j);
	out->has_per_request = per(out, out->requests, 1, out->j_per_request);
	out->has_per_gen = per(out, out->generation_tokens, 1, out->j_per_gen);
	out->has_per_1k = per(out, out->prompt_tokens +
	    out->generation_tokens, 1000, out->j_per_1k);
}

/* One line: the energy per what, gross and net of idle when known. */
static void
figure(FILE *fp, const struct serving *s, bool has, const double v[2],
    const char *what, bool md)
{
	const char *dash = md ? "- " : "  ";

	if (!has) {
		fprintf(fp, "%senergy per %s: none (no %s in the window)\n",
		    dash, what, strcmp(what, "request") == 0 ? "request" :
		    "token");
		return;
	}
	fprintf(fp, "%senergy per %s: %.6g J", dash, what, v[0]);
	if (s->has_net)
		fprintf(fp, ", net of idle %.6g J", v[1]);
	fprintf(fp, "\n");
}

void
serving_write(FILE *fp, const struct serving *s, bool md)
{
	if (s->state == SERVING_NONE)
		return;
	if (md)
		fprintf(fp, "## Serving\n\nvLLM server `%s`, its counters read "
		    "at the window's begin and end.\n\n", s->url);
	else
		fprintf(fp, "Serving (vLLM server %s, its counters at the "
		    "window's begin and end):\n", s->url);
	if (s->state != SERVING_OK) {
		fprintf(fp, "%s%s.\n", md ? "" : "  ", s->note);
		if (md)
			fprintf(fp, "\n");
		return;
	}
	fprintf(fp, "%s%.0f requests, %.0f prompt and %.0f generated tokens "
	    "in %.3f s: %.1f tokens/s, %.1f generated tokens/s\n",
	    md ? "- " : "  ", s->requests, s->prompt_tokens,
	    s->generation_tokens, s->seconds, s->tokens_per_s,
	    s->generation_per_s);
	fprintf(fp, "%sall cards' energy %.3f J", md ? "- " : "  ", s->energy_j);
	if (s->has_net)
		fprintf(fp, ", net of idle %.3f J", s->net_j);
	fprintf(fp, "\n");
	figure(fp, s, s->has_per_request, s->j_per_request, "request", md);
	figure(fp, s, s->has_per_gen, s->j_per_gen, "generated token", md);
	figure(fp, s, s->has_per_1k, s->j_per_1k,
	    "1,000 tokens (prompt and generated)", md);
	if (md)
		fprintf(fp, "\nEvery request the server counted as finished "
		    "in the window is counted, whenever it began; the cards' "
		    "energy is all the window's, whatever else ran on them.\n\n");
}

static void
put_pair(yajl_gen g, const char *key, bool has, const double v[2], bool net)
{
	jsonw_str(g, key);
	yajl_gen_map_open(g);
	jsonw_put_double_or_null(g, "j", has, v[0]);
	jsonw_put_double_or_null(g, "net_j", has && net, v[1]);
	yajl_gen_map_close(g);
}

void
serving_gen_json(yajl_gen g, const struct serving *s)
{
	static const char *const states[] = { "none", "no_end", "restarted",
		"ok" };

	/* other windows' JSON stays as it was */
	if (s->state == SERVING_NONE)
		return;
	jsonw_str(g, "serving");
	yajl_gen_map_open(g);
	jsonw_put_str(g, "server", "vllm");
	jsonw_put_str(g, "url", s->url);
	jsonw_put_str(g, "state", states[s->state]);
	if (s->state != SERVING_OK) {
		jsonw_put_str(g, "note", s->note);
		yajl_gen_map_close(g);
		return;
	}
	jsonw_put_double_or_null(g, "requests", true, s->requests);
	jsonw_put_double_or_null(g, "prompt_tokens", true, s->prompt_tokens);
	jsonw_put_double_or_null(g, "generation_tokens", true,
	    s->generation_tokens);
	jsonw_put_double_or_null(g, "seconds", true, s->seconds);
	jsonw_put_double_or_null(g, "tokens_per_s", true, s->tokens_per_s);
	jsonw_put_double_or_null(g, "generation_tokens_per_s", true,
	    s->generation_per_s);
	jsonw_put_double_or_null(g, "energy_j", true, s->energy_j);
	jsonw_put_double_or_null(g, "net_energy_j", s->has_net, s->net_j);
	put_pair(g, "per_request", s->has_per_request, s->j_per_request,
	    s->has_net);
	put_pair(g, "per_generation_token", s->has_per_gen, s->j_per_gen,
	    s->has_net);
	put_pair(g, "per_1000_tokens", s->has_per_1k, s->j_per_1k, s->has_net);
	yajl_gen_map_close(g);
}
