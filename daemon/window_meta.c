/*
 * window_meta: a window's metadata pairs, in memory and as JSON (contract
 * in window_meta.h).  The daemon writes only objects of strings, built
 * with yajl_gen; it reads them back with yajl_tree when it starts.
 */
#include "window_meta.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "log.h"

void
window_meta_free(struct window *win)
{
	for (size_t i = 0; i < 2 * win->nmeta; i++)
		free(win->meta[i]);
	free(win->meta);
	win->meta = NULL;
	win->nmeta = 0;
}

int
window_meta_set(struct window *win, const char *const *meta, size_t nmeta)
{
	if (nmeta == 0)
		return 0;
	if ((win->meta = calloc(2 * nmeta, sizeof(*win->meta))) == NULL)
		return -1;
	win->nmeta = nmeta;
	for (size_t i = 0; i < 2 * nmeta; i++)
		if ((win->meta[i] = strdup(meta[i])) == NULL) {
			window_meta_free(win);
			return -1;
		}
	return 0;
}

char *
window_meta_to_json(const char *const *meta, size_t nmeta)
{
	const unsigned char *buf;
	yajl_gen g;
	size_t len;
	char *json = NULL;

	if ((g = yajl_gen_alloc(NULL)) == NULL)
		return NULL;
	yajl_gen_map_open(g);
	for (size_t i = 0; i < 2 * nmeta; i++)
		yajl_gen_string(g, (const unsigned char *)meta[i], strlen(meta[i]));
	yajl_gen_map_close(g);
	if (yajl_gen_get_buf(g, &buf, &len) == yajl_gen_status_ok)
		json = strndup((const char *)buf, len);
	yajl_gen_free(g);
	return json;
}

void
window_meta_from_json(struct window *win, const char *json)
{
	char err[128];
	yajl_val v = yajl_tree_parse(json, err, sizeof(err));
	const char **pairs = NULL;
	size_t n = 0;

	if (v == NULL || !YAJL_IS_OBJECT(v)) {
		log_warnx("window %" PRId64 ": meta is not a JSON object; ignored",
		    win->id);
		yajl_tree_free(v);
		return;
	}
	if (v->u.object.len > 0 &&
	    (pairs = calloc(2 * v->u.object.len, sizeof(*pairs))) == NULL) {
		log_warnx("window %" PRId64 ": meta: out of memory", win->id);
		yajl_tree_free(v);
		return;
	}
	for (size_t i = 0; i < v->u.object.len; i++) {
		if (!YAJL_IS_STRING(v->u.object.values[i])) {
			log_warnx("window %" PRId64 ": meta '%s' is not a string; "
			    "ignored", win->id, v->u.object.keys[i]);
			continue;
		}
		pairs[2 * n] = v->u.object.keys[i];
		pairs[2 * n + 1] = YAJL_GET_STRING(v->u.object.values[i]);
		n++;
	}
	if (window_meta_set(win, pairs, n) == -1)
		log_warnx("window %" PRId64 ": meta: out of memory", win->id);
	free(pairs);
	yajl_tree_free(v);
}
