/*
 * mark: open and close profiling windows through the daemon.
 *
 * The daemon stamps a mark with its own CLOCK_REALTIME when the request
 * arrives, the clock of the samples, and records the caller's uid and pid
 * from the socket; the client sends only the tag and metadata.  Tags and
 * metadata are checked here too (proto.h), so a mistake is a usage error
 * before anything is sent.
 */
#include <err.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "cmd.h"
#include "settle.h"
#include "ctl.h"
#include "format.h"
#include "json.h"
#include "jsonw.h"
#include "markvllm.h"
#include "proto.h"

enum {
	OPT_SAME_TAG = CLIENT_OPT_FIRST_FREE,
	OPT_UNTIL_EXIT,
	OPT_VLLM,
};

struct meta {
	char *key[PROTO_META_MAX];
	const char *value[PROTO_META_MAX];
	size_t n;
};

static void
meta_free(struct meta *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->key[i]);
	m->n = 0;
}

/* Add "key=value" to m; false after printing why it cannot be. */
static bool
meta_add(struct meta *m, const char *arg)
{
	const char *eq = strchr(arg, '='), *why;
	char *key;

	if (eq == NULL || eq == arg) {
		warnx("--meta %s: give it as KEY=VALUE", arg);
		return false;
	}
	if (m->n == PROTO_META_MAX) {
		warnx("--meta %s: at most %d pairs", arg, PROTO_META_MAX);
		return false;
	}
	if ((key = strndup(arg, (size_t)(eq - arg))) == NULL)
		err(CLIENT_EXIT_FAILED, "strndup");
	if (!proto_meta_valid(key, eq + 1, &why)) {
		warnx("--meta %s: %s", arg, why);
		free(key);
		return false;
	}
	for (size_t i = 0; i < m->n; i++) {
		if (strcmp(m->key[i], key) == 0) {
			warnx("--meta %s: key '%s' given twice", arg, key);
			free(key);
			return false;
		}
	}
	m->key[m->n] = key;
	m->value[m->n++] = eq + 1;
	return true;
}

struct begin_opts {
	struct meta meta;
	const char *tag;
	bool same_tag;
	int64_t until_pid;
	const char *vllm;	/* the server's URL, or NULL */
};

static int
begin_option(void *opts, int ch, char *arg)
{
	struct begin_opts *o = opts;
	char *end;

	switch (ch) {
	case 't':
		o->tag = arg;
		break;
	case 'm':
		if (!meta_add(&o->meta, arg))
			return CLIENT_EXIT_USAGE;
		break;
	case OPT_SAME_TAG:
		o->same_tag = true;
		break;
	case OPT_VLLM:
		o->vllm = arg;
		break;
	case OPT_UNTIL_EXIT:
		errno = 0;
		o->until_pid = strtoll(arg, &end, 10);
		if (errno != 0 || end == arg || *end != '\0' ||
		    o->until_pid < 1 || o->until_pid > INT32_MAX) {
			warnx("--until-exit %s: not a process ID", arg);
			return CLIENT_EXIT_USAGE;
		}
		break;
	}
	return CLIENT_EXIT_OK;
}

static void
begin_done(void *opts)
{
	meta_free(&((struct begin_opts *)opts)->meta);
}

/* Whether tag may name a window; if not, says why. */
static bool
tag_ok(const char *tag)
{
	const char *why;

	if (proto_tag_valid(tag, &why))
		return true;
	warnx("--tag %s: %s", tag, why);
	return false;
}

static int
begin_run(struct client *cl, void *opts, int argc, char *argv[])
{
	struct begin_opts *o = opts;
	struct markvllm_meta vm = { .n = 0 };
	yajl_val reply;
	yajl_gen g;
	int64_t id;
	int rc;

	(void)argc;
	(void)argv;
	if (o->tag == NULL) {
		warnx("mark begin needs --tag");
		return CLIENT_EXIT_USAGE;
	}
	if (!tag_ok(o->tag))
		return CLIENT_EXIT_USAGE;
	if (o->vllm != NULL) {
		for (size_t i = 0; i < o->meta.n; i++)
			if (strncmp(o->meta.key[i], "vllm.", 5) == 0) {
				warnx("--meta %s: keys vllm.* are --vllm's",
				    o->meta.key[i]);
				return CLIENT_EXIT_USAGE;
			}
		if (o->meta.n + VLLM_NMETA > PROTO_META_MAX) {
			warnx("--vllm keeps up to %d pairs: at most %d --meta "
			    "with it", VLLM_NMETA, PROTO_META_MAX - VLLM_NMETA);
			return CLIENT_EXIT_USAGE;
		}
		if ((rc = markvllm_begin(o->vllm, &vm)) != CLIENT_EXIT_OK)
			return rc;
	}

	g = ctl_request_new("begin");
	jsonw_str(g, "tag");
	jsonw_str(g, o->tag);
	jsonw_str(g, "meta");
	yajl_gen_map_open(g);
	for (size_t i = 0; i < o->meta.n; i++) {
		jsonw_str(g, o->meta.key[i]);
		jsonw_str(g, o->meta.value[i]);
	}
	for (size_t i = 0; i < vm.n; i++)
		jsonw_put_str(g, vm.key[i], vm.value[i]);
	yajl_gen_map_close(g);
	jsonw_str(g, "same_tag");
	yajl_gen_bool(g, o->same_tag);
	if (o->until_pid > 0) {
		jsonw_str(g, "until_pid");
		yajl_gen_integer(g, o->until_pid);
	}
	meta_free(&o->meta);
	if ((rc = ctl_request_send(cl, g, &reply)) != CLIENT_EXIT_OK)
		return rc;
	if (!json_int(reply, "id", &id)) {
		warnx("the daemon's reply has no window id");
		rc = CLIENT_EXIT_FAILED;
	} else
		printf("%" PRId64 "\n", id);
	yajl_tree_free(reply);
	return rc;
}

/* A window id: all digits, at least 1. */
static bool
parse_id(const char *s, int64_t *out)
{
	char *end;
	long long v;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < 1)
		return false;
	*out = v;
	return true;
}

/* "ended window 12 (tag): 2026-12-02T10:26:12.123Z .. 10:27:01.456Z, 49.333s" */
static void
print_ended(yajl_val reply)
{
	char b[FMT_BUFLEN], e[FMT_BUFLEN], span[FMT_BUFLEN];
	const char *tag = json_str(reply, "tag");
	int64_t id = 0, begin, end, elapsed;

	json_int(reply, "id", &id);
	printf("ended window %" PRId64, id);
	if (tag != NULL)
		printf(" (%s)", tag);
	if (json_int(reply, "begin_ns", &begin) &&
	    json_int(reply, "end_ns", &end)) {
		fmt_time_ms(begin, b, sizeof(b));
		if (fmt_same_utc_day(begin, end))
			fmt_clock_ms(end, e, sizeof(e));
		else
			fmt_time_ms(end, e, sizeof(e));
		/* the daemon's monotonic measure: a clock step may cross it */
		if (!json_int(reply, "elapsed_ns", &elapsed))
			elapsed = end - begin;
		fmt_span(elapsed, span, sizeof(span));
		printf(": %s .. %s, %s", b, e, span);
	}
	putchar('\n');
	if (json_str(reply, "end_note") != NULL)
		printf("  %s\n", json_str(reply, "end_note"));
}

struct end_opts {
	const char *tag;
	bool have_id;
	int64_t id;
};

static int
end_option(void *opts, int ch, char *arg)
{
	struct end_opts *o = opts;

	switch (ch) {
	case 't':
		o->tag = arg;
		break;
	case 'i':
		if (!parse_id(arg, &o->id)) {
			warnx("--id %s: not a window id", arg);
			return CLIENT_EXIT_USAGE;
		}
		o->have_id = true;
		break;
	}
	return CLIENT_EXIT_OK;
}

static int
end_run(struct client *cl, void *opts, int argc, char *argv[])
{
	struct end_opts *o = opts;
	struct markvllm_end ve;
	struct markvllm_meta vm;
	const char *vmp[2 * VLLM_NMETA];
	yajl_val reply;
	yajl_gen g;
	int64_t id;
	int rc, vrc = CLIENT_EXIT_OK;

	(void)argc;
	(void)argv;
	if (o->tag != NULL && o->have_id) {
		warnx("mark end takes --tag or --id, not both");
		return CLIENT_EXIT_USAGE;
	}
	if (o->tag != NULL && !tag_ok(o->tag))
		return CLIENT_EXIT_USAGE;

	/* a server's counters are read before the end, as near it as can be */
	markvllm_end_prepare(cl, o->tag, o->have_id, o->id, &ve);
	markvllm_end_meta(&ve, &vm, vmp);
	g = ctl_request_new("end");
	if (ve.id != 0) {
		/* the window whose server was read gets its readings */
		jsonw_str(g, "id");
		yajl_gen_integer(g, ve.id);
	} else if (o->tag != NULL) {
		jsonw_str(g, "tag");
		jsonw_str(g, o->tag);
	} else if (o->have_id) {
		jsonw_str(g, "id");
		yajl_gen_integer(g, o->id);
	}
	if (vm.n > 0) {
		jsonw_str(g, "meta");
		yajl_gen_map_open(g);
		for (size_t i = 0; i < vm.n; i++)
			jsonw_put_str(g, vmp[2 * i], vmp[2 * i + 1]);
		yajl_gen_map_close(g);
	}
	if ((rc = ctl_request_send(cl, g, &reply)) != CLIENT_EXIT_OK)
		return rc;
	print_ended(reply);
	if (json_int(reply, "id", &id))
		vrc = markvllm_end_check(&ve, id);
	/* --wait: return once every sample of the window is stored */
	if (cl->wait_set && json_int(reply, "id", &id)) {
		fflush(stdout);
		rc = settle_ended(cl, id);
	}
	yajl_tree_free(reply);
	return rc != CLIENT_EXIT_OK ? rc : vrc;
}

static const struct option begin_longopts[] = {
	{ "tag", required_argument, NULL, 't' },
	{ "meta", required_argument, NULL, 'm' },
	{ "same-tag", no_argument, NULL, OPT_SAME_TAG },
	{ "until-exit", required_argument, NULL, OPT_UNTIL_EXIT },
	{ "vllm", required_argument, NULL, OPT_VLLM },
	{ NULL, 0, NULL, 0 },
};

static const struct option end_longopts[] = {
	{ "tag", required_argument, NULL, 't' },
	{ "id", required_argument, NULL, 'i' },
	{ NULL, 0, NULL, 0 },
};

static const struct cmd_spec begin_spec = {
	.name = "mark begin",
	.usage =
	    "usage: spyremon mark begin --tag TAG [--meta KEY=VALUE ...] [--same-tag]\n"
	    "                           [--until-exit PID] [--vllm URL]\n"
	    "\n"
	    "Opens a window and prints its id.\n"
	    "\n"
	    "  -t, --tag TAG         its name: 1 to 64 printable ASCII, no spaces\n"
	    "  -m, --meta KEY=VALUE  metadata kept with it; up to 32 distinct keys\n"
	    "      --same-tag        open it though one of yours has the tag open\n"
	    "      --until-exit PID  end it when process PID exits\n"
	    "      --vllm URL        keep the request and token counters of the\n"
	    "                        vLLM server at URL (http://HOST:PORT) at its\n"
	    "                        begin and end, for summary's serving figures;\n"
	    "                        exit 1, no window opened, if its /metrics\n"
	    "                        cannot be read\n",
	.exits = CMD_EXITS_BASE | CMD_EXIT(CLIENT_EXIT_DAEMON),
	.shortopts = "t:m:",
	.longopts = begin_longopts,
	.operands = 0,
	.opts_size = sizeof(struct begin_opts),
	.option = begin_option,
	.run = begin_run,
	.done = begin_done,
};

static const struct cmd_spec end_spec = {
	.name = "mark end",
	.usage =
	    "usage: spyremon mark end [--tag TAG | --id N] [--wait D]\n"
	    "\n"
	    "Closes a window, by default the one you opened last, and prints\n"
	    "what it spanned.  A window begun with --vllm: the server's counters\n"
	    "are read first and kept; exit 1 after the end if they cannot be.\n"
	    "\n"
	    "  -t, --tag TAG         your open window with this tag\n"
	    "  -i, --id N            the window with this id\n"
	    "      --wait D          return once the window is stored whole; exit\n"
	    "                        " CMD_STR(CLIENT_EXIT_INCOMPLETE)
	    " if that takes longer than D, " CMD_STR(CLIENT_EXIT_PARTIAL) " if\n"
	    "                        part of its rows could not be read\n",
	.exits = CMD_EXITS_BASE | CMD_EXIT(CLIENT_EXIT_DAEMON) |
	    CMD_EXIT(CLIENT_EXIT_DATABASE) | CMD_EXIT(CLIENT_EXIT_PARTIAL) |
	    CMD_EXIT(CLIENT_EXIT_INCOMPLETE),
	.shortopts = "t:i:",
	.longopts = end_longopts,
	.operands = 0,
	.opts_size = sizeof(struct end_opts),
	.option = end_option,
	.run = end_run,
};

/* mark's own --help: each subcommand's synopsis. */
static int
mark_help(void)
{
	printf("usage: spyremon mark begin --tag TAG [--meta KEY=VALUE ...] "
	    "[--same-tag]\n"
	    "                           [--until-exit PID] [--vllm URL]\n"
	    "       spyremon mark end [--tag TAG | --id N] [--wait D]\n"
	    "\n"
	    "begin opens a window, end closes one; "
	    "\"spyremon mark begin --help\"\n"
	    "and \"spyremon mark end --help\" describe each.\n");
	return CLIENT_EXIT_OK;
}

int
cmd_mark(struct client *cl, int argc, char *argv[])
{
	if (argc >= 2 && strcmp(argv[1], "begin") == 0)
		return cmd_run(cl, &begin_spec, argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "end") == 0)
		return cmd_run(cl, &end_spec, argc - 1, argv + 1);
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0))
		return mark_help();
	if (argc >= 2)
		return cmd_usage_error("mark", "unknown subcommand '%s'; say "
		    "begin or end", argv[1]);
	return cmd_usage_error("mark", "missing subcommand: begin or end");
}
