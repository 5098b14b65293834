/*
 * trace_event: one event's members, as the parser meets them, into the
 * trace_event that the tally and on_event see (contract in trace_priv.h).
 *
 * Only the members that trace.h names are kept: ph, ts, dur, name, cat,
 * pid and tid, and of the args (or attr) stream, device, flops,
 * correlation and the Spyre runtime's cycle stamps and charge counter.
 * Keys are told apart by length first, so that an event's uninteresting
 * members cost one switch.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"
#include "trace_priv.h"

void
event_draft_begin(struct event_draft *ev, uint64_t offset)
{
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
	ev->offset = offset;
}

enum key
event_draft_key(const unsigned char *k, size_t len)
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

enum key
event_draft_args_key(struct event_draft *ev, const unsigned char *k,
    size_t len)
{
	enum key key = args_key(k, len);

	if (key == KEY_STREAM) {
		ev->has_stream = true;
		ev->stream_id = -1;
	} else if (key == KEY_CYCLES || key == KEY_TS1)
		ev->has_cycles = true;
	return key;
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

int
event_draft_number(struct event_draft *ev, enum key key, const char *s,
    size_t len, struct trace_info *info, char *msg, size_t msglen)
{
	int rc;

	switch (key) {
	case KEY_TS:
		if ((rc = trace_number_value(s, len, 3, "ts", &ev->ts, msg,
		    msglen)) != TRACE_OK)
			return rc;
		ev->has_ts = true;
		ev->ts_float = memchr(s, '.', len) || memchr(s, 'e', len) ||
		    memchr(s, 'E', len);
		if (ev->ts_float) {
			info->ts_fraction = true;
			note_decimals(info, s, len);
		}
		break;
	case KEY_DUR:
		if ((rc = trace_number_value(s, len, 3, "dur", &ev->dur, msg,
		    msglen)) != TRACE_OK)
			return rc;
		ev->has_dur = true;
		break;
	case KEY_PID:
		ev->has_pid = trace_integer_value(s, len, &ev->pid);
		break;
	case KEY_TID:
		ev->has_tid = trace_integer_value(s, len, &ev->tid);
		ev->track = track_hash(s, len);
		break;
	default:
		break;
	}
	return TRACE_OK;
}

void
event_draft_string(struct event_draft *ev, enum key key,
    const unsigned char *s, size_t len)
{
	switch (key) {
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
args_counter(struct event_draft *ev, enum key key, const char *s, size_t len)
{
	uint64_t v = 0;

	if (key == KEY_POWER) {
		ev->has_power = unsigned_value(s, len, UINT32_MAX, &v);
		ev->power = (uint32_t)v;
	} else if (key == KEY_TS1) {
		ev->has_ts1 = unsigned_value(s, len, UINT64_MAX, &v);
		ev->ts1 = v;
	}
}

/*
 * args.stream as a number, the way Holistic Trace Analysis reads it: a
 * number or numeric string truncated to an integer; anything else -1.
 */
static void
args_stream(struct event_draft *ev, enum key key, const char *s, size_t len)
{
	char buf[64], *end;
	double v;

	if (key != KEY_STREAM)
		return;
	ev->stream_id = -1;
	if (len == 0 || len >= sizeof(buf))
		return;
	memcpy(buf, s, len);
	buf[len] = '\0';
	v = strtod(buf, &end);
	if (*end == '\0' && v == v && v > -9e18 && v < 9e18 &&
	    strpbrk(buf, "xXnNiI") == NULL)
		ev->stream_id = (int64_t)v;
}

/* A number among an event's args: device, flops, Power and TS1. */
void
event_draft_args_number(struct event_draft *ev, enum key key, const char *s,
    size_t len)
{
	char buf[64], *end;

	args_counter(ev, key, s, len);
	args_stream(ev, key, s, len);
	switch (key) {
	case KEY_CORRELATION:
		ev->has_correlation = trace_integer_value(s, len,
		    &ev->correlation);
		break;
	case KEY_ARG_DEVICE:
		ev->has_device = trace_integer_value(s, len, &ev->device);
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

/* A string among an event's args: Power, TS1 and stream may be strings. */
void
event_draft_args_string(struct event_draft *ev, enum key key, const char *s,
    size_t len)
{
	args_counter(ev, key, s, len);
	args_stream(ev, key, s, len);
}

void
event_draft_finish(const struct event_draft *ev, uint64_t length,
    struct step_matcher *m, struct trace_info *info, struct trace_event *out)
{
	out->ph = ev->ph;
	out->name = ev->name;
	out->name_truncated = ev->name_truncated;
	out->has_ts = ev->has_ts;
	out->has_dur = ev->has_dur;
	out->has_pid = ev->has_pid;
	out->ts_ns = ev->ts;
	out->dur_ns = ev->dur;
	if (ev->has_dur && ev->dur < 0) {
		out->dur_ns = 0;
		info->negative_durs++;
	}
	out->pid = ev->pid;
	out->is_kernel = ev->is_kernel;
	out->cat = ev->cat;
	out->has_tid = ev->has_tid;
	out->tid = ev->tid;
	out->has_stream = ev->has_stream;
	out->stream_id = ev->stream_id;
	out->ts_float = ev->ts_float;
	out->has_correlation = ev->has_correlation;
	out->correlation = ev->correlation;
	out->has_device = ev->has_device;
	out->device = ev->device;
	out->has_flops = ev->has_flops;
	out->flops = ev->flops;
	out->has_cycles = ev->has_cycles;
	out->has_counter = ev->has_power && ev->has_ts1;
	out->counter = ev->power;
	out->cycle_stamp = ev->ts1;
	out->track = ev->track;
	out->is_step = ev->ph == 'X' && ev->has_ts && !ev->name_truncated &&
	    step_matcher_match(m, ev->name, ev->name_len);
	out->offset = ev->offset;
	out->length = length;
}
