/*
 * control_request: one request line of the control socket in, one reply
 * line out (protocol in proto.h; contract in control.h).
 *
 * A request is parsed with yajl_tree after a cheap scan has bounded its
 * nesting, so no request can make the parser or the tree's recursive free
 * go deep.  Members a command does not know are ignored, so that newer
 * clients can add optional ones.  Malformed requests (not JSON, not an
 * object, wrong types, a version other than PROTO_VERSION) close the
 * connection after the reply; every other error leaves it open.
 */
#include "control.h"
#include "control_priv.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <yajl/yajl_gen.h>
#include <yajl/yajl_parse.h>
#include <yajl/yajl_tree.h>

#include "config.h"
#include "direct.h"
#include "jsonw.h"
#include "log.h"
#include "proto.h"
#include "source.h"
#include "store.h"
#include "timeparse.h"
#include "version.h"
#include "window_json.h"
#include "windows.h"

/* Deepest nesting of arrays and objects a request may have. */
#define REQUEST_MAX_DEPTH	8

/* A malformed request: the caller replies and closes. */
struct bad {
	const char *code;
	char message[160];
};

int
control_request_error(const char *code, const char *message,
    struct control_reply *out)
{
	return control_reply_error(code, message, true, out);
}

/* ---- reading the request ---- */

/*
 * Deepest nesting of arrays and objects in JSON text s, counted outside
 * strings; past limit the count stops.  Malformed text is yajl's to reject.
 */
static int
nesting(const char *s, size_t len, int limit)
{
	bool in_string = false;
	int depth = 0, max = 0;

	for (size_t i = 0; i < len && max <= limit; i++) {
		if (in_string) {
			if (s[i] == '\\')
				i++;
			else if (s[i] == '"')
				in_string = false;
		} else if (s[i] == '"')
			in_string = true;
		else if (s[i] == '[' || s[i] == '{') {
			if (++depth > max)
				max = depth;
		} else if (s[i] == ']' || s[i] == '}')
			depth--;
	}
	return max;
}


static void __attribute__((format(printf, 3, 4)))
set_bad(struct bad *bad, const char *code, const char *fmt, ...)
{
	va_list ap;

	bad->code = code;
	va_start(ap, fmt);
	vsnprintf(bad->message, sizeof(bad->message), fmt, ap);
	va_end(ap);
}

/* The first line of yajl's message, which goes on to quote the input. */
static void
parse_error(struct bad *bad, const char *err)
{
	size_t n = strcspn(err, "\n");

	while (n > 0 && (err[n - 1] == ' ' || err[n - 1] == '.'))
		n--;
	set_bad(bad, PROTO_E_BAD_REQUEST, "not valid JSON: %.*s", (int)n, err);
}

/*
 * Control characters in the request's strings.  yajl_tree hands strings
 * over NUL-terminated, so an escaped "\u0000" would silently cut a tag or a
 * metadata key short.  This pass reads the same text with yajl's event
 * parser, which gives every decoded string with its length, and refuses a
 * NUL, a C0 control, DEL or a C1 control (U+0080..U+009F) anywhere in a
 * member name or a string value, naming the field.  Text that is not JSON
 * passes here and is rejected by the tree parser, with its message.
 */
struct scan {
	int depth;
	char top[PROTO_META_KEY_MAX + 1];	/* member of the request being read */
	char key[PROTO_META_KEY_MAX + 1];	/* member of "meta" being read */
	struct bad *bad;
	bool found;
};

/* The first control character in s (len bytes) as a code point, or -1. */
static long
control_char(const unsigned char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (s[i] < 0x20 || s[i] == 0x7f)
			return s[i];
		if (s[i] == 0xc2 && i + 1 < len && s[i + 1] >= 0x80 &&
		    s[i + 1] <= 0x9f)
			return s[i + 1];
	}
	return -1;
}

/* s (len bytes) for a message: printable ASCII kept, the rest as \xNN. */
static void
visible(char *out, size_t size, const unsigned char *s, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; i < len && o + 5 < size; i++) {
		if (s[i] >= 0x20 && s[i] < 0x7f && s[i] != '\\')
			out[o++] = (char)s[i];
		else
			o += (size_t)snprintf(out + o, size - o, "\\x%02x", s[i]);
	}
	out[o] = '\0';
}

static int
scan_string(void *ctx, const unsigned char *s, size_t len, bool is_key)
{
	struct scan *sc = ctx;
	bool in_meta = sc->depth == 2 && strcmp(sc->top, "meta") == 0;
	char shown[48];
	long c;

	if ((c = control_char(s, len)) == -1) {
		if (is_key && sc->depth == 1)
			snprintf(sc->top, sizeof(sc->top), "%.*s", (int)len, s);
		else if (is_key && in_meta)
			snprintf(sc->key, sizeof(sc->key), "%.*s", (int)len, s);
		return 1;
	}
	sc->found = true;
	visible(shown, sizeof(shown), s, len < 16 ? len : 16);
	if (in_meta && is_key)
		set_bad(sc->bad, PROTO_E_BAD_META, "a metadata key cannot hold "
		    "control characters (U+%04lX in '%s')", c, shown);
	else if (in_meta)
		set_bad(sc->bad, PROTO_E_BAD_META, "a metadata value cannot hold "
		    "control characters (U+%04lX in the value of '%s')", c,
		    sc->key);
	else if (sc->depth == 1 && !is_key && strcmp(sc->top, "tag") == 0)
		set_bad(sc->bad, PROTO_E_BAD_TAG, "a tag cannot hold control "
		    "characters (U+%04lX in '%s')", c, shown);
	else if (sc->depth == 1 && is_key)
		set_bad(sc->bad, PROTO_E_BAD_REQUEST, "a member name cannot hold "
		    "control characters (U+%04lX in '%s')", c, shown);
	else
		set_bad(sc->bad, PROTO_E_BAD_REQUEST, "\"%s\" cannot hold control "
		    "characters (U+%04lX)", sc->top, c);
	return 0;
}

static int
scan_value(void *ctx, const unsigned char *s, size_t len)
{
	return scan_string(ctx, s, len, false);
}

static int
scan_key(void *ctx, const unsigned char *s, size_t len)
{
	return scan_string(ctx, s, len, true);
}

static int
scan_open(void *ctx)
{
	((struct scan *)ctx)->depth++;
	return 1;
}

static int
scan_close(void *ctx)
{
	((struct scan *)ctx)->depth--;
	return 1;
}

static const yajl_callbacks scan_callbacks = {
	.yajl_string = scan_value,
	.yajl_map_key = scan_key,
	.yajl_start_map = scan_open,
	.yajl_end_map = scan_close,
	.yajl_start_array = scan_open,
	.yajl_end_array = scan_close,
};

/* False with bad set if a string in line holds a control character. */
static bool
strings_clean(const char *line, size_t len, struct bad *bad)
{
	struct scan sc = { .bad = bad };
	yajl_handle h = yajl_alloc(&scan_callbacks, NULL, &sc);

	if (h == NULL)
		return true;	/* the tree parser will fail the same way */
	if (yajl_parse(h, (const unsigned char *)line, len) == yajl_status_ok)
		(void)yajl_complete_parse(h);
	yajl_free(h);
	return !sc.found;
}

/* The request in line as a tree with a valid "v" and "cmd", or NULL with bad set. */
static yajl_val
parse(const char *line, size_t len, struct bad *bad)
{
	char err[256];
	yajl_val req, v, cmd;

	if (memchr(line, '\0', len) != NULL) {
		set_bad(bad, PROTO_E_BAD_REQUEST, "a request cannot hold NUL bytes");
		return NULL;
	}
	if (nesting(line, len, REQUEST_MAX_DEPTH) > REQUEST_MAX_DEPTH) {
		set_bad(bad, PROTO_E_BAD_REQUEST, "nested deeper than %d levels",
		    REQUEST_MAX_DEPTH);
		return NULL;
	}
	if (!strings_clean(line, len, bad))
		return NULL;
	err[0] = '\0';
	if ((req = yajl_tree_parse(line, err, sizeof(err))) == NULL) {
		parse_error(bad, err[0] != '\0' ? err : "out of memory");
		return NULL;
	}
	if (!YAJL_IS_OBJECT(req))
		set_bad(bad, PROTO_E_BAD_REQUEST, "a request is a JSON object");
	else if ((v = control_member(req, "v")) == NULL)
		set_bad(bad, PROTO_E_BAD_REQUEST, "the request has no \"v\"; "
		    "this daemon speaks version %d", PROTO_VERSION);
	else if (!YAJL_IS_INTEGER(v))
		set_bad(bad, PROTO_E_BAD_REQUEST, "\"v\" must be an integer");
	else if (YAJL_GET_INTEGER(v) != PROTO_VERSION)
		set_bad(bad, PROTO_E_VERSION, "version %lld is not supported; "
		    "this daemon speaks version %d", YAJL_GET_INTEGER(v),
		    PROTO_VERSION);
	else if ((cmd = control_member(req, "cmd")) == NULL || !YAJL_IS_STRING(cmd))
		set_bad(bad, PROTO_E_BAD_REQUEST, "\"cmd\" must be a string");
	else
		return req;
	yajl_tree_free(req);
	return NULL;
}

/* ---- hello ---- */

static int
cmd_hello(struct control_reply *out)
{
	yajl_gen g = control_reply_open(true);

	if (g == NULL)
		return -1;
	jsonw_put_int(g, "v", PROTO_VERSION);
	jsonw_put_str(g, "daemon", "spyremond " SPYREMON_VERSION);
	yajl_gen_map_close(g);
	return control_reply_finish(g, false, out);
}

/* ---- begin and end ---- */

static int
window_reply(const struct windows_result *res, bool with_end,
    struct control_reply *out)
{
	yajl_gen g;

	if (res->error != NULL)
		return control_reply_error(res->error, res->message, false, out);
	if ((g = control_reply_open(true)) == NULL)
		return -1;
	window_json_members(g, &(struct window_json){
	    .members = with_end ? WJ_END : 0, .id = res->id, .tag = res->tag,
	    .begin_ns = res->begin_ns, .has_end = true, .end_ns = res->end_ns });
	if (with_end) {
		/* how long it ran by the monotonic clock; a step that crossed it */
		jsonw_put_int(g, "elapsed_ns", res->elapsed_ns);
		if (res->end_note[0] != '\0')
			jsonw_put_str(g, "end_note", res->end_note);
	}
	yajl_gen_map_close(g);
	return control_reply_finish(g, false, out);
}

/*
 * The metadata object meta as key, value pairs in *pairs (pointing into
 * the tree).  NULL meta is none.  -1 with bad set if it is not an object
 * of strings or holds more than PROTO_META_MAX pairs.
 */
static int
meta_pairs(yajl_val meta, const char ***pairs, size_t *n, struct bad *bad)
{
	const char **p;

	*pairs = NULL;
	*n = 0;
	if (meta == NULL || YAJL_IS_NULL(meta))
		return 0;
	if (!YAJL_IS_OBJECT(meta)) {
		set_bad(bad, PROTO_E_BAD_REQUEST, "\"meta\" must be an object");
		return -1;
	}
	if (meta->u.object.len > PROTO_META_MAX) {
		set_bad(bad, PROTO_E_BAD_META, "at most %d metadata pairs",
		    PROTO_META_MAX);
		return -1;
	}
	if (meta->u.object.len == 0)
		return 0;
	if ((p = calloc(2 * meta->u.object.len, sizeof(*p))) == NULL) {
		set_bad(bad, PROTO_E_INTERNAL, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < meta->u.object.len; i++) {
		if (!YAJL_IS_STRING(meta->u.object.values[i])) {
			set_bad(bad, PROTO_E_BAD_META, "metadata values are strings "
			    "(key '%.64s')", meta->u.object.keys[i]);
			free(p);
			return -1;
		}
		p[2 * i] = meta->u.object.keys[i];
		p[2 * i + 1] = YAJL_GET_STRING(meta->u.object.values[i]);
	}
	*pairs = p;
	*n = meta->u.object.len;
	return 0;
}

static int
cmd_begin(const struct control_ctx *ctx, yajl_val req,
    const struct control_peer *peer, int64_t now_ns, struct control_reply *out)
{
	yajl_val tag = control_member(req, "tag"), same = control_member(req, "same_tag");
	yajl_val until = control_member(req, "until_pid"), at = control_member(req, "begin_ns");
	struct windows_begin_req wr = { .uid = peer->uid, .pid = peer->pid,
	    .now_ns = now_ns };
	struct windows_result res;
	const char **pairs;
	struct bad bad;
	int r;

	if (tag == NULL || !YAJL_IS_STRING(tag))
		return control_reply_error(PROTO_E_BAD_REQUEST, "begin needs \"tag\", "
		    "a string", true, out);
	if (same != NULL && !YAJL_IS_TRUE(same) && !YAJL_IS_FALSE(same))
		return control_reply_error(PROTO_E_BAD_REQUEST, "\"same_tag\" must be "
		    "true or false", true, out);
	if (until != NULL && (!YAJL_IS_INTEGER(until) ||
	    YAJL_GET_INTEGER(until) < 1 || YAJL_GET_INTEGER(until) > INT32_MAX))
		return control_reply_error(PROTO_E_BAD_REQUEST, "\"until_pid\" must be "
		    "a process ID, a positive integer", true, out);
	if (until != NULL)
		wr.until_pid = (int32_t)YAJL_GET_INTEGER(until);
	if (at != NULL && (!YAJL_IS_INTEGER(at) || YAJL_GET_INTEGER(at) <= 0))
		return control_reply_error(PROTO_E_BAD_REQUEST, "\"begin_ns\" must be "
		    "a positive integer, ns since the epoch", true, out);
	if (at != NULL)
		wr.at_ns = YAJL_GET_INTEGER(at);
	if (meta_pairs(control_member(req, "meta"), &pairs, &wr.nmeta, &bad) == -1)
		return control_reply_error(bad.code, bad.message,
		    strcmp(bad.code, PROTO_E_BAD_REQUEST) == 0, out);
	wr.tag = YAJL_GET_STRING(tag);
	wr.meta = pairs;
	wr.same_tag = same != NULL && YAJL_IS_TRUE(same);
	windows_begin(ctx->win, &wr, &res);
	r = window_reply(&res, false, out);
	free(pairs);
	return r;
}

static int
cmd_end(const struct control_ctx *ctx, yajl_val req,
    const struct control_peer *peer, int64_t now_ns, struct control_reply *out)
{
	yajl_val tag = control_member(req, "tag"), id = control_member(req, "id");
	yajl_val at = control_member(req, "end_ns");
	struct windows_end_req er = { .by = WINDOWS_END_NEWEST, .uid = peer->uid,
	    .pid = peer->pid, .now_ns = now_ns };
	struct windows_result res;
	struct bad bad = { 0 };
	const char **pairs = NULL;
	int r;

	if (at != NULL && (!YAJL_IS_INTEGER(at) || YAJL_GET_INTEGER(at) <= 0))
		return control_reply_error(PROTO_E_BAD_REQUEST, "\"end_ns\" must be "
		    "a positive integer, ns since the epoch", true, out);
	if (at != NULL)
		er.at_ns = YAJL_GET_INTEGER(at);

	if (tag != NULL && id != NULL)
		return control_reply_error(PROTO_E_BAD_REQUEST, "end takes \"tag\" or "
		    "\"id\", not both", true, out);
	if (tag != NULL) {
		if (!YAJL_IS_STRING(tag))
			return control_reply_error(PROTO_E_BAD_REQUEST, "\"tag\" must be "
			    "a string", true, out);
		er.by = WINDOWS_END_TAG;
		er.tag = YAJL_GET_STRING(tag);
	} else if (id != NULL) {
		if (!YAJL_IS_INTEGER(id) || YAJL_GET_INTEGER(id) <= 0)
			return control_reply_error(PROTO_E_BAD_REQUEST, "\"id\" must be "
			    "a positive integer", true, out);
		er.by = WINDOWS_END_ID;
		er.id = YAJL_GET_INTEGER(id);
	}
	if (meta_pairs(control_member(req, "meta"), &pairs, &er.nmeta, &bad) == -1)
		return control_reply_error(bad.code, bad.message,
		    strcmp(bad.code, PROTO_E_BAD_REQUEST) == 0, out);
	er.meta = pairs;
	windows_end(ctx->win, &er, &res);
	r = window_reply(&res, true, out);
	free(pairs);
	return r;
}

/* ---- status ---- */

static void
status_daemon(yajl_gen g, const struct control_ctx *ctx)
{
	jsonw_str(g, "daemon");
	yajl_gen_map_open(g);
	jsonw_put_str(g, "version", SPYREMON_VERSION);
	jsonw_put_int(g, "pid", getpid());
	jsonw_put_int(g, "started_ns", ctx->started_ns);
	jsonw_put_str(g, "state", "running");
	yajl_gen_map_close(g);
}

static void
status_child(yajl_gen g, const struct source_stats *ss)
{
	jsonw_str(g, "child");
	yajl_gen_map_open(g);
	jsonw_put_int_or_null(g, "pid", ss->pid != 0, ss->pid);
	jsonw_put_str(g, "state", ss->pid != 0 ? "running" : "stopped");
	jsonw_put_uint(g, "restarts", ss->restarts);
	jsonw_put_str_or_null(g, "last_error", ss->last_error);
	jsonw_put_uint(g, "bad_lines", ss->bad_lines);
	jsonw_put_str_or_null(g, "smi_version", ss->smi_version);
	yajl_gen_map_close(g);
}

/* "newest_ns" and "newest_age_ns" of a sample stamped newest (0: none). */
static void
put_newest(yajl_gen g, int64_t newest, int64_t now_ns)
{
	jsonw_put_int_or_null(g, "newest_ns", newest != 0, newest);
	jsonw_put_int_or_null(g, "newest_age_ns", newest != 0, now_ns - newest);
}

static void
status_sampling(yajl_gen g, const struct control_ctx *ctx,
    const struct source_stats *ss, int64_t now_ns)
{
	jsonw_str(g, "sampling");
	yajl_gen_map_open(g);
	jsonw_put_uint(g, "interval_ns", ss->stored_interval_ns);
	jsonw_put_uint(g, "configured_interval_ns", ctx->cfg->source.interval_ns);
	jsonw_put_uint(g, "window_interval_ns", ctx->cfg->source.window_interval_ns);
	jsonw_put_uint(g, "pre_window_ns", ctx->cfg->source.pre_window_ns);
	jsonw_put_uint(g, "child_interval_ns", ss->interval_ns);
	jsonw_put_str(g, "direct", config_direct_name(ctx->cfg->source.direct));
	put_newest(g, ss->newest_ts_ns, now_ns);
	yajl_gen_map_close(g);
}

static void
status_cards(yajl_gen g, const struct control_ctx *ctx)
{
	size_t n;
	const struct card *cards = source_cards(ctx->src, &n);

	jsonw_str(g, "cards");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < n; i++) {
		const struct card *c = &cards[i];

		yajl_gen_map_open(g);
		jsonw_put_str(g, "bus_id", c->bus_id);
		jsonw_put_str(g, "function", c->vf ? "vf" : "pf");
		jsonw_put_int_or_null(g, "numa_node", c->numa_node >= 0,
		    c->numa_node);
		jsonw_put_str_or_null(g, "driver", c->driver);
		jsonw_put_str_or_null(g, "link_speed", c->link_speed);
		jsonw_put_int_or_null(g, "link_width", c->link_width > 0,
		    c->link_width);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
}

static const char *
file_state(enum health_file f)
{
	switch (f) {
	case HEALTH_FILE_MISSING:
		return "missing";
	case HEALTH_FILE_STALE:
		return "stale";
	case HEALTH_FILE_FRESH:
		return "fresh";
	case HEALTH_FILE_NOT_FILE:
		return "not a file";
	case HEALTH_FILE_UNKNOWN:
	default:
		return "unknown";
	}
}

/* "file_metrics": the keys the card's newest file row carries (list). */
static void
file_metrics(yajl_gen g, const char *list)
{
	const char *p = list;

	jsonw_str(g, "file_metrics");
	yajl_gen_array_open(g);
	while (*p != '\0') {
		size_t n = strcspn(p, " ");

		if (n > 0)
			yajl_gen_string(g, (const unsigned char *)p, n);
		p += n;
		p += strspn(p, " ");
	}
	yajl_gen_array_close(g);
}

/*
 * How a card's metric file is read directly: "file" rows carry the
 * writer's stamps, "aiu-smi" rows arrival stamps; why says why a card is
 * not read directly.
 */
static void
status_direct(yajl_gen g, const struct direct_card_stats *dc, int64_t now_ns)
{
	jsonw_put_str(g, "source", dc != NULL && dc->state == DIRECT_READING ?
	    "file" : "aiu-smi");
	if (dc == NULL)
		return;
	jsonw_str(g, "direct");
	yajl_gen_map_open(g);
	jsonw_put_str(g, "state", direct_state_name(dc->state));
	jsonw_put_str_or_null(g, "why", dc->why);
	jsonw_put_str(g, "stamps", "writer");
	jsonw_put_uint(g, "reads", dc->reads);
	jsonw_put_uint(g, "rows", dc->rows);
	jsonw_put_uint(g, "duplicates", dc->duplicates);
	jsonw_put_uint(g, "missed_updates", dc->missed);
	jsonw_put_uint(g, "torn_retries", dc->retries);
	jsonw_put_uint(g, "torn_dropped", dc->torn);
	jsonw_put_uint(g, "updating", dc->updating);
	jsonw_put_uint(g, "errors", dc->errors);
	jsonw_put_uint(g, "reopened", dc->reopened);
	jsonw_put_uint(g, "clock_dropped", dc->clock_dropped);
	jsonw_put_uint(g, "across_step", dc->across_step);
	jsonw_put_str_or_null(g, "clock_why", dc->clock_why);
	jsonw_put_uint(g, "file_interval", dc->interval);
	jsonw_put_bool(g, "byte_swapped", dc->swapped);
	jsonw_put_int_or_null(g, "newest_age_ns", dc->newest_ts_ns != 0,
	    now_ns - dc->newest_ts_ns);
	file_metrics(g, dc->metrics);
	yajl_gen_map_close(g);
}

/* The card's newest sample from either source, and its age. */
static void
card_newest(yajl_gen g, int64_t aiusmi_ns, const struct direct_card_stats *dc,
    int64_t now_ns)
{
	int64_t newest = aiusmi_ns;

	if (dc != NULL && dc->newest_ts_ns > newest)
		newest = dc->newest_ts_ns;
	put_newest(g, newest, now_ns);
}

static void
status_health(yajl_gen g, const struct control_ctx *ctx, int64_t now_ns)
{
	char text[512];

	jsonw_str(g, "health");
	yajl_gen_array_open(g);
	for (int dev = 0; dev < SOURCE_MAX_DEVICES; dev++) {
		const struct source_device *d = source_device(ctx->src, dev);
		const struct direct_card_stats *dc;

		if (d == NULL)
			continue;
		dc = source_direct_card(ctx->src, dev);
		health_describe(&d->health, text, sizeof(text));
		yajl_gen_map_open(g);
		jsonw_put_int(g, "device", dev);
		jsonw_put_str_or_null(g, "bus_id", d->bus_id);
		jsonw_put_str(g, "metric_file", d->health.path);
		jsonw_put_str(g, "state", file_state(d->health.file));
		jsonw_put_bool(g, "counters_zero", health_counters_zero(&d->health));
		jsonw_put_str(g, "text", text);
		card_newest(g, d->newest_ts_ns, dc, now_ns);
		status_direct(g, dc, now_ns);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
}

static void
status_store(yajl_gen g, const struct control_ctx *ctx)
{
	const struct config *cfg = ctx->cfg;
	struct store_stats st;
	char **keys, host[256], mid[256];
	size_t n;

	store_get_stats(ctx->st, &st);
	jsonw_str(g, "database");
	yajl_gen_map_open(g);
	/* the file it writes: a reload cannot move it, only a restart */
	jsonw_put_str(g, "path", cfg->database);
	jsonw_put_str_or_null(g, "path_after_restart", ctx->database_next);
	/* where it was created: databases gathered from many hosts say so */
	if (store_host(ctx->st, host, mid, sizeof(host)) == 0) {
		jsonw_put_str(g, "hostname", host);
		jsonw_put_str(g, "machine_id", mid);
	}
	jsonw_put_uint(g, "file_bytes", st.file_bytes);
	jsonw_put_uint(g, "rows_written", st.rows_written);
	jsonw_put_uint(g, "pending", st.pending);
	jsonw_put_uint(g, "flushes_failed", st.flushes_failed);
	jsonw_put_uint(g, "rows_dropped", st.rows_dropped);
	jsonw_put_uint(g, "recreated", st.recreated);
	/* every SQLite failure met, logged or not, and the damage among them */
	jsonw_put_uint(g, "errors", st.errors);
	jsonw_put_uint(g, "errors_damage", st.errors_damage);
	jsonw_put_str_or_null(g, "last_error", st.last_error);
	jsonw_put_int(g, "last_error_ns", st.last_error_ns);
	/* a damaged log found at start: what, and where the originals are */
	jsonw_put_uint(g, "damaged_kept_aside", st.damaged);
	jsonw_put_bool(g, "damaged_while_running", st.damaged_running);
	jsonw_put_str_or_null(g, "damaged_found", st.damaged_found);
	jsonw_put_str_or_null(g, "damaged_kept_as", st.damaged_kept);
	/* the scheduled checkpoints: a reader holding them back lets the
	 * log grow, and a damaged log would cost more */
	jsonw_str(g, "checkpoint");
	yajl_gen_map_open(g);
	jsonw_put_str(g, "state", st.checkpoint_blocked ? "blocked" : "ok");
	jsonw_put_uint(g, "interval_ns", st.checkpoint_interval_ns);
	jsonw_put_uint(g, "wal_bytes", st.wal_bytes);
	jsonw_put_uint(g, "blocked_ns", st.checkpoint_blocked_ns);
	jsonw_put_int(g, "frames_behind", st.checkpoint_frames_behind);
	yajl_gen_map_close(g);
	jsonw_str(g, "writer");
	yajl_gen_map_open(g);
	jsonw_put_str(g, "state", st.stalled ? "stalled" : "ok");
	jsonw_put_uint(g, "stalled_ns", st.stalled_ns);
	jsonw_put_str_or_null(g, "why", st.why);
	jsonw_put_uint(g, "queued_changes", st.jobs_queued);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);

	jsonw_str(g, "retention");
	yajl_gen_map_open(g);
	jsonw_put_uint(g, "max_age_ns", cfg->retention.max_age_ns);
	jsonw_put_uint(g, "max_size", cfg->retention.max_size);
	jsonw_put_uint(g, "windows_max_age_ns", cfg->retention.windows_max_age_ns);
	jsonw_put_uint(g, "windows_max_open_ns", cfg->windows.max_open_ns);
	yajl_gen_map_close(g);

	jsonw_str(g, "unreliable");
	yajl_gen_array_open(g);
	if (store_unreliable_metrics(ctx->st, &keys, &n) == 0) {
		for (size_t i = 0; i < n; i++)
			jsonw_str(g, keys[i]);
		store_strings_free(keys, n);
	}
	yajl_gen_array_close(g);
}

static void
status_windows(yajl_gen g, const struct control_ctx *ctx)
{
	size_t n;
	const struct window *list = windows_list(ctx->win, &n);

	jsonw_str(g, "windows");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < n; i++) {
		const struct window *w = &list[i];

		window_json(g, &(struct window_json){
		    .members = WJ_OWNER | WJ_META, .id = w->id, .tag = w->tag,
		    .uid = w->uid, .pid = w->pid, .begin_ns = w->begin_ns,
		    .meta_pairs = (const char *const *)w->meta,
		    .nmeta = w->nmeta });
	}
	yajl_gen_array_close(g);
}

static int
cmd_status(const struct control_ctx *ctx, int64_t now_ns,
    struct control_reply *out)
{
	yajl_gen g = control_reply_open(true);
	struct source_stats ss;

	if (g == NULL)
		return -1;
	source_get_stats(ctx->src, &ss);
	status_daemon(g, ctx);
	status_child(g, &ss);
	status_sampling(g, ctx, &ss, now_ns);
	status_cards(g, ctx);
	status_health(g, ctx, now_ns);
	status_store(g, ctx);
	control_status_clock(g, ctx);
	status_windows(g, ctx);
	yajl_gen_map_close(g);
	return control_reply_finish(g, false, out);
}

/* ---- dispatch ---- */

int
control_request_handle(const struct control_ctx *ctx, const char *line,
    size_t len, const struct control_peer *peer, int64_t now_ns,
    struct control_reply *out)
{
	struct bad bad;
	yajl_val req, expires;
	const char *cmd;
	int r;

	/* a bad tag or key is a rule error, which keeps the connection */
	if ((req = parse(line, len, &bad)) == NULL)
		return control_reply_error(bad.code, bad.message,
		    strcmp(bad.code, PROTO_E_BAD_TAG) != 0 &&
		    strcmp(bad.code, PROTO_E_BAD_META) != 0, out);
	cmd = YAJL_GET_STRING(control_member(req, "cmd"));
	expires = control_member(req, "expires_ns");
	if (expires != NULL && !YAJL_IS_INTEGER(expires))
		r = control_reply_error(PROTO_E_BAD_REQUEST, "\"expires_ns\" must be an "
		    "integer", true, out);
	else if (expires != NULL && now_ns > YAJL_GET_INTEGER(expires)) {
		/* the caller has given up: doing it now would surprise it */
		snprintf(bad.message, sizeof(bad.message), "read %.3f s after "
		    "the caller stopped waiting (expires_ns); not done",
		    (double)(now_ns - YAJL_GET_INTEGER(expires)) / 1e9);
		log_notice("control: a %.16s request of uid %u expired before "
		    "it was read; not done", cmd, (unsigned)peer->uid);
		r = control_reply_error(PROTO_E_EXPIRED, bad.message, false, out);
	} else if (strcmp(cmd, "hello") == 0)
		r = cmd_hello(out);
	else if (strcmp(cmd, "begin") == 0)
		r = cmd_begin(ctx, req, peer, now_ns, out);
	else if (strcmp(cmd, "end") == 0)
		r = cmd_end(ctx, req, peer, now_ns, out);
	else if (strcmp(cmd, "status") == 0)
		r = cmd_status(ctx, now_ns, out);
	else if (strcmp(cmd, "sync") == 0)
		r = control_cmd_sync(ctx, req, now_ns, out);
	else {
		snprintf(bad.message, sizeof(bad.message), "unknown command "
		    "'%.40s'; this daemon knows hello, begin, end, status and sync",
		    cmd);
		r = control_reply_error(PROTO_E_UNKNOWN_CMD, bad.message, false, out);
	}
	yajl_tree_free(req);
	return r;
}
