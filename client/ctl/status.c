/*
 * status: the daemon's own account of itself, from the control socket.
 *
 * The reply (proto.h) is printed for a person: by default as a screen
 * (status_brief.c), with -v section by section, whole, or with --json as
 * the reply object, pretty-printed, without its "ok" member (which only
 * says the request worked).  The -v printer reads every member
 * tolerantly: one it does not expect is still shown, generically, and one
 * that is missing is left out, so daemons older or newer than the client
 * are shown as well as they can be.  Ages and spans are in seconds;
 * configured durations as configured.
 */
#include <err.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "cmd.h"
#include "ctl.h"
#include "format.h"
#include "json.h"
#include "proto.h"
#include "status.h"
#include "timeparse.h"

enum { OPT_JSON = CLIENT_OPT_FIRST_FREE };

/* Stamps after 2001-09-09 are points in time; smaller _ns are spans. */
#define TIME_NS_MIN	1000000000000000000LL

/* The damage was met while the daemon ran (not at its start). */
static bool
running(yajl_val db)
{
	bool b = false;

	return json_bool(db, "damaged_while_running", &b) && b;
}

static bool
ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/*
 * A scalar for a person: "_ns" members as a time (with its age) or a span
 * (in seconds, or as configured when a whole number of ms), sizes in IEC
 * units, strings bare, others as JSON.
 */
static void
scalar_text(const char *key, yajl_val v, char *buf, size_t len)
{
	char a[FMT_BUFLEN], b[FMT_BUFLEN];
	int64_t i;

	if (YAJL_IS_STRING(v))
		snprintf(buf, len, "%s", v->u.string);
	else if (YAJL_IS_INTEGER(v) && ends_with(key, "_ns")) {
		i = v->u.number.i;
		if (i >= TIME_NS_MIN) {
			fmt_time_ms(i, a, sizeof(a));
			fmt_span(now_realtime_ns() - i, b, sizeof(b));
			snprintf(buf, len, "%s (%s ago)", a, b);
		} else if (i >= 0 && i % (int64_t)NSEC_PER_MSEC == 0) {
			format_duration((uint64_t)i, a, sizeof(a));
			snprintf(buf, len, "%s", a);
		} else if (i >= 0) {
			fmt_span(i, a, sizeof(a));
			snprintf(buf, len, "%s", a);
		} else
			snprintf(buf, len, "%" PRId64, i);
	} else if (YAJL_IS_INTEGER(v) && v->u.number.i >= 0 &&
	    (ends_with(key, "bytes") || ends_with(key, "size"))) {
		fmt_size_approx((uint64_t)v->u.number.i, buf, len);
	} else if (YAJL_IS_NUMBER(v))
		snprintf(buf, len, "%s", v->u.number.r);
	else if (YAJL_IS_TRUE(v) || YAJL_IS_FALSE(v))
		snprintf(buf, len, "%s", YAJL_IS_TRUE(v) ? "yes" : "no");
	else if (YAJL_IS_NULL(v))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "...");
}

/* A name for a person: "last_error" -> "last error", "_ns" dropped. */
static void
key_text(const char *key, char *buf, size_t len)
{
	size_t i, n = strlen(key);

	if (ends_with(key, "_ns"))
		n -= 3;
	for (i = 0; i < n && i + 1 < len; i++)
		buf[i] = key[i] == '_' ? ' ' : key[i];
	buf[i] = '\0';
}

static void print_object(yajl_val obj, int indent);

/* One element of an array: scalars joined on one line, else nested. */
static void
print_element(yajl_val v, int indent)
{
	char k[FMT_BUFLEN], t[512];
	bool nested = false;

	if (!YAJL_IS_OBJECT(v)) {
		scalar_text("", v, t, sizeof(t));
		printf("%*s%s\n", indent, "", t);
		return;
	}
	printf("%*s", indent, "");
	for (size_t i = 0; i < v->u.object.len; i++) {
		yajl_val x = v->u.object.values[i];

		if (YAJL_IS_OBJECT(x) || YAJL_IS_ARRAY(x)) {
			nested = true;
			continue;
		}
		key_text(v->u.object.keys[i], k, sizeof(k));
		scalar_text(v->u.object.keys[i], x, t, sizeof(t));
		printf("%s%s: %s", i > 0 ? ", " : "", k, t);
	}
	putchar('\n');
	if (!nested)
		return;
	for (size_t i = 0; i < v->u.object.len; i++) {
		yajl_val x = v->u.object.values[i];

		if (!YAJL_IS_OBJECT(x) && !YAJL_IS_ARRAY(x))
			continue;
		key_text(v->u.object.keys[i], k, sizeof(k));
		printf("%*s%s:\n", indent + 2, "", k);
		if (YAJL_IS_OBJECT(x))
			print_object(x, indent + 4);
		else
			for (size_t j = 0; j < x->u.array.len; j++)
				print_element(x->u.array.values[j], indent + 4);
	}
}

/* Every member of obj, one per line, nested ones indented. */
static void
print_object(yajl_val obj, int indent)
{
	char k[FMT_BUFLEN], t[512];

	for (size_t i = 0; i < obj->u.object.len; i++) {
		const char *key = obj->u.object.keys[i];
		yajl_val v = obj->u.object.values[i];

		key_text(key, k, sizeof(k));
		if (YAJL_IS_OBJECT(v)) {
			printf("%*s%s:\n", indent, "", k);
			print_object(v, indent + 2);
		} else if (YAJL_IS_ARRAY(v)) {
			printf("%*s%s:%s\n", indent, "", k,
			    v->u.array.len == 0 ? " none" : "");
			for (size_t j = 0; j < v->u.array.len; j++)
				print_element(v->u.array.values[j], indent + 2);
		} else {
			scalar_text(key, v, t, sizeof(t));
			printf("%*s%s: %s\n", indent, "", k, t);
		}
	}
}

/* ---- the sections the client knows ---- */

/* Whether key is one of known (NULL-terminated). */
static bool
is_known(const char *const *known, const char *key)
{
	for (const char *const *k = known; *k != NULL; k++)
		if (strcmp(*k, key) == 0)
			return true;
	return false;
}

/* Member i of obj alone, as print_object shows it, at indent. */
static void
print_member(yajl_val obj, size_t i, int indent)
{
	struct yajl_val_s one;

	one.type = yajl_t_object;
	one.u.object.keys = &obj->u.object.keys[i];
	one.u.object.values = &obj->u.object.values[i];
	one.u.object.len = 1;
	print_object(&one, indent);
}

/* Members of obj not in known (NULL-terminated), generically. */
static void
print_rest(yajl_val obj, const char *const *known, int indent)
{
	for (size_t i = 0; obj != NULL && i < obj->u.object.len; i++)
		if (!is_known(known, obj->u.object.keys[i]))
			print_member(obj, i, indent);
}

/* The age of obj's newest sample, or that there is none, and a newline. */
static void
print_newest(yajl_val obj)
{
	char age[FMT_BUFLEN];
	int64_t a;

	if (json_int(obj, "newest_age_ns", &a)) {
		fmt_ago(a, age, sizeof(age));
		printf("newest sample %s\n", age);
	} else
		printf("no sample yet\n");
}

/* A "_ns" member as a duration, or "?" if absent. */
static void
duration_of(yajl_val obj, const char *key, char *buf, size_t len)
{
	int64_t ns;

	if (json_int(obj, key, &ns) && ns >= 0)
		format_duration((uint64_t)ns, buf, len);
	else
		snprintf(buf, len, "?");
}

static void
show_daemon(yajl_val d)
{
	static const char *const known[] = { "version", "pid", "started_ns",
	    "state", NULL };
	char t[FMT_BUFLEN], span[FMT_BUFLEN];
	const char *v = json_str(d, "version"), *state = json_str(d, "state");
	int64_t pid, started;

	printf("daemon:     spyremond %s", v != NULL ? v : "?");
	if (json_int(d, "pid", &pid))
		printf(", pid %" PRId64, pid);
	if (state != NULL)
		printf(", %s", state);
	if (json_int(d, "started_ns", &started)) {
		fmt_time_ms(started, t, sizeof(t));
		fmt_span(now_realtime_ns() - started, span, sizeof(span));
		printf(" for %s (since %s)", span, t);
	}
	putchar('\n');
	print_rest(d, known, 12);
}

static void
show_child(yajl_val c)
{
	static const char *const known[] = { "pid", "state", "restarts",
	    "last_error", "bad_lines", "smi_version", NULL };
	const char *err, *ver;
	int64_t bad;

	printf("child:      ");
	status_child_head(c);
	if (json_int(c, "bad_lines", &bad))
		printf(", %" PRId64 " rejected line%s", bad, bad == 1 ? "" : "s");
	putchar('\n');
	if ((err = json_str(c, "last_error")) != NULL)
		printf("            last error: %s\n", err);
	/* absent from an older daemon; null: no answer to -v (yet) */
	if (json_get(c, "smi_version") != NULL) {
		ver = json_str(c, "smi_version");
		printf("            aiu-smi -v: %s\n", ver != NULL ? ver :
		    "not known (yet, or see the daemon's log)");
	}
	print_rest(c, known, 12);
}

static void
show_sampling(yajl_val s)
{
	static const char *const known[] = { "interval_ns",
	    "configured_interval_ns", "window_interval_ns", "pre_window_ns",
	    "child_interval_ns", "newest_ns", "newest_age_ns", "direct", NULL };
	const char *direct = json_str(s, "direct");
	char now[FMT_BUFLEN], cfg[FMT_BUFLEN], win[FMT_BUFLEN],
	    pre[FMT_BUFLEN], child[FMT_BUFLEN];

	duration_of(s, "interval_ns", now, sizeof(now));
	duration_of(s, "configured_interval_ns", cfg, sizeof(cfg));
	duration_of(s, "window_interval_ns", win, sizeof(win));
	duration_of(s, "pre_window_ns", pre, sizeof(pre));
	printf("sampling:   every %s now (configured %s; %s while a window is "
	    "open, and for the %s before one)\n", now, cfg, win, pre);
	if (json_get(s, "child_interval_ns") != NULL) {
		duration_of(s, "child_interval_ns", child, sizeof(child));
		if (strcmp(child, now) != 0)
			printf("            aiu-smi runs every %s\n", child);
	}
	printf("            ");
	print_newest(s);
	if (direct != NULL)
		printf("            metric files read directly: %s "
		    "(source.direct)\n", direct);
	print_rest(s, known, 12);
}

static void
show_card(yajl_val c)
{
	static const char *const known[] = { "bus_id", "function",
	    "numa_node", "driver", "link_speed", "link_width", NULL };
	const char *bus = json_str(c, "bus_id"), *fn = json_str(c, "function"),
	    *drv = json_str(c, "driver"), *speed = json_str(c, "link_speed");
	int64_t numa, width;

	printf("  %s %s", bus != NULL ? bus : "?", fn != NULL ? fn : "?");
	if (json_int(c, "numa_node", &numa))
		printf(", NUMA node %" PRId64, numa);
	else
		printf(", NUMA node unknown");
	if (speed != NULL || json_int(c, "link_width", &width)) {
		printf(", link %s", speed != NULL ? speed : "?");
		if (json_int(c, "link_width", &width))
			printf(" x%" PRId64, width);
	}
	printf(", driver %s\n", drv != NULL ? drv : "none");
	print_rest(c, known, 4);
}

/* Members of direct that are counters: every integer but these. */
static bool
is_counter(const char *key, yajl_val v)
{
	static const char *const not[] = { "file_interval", "newest_age_ns",
	    NULL };

	return YAJL_IS_INTEGER(v) && !is_known(not, key);
}

/* Items joined by ", " on lines of about LINE_WIDTH, continued at indent. */
#define LINE_WIDTH	78
struct wrap {
	int col, indent;
	size_t n;
};

static void
wrap_item(struct wrap *w, const char *item)
{
	int len = (int)strlen(item);

	if (w->n > 0 && w->col + 2 + len > LINE_WIDTH)
		w->col = printf(",\n%*s", w->indent, "") - 2;
	else if (w->n > 0)
		w->col += printf(", ");
	w->col += printf("%s", item);
	w->n++;
}

/*
 * How the card's metric file is read directly: its state and why, what
 * the file gives, then every counter.  The writer's stamps, its interval
 * and byte order are said of a file being read only: of another they mean
 * nothing.
 */
static void
show_direct(yajl_val dir)
{
	static const char *const known[] = { "state", "why", "stamps",
	    "file_interval", "byte_swapped", "newest_age_ns", "file_metrics",
	    "clock_why", NULL };
	const char *state = json_str(dir, "state"), *why = json_str(dir, "why");
	const char *stamps = json_str(dir, "stamps");
	yajl_val given = json_array(dir, "file_metrics");
	bool reading = state != NULL && strcmp(state, "reading") == 0;
	bool swapped = false;
	char k[FMT_BUFLEN], age[FMT_BUFLEN], item[2 * FMT_BUFLEN];
	struct wrap w;
	int64_t v;

	printf("    direct read: %s", state != NULL ? state : "?");
	if (reading && json_int(dir, "newest_age_ns", &v)) {
		fmt_ago(v, age, sizeof(age));
		printf(", newest file row %s", age);
	}
	putchar('\n');
	if (!reading && why != NULL && why[0] != '\0')
		printf("      %s\n", why);
	if ((why = json_str(dir, "clock_why")) != NULL && why[0] != '\0')
		printf("      writer's clock: last stamp dropped: %s\n", why);
	if (reading) {
		(void)json_bool(dir, "byte_swapped", &swapped);
		printf("      stamped by the %s", stamps != NULL ? stamps : "?");
		if (json_int(dir, "file_interval", &v))
			printf("; file interval %" PRId64 " (no unit given)", v);
		printf("; %s byte order\n", swapped ? "swapped" : "host");
	}
	if (given != NULL && given->u.array.len > 0) {
		w = (struct wrap){ printf("      the file gives: "), 8, 0 };
		for (size_t i = 0; i < given->u.array.len; i++) {
			yajl_val x = given->u.array.values[i];

			wrap_item(&w, YAJL_IS_STRING(x) ? x->u.string : "?");
		}
		putchar('\n');
	}
	w = (struct wrap){ printf("      "), 6, 0 };
	for (size_t i = 0; i < dir->u.object.len; i++) {
		const char *key = dir->u.object.keys[i];
		yajl_val x = dir->u.object.values[i];

		if (!is_counter(key, x))
			continue;
		key_text(key, k, sizeof(k));
		snprintf(item, sizeof(item), "%s %" PRId64, k,
		    (int64_t)x->u.number.i);
		wrap_item(&w, item);
	}
	putchar('\n');
	for (size_t i = 0; i < dir->u.object.len; i++) {
		const char *key = dir->u.object.keys[i];

		if (!is_counter(key, dir->u.object.values[i]) &&
		    !is_known(known, key))
			print_member(dir, i, 6);
	}
}

static void
show_health(yajl_val h)
{
	static const char *const known[] = { "device", "bus_id",
	    "metric_file", "state", "counters_zero", "text", "source",
	    "newest_ns", "newest_age_ns", "direct", NULL };
	const char *text = json_str(h, "text"), *bus = json_str(h, "bus_id");
	const char *src = json_str(h, "source");
	yajl_val dir = json_object(h, "direct");
	int64_t dev;

	if (json_int(h, "device", &dev))
		printf("  device %" PRId64, dev);
	else
		printf("  device ?");
	if (bus != NULL)
		printf(" (%s)", bus);
	if (text != NULL)
		printf(": %s", text);
	else
		printf(": %s", json_str(h, "state") ? json_str(h, "state") : "?");
	putchar('\n');
	if (src != NULL || json_get(h, "newest_age_ns") != NULL) {
		printf("    ");
		if (src != NULL)
			printf("source: %s; ", strcmp(src, "file") == 0 ?
			    "file (read directly) and aiu-smi" : src);
		print_newest(h);
	}
	if (dir != NULL)
		show_direct(dir);
	print_rest(h, known, 4);
}

static void
show_database(yajl_val d)
{
	static const char *const known[] = { "path", "file_bytes",
	    "rows_written", "pending", "flushes_failed", "rows_dropped",
	    "recreated", "writer", "path_after_restart", "damaged_kept_aside",
	    "damaged_found", "damaged_kept_as", "checkpoint", "errors",
	    "errors_damage", "last_error", "last_error_ns",
	    "damaged_while_running", NULL };
	const char *path = json_str(d, "path"), *state, *why;
	char size[FMT_BUFLEN];
	yajl_val w;
	int64_t v;

	printf("database:   %s", path != NULL ? path : "?");
	if (json_int(d, "file_bytes", &v) && v >= 0) {
		fmt_size_approx((uint64_t)v, size, sizeof(size));
		printf(", %s", size);
	}
	if (json_int(d, "rows_written", &v))
		printf(", %" PRId64 " rows written since start", v);
	putchar('\n');
	if ((state = json_str(d, "path_after_restart")) != NULL)
		printf("            the configuration now names %s: it is "
		    "written only after a restart\n", state);
	if (json_int(d, "pending", &v) && v > 0)
		printf("            %" PRId64 " rows waiting to be written\n", v);
	if (json_int(d, "flushes_failed", &v) && v > 0)
		printf("            %" PRId64 " writes failed\n", v);
	if (json_int(d, "rows_dropped", &v) && v > 0)
		printf("            %" PRId64 " rows dropped\n", v);
	if (json_int(d, "errors", &v) && v > 0) {
		int64_t dmg = 0;

		(void)json_int(d, "errors_damage", &dmg);
		printf("            %" PRId64 " database errors (%" PRId64
		    " damage); the last: %s\n", v, dmg,
		    json_str(d, "last_error") != NULL ?
		    json_str(d, "last_error") : "?");
	}
	if ((w = json_object(d, "writer")) != NULL &&
	    (state = json_str(w, "state")) != NULL &&
	    strcmp(state, "ok") != 0) {
		why = json_str(w, "why");
		printf("            WRITES STALLED");
		if (json_int(w, "stalled_ns", &v))
			printf(" for %.1f s", (double)v / 1e9);
		printf(": %s\n", why != NULL ? why : "?");
		if (json_int(w, "queued_changes", &v) && v > 0)
			printf("            %" PRId64 " window or inventory "
			    "changes waiting\n", v);
	}
	if (json_int(d, "recreated", &v) && v > 0)
		printf("            the file was deleted or replaced and created "
		    "again %" PRId64 " time%s\n", v, v == 1 ? "" : "s");
	if ((w = json_object(d, "checkpoint")) != NULL &&
	    (state = json_str(w, "state")) != NULL &&
	    strcmp(state, "ok") != 0) {
		printf("            CHECKPOINTS BLOCKED");
		if (json_int(w, "blocked_ns", &v))
			printf(" for %.1f s", (double)v / 1e9);
		printf(" (a reader holds an old snapshot)");
		if (json_int(w, "wal_bytes", &v) && v >= 0) {
			fmt_size_approx((uint64_t)v, size, sizeof(size));
			printf(": the write-ahead log is %s and grows", size);
		}
		putchar('\n');
	}
	if (json_int(d, "damaged_kept_aside", &v) && v > 0) {
		state = json_str(d, "damaged_found");
		why = json_str(d, "damaged_kept_as");
		printf("            DAMAGED %s: %s\n", running(d) ? "WHILE RUNNING" : "AT START",
		    state != NULL ? state : "?");
		printf("            the originals are kept as %s (and -wal, "
		    "-shm)\n", why != NULL ? why : "?");
	}
	print_rest(d, known, 12);
}

static void
show_retention(yajl_val r)
{
	static const char *const known[] = { "max_age_ns", "max_size",
	    "windows_max_age_ns", "windows_max_open_ns", NULL };
	char age[FMT_BUFLEN], size[FMT_BUFLEN], wage[FMT_BUFLEN],
	    wopen[FMT_BUFLEN];
	int64_t v;

	duration_of(r, "max_age_ns", age, sizeof(age));
	duration_of(r, "windows_max_age_ns", wage, sizeof(wage));
	duration_of(r, "windows_max_open_ns", wopen, sizeof(wopen));
	if (json_int(r, "max_size", &v) && v >= 0)
		format_size((uint64_t)v, size, sizeof(size));
	else
		snprintf(size, sizeof(size), "?");
	printf("retention:  samples %s, samples of windows %s, at most %s; "
	    "windows open longer than %s are closed\n", age, wage, size, wopen);
	print_rest(r, known, 12);
}

static void
show_unreliable(yajl_val u)
{
	printf("unreliable: ");
	if (u->u.array.len == 0)
		printf("none");
	for (size_t i = 0; i < u->u.array.len; i++) {
		yajl_val k = u->u.array.values[i];

		printf("%s%s", i > 0 ? ", " : "",
		    YAJL_IS_STRING(k) ? k->u.string : "?");
	}
	printf("%s\n", u->u.array.len > 0 ?
	    " (values known to be wrong on current aiu-smi builds)" : "");
}

static void
show_window(yajl_val w)
{
	static const char *const known[] = { "id", "tag", "uid", "pid",
	    "begin_ns", "meta", NULL };
	char user[FMT_BUFLEN], t[FMT_BUFLEN], span[FMT_BUFLEN];
	const char *tag = json_str(w, "tag");
	yajl_val meta = json_object(w, "meta");
	int64_t id = 0, uid, pid, begin;

	json_int(w, "id", &id);
	printf("  %" PRId64 " %s", id, tag != NULL ? tag : "?");
	if (json_int(w, "uid", &uid) && uid >= 0) {
		fmt_user((uint32_t)uid, user, sizeof(user));
		printf(" by %s", user);
	}
	if (json_int(w, "pid", &pid))
		printf(" (pid %" PRId64 ")", pid);
	if (json_int(w, "begin_ns", &begin)) {
		fmt_time_ms(begin, t, sizeof(t));
		fmt_span(now_realtime_ns() - begin, span, sizeof(span));
		printf(", since %s (%s)", t, span);
	}
	for (size_t i = 0; meta != NULL && i < meta->u.object.len; i++) {
		yajl_val v = meta->u.object.values[i];

		const char *text = YAJL_IS_STRING(v) ? v->u.string : "?";

		printf(strpbrk(text, " \t") != NULL || *text == '\0' ?
		    " %s=\"%s\"" : " %s=%s", meta->u.object.keys[i], text);
	}
	putchar('\n');
	print_rest(w, known, 4);
}

/* A list section: a title, then each element by show, or "none". */
static void
show_list(const char *title, yajl_val a, void (*show)(yajl_val))
{
	printf("%s%s\n", title, a->u.array.len == 0 ? " none" : "");
	for (size_t i = 0; i < a->u.array.len; i++) {
		if (YAJL_IS_OBJECT(a->u.array.values[i]))
			show(a->u.array.values[i]);
		else
			print_element(a->u.array.values[i], 2);
	}
}

static void
print_text(yajl_val reply)
{
	static const char *const known[] = { "ok", "daemon", "child",
	    "sampling", "cards", "health", "database", "retention",
	    "unreliable", "windows", "clock", NULL };
	yajl_val v;

	if ((v = json_object(reply, "daemon")) != NULL)
		show_daemon(v);
	if ((v = json_object(reply, "child")) != NULL)
		show_child(v);
	if ((v = json_object(reply, "sampling")) != NULL)
		show_sampling(v);
	if ((v = json_object(reply, "database")) != NULL)
		show_database(v);
	if ((v = json_object(reply, "clock")) != NULL) {
		bool kernel = false;

		(void)json_bool(v, "kernel_notice", &kernel);
		printf("clock:      %s\n", kernel ?
		    "steps watched by the kernel's notice and against the "
		    "monotonic clock" : "steps watched against the monotonic "
		    "clock");
		status_clock_line(v, "            ");
	}
	if ((v = json_object(reply, "retention")) != NULL)
		show_retention(v);
	if ((v = json_array(reply, "cards")) != NULL)
		show_list("cards in sysfs:", v, show_card);
	if ((v = json_array(reply, "health")) != NULL)
		show_list("metric files:", v, show_health);
	if ((v = json_array(reply, "unreliable")) != NULL)
		show_unreliable(v);
	if ((v = json_array(reply, "windows")) != NULL)
		show_list("open windows:", v, show_window);
	print_rest(reply, known, 0);
}

static int
print_json(yajl_val reply)
{
	yajl_gen g = json_gen_new(true);
	int rc = CLIENT_EXIT_OK;

	yajl_gen_map_open(g);
	for (size_t i = 0; i < reply->u.object.len; i++) {
		if (strcmp(reply->u.object.keys[i], "ok") == 0)
			continue;
		jsonw_str(g, reply->u.object.keys[i]);
		jsonw_value(g, reply->u.object.values[i]);
	}
	yajl_gen_map_close(g);
	if (json_gen_flush(g, stdout) == -1)
		rc = CLIENT_EXIT_FAILED;
	yajl_gen_free(g);
	return rc;
}

struct status_opts {
	bool json, verbose;
};

static int
status_option(void *opts, int ch, char *arg)
{
	struct status_opts *o = opts;

	(void)arg;
	if (ch == OPT_JSON)
		o->json = true;
	else if (ch == 'v')
		o->verbose = true;
	return CLIENT_EXIT_OK;
}

static int
status_run(struct client *cl, void *opts, int argc, char *argv[])
{
	struct status_opts *o = opts;
	const char *path;
	yajl_val reply;
	yajl_gen g;
	int rc;

	(void)argc;
	(void)argv;
	if ((path = client_socket(cl)) == NULL)
		return CLIENT_EXIT_FAILED;
	g = json_gen_new(false);
	yajl_gen_map_open(g);
	jsonw_str(g, "v");
	yajl_gen_integer(g, PROTO_VERSION);
	jsonw_str(g, "cmd");
	jsonw_str(g, "status");
	yajl_gen_map_close(g);
	rc = ctl_call(path, g, &reply);
	yajl_gen_free(g);
	if (rc != CLIENT_EXIT_OK)
		return rc;
	if (o->json)
		rc = print_json(reply);
	else if (o->verbose)
		print_text(reply);
	else
		status_print_brief(reply);
	if (rc == CLIENT_EXIT_OK && (fflush(stdout) == EOF || ferror(stdout))) {
		warn("cannot write the status");
		rc = CLIENT_EXIT_FAILED;
	}
	yajl_tree_free(reply);
	return rc;
}

static const struct option status_longopts[] = {
	{ "json", no_argument, NULL, OPT_JSON },
	{ "verbose", no_argument, NULL, 'v' },
	{ NULL, 0, NULL, 0 },
};

const struct cmd_spec status_cmd = {
	.name = "status",
	.usage =
	    "usage: spyremon status [-v | --verbose] [--json]\n"
	    "\n"
	    "Shows the daemon, aiu-smi, the database, the open windows and a\n"
	    "line per card: its newest sample and where its metrics come from.\n"
	    "\n"
	    "  -v, --verbose         everything the daemon reports\n"
	    "      --json            the daemon's reply as is\n",
	.exits = CMD_EXITS_BASE | CMD_EXIT(CLIENT_EXIT_DAEMON),
	.shortopts = "v",
	.longopts = status_longopts,
	.opts_size = sizeof(struct status_opts),
	.option = status_option,
	.run = status_run,
};
