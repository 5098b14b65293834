/*
 * markvllm: a vLLM server's counters kept with a window.
 */
#include <err.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "httpc.h"
#include "json.h"
#include "jsonw.h"
#include "markvllm.h"

int
markvllm_begin(const char *url, struct markvllm_meta *m)
{
	struct vllm_counters c;
	char why[HTTPC_WHY_LEN];

	if (strlen(url) > PROTO_META_VALUE_MAX) {
		warnx("--vllm %.40s...: longer than %d bytes", url,
		    PROTO_META_VALUE_MAX);
		return CLIENT_EXIT_USAGE;
	}
	if (httpc_url_ok(url, why, sizeof(why)) == -1) {
		warnx("--vllm %s", why);
		return CLIENT_EXIT_USAGE;
	}
	if (vllm_read(url, &c, why, sizeof(why)) == -1) {
		warnx("--vllm: cannot read the server's counters, no window "
		    "opened: %s", why);
		return CLIENT_EXIT_FAILED;
	}
	snprintf(m->key[0], sizeof(m->key[0]), "vllm.url");
	snprintf(m->value[0], sizeof(m->value[0]), "%s", url);
	m->n = 1 + vllm_meta(&c, "begin", m->key + 1, m->value + 1);
	return CLIENT_EXIT_OK;
}

/* Whether window w of the status reply is the one mark end will end. */
static bool
is_target(yajl_val w, const char *tag, bool have_id, int64_t id,
    int64_t *newest)
{
	int64_t wid, uid;
	const char *wtag = json_str(w, "tag");

	if (!json_int(w, "id", &wid))
		return false;
	if (have_id)
		return wid == id;
	if (!json_int(w, "uid", &uid) || uid != (int64_t)getuid())
		return false;
	if (tag != NULL)
		return wtag != NULL && strcmp(wtag, tag) == 0;
	if (wid <= *newest)
		return false;
	*newest = wid;
	return true;
}

void
markvllm_end_prepare(struct client *cl, const char *tag, bool have_id,
    int64_t id, struct markvllm_end *e)
{
	char why[HTTPC_WHY_LEN];
	yajl_val reply, list, target = NULL, meta;
	int64_t newest = 0;
	const char *url, *path;
	yajl_gen g;
	int rc;

	memset(e, 0, sizeof(*e));
	if ((path = client_socket(cl)) == NULL)
		return;
	g = ctl_request_new("status");
	yajl_gen_map_close(g);
	reply = NULL;
	rc = ctl_ask(path, g, CTL_TIMEOUT_MS, why, sizeof(why), &reply);
	yajl_gen_free(g);
	if (rc != CLIENT_EXIT_OK) {
		yajl_tree_free(reply);
		return;
	}
	if ((list = json_array(reply, "windows")) != NULL)
		for (size_t i = 0; i < list->u.array.len; i++)
			if (is_target(list->u.array.values[i], tag, have_id, id,
			    &newest))
				target = list->u.array.values[i];
	if (target != NULL && (meta = json_object(target, "meta")) != NULL &&
	    (url = json_str(meta, "vllm.url")) != NULL &&
	    json_int(target, "id", &e->id)) {
		snprintf(e->url, sizeof(e->url), "%s", url);
		e->read = vllm_read(url, &e->counters, e->why,
		    sizeof(e->why)) == 0;
	}
	yajl_tree_free(reply);
}

/* begin then end the window of no length that holds e's readings. */
static int
keep_readings(struct client *cl, const struct markvllm_end *e)
{
	char key[VLLM_NMETA][PROTO_META_KEY_MAX + 1];
	char value[VLLM_NMETA][PROTO_META_VALUE_MAX + 1];
	size_t n = vllm_meta(&e->counters, "end", key, value);
	char idbuf[24];
	yajl_val reply;
	yajl_gen g;
	int64_t cid;
	int rc;

	snprintf(idbuf, sizeof(idbuf), "%" PRId64, e->id);
	g = ctl_request_new("begin");
	jsonw_put_str(g, "tag", VLLM_END_TAG);
	jsonw_str(g, "meta");
	yajl_gen_map_open(g);
	jsonw_put_str(g, "vllm.window", idbuf);
	jsonw_put_str(g, "vllm.url", e->url);
	for (size_t i = 0; i < n; i++)
		jsonw_put_str(g, key[i], value[i]);
	yajl_gen_map_close(g);
	jsonw_str(g, "same_tag");
	yajl_gen_bool(g, true);
	if ((rc = ctl_request_send(cl, g, &reply)) != CLIENT_EXIT_OK)
		return rc;
	if (!json_int(reply, "id", &cid)) {
		yajl_tree_free(reply);
		warnx("the daemon's reply has no window id");
		return CLIENT_EXIT_FAILED;
	}
	yajl_tree_free(reply);
	g = ctl_request_new("end");
	jsonw_str(g, "id");
	yajl_gen_integer(g, cid);
	if ((rc = ctl_request_send(cl, g, &reply)) != CLIENT_EXIT_OK)
		return rc;
	yajl_tree_free(reply);
	return CLIENT_EXIT_OK;
}

int
markvllm_end_keep(struct client *cl, const struct markvllm_end *e,
    int64_t ended_id)
{
	int rc;

	if (e->id == 0 || e->id != ended_id)
		return CLIENT_EXIT_OK;
	if (!e->read) {
		warnx("window %" PRId64 " ended, but the vLLM server's counters "
		    "at its end could not be read: %s", ended_id, e->why);
		return CLIENT_EXIT_FAILED;
	}
	if ((rc = keep_readings(cl, e)) != CLIENT_EXIT_OK)
		warnx("window %" PRId64 " ended, but the vLLM server's counters "
		    "at its end could not be kept", ended_id);
	return rc;
}
