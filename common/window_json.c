/*
 * window_json: a profiling window as JSON (window_json.h).
 */
#include <stdint.h>

#include <yajl/yajl_tree.h>

#include "jsonw.h"
#include "window_json.h"

void
window_json_clock(yajl_gen g, const struct clocksync *c)
{
	if (c == NULL || !c->known) {
		yajl_gen_null(g);
		return;
	}
	yajl_gen_map_open(g);
	jsonw_put_bool(g, "synchronized", c->synced);
	jsonw_put_int(g, "est_error_us", c->est_error_us);
	jsonw_put_int(g, "max_error_us", c->max_error_us);
	yajl_gen_map_close(g);
}

static void
put_meta(yajl_gen g, const struct window_json *w)
{
	yajl_val meta;

	jsonw_str(g, "meta");
	if (w->nmeta > 0 || w->meta_json == NULL) {
		yajl_gen_map_open(g);
		for (size_t k = 0; k < w->nmeta; k++)
			jsonw_put_str(g, w->meta_pairs[2 * k],
			    w->meta_pairs[2 * k + 1]);
		yajl_gen_map_close(g);
		return;
	}
	meta = yajl_tree_parse(w->meta_json, NULL, 0);
	if (meta != NULL && YAJL_IS_OBJECT(meta))
		jsonw_value(g, meta);
	else if (w->meta_text_as_string)
		jsonw_str(g, w->meta_json);
	else {
		yajl_gen_map_open(g);
		yajl_gen_map_close(g);
	}
	yajl_tree_free(meta);
}

void
window_json_members(yajl_gen g, const struct window_json *w)
{
	unsigned m = w->members;

	jsonw_put_int(g, "id", w->id);
	jsonw_put_str(g, "tag", w->tag);
	if (m & WJ_OWNER)
		jsonw_put_int(g, "uid", w->uid);
	if (m & WJ_USER)
		jsonw_put_str(g, "user", w->user);
	if (m & WJ_OWNER)
		jsonw_put_int(g, "pid", w->pid);
	jsonw_put_int(g, "begin_ns", w->begin_ns);
	if (m & WJ_TIMES)
		jsonw_put_time(g, "begin", true, w->begin_ns);
	if (m & WJ_END)
		jsonw_put_int_or_null(g, "end_ns", w->has_end, w->end_ns);
	if ((m & WJ_END) && (m & WJ_TIMES))
		jsonw_put_time(g, "end", w->has_end, w->end_ns);
	if (m & WJ_OPEN)
		jsonw_put_bool(g, "open", w->open);
	if (m & WJ_AUTO_CLOSED)
		jsonw_put_bool(g, "auto_closed", w->auto_closed);
	if (m & WJ_ENDING) {
		jsonw_put_str_or_null(g, "ended_by", w->ended_by);
		jsonw_put_int(g, "until_pid", w->until_pid);
	}
	if (m & WJ_CLOCKS) {
		jsonw_str(g, "clock_begin");
		window_json_clock(g, w->clock_begin);
		jsonw_str(g, "clock_end");
		window_json_clock(g, w->clock_end);
	}
	if (m & WJ_RESTARTS)
		jsonw_put_int_or_null(g, "child_restarts", w->has_restarts,
		    w->restarts);
	if (m & WJ_COUNTS) {
		jsonw_put_int(g, "duration_ns", w->duration_ns);
		jsonw_put_int(g, "samples", w->samples);
	}
	if (m & WJ_HOST) {
		jsonw_put_str_or_null(g, "hostname", w->hostname);
		jsonw_put_str_or_null(g, "machine_id", w->machine_id);
	}
	if (m & WJ_ENERGY)
		jsonw_put_double_or_null(g, "energy_j", w->has_energy,
		    w->energy_j);
	if (m & WJ_META)
		put_meta(g, w);
}

void
window_json(yajl_gen g, const struct window_json *w)
{
	yajl_gen_map_open(g);
	window_json_members(g, w);
	yajl_gen_map_close(g);
}
