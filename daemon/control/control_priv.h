/*
 * control_priv: what the files that answer requests share
 * (control_reply.c, below the others: building replies, reading members;
 * control_request.c: parsing, dispatch, begin, end and status;
 * control_sync.c: sync).  Not for the rest of the daemon.
 */
#ifndef SPYREMON_CONTROL_PRIV_H
#define SPYREMON_CONTROL_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "control.h"

/* A reply generator with "ok" set; NULL if out of memory. */
yajl_gen control_reply_open(bool ok);

/* Make g, its object closed, out's text (freeing g); -1 if out of memory. */
int control_reply_finish(yajl_gen g, bool close, struct control_reply *out);

/* An error reply, closing the connection after it if close. */
int control_reply_error(const char *code, const char *message, bool close,
    struct control_reply *out);

/* Member key of object o, or NULL. */
yajl_val control_member(yajl_val o, const char *key);

/* The status reply's "clock" object: the host clock's steps (control_clock.c). */
void control_status_clock(yajl_gen g, const struct control_ctx *ctx);

/* The sync request req (control_sync.c), read at now_ns. */
int control_cmd_sync(const struct control_ctx *ctx, yajl_val req,
    int64_t now_ns, struct control_reply *out);

#endif
