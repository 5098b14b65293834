/*
 * trace: the event reader over yajl's callback parser (contract in
 * trace.h): the trace's structure, its header, and the reader's calls.
 *
 * Each open container gets a role from its parent's role and the key it is
 * the value of; only containers down to the events' members (depth 3)
 * have one, and every callback returns at once below that, which is where
 * most of a trace's bytes (args) are.  What an event's members say is
 * trace_event.c's, and what the events add up to trace_tally.c's.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_parse.h>

#include "trace.h"
#include "trace_priv.h"

/*
 * Containers deeper than this have no role; events' members are at 3,
 * the members of their args at 4.
 */
#define ROLE_DEPTH	4
/* Nesting deeper than this is refused, so yajl's state stays small. */
#define MAX_DEPTH	4096

enum role {
	ROLE_OTHER,
	ROLE_TOP,	/* the top-level object */
	ROLE_EVENTS,	/* traceEvents, or the legacy top-level array */
	ROLE_EVENT,
	ROLE_ARGS,	/* an event's args */
	ROLE_DISTINFO,	/* distributedInfo */
	ROLE_DEVICES,	/* deviceProperties */
	ROLE_DEVICE,
};

struct trace_reader {
	yajl_handle	 h;
	struct trace_options opts;
	struct step_matcher *steps_re;
	uint64_t	 fed;		/* bytes given to yajl before this chunk */
	int		 depth;		/* containers open */
	enum role	 role[ROLE_DEPTH + 1];	/* of the container at each depth */
	enum key	 key[ROLE_DEPTH + 1];	/* last key of the map at each depth */
	bool		 seen_text;	/* a byte other than white space */
	bool		 seen_events;
	struct event_draft ev;

	size_t		 devices_cap;
	struct trace_device *device;	/* the entry being read, or NULL */
	struct trace_tally tally;	/* its info holds what the header says */

	int		 rc;		/* set by a callback that stops the parse */
	struct trace_error *err;
};

static void
reader_fail(struct trace_reader *r, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Stop the parse with rc; the offset is where yajl stands now. */
static void
reader_fail(struct trace_reader *r, int rc, const char *fmt, ...)
{
	va_list ap;

	r->rc = rc;
	r->err->has_offset = true;
	r->err->offset = r->fed + yajl_get_bytes_consumed(r->h);
	va_start(ap, fmt);
	vsnprintf(r->err->msg, sizeof(r->err->msg), fmt, ap);
	va_end(ap);
}

static bool
key_is(const unsigned char *k, size_t len, const char *name)
{
	return strlen(name) == len && memcmp(k, name, len) == 0;
}

/*
 * The keys read in the maps outside the events, by the role of the map:
 * the header, distributedInfo and a deviceProperties entry.
 */
static const struct role_key {
	enum role role;
	const char *name;
	enum key key;
} role_keys[] = {
	{ ROLE_TOP, "traceEvents", KEY_TRACE_EVENTS },
	{ ROLE_TOP, "baseTimeNanoseconds", KEY_BASE },
	{ ROLE_TOP, "displayTimeUnit", KEY_DISPLAY_UNIT },
	{ ROLE_TOP, "distributedInfo", KEY_DISTINFO },
	{ ROLE_TOP, "deviceProperties", KEY_DEVICES },
	{ ROLE_TOP, "host_name", KEY_HOST },
	{ ROLE_TOP, "hostname", KEY_HOST },
	{ ROLE_TOP, "hostName", KEY_HOST },
	{ ROLE_DISTINFO, "rank", KEY_RANK },
	{ ROLE_DISTINFO, "world_size", KEY_WORLD_SIZE },
	{ ROLE_DEVICE, "id", KEY_ID },
	{ ROLE_DEVICE, "name", KEY_DEVICE_NAME },
};

/* The key k is in a map of role role, from role_keys. */
static enum key
role_key(enum role role, const unsigned char *k, size_t len)
{
	for (size_t i = 0; i < sizeof(role_keys) / sizeof(role_keys[0]); i++)
		if (role_keys[i].role == role && key_is(k, len,
		    role_keys[i].name))
			return role_keys[i].key;
	return KEY_NONE;
}

static int
cb_map_key(void *ctx, const unsigned char *k, size_t len)
{
	struct trace_reader *r = ctx;
	enum key key = KEY_NONE;

	if (r->depth > ROLE_DEPTH)
		return 1;
	switch (r->role[r->depth]) {
	case ROLE_EVENT:
		key = event_draft_key(k, len);
		break;
	case ROLE_ARGS:
		key = event_draft_args_key(&r->ev, k, len);
		break;
	case ROLE_TOP:
	case ROLE_DISTINFO:
	case ROLE_DEVICE:
		key = role_key(r->role[r->depth], k, len);
		break;
	default:
		break;
	}
	r->key[r->depth] = key;
	return 1;
}

/* A scalar where only an object may be: the top level or an event. */
static bool
misplaced_scalar(struct trace_reader *r, const char *what)
{
	if (r->depth == 0) {
		reader_fail(r, TRACE_ERR_FORMAT, "not a trace: the top-level "
		    "value is %s, not an object or array", what);
		return true;
	}
	if (r->role[r->depth] == ROLE_EVENTS) {
		reader_fail(r, TRACE_ERR_FORMAT, "event %" PRIu64 " is %s, "
		    "not an object", r->tally.info.nelements + 1, what);
		return true;
	}
	return false;
}

static int
cb_null(void *ctx)
{
	struct trace_reader *r = ctx;

	return r->depth > ROLE_DEPTH || !misplaced_scalar(r, "null");
}

static int
cb_boolean(void *ctx, int v)
{
	struct trace_reader *r = ctx;

	return r->depth > ROLE_DEPTH ||
	    !misplaced_scalar(r, v ? "true" : "false");
}

static int
event_number(struct trace_reader *r, const char *s, size_t len)
{
	char msg[sizeof(r->err->msg)];
	int rc;

	if ((rc = event_draft_number(&r->ev, r->key[r->depth], s, len,
	    &r->tally.info, msg, sizeof(msg))) != TRACE_OK) {
		reader_fail(r, rc, "%s", msg);
		return 0;
	}
	return 1;
}
static int
cb_number(void *ctx, const char *s, size_t len)
{
	struct trace_reader *r = ctx;
	struct trace_info *in = &r->tally.info;
	char msg[sizeof(r->err->msg)];
	int64_t v;
	int rc;

	if (r->depth > ROLE_DEPTH)
		return 1;
	switch (r->role[r->depth]) {
	case ROLE_EVENT:
		return event_number(r, s, len);
	case ROLE_ARGS:
		event_draft_args_number(&r->ev, r->key[r->depth], s, len);
		break;
	case ROLE_TOP:
		if (r->key[r->depth] == KEY_BASE) {
			if ((rc = trace_number_value(s, len, 0,
			    "baseTimeNanoseconds", &in->base_ns, msg,
			    sizeof(msg))) != TRACE_OK) {
				reader_fail(r, rc, "%s", msg);
				return 0;
			}
			in->has_base = true;
		}
		break;
	case ROLE_DISTINFO:
		if (r->key[r->depth] == KEY_RANK &&
		    trace_integer_value(s, len, &v)) {
			in->has_rank = true;
			in->rank = v;
		} else if (r->key[r->depth] == KEY_WORLD_SIZE &&
		    trace_integer_value(s, len, &v)) {
			in->has_world_size = true;
			in->world_size = v;
		}
		break;
	case ROLE_DEVICE:
		if (r->device != NULL && r->key[r->depth] == KEY_ID &&
		    trace_integer_value(s, len, &v)) {
			r->device->has_id = true;
			r->device->id = v;
		}
		break;
	default:
		return !misplaced_scalar(r, "a number");
	}
	return 1;
}

static int
cb_string(void *ctx, const unsigned char *s, size_t len)
{
	struct trace_reader *r = ctx;
	struct trace_info *in = &r->tally.info;

	if (r->depth > ROLE_DEPTH)
		return 1;
	switch (r->role[r->depth]) {
	case ROLE_EVENT:
		event_draft_string(&r->ev, r->key[r->depth], s, len);
		break;
	case ROLE_ARGS:
		event_draft_args_string(&r->ev, r->key[r->depth],
		    (const char *)s, len);
		break;
	case ROLE_TOP:
		if (r->key[r->depth] == KEY_DISPLAY_UNIT) {
			if (len >= sizeof(in->display_time_unit))
				len = sizeof(in->display_time_unit) - 1;
			memcpy(in->display_time_unit, s, len);
			in->display_time_unit[len] = '\0';
		} else if (r->key[r->depth] == KEY_HOST && in->host[0] == '\0') {
			if (len >= sizeof(in->host))
				len = sizeof(in->host) - 1;
			memcpy(in->host, s, len);
			in->host[len] = '\0';
		}
		break;
	case ROLE_DEVICE:
		if (r->device != NULL && r->key[r->depth] == KEY_DEVICE_NAME) {
			free(r->device->name);
			if ((r->device->name = strndup((const char *)s,
			    len)) == NULL) {
				reader_fail(r, TRACE_ERR_NOMEM, "out of memory");
				return 0;
			}
		}
		break;
	default:
		return !misplaced_scalar(r, "a string");
	}
	return 1;
}

static bool
device_begin(struct trace_reader *r)
{
	struct trace_info *in = &r->tally.info;
	struct trace_device *d;

	r->device = NULL;
	if (in->ndevices == TRACE_MAX_DEVICES) {
		in->devices_truncated = true;
		return true;
	}
	if (in->ndevices == r->devices_cap) {
		size_t cap = r->devices_cap ? 2 * r->devices_cap : 8;

		if ((d = reallocarray(in->devices, cap, sizeof(*d))) == NULL) {
			reader_fail(r, TRACE_ERR_NOMEM, "out of memory");
			return false;
		}
		in->devices = d;
		r->devices_cap = cap;
	}
	r->device = &in->devices[in->ndevices++];
	memset(r->device, 0, sizeof(*r->device));
	return true;
}

/* The role of a container opening at depth r->depth + 1; false to stop. */
static bool
container_role(struct trace_reader *r, bool is_map, enum role *out)
{
	enum role parent = r->depth == 0 ? ROLE_OTHER : r->role[r->depth];
	enum key key = r->depth == 0 ? KEY_NONE : r->key[r->depth];

	*out = ROLE_OTHER;
	if (r->depth == 0) {
		*out = is_map ? ROLE_TOP : ROLE_EVENTS;
		if (!is_map) {
			r->seen_events = true;
			r->tally.info.events_open = r->fed +
			    yajl_get_bytes_consumed(r->h) - 1;
		}
		return true;
	}
	switch (parent) {
	case ROLE_TOP:
		if (key == KEY_TRACE_EVENTS) {
			if (is_map || r->seen_events) {
				reader_fail(r, TRACE_ERR_FORMAT, is_map ?
				    "traceEvents is not an array" :
				    "traceEvents appears twice");
				return false;
			}
			r->seen_events = true;
			r->tally.info.events_open = r->fed +
			    yajl_get_bytes_consumed(r->h) - 1;
			*out = ROLE_EVENTS;
		} else if (key == KEY_DISTINFO && is_map)
			*out = ROLE_DISTINFO;
		else if (key == KEY_DEVICES && !is_map)
			*out = ROLE_DEVICES;
		return true;
	case ROLE_EVENTS:
		if (!is_map) {
			misplaced_scalar(r, "an array");
			return false;
		}
		/* the '{' was the last byte yajl took */
		event_draft_begin(&r->ev, r->fed +
		    yajl_get_bytes_consumed(r->h) - 1);
		r->tally.info.nelements++;
		*out = ROLE_EVENT;
		return true;
	case ROLE_EVENT:
		if (key == KEY_ARGS && is_map)
			*out = ROLE_ARGS;
		return true;
	case ROLE_DEVICES:
		if (is_map) {
			*out = ROLE_DEVICE;
			return device_begin(r);
		}
		return true;
	default:
		return true;
	}
}

static int
container_open(struct trace_reader *r, bool is_map)
{
	enum role role;

	if (r->depth >= ROLE_DEPTH) {
		if (r->depth >= MAX_DEPTH) {
			reader_fail(r, TRACE_ERR_FORMAT, "nested deeper than "
			    "%d levels", MAX_DEPTH);
			return 0;
		}
		r->depth++;
		return 1;
	}
	if (!container_role(r, is_map, &role))
		return 0;
	r->depth++;
	r->role[r->depth] = role;
	r->key[r->depth] = KEY_NONE;
	return 1;
}

static int
cb_start_map(void *ctx)
{
	return container_open(ctx, true);
}

static int
cb_start_array(void *ctx)
{
	return container_open(ctx, false);
}

static int
event_end(struct trace_reader *r)
{
	struct trace_event out;
	const char *why;

	event_draft_finish(&r->ev, r->fed + yajl_get_bytes_consumed(r->h) -
	    r->ev.offset, r->steps_re, &r->tally.info, &out);
	if ((r->rc = tally_event(&r->tally, &out, &why)) != TRACE_OK) {
		reader_fail(r, r->rc, "%s", why);
		return 0;
	}
	if (r->opts.on_event != NULL)
		r->opts.on_event(&out, r->opts.arg);
	return 1;
}

static int
container_close(struct trace_reader *r)
{
	enum role role = r->depth <= ROLE_DEPTH ? r->role[r->depth] : ROLE_OTHER;
	int ok = 1;

	switch (role) {
	case ROLE_EVENT:
		ok = event_end(r);
		break;
	case ROLE_EVENTS:
		r->tally.info.events_close = r->fed + yajl_get_bytes_consumed(r->h) - 1;
		break;
	case ROLE_DEVICE:
		r->device = NULL;
		break;
	default:
		break;
	}
	r->depth--;
	return ok;
}

static int
cb_end_map(void *ctx)
{
	return container_close(ctx);
}

static int
cb_end_array(void *ctx)
{
	return container_close(ctx);
}

static const yajl_callbacks callbacks = {
	.yajl_null = cb_null,
	.yajl_boolean = cb_boolean,
	.yajl_number = cb_number,
	.yajl_string = cb_string,
	.yajl_start_map = cb_start_map,
	.yajl_map_key = cb_map_key,
	.yajl_end_map = cb_end_map,
	.yajl_start_array = cb_start_array,
	.yajl_end_array = cb_end_array,
};

int
trace_reader_new(const struct trace_options *opts, struct trace_reader **out,
    struct trace_error *err)
{
	struct trace_reader *r;
	const char *pattern;
	int rc;

	memset(err, 0, sizeof(*err));
	if ((r = calloc(1, sizeof(*r))) == NULL)
		goto nomem;
	if (opts != NULL)
		r->opts = *opts;
	pattern = r->opts.step_pattern ? r->opts.step_pattern :
	    TRACE_STEP_PATTERN;
	if ((rc = step_matcher_new(pattern, &r->steps_re, err)) != TRACE_OK) {
		free(r);
		return rc;
	}
	if (tally_init(&r->tally) != TRACE_OK ||
	    (r->h = yajl_alloc(&callbacks, NULL, r)) == NULL) {
		trace_reader_free(r);
		goto nomem;
	}
	/* names are only compared and printed: bytes pass as they are */
	yajl_config(r->h, yajl_dont_validate_strings, 1);
	r->err = err;
	*out = r;
	return TRACE_OK;
nomem:
	snprintf(err->msg, sizeof(err->msg), "out of memory");
	return TRACE_ERR_NOMEM;
}

void
trace_reader_free(struct trace_reader *r)
{
	if (r == NULL)
		return;
	if (r->h != NULL)
		yajl_free(r->h);
	step_matcher_free(r->steps_re);
	tally_free(&r->tally);
	free(r);
}

static bool
is_json_space(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* A yajl error (not one of ours) as *err, at offset. */
static int
yajl_failure(struct trace_reader *r, const void *buf, size_t len,
    uint64_t offset)
{
	unsigned char *text;
	size_t n;

	r->err->has_offset = true;
	r->err->offset = offset;
	text = yajl_get_error(r->h, 0, buf, len);
	snprintf(r->err->msg, sizeof(r->err->msg), "%s",
	    text ? (const char *)text : "JSON error");
	if (text != NULL)
		yajl_free_error(r->h, text);
	n = strlen(r->err->msg);
	while (n > 0 && (r->err->msg[n - 1] == '\n' || r->err->msg[n - 1] == ' '))
		r->err->msg[--n] = '\0';
	return r->rc = TRACE_ERR_SYNTAX;
}

int
trace_reader_feed(struct trace_reader *r, const void *buf, size_t len,
    struct trace_error *err)
{
	yajl_status st;

	r->err = err;
	if (r->rc != TRACE_OK)
		return r->rc;
	for (size_t i = 0; !r->seen_text && i < len; i++)
		r->seen_text = !is_json_space(((const unsigned char *)buf)[i]);
	st = yajl_parse(r->h, buf, len);
	if (st == yajl_status_client_canceled)
		return r->rc;
	if (st != yajl_status_ok)
		return yajl_failure(r, buf, len,
		    r->fed + yajl_get_bytes_consumed(r->h));
	r->fed += len;
	r->tally.info.bytes = r->fed;
	return TRACE_OK;
}

static int
finish_fail(struct trace_reader *r, int rc, bool at_end, const char *msg)
{
	r->err->has_offset = at_end;
	r->err->offset = r->fed;
	snprintf(r->err->msg, sizeof(r->err->msg), "%s", msg);
	return r->rc = rc;
}

int
trace_reader_finish(struct trace_reader *r, struct trace_info *info,
    struct trace_error *err)
{
	const char *why;
	int rc;

	r->err = err;
	memset(info, 0, sizeof(*info));
	if (r->rc != TRACE_OK)
		return r->rc;
	if (r->fed == 0)
		return finish_fail(r, TRACE_ERR_EMPTY, false, "the file is empty");
	if (!r->seen_text)
		return finish_fail(r, TRACE_ERR_EMPTY, false,
		    "no JSON value, only white space");
	if (yajl_complete_parse(r->h) != yajl_status_ok) {
		if (r->rc != TRACE_OK)
			return r->rc;
		return yajl_failure(r, NULL, 0, r->fed);
	}
	if (!r->seen_events)
		return finish_fail(r, TRACE_ERR_FORMAT, false,
		    "not a trace: the object has no traceEvents array");
	if ((rc = tally_finish(&r->tally, r->role[1] == ROLE_EVENTS,
	    &why)) != TRACE_OK)
		return finish_fail(r, rc, false, why);
	*info = r->tally.info;
	memset(&r->tally.info, 0, sizeof(r->tally.info));
	return TRACE_OK;
}
