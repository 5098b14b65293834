/*
 * ctl: one request to spyremond over its control socket and its reply
 * (the protocol is in proto.h).  A connection carries one request.
 */
#ifndef SPYREMON_CTL_H
#define SPYREMON_CTL_H

#include <stddef.h>

#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#define CTL_TIMEOUT_MS		5000		/* for connecting, sending and the reply */
#define CTL_MAX_REPLY		(4 << 20)	/* bytes of one reply line */

/*
 * Send the request that g holds (one JSON object, generated without
 * beautify) to the socket at path and read the reply.  On success returns
 * CLIENT_EXIT_OK and *reply is the reply, whose "ok" is true (free it with
 * yajl_tree_free).  Otherwise *reply is NULL and the reason is printed:
 *   CLIENT_EXIT_DAEMON  the socket cannot be connected to (with a hint
 *                       for a missing socket and for a permission error),
 *                       the daemon closed without answering, took longer
 *                       than CTL_TIMEOUT_MS, or refused with "busy";
 *   CLIENT_EXIT_FAILED  the daemon answered "ok": false (its message is
 *                       printed as "spyremon: <message>"), or the reply
 *                       is not a JSON object;
 *   CLIENT_EXIT_USAGE   the request is longer than PROTO_MAX_REQUEST.
 */
int ctl_call(const char *path, yajl_gen g, yajl_val *reply);

/*
 * ctl_call for a caller that words the errors itself: within timeout_ms,
 * nothing is printed but the reason is written to why; and a refusal
 * ("ok": false, CLIENT_EXIT_FAILED) leaves the reply in *reply, for its
 * "error" code.
 */
int ctl_ask(const char *path, yajl_gen g, int timeout_ms, char *why,
    size_t whylen, yajl_val *reply);

struct client;

/*
 * A new request for cmd: an open JSON object with "v", "cmd" and
 * "expires_ns" (now plus CTL_TIMEOUT_MS: past it the daemon must not act
 * on the request), for the caller to add members to.
 */
yajl_gen ctl_request_new(const char *cmd);

/*
 * Close the object g holds, send it to the socket cl names (client.h),
 * free g, and give the reply as ctl_call does.
 */
int ctl_request_send(struct client *cl, yajl_gen g, yajl_val *reply);

#endif
