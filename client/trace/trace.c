/*
 * trace: the event reader over yajl's callback parser (contract in
 * trace.h).
 *
 * Each open container gets a role from its parent's role and the key it is
 * the value of; only containers down to the events' members (depth 3)
 * have one, and every callback returns at once below that, which is where
 * most of a trace's bytes (args) are.  Keys are told apart by length first
 * so that an event's uninteresting members cost one switch.
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

enum key {
	KEY_NONE,
	KEY_TRACE_EVENTS, KEY_BASE, KEY_DISPLAY_UNIT, KEY_DISTINFO, KEY_DEVICES,
	KEY_HOST,
	KEY_PH, KEY_TS, KEY_DUR, KEY_NAME, KEY_CAT, KEY_PID, KEY_TID, KEY_ARGS,
	KEY_STREAM, KEY_ARG_DEVICE, KEY_FLOPS, KEY_CYCLES, KEY_TS1, KEY_POWER,
	KEY_CORRELATION,
	KEY_RANK, KEY_WORLD_SIZE,
	KEY_ID, KEY_DEVICE_NAME,
};

/* The members of the event being read. */
struct cur_event {
	char	 ph;
	bool	 has_ts, has_dur, has_pid, is_kernel, name_truncated;
	bool	 has_tid, has_stream, has_device, has_flops, has_cycles;
	bool	 has_power, has_ts1, ts_float, has_correlation;
	int64_t	 stream_id, correlation;
	uint32_t power;
	uint64_t ts1;
	int64_t	 ts, dur, pid, tid, device;
	uint64_t track;
	double	 flops;
	char	 cat[TRACE_CAT_MAX];
	uint64_t offset;
	size_t	 name_len;
	char	 name[TRACE_NAME_MAX];
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
	struct cur_event ev;

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

static enum key
event_key(const unsigned char *k, size_t len)
{
	switch (len) {
	case 2:
		if (k[0] == 't' && k[1] == 's')
			return KEY_TS;
		if (k[0] == 'p' && k[1] == 'h')
			return KEY_PH;
		break;
	case 3:
		if (memcmp(k, "dur", 3) == 0)
			return KEY_DUR;
		if (memcmp(k, "pid", 3) == 0)
			return KEY_PID;
		if (memcmp(k, "cat", 3) == 0)
			return KEY_CAT;
		if (memcmp(k, "tid", 3) == 0)
			return KEY_TID;
		break;
	case 4:
		if (memcmp(k, "name", 4) == 0)
			return KEY_NAME;
		if (memcmp(k, "args", 4) == 0 || memcmp(k, "attr", 4) == 0)
			return KEY_ARGS;
		break;
	default:
		break;
	}
	return KEY_NONE;
}

/* The members of an event's args that are read. */
static enum key
args_key(const unsigned char *k, size_t len)
{
	switch (len) {
	case 3:
		if (memcmp(k, "TS1", 3) == 0)
			return KEY_TS1;
		break;
	case 5:
		if (memcmp(k, "flops", 5) == 0)
			return KEY_FLOPS;
		if (memcmp(k, "Power", 5) == 0)
			return KEY_POWER;
		break;
	case 9:
		if (memcmp(k, "cycles_ts", 9) == 0)
			return KEY_CYCLES;
		break;
	case 11:
		if (memcmp(k, "correlation", 11) == 0)
			return KEY_CORRELATION;
		break;
	case 6:
		if (memcmp(k, "stream", 6) == 0)
			return KEY_STREAM;
		if (memcmp(k, "device", 6) == 0)
			return KEY_ARG_DEVICE;
		break;
	default:
		break;
	}
	return KEY_NONE;
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
		key = event_key(k, len);
		break;
	case ROLE_ARGS:
		key = args_key(k, len);
		if (key == KEY_STREAM) {
			r->ev.has_stream = true;
			r->ev.stream_id = -1;
		}
		else if (key == KEY_CYCLES || key == KEY_TS1)
			r->ev.has_cycles = true;
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

/* A number as scale decimal places; false after failing the parse. */
static bool
number_value(struct trace_reader *r, const char *s, size_t len, int scale,
    const char *what, int64_t *out)
{
	switch (trace_parse_decimal(s, len, scale, out)) {
	case 0:
		return true;
	case -2:
		reader_fail(r, TRACE_ERR_LIMIT, "%s %.*s is out of range",
		    what, (int)(len > 64 ? 64 : len), s);
		return false;
	default:
		reader_fail(r, TRACE_ERR_SYNTAX, "%s %.*s is not a number",
		    what, (int)(len > 64 ? 64 : len), s);
		return false;
	}
}

/* A number that should be an integer (ids, ranks); false if it is not one. */
static bool
integer_value(const char *s, size_t len, int64_t *out)
{
	return trace_parse_decimal(s, len, 0, out) == 0 &&
	    memchr(s, '.', len) == NULL && memchr(s, 'e', len) == NULL &&
	    memchr(s, 'E', len) == NULL;
}

/* The hash of a tid's text, never 0: which track an event is on. */
static uint64_t
track_hash(const void *s, size_t len)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < len; i++)
		h = (h ^ ((const unsigned char *)s)[i]) * 1099511628211ULL;
	return h == 0 ? 1 : h;
}

/*
 * The fraction digits of a ts written s[0..len), into info's most: digits
 * after the point up to an exponent; a number with an exponent counts as
 * 3 (its digits say nothing of how it was printed).
 */
static void
note_decimals(struct trace_info *info, const char *s, size_t len)
{
	const char *dot = memchr(s, '.', len);
	int n = 0;

	if (memchr(s, 'e', len) || memchr(s, 'E', len))
		n = 3;
	else if (dot != NULL)
		n = (int)(len - (size_t)(dot + 1 - s));
	if (n > info->ts_decimals)
		info->ts_decimals = n;
}

static int
event_number(struct trace_reader *r, const char *s, size_t len)
{
	struct cur_event *ev = &r->ev;

	switch (r->key[r->depth]) {
	case KEY_TS:
		if (!number_value(r, s, len, 3, "ts", &ev->ts))
			return 0;
		ev->has_ts = true;
		ev->ts_float = memchr(s, '.', len) || memchr(s, 'e', len) ||
		    memchr(s, 'E', len);
		if (ev->ts_float) {
			r->tally.info.ts_fraction = true;
			note_decimals(&r->tally.info, s, len);
		}
		break;
	case KEY_DUR:
		if (!number_value(r, s, len, 3, "dur", &ev->dur))
			return 0;
		ev->has_dur = true;
		break;
	case KEY_PID:
		ev->has_pid = integer_value(s, len, &ev->pid);
		break;
	case KEY_TID:
		ev->has_tid = integer_value(s, len, &ev->tid);
		ev->track = track_hash(s, len);
		break;
	default:
		break;
	}
	return 1;
}

/* An unsigned decimal of at most max, as a number or a string; false if not. */
static bool
unsigned_value(const char *s, size_t len, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (len == 0 || len > 20)
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned d = (unsigned)(s[i] - '0');

		if (d > 9 || v > (max - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

/* The Spyre runtime's charge counter and first cycle stamp, if s is one. */
static void
args_counter(struct trace_reader *r, const char *s, size_t len)
{
	struct cur_event *ev = &r->ev;
	uint64_t v = 0;

	if (r->key[r->depth] == KEY_POWER) {
		ev->has_power = unsigned_value(s, len, UINT32_MAX, &v);
		ev->power = (uint32_t)v;
	} else if (r->key[r->depth] == KEY_TS1) {
		ev->has_ts1 = unsigned_value(s, len, UINT64_MAX, &v);
		ev->ts1 = v;
	}
}

/*
 * args.stream as a number, the way Holistic Trace Analysis reads it: a
 * number or numeric string truncated to an integer; anything else -1.
 */
static void
args_stream(struct trace_reader *r, const char *s, size_t len)
{
	char buf[64], *end;
	double v;

	if (r->key[r->depth] != KEY_STREAM)
		return;
	r->ev.stream_id = -1;
	if (len == 0 || len >= sizeof(buf))
		return;
	memcpy(buf, s, len);
	buf[len] = '\0';
	v = strtod(buf, &end);
	if (*end == '\0' && v == v && v > -9e18 && v < 9e18 &&
	    strpbrk(buf, "xXnNiI") == NULL)
		r->ev.stream_id = (int64_t)v;
}

/* A number among an event's args: device, flops, Power and TS1. */
static void
args_number(struct trace_reader *r, const char *s, size_t len)
{
	struct cur_event *ev = &r->ev;
	char buf[64], *end;

	args_counter(r, s, len);
	args_stream(r, s, len);
	switch (r->key[r->depth]) {
	case KEY_CORRELATION:
		r->ev.has_correlation = integer_value(s, len,
		    &r->ev.correlation);
		break;
	case KEY_ARG_DEVICE:
		ev->has_device = integer_value(s, len, &ev->device);
		break;
	case KEY_FLOPS:
		if (len >= sizeof(buf))
			break;
		memcpy(buf, s, len);
		buf[len] = '\0';
		ev->flops = strtod(buf, &end);
		ev->has_flops = *end == '\0' && ev->flops >= 0 &&
		    ev->flops <= 1e300;
		break;
	default:
		break;
	}
}

static int
cb_number(void *ctx, const char *s, size_t len)
{
	struct trace_reader *r = ctx;
	struct trace_info *in = &r->tally.info;
	int64_t v;

	if (r->depth > ROLE_DEPTH)
		return 1;
	switch (r->role[r->depth]) {
	case ROLE_EVENT:
		return event_number(r, s, len);
	case ROLE_ARGS:
		args_number(r, s, len);
		break;
	case ROLE_TOP:
		if (r->key[r->depth] == KEY_BASE) {
			if (!number_value(r, s, len, 0, "baseTimeNanoseconds",
			    &in->base_ns))
				return 0;
			in->has_base = true;
		}
		break;
	case ROLE_DISTINFO:
		if (r->key[r->depth] == KEY_RANK && integer_value(s, len, &v)) {
			in->has_rank = true;
			in->rank = v;
		} else if (r->key[r->depth] == KEY_WORLD_SIZE &&
		    integer_value(s, len, &v)) {
			in->has_world_size = true;
			in->world_size = v;
		}
		break;
	case ROLE_DEVICE:
		if (r->device != NULL && r->key[r->depth] == KEY_ID &&
		    integer_value(s, len, &v)) {
			r->device->has_id = true;
			r->device->id = v;
		}
		break;
	default:
		return !misplaced_scalar(r, "a number");
	}
	return 1;
}

static void
event_string(struct trace_reader *r, const unsigned char *s, size_t len)
{
	struct cur_event *ev = &r->ev;

	switch (r->key[r->depth]) {
	case KEY_PH:
		ev->ph = len == 1 ? (char)s[0] : '\0';
		break;
	case KEY_NAME:
		ev->name_truncated = len >= sizeof(ev->name);
		if (ev->name_truncated)
			len = sizeof(ev->name) - 1;
		memcpy(ev->name, s, len);
		ev->name[len] = '\0';
		ev->name_len = len;
		break;
	case KEY_TID:
		ev->track = track_hash(s, len);
		break;
	case KEY_CAT:
		ev->is_kernel = len == 6 && memcmp(s, "kernel", 6) == 0;
		if (len >= sizeof(ev->cat))
			len = sizeof(ev->cat) - 1;
		memcpy(ev->cat, s, len);
		ev->cat[len] = '\0';
		break;
	default:
		break;
	}
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
		event_string(r, s, len);
		break;
	case ROLE_ARGS:
		args_counter(r, (const char *)s, len);
		args_stream(r, (const char *)s, len);
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

static void
event_begin(struct trace_reader *r)
{
	struct cur_event *ev = &r->ev;

	ev->ph = '\0';
	ev->has_ts = ev->has_dur = ev->has_pid = false;
	ev->is_kernel = ev->name_truncated = false;
	ev->has_tid = ev->has_stream = ev->has_device = ev->has_flops = false;
	ev->has_cycles = ev->has_power = ev->has_ts1 = false;
	ev->ts_float = ev->has_correlation = false;
	ev->stream_id = -1;
	ev->track = 0;
	ev->cat[0] = '\0';
	ev->name_len = 0;
	ev->name[0] = '\0';
	/* the '{' was the last byte yajl took */
	ev->offset = r->fed + yajl_get_bytes_consumed(r->h) - 1;
	r->tally.info.nelements++;
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
		event_begin(r);
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
	struct cur_event *ev = &r->ev;
	struct trace_event out;
	const char *why;

	out.ph = ev->ph;
	out.name = ev->name;
	out.name_truncated = ev->name_truncated;
	out.has_ts = ev->has_ts;
	out.has_dur = ev->has_dur;
	out.has_pid = ev->has_pid;
	out.ts_ns = ev->ts;
	out.dur_ns = ev->dur;
	if (ev->has_dur && ev->dur < 0) {
		out.dur_ns = 0;
		r->tally.info.negative_durs++;
	}
	out.pid = ev->pid;
	out.is_kernel = ev->is_kernel;
	out.cat = ev->cat;
	out.has_tid = ev->has_tid;
	out.tid = ev->tid;
	out.has_stream = ev->has_stream;
	out.stream_id = ev->stream_id;
	out.ts_float = ev->ts_float;
	out.has_correlation = ev->has_correlation;
	out.correlation = ev->correlation;
	out.has_device = ev->has_device;
	out.device = ev->device;
	out.has_flops = ev->has_flops;
	out.flops = ev->flops;
	out.has_cycles = ev->has_cycles;
	out.has_counter = ev->has_power && ev->has_ts1;
	out.counter = ev->power;
	out.cycle_stamp = ev->ts1;
	out.track = ev->track;
	out.is_step = ev->ph == 'X' && ev->has_ts && !ev->name_truncated &&
	    step_matcher_match(r->steps_re, ev->name, ev->name_len);
	out.offset = ev->offset;
	out.length = r->fed + yajl_get_bytes_consumed(r->h) - ev->offset;
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
