/*
 * control_reply: building a reply line, and reading a request's members;
 * what control_request.c and control_sync.c share (control_priv.h), below
 * both, so that neither calls into the other's file.
 */
#include "control.h"
#include "control_priv.h"

#include <stdlib.h>
#include <string.h>

#include "jsonw.h"

int
control_reply_finish(yajl_gen g, bool close, struct control_reply *out)
{
	const unsigned char *buf;
	size_t len;

	out->text = NULL;
	out->wait_ticket = out->wait_ms = 0;
	if (yajl_gen_get_buf(g, &buf, &len) != yajl_gen_status_ok ||
	    (out->text = malloc(len + 2)) == NULL) {
		yajl_gen_free(g);
		return -1;
	}
	memcpy(out->text, buf, len);
	out->text[len] = '\n';
	out->text[len + 1] = '\0';
	out->len = len + 1;
	out->close = close;
	yajl_gen_free(g);
	return 0;
}

yajl_gen
control_reply_open(bool ok)
{
	yajl_gen g = yajl_gen_alloc(NULL);

	if (g == NULL)
		return NULL;
	yajl_gen_config(g, yajl_gen_validate_utf8, 1);
	yajl_gen_map_open(g);
	jsonw_put_bool(g, "ok", ok);
	return g;
}

int
control_reply_error(const char *code, const char *message, bool close,
    struct control_reply *out)
{
	yajl_gen g = control_reply_open(false);

	if (g == NULL)
		return -1;
	jsonw_put_str(g, "error", code);
	jsonw_put_str(g, "message", message);
	yajl_gen_map_close(g);
	return control_reply_finish(g, close, out);
}

yajl_val
control_member(yajl_val o, const char *key)
{
	for (size_t i = 0; i < o->u.object.len; i++)
		if (strcmp(o->u.object.keys[i], key) == 0)
			return o->u.object.values[i];
	return NULL;
}
