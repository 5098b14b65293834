/* capwin: the capture's window on spyremond (capwin.h). */
#include "capwin.h"

#include <err.h>
#include <stdbool.h>
#include <unistd.h>

#include "ctl.h"
#include "json.h"

int
capwin_hello(struct client *cl)
{
	yajl_val reply;
	int rc;

	if ((rc = ctl_request_send(cl, ctl_request_new("hello"), &reply)) ==
	    CLIENT_EXIT_OK)
		yajl_tree_free(reply);
	return rc;
}

int
capwin_begin(struct client *cl, const char *tag, const char *const *meta,
    size_t nmeta, int64_t begin_ns, int64_t *id)
{
	yajl_gen g = ctl_request_new("begin");
	yajl_val reply;
	int rc;

	jsonw_put_str(g, "tag", tag);
	jsonw_str(g, "meta");
	yajl_gen_map_open(g);
	for (size_t i = 0; i < nmeta; i++)
		jsonw_put_str(g, meta[2 * i], meta[2 * i + 1]);
	yajl_gen_map_close(g);
	/* ended by id: a tag the user has open already is no obstacle */
	jsonw_put_bool(g, "same_tag", true);
	jsonw_put_int(g, "until_pid", getpid());
	if (begin_ns > 0)
		jsonw_put_int(g, "begin_ns", begin_ns);
	if ((rc = ctl_request_send(cl, g, &reply)) != CLIENT_EXIT_OK)
		return rc;
	if (!json_int(reply, "id", id)) {
		warnx("the daemon's reply has no window id");
		rc = CLIENT_EXIT_FAILED;
	}
	yajl_tree_free(reply);
	return rc;
}

int
capwin_end(struct client *cl, int64_t id, int64_t end_ns, int64_t *begin_ns,
    int64_t *end_ns_out)
{
	return capwin_end_meta(cl, id, end_ns, NULL, 0, begin_ns, end_ns_out);
}

int
capwin_end_meta(struct client *cl, int64_t id, int64_t end_ns,
    const char *const *meta, size_t nmeta, int64_t *begin_ns,
    int64_t *end_ns_out)
{
	yajl_gen g = ctl_request_new("end");
	yajl_val reply;
	int rc;

	jsonw_put_int(g, "id", id);
	if (end_ns > 0)
		jsonw_put_int(g, "end_ns", end_ns);
	if (nmeta > 0) {
		jsonw_str(g, "meta");
		yajl_gen_map_open(g);
		for (size_t i = 0; i < nmeta; i++)
			jsonw_put_str(g, meta[2 * i], meta[2 * i + 1]);
		yajl_gen_map_close(g);
	}
	if ((rc = ctl_request_send(cl, g, &reply)) != CLIENT_EXIT_OK)
		return rc;
	if (!json_int(reply, "begin_ns", begin_ns) ||
	    !json_int(reply, "end_ns", end_ns_out)) {
		warnx("the daemon's reply to end has no span");
		rc = CLIENT_EXIT_FAILED;
	}
	yajl_tree_free(reply);
	return rc;
}
