/*
 * control_sync: the sync request, which a reader sends before it reads an
 * ended window or a span that ends lately, so that it reads every sample
 * that covers it (protocol in proto.h; the waiting in store.h,
 * store_sync).  A sync still pending is answered later: the reply carries
 * the ticket, and control.c holds the connection until the store says the
 * ticket is done or wait_ms runs out.
 */
#include "control.h"
#include "control_priv.h"

#include <stdio.h>

#include "config.h"
#include "jsonw.h"
#include "proto.h"
#include "store.h"

/*
 * True if "db" (optional) names the daemon's own database; *out is then
 * untouched, else it holds the reply.  -1 only if out of memory.
 */
static int
same_database(const struct control_ctx *ctx, yajl_val req, bool *same,
    struct control_reply *out)
{
	yajl_val db = control_member(req, "db"), dev, ino;
	char msg[256];

	*same = true;
	if (db == NULL)
		return 0;
	if (!YAJL_IS_OBJECT(db) ||
	    (dev = control_member(db, "dev")) == NULL ||
	    (ino = control_member(db, "ino")) == NULL ||
	    !YAJL_IS_INTEGER(dev) || !YAJL_IS_INTEGER(ino)) {
		*same = false;
		return control_reply_error(PROTO_E_BAD_REQUEST, "\"db\" must be "
		    "an object with integers \"dev\" and \"ino\"", true, out);
	}
	if (store_is_file(ctx->st, (uint64_t)YAJL_GET_INTEGER(dev),
	    (uint64_t)YAJL_GET_INTEGER(ino)))
		return 0;
	*same = false;
	snprintf(msg, sizeof(msg), "spyremond writes another database, %s",
	    ctx->cfg->database);
	return control_reply_error(PROTO_E_OTHER_DB, msg, false, out);
}

int
control_cmd_sync(const struct control_ctx *ctx, yajl_val req, int64_t now_ns,
    struct control_reply *out)
{
	yajl_val window = control_member(req, "window");
	yajl_val through = control_member(req, "through_ns");
	yajl_val wait = control_member(req, "wait_ms");
	uint64_t ticket = 0;
	int64_t t;
	bool same;
	int r;

	if ((window == NULL) == (through == NULL))
		return control_reply_error(PROTO_E_BAD_REQUEST, "sync takes "
		    "\"window\" or \"through_ns\", one of them", true, out);
	if ((window != NULL && (!YAJL_IS_INTEGER(window) ||
	    YAJL_GET_INTEGER(window) <= 0)) ||
	    (through != NULL && !YAJL_IS_INTEGER(through)))
		return control_reply_error(PROTO_E_BAD_REQUEST, "\"window\" must "
		    "be a positive integer and \"through_ns\" an integer", true,
		    out);
	if (wait != NULL && (!YAJL_IS_INTEGER(wait) ||
	    YAJL_GET_INTEGER(wait) < 0 ||
	    YAJL_GET_INTEGER(wait) > PROTO_MAX_WAIT_MS))
		return control_reply_error(PROTO_E_BAD_REQUEST, "\"wait_ms\" must "
		    "be an integer from 0 to 600000", true, out);
	if ((r = same_database(ctx, req, &same, out)) == -1 || !same)
		return r;
	if (window != NULL)
		ticket = store_sync_window(ctx->st, YAJL_GET_INTEGER(window));
	else {
		/* nothing later than now can be asked for */
		t = YAJL_GET_INTEGER(through);
		if (store_sync(ctx->st, t < now_ns ? t : now_ns, &ticket) == -1)
			return control_reply_error(PROTO_E_INTERNAL, "cannot "
			    "queue the request; see the daemon's log", false,
			    out);
	}
	if (ticket == 0 || wait == NULL || YAJL_GET_INTEGER(wait) == 0)
		return control_request_sync_reply(ctx, ticket, window != NULL ?
		    YAJL_GET_INTEGER(window) : 0, out);
	out->text = NULL;
	out->len = 0;
	out->close = false;
	out->wait_ticket = ticket;
	out->wait_ms = (uint64_t)YAJL_GET_INTEGER(wait);
	return 0;
}

int
control_request_sync_reply(const struct control_ctx *ctx, uint64_t ticket,
    int64_t window_id, struct control_reply *out)
{
	char why[256], msg[320], note[1536];
	int64_t through;
	yajl_gen g;

	if (ticket != 0 && store_sync_pending(ctx->st, ticket, why,
	    sizeof(why), &through)) {
		snprintf(msg, sizeof(msg), "not all stored yet: %s", why);
		if ((g = control_reply_open(false)) == NULL)
			return -1;
		jsonw_put_str(g, "error", PROTO_E_INCOMPLETE);
		jsonw_put_str(g, "message", msg);
		jsonw_put_int(g, "through_ns", through);
		yajl_gen_map_close(g);
		return control_reply_finish(g, false, out);
	}
	if ((g = control_reply_open(true)) == NULL)
		return -1;
	if ((ticket != 0 || window_id > 0) &&
	    store_sync_note(ctx->st, ticket, window_id, note, sizeof(note)))
		jsonw_put_str(g, "partial", note);
	yajl_gen_map_close(g);
	return control_reply_finish(g, false, out);
}
