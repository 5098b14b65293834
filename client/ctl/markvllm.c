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

void
markvllm_end_meta(const struct markvllm_end *e, struct markvllm_meta *m,
    const char *ptr[2 * VLLM_NMETA])
{
	m->n = e->id != 0 && e->read ? vllm_meta(&e->counters, "end", m->key,
	    m->value) : 0;
	for (size_t i = 0; i < m->n; i++) {
		ptr[2 * i] = m->key[i];
		ptr[2 * i + 1] = m->value[i];
	}
}

int
markvllm_end_check(const struct markvllm_end *e, int64_t ended_id)
{
	if (e->id == 0 || e->id != ended_id || e->read)
		return CLIENT_EXIT_OK;
	warnx("window %" PRId64 " ended, but the vLLM server's counters at its "
	    "end could not be read: %s", ended_id, e->why);
	return CLIENT_EXIT_FAILED;
}
