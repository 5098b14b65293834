/*
 * config: spyremond.yaml, checked key by key against a table.
 *
 * The file is loaded whole into a libyaml document, then walked against the
 * key tables below.  Every key has one parser that checks type and range
 * and stores the value; mappings recurse into their own table.  Errors are
 * collected with the position libyaml recorded for the offending node, so
 * the user sees all of them at once, and the config under construction is
 * thrown away if there was any.  The source section's values beyond a
 * duration (command, groups, devices, metric_files, direct) are parsed in
 * config_source.c, through the helpers of config_keys.h; defaults,
 * printing, and the text of each message (position, line, caret) are in
 * config_print.c.
 */
#include "config_keys.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

#include <yaml.h>

#include "timeparse.h"

#define CONFIG_MAX_BYTES	(1024 * 1024)
/*
 * Deepest nesting of mappings and sequences.  A real config is four deep
 * (top, source, metric_files, a list); libyaml takes seconds over inputs
 * tens of thousands deep, so depth is counted in the event stream first
 * and loading stops at the first collection past this.
 */
#define CONFIG_MAX_DEPTH	16
/* Most keys in one mapping; key names are shorter than CONFIG_KEY_NAME_MAX. */
#define MAX_KEYS		12

#define SUN_PATH_LEN		sizeof(((struct sockaddr_un){ 0 }).sun_path)

static key_parser parse_mapping, parse_duration_key, parse_size_key,
    parse_count_key;
static mapping_check check_retention;

static const struct key source_keys[] = {
	{ .name = "command", .parse = cfg_parse_command,
	    .what = "a command such as aiu-smi, or a list of its arguments" },
	{ .name = "interval", .parse = parse_duration_key,
	    .what = "a duration such as 1s or 500ms", FIELD(source.interval_ns),
	    .min = 10 * MSEC, .max = 60 * SEC },
	{ .name = "window_interval", .parse = parse_duration_key,
	    .what = "a duration such as 100ms", FIELD(source.window_interval_ns),
	    .min = 10 * MSEC, .max = 60 * SEC },
	{ .name = "pre_window", .parse = parse_duration_key,
	    .what = "a duration such as 10s", FIELD(source.pre_window_ns),
	    .min = 0, .max = 60 * SEC },
	{ .name = "groups", .parse = cfg_parse_groups,
	    .what = "metric group letters of " GROUP_LETTERS ", such as DR" },
	{ .name = "devices", .parse = cfg_parse_devices,
	    .what = "'all' or a list of device IDs such as [0, 1]" },
	{ .name = "metric_files", .parse = cfg_parse_metric_files,
	    .what = "a path containing %BUSID", FIELD(source.metric_files) },
	{ .name = "direct", .parse = cfg_parse_direct,
	    .what = "auto, on or off", FIELD(source.direct) },
	{ .name = NULL },
};

static const struct key windows_keys[] = {
	{ .name = "max_open", .parse = parse_duration_key,
	    .what = "a duration such as 24h", FIELD(windows.max_open_ns),
	    .min = 60 * SEC, .max = 30 * DAY },
	{ .name = "idle_lookback", .parse = parse_duration_key,
	    .what = "a duration such as 1h", FIELD(windows.idle_lookback_ns),
	    .min = 0, .max = 30 * DAY },
	/* at most the daemon's 4096 open windows in all */
	{ .name = "max_open_per_uid", .parse = parse_count_key,
	    .what = "a number such as 256", FIELD(windows.max_open_per_uid),
	    .min = 1, .max = 4096 },
	{ .name = "max_ending_per_uid", .parse = parse_count_key,
	    .what = "a number such as 64", FIELD(windows.max_ending_per_uid),
	    .min = 1, .max = 4096 },
	{ .name = NULL },
};

enum { RET_MAX_AGE, RET_MAX_SIZE, RET_WINDOWS_MAX_AGE };

static const struct key retention_keys[] = {
	[RET_MAX_AGE] = { .name = "max_age", .parse = parse_duration_key,
	    .what = "a duration such as 7d", FIELD(retention.max_age_ns),
	    .min = HOUR, .max = UINT64_MAX },
	[RET_MAX_SIZE] = { .name = "max_size", .parse = parse_size_key,
	    .what = "a size such as 512MiB or 1GiB", FIELD(retention.max_size),
	    .min = MIB, .max = UINT64_MAX },
	[RET_WINDOWS_MAX_AGE] = { .name = "windows_max_age",
	    .parse = parse_duration_key, .what = "a duration such as 90d",
	    FIELD(retention.windows_max_age_ns), .min = HOUR, .max = UINT64_MAX },
	{ .name = NULL },
};

static const struct key top_keys[] = {
	{ .name = "database", .parse = cfg_parse_string, .what = "a path",
	    FIELD(database) },
	{ .name = "socket", .parse = cfg_parse_string, .what = "a path",
	    FIELD(socket), .max = SUN_PATH_LEN },
	{ .name = "flush_interval", .parse = parse_duration_key,
	    .what = "a duration such as 1s", FIELD(flush_interval_ns),
	    .min = 10 * MSEC, .max = 60 * SEC },
	{ .name = "sysfs_root", .parse = cfg_parse_string, .what = "a path",
	    FIELD(sysfs_root) },
	{ .name = "checkpoint_interval", .parse = parse_duration_key,
	    .what = "a duration such as 10s", FIELD(checkpoint_interval_ns),
	    .min = SEC, .max = HOUR },
	{ .name = "on_damaged_database", .parse = cfg_parse_on_damage,
	    .what = "keep-aside-and-start or refuse",
	    FIELD(on_damaged_database) },
	{ .name = "source", .parse = parse_mapping,
	    .what = "a mapping of source keys", .subkeys = source_keys },
	{ .name = "windows", .parse = parse_mapping,
	    .what = "a mapping of windows keys", .subkeys = windows_keys },
	{ .name = "retention", .parse = parse_mapping,
	    .what = "a mapping of retention keys", .subkeys = retention_keys,
	    .check = check_retention },
	{ .name = NULL },
};










/* The known key closest to name, if it is a plausible typo of it. */
static const char *
closest_key(const struct key *table, const char *name)
{
	const char *best = NULL;
	size_t best_dist = 3, len = strlen(name);

	for (const struct key *k = table; k->name != NULL; k++) {
		size_t klen = strlen(k->name), d;

		if (len > klen + 2 || klen > len + 2)
			continue;
		if ((d = config_edit_distance(name, k->name)) < best_dist) {
			best = k->name;
			best_dist = d;
		}
	}
	return best;
}

static void
report_unknown(struct loader *ld, const struct key *table, const char *parent,
    const yaml_node_t *keynode)
{
	const char *name = cfg_scalar(keynode);
	const char *hint = cfg_scalar_has_nul(keynode) ? NULL : closest_key(table, name);
	char where[80];

	if (parent != NULL)
		snprintf(where, sizeof(where), "in '%s'", parent);
	else
		snprintf(where, sizeof(where), "at the top level");
	if (hint != NULL)
		cfg_report(ld, &keynode->start_mark, "unknown key '%s' %s; did you mean '%s'?",
		    name, where, hint);
	else
		cfg_report(ld, &keynode->start_mark, "unknown key '%s' %s", name, where);
}

static int
find_key(const struct key *table, const yaml_node_t *keynode)
{
	if (cfg_scalar_has_nul(keynode))
		return -1;
	for (int i = 0; table[i].name != NULL; i++)
		if (strcmp(table[i].name, cfg_scalar(keynode)) == 0)
			return i;
	return -1;
}

/*
 * Parse each pair of mapping node against table; parent is the dotted name
 * of the mapping (NULL at the top).  A null node counts as an empty mapping,
 * so a section whose keys are all commented out is valid.
 */
static void
walk_mapping(struct loader *ld, yaml_document_t *doc, const struct key *table,
    const char *parent, yaml_node_t *node, const char *what, mapping_check *check)
{
	yaml_node_t *keys[MAX_KEYS] = { 0 }, *values[MAX_KEYS] = { 0 };
	size_t nerrors = ld->nerrors;

	if (node->type != YAML_MAPPING_NODE && !cfg_is_null(node)) {
		cfg_report_type(ld, parent != NULL ? parent : "the top level", what, node);
		return;
	}
	if (node->type == YAML_MAPPING_NODE) {
		for (yaml_node_pair_t *pair = node->data.mapping.pairs.start;
		    pair < node->data.mapping.pairs.top; pair++) {
			yaml_node_t *keynode = yaml_document_get_node(doc, pair->key);
			yaml_node_t *value = yaml_document_get_node(doc, pair->value);
			const struct key *k;
			char dotted[64];
			int i;

			if (keynode->type != YAML_SCALAR_NODE) {
				char got[64];

				config_describe_node(keynode, got, sizeof(got));
				cfg_report(ld, &keynode->start_mark, "%s%skeys must be "
				    "plain names, not %s", parent != NULL ? parent : "",
				    parent != NULL ? ": " : "", got);
				continue;
			}
			if ((i = find_key(table, keynode)) == -1) {
				report_unknown(ld, table, parent, keynode);
				continue;
			}
			k = &table[i];
			snprintf(dotted, sizeof(dotted), "%s%s%s", parent != NULL ? parent : "",
			    parent != NULL ? "." : "", k->name);
			if (keys[i] != NULL) {
				cfg_report(ld, &keynode->start_mark,
				    "%s: duplicate key (first given on line %zu)",
				    dotted, keys[i]->start_mark.line + 1);
				continue;
			}
			keys[i] = keynode;
			values[i] = value;
			if (cfg_is_null(value) && k->parse != parse_mapping) {
				cfg_report(ld, &keynode->start_mark, "%s: missing value", dotted);
				continue;
			}
			k->parse(ld, k, dotted, doc, value);
		}
	}
	if (check != NULL && ld->nerrors == nerrors)
		check(ld, values);
}

static void
parse_mapping(struct loader *ld, const struct key *k, const char *dotted,
    yaml_document_t *doc, yaml_node_t *node)
{
	walk_mapping(ld, doc, k->subkeys, dotted, node, k->what, k->check);
}





/* Report value unless min <= value <= max; names values with format. */
static bool
check_range(struct loader *ld, const char *dotted, const yaml_node_t *node,
    uint64_t value, uint64_t min, uint64_t max,
    void (*format)(uint64_t, char *, size_t), const char *below)
{
	char lo[32], hi[32];

	format(min, lo, sizeof(lo));
	format(max, hi, sizeof(hi));
	if (max == UINT64_MAX && value < min) {
		cfg_report(ld, &node->start_mark, "%s: %s is %s (at least %s)",
		    dotted, cfg_scalar(node), below, lo);
		return false;
	}
	if (value < min || value > max) {
		cfg_report(ld, &node->start_mark, "%s: %s is out of range (%s to %s)",
		    dotted, cfg_scalar(node), lo, hi);
		return false;
	}
	return true;
}

/* A duration limit as people read it: "60s" rather than "1m" next to "10ms". */
static void
format_limit(uint64_t ns, char *buf, size_t len)
{
	if (ns % SEC == 0 && ns < HOUR)
		snprintf(buf, len, "%" PRIu64 "s", (uint64_t)(ns / SEC));
	else
		format_duration(ns, buf, len);
}

static void
parse_duration_key(struct loader *ld, const struct key *k, const char *dotted,
    yaml_document_t *doc, yaml_node_t *node)
{
	uint64_t ns;

	(void)doc;
	if (!cfg_want_scalar(ld, k, dotted, node))
		return;
	if (parse_duration(cfg_scalar(node), &ns) == -1) {
		if (cfg_all_digits(cfg_scalar(node)))
			cfg_report(ld, &node->start_mark, "%s: %s needs a unit, "
			    "such as %ss or %sms", dotted, cfg_scalar(node),
			    cfg_scalar(node), cfg_scalar(node));
		else
			cfg_report(ld, &node->start_mark, "%s: '%s' is not a duration "
			    "(a number and a unit of ns us ms s m h d w, such as "
			    "100ms or 1h30m)", dotted, cfg_scalar(node));
		return;
	}
	if (check_range(ld, dotted, node, ns, k->min, k->max, format_limit, "too short"))
		*(uint64_t *)cfg_field(ld, k) = ns;
}

static void
parse_size_key(struct loader *ld, const struct key *k, const char *dotted,
    yaml_document_t *doc, yaml_node_t *node)
{
	uint64_t bytes;

	(void)doc;
	if (!cfg_want_scalar(ld, k, dotted, node))
		return;
	if (parse_size(cfg_scalar(node), &bytes) == -1) {
		cfg_report(ld, &node->start_mark, "%s: '%s' is not a size (a number of "
		    "bytes, or with a unit such as 512MiB, 1GiB or 100MB)",
		    dotted, cfg_scalar(node));
		return;
	}
	if (check_range(ld, dotted, node, bytes, k->min, k->max, format_size, "too small"))
		*(uint64_t *)cfg_field(ld, k) = bytes;
}

static void
format_count(uint64_t n, char *buf, size_t len)
{
	snprintf(buf, len, "%" PRIu64, n);
}

static void
parse_count_key(struct loader *ld, const struct key *k, const char *dotted,
    yaml_document_t *doc, yaml_node_t *node)
{
	char *end;
	uint64_t n;

	(void)doc;
	if (!cfg_want_scalar(ld, k, dotted, node))
		return;
	errno = 0;
	n = strtoull(cfg_scalar(node), &end, 10);
	if (!cfg_all_digits(cfg_scalar(node)) || *end != '\0' || errno != 0) {
		cfg_report(ld, &node->start_mark, "%s: '%s' is not a whole number",
		    dotted, cfg_scalar(node));
		return;
	}
	if (check_range(ld, dotted, node, n, k->min, k->max, format_count,
	    "too small"))
		*(uint64_t *)cfg_field(ld, k) = n;
}









/*
 * windows_max_age keeps the samples inside tagged profiling windows past
 * max_age, so it cannot be the shorter of the two.  The error points at
 * windows_max_age if the file sets it, else at the max_age that overtook
 * its default.
 */
static void
check_retention(struct loader *ld, yaml_node_t *const *values)
{
	const struct config *cfg = ld->cfg;
	const yaml_node_t *windows = values[RET_WINDOWS_MAX_AGE];
	const yaml_node_t *max_age = values[RET_MAX_AGE];
	char buf[32];

	if (cfg->retention.windows_max_age_ns >= cfg->retention.max_age_ns)
		return;
	if (windows != NULL) {
		format_duration(cfg->retention.max_age_ns, buf, sizeof(buf));
		cfg_report(ld, &windows->start_mark, "retention.windows_max_age: %s is "
		    "shorter than retention.max_age (%s)", cfg_scalar(windows), buf);
	} else if (max_age != NULL) {
		format_duration(cfg->retention.windows_max_age_ns, buf, sizeof(buf));
		cfg_report(ld, &max_age->start_mark, "retention.max_age: %s is longer "
		    "than retention.windows_max_age (%s by default); raise that too",
		    cfg_scalar(max_age), buf);
	}
}

static void
report_yaml_error(struct loader *ld, const yaml_parser_t *parser)
{
	const char *problem = parser->problem != NULL ? parser->problem : "syntax error";
	yaml_mark_t mark;

	switch (parser->error) {
	case YAML_MEMORY_ERROR:
		ld->oom = true;
		break;
	case YAML_READER_ERROR:
		mark = config_mark_at_offset(&ld->in, parser->problem_offset);
		if (parser->problem_value != -1)
			cfg_report(ld, &mark, "invalid yaml: %s (0x%02x)", problem,
			    (unsigned)parser->problem_value);
		else
			cfg_report(ld, &mark, "invalid yaml: %s", problem);
		break;
	default:
		if (parser->context != NULL)
			cfg_report(ld, &parser->problem_mark, "invalid yaml: %s "
			    "(%s at line %zu column %zu)", problem, parser->context,
			    parser->context_mark.line + 1,
			    parser->context_mark.column + 1);
		else
			cfg_report(ld, &parser->problem_mark, "invalid yaml: %s", problem);
		break;
	}
}

/*
 * False, with the error reported at the offending collection, if text
 * nests deeper than CONFIG_MAX_DEPTH.  Only libyaml's event parser runs,
 * which stops there; no document is built.  Syntax errors pass here and
 * are reported by the loader.
 */
static bool
depth_ok(struct loader *ld, const char *text, size_t len)
{
	yaml_parser_t parser;
	yaml_event_t ev;
	bool done = false, ok = true;
	int depth = 0;

	if (!yaml_parser_initialize(&parser)) {
		ld->oom = true;
		return false;
	}
	yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	while (!done && ok && yaml_parser_parse(&parser, &ev)) {
		switch (ev.type) {
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			if (++depth > CONFIG_MAX_DEPTH) {
				cfg_report(ld, &ev.start_mark, "nested deeper than "
				    "%d levels; not a spyremond config",
				    CONFIG_MAX_DEPTH);
				ok = false;
			}
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			depth--;
			break;
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
	return ok;
}

/* Walk the first document, and make sure it is the only one. */
static void
load_documents(struct loader *ld, yaml_parser_t *parser)
{
	yaml_document_t doc;
	yaml_node_t *root;

	if (!yaml_parser_load(parser, &doc)) {
		report_yaml_error(ld, parser);
		return;
	}
	root = yaml_document_get_root_node(&doc);
	if (root != NULL && root->type != YAML_MAPPING_NODE && !cfg_is_null(root))
		cfg_report_type(ld, "the top level", "a mapping of keys such as "
		    "'database:' and 'source:'", root);
	else if (root != NULL)
		walk_mapping(ld, &doc, top_keys, NULL, root, NULL, NULL);
	yaml_document_delete(&doc);
	if (root == NULL)
		return;

	if (!yaml_parser_load(parser, &doc)) {
		report_yaml_error(ld, parser);
		return;
	}
	if ((root = yaml_document_get_root_node(&doc)) != NULL)
		cfg_report(ld, &root->start_mark, "only one yaml document is allowed");
	yaml_document_delete(&doc);
}

int
config_parse(const char *name, const char *text, size_t len,
    struct config **out, struct config_errors *errs)
{
	struct loader ld = { .in = { name, text, len }, .errs = errs };
	yaml_parser_t parser;

	config_errors_reset(errs);
	*out = NULL;
	/* a UTF-8 byte order mark is no column: drop it before libyaml counts it */
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0) {
		ld.in.text = text += 3;
		ld.in.len = len -= 3;
	}
	if (len > CONFIG_MAX_BYTES) {
		cfg_report(&ld, NULL, "larger than %d MiB; not a spyremond config",
		    CONFIG_MAX_BYTES / 1024 / 1024);
		return -1;
	}
	if (!depth_ok(&ld, text, len))
		goto out;
	if ((ld.cfg = config_defaults()) == NULL ||
	    (ld.cfg->path = strdup(name)) == NULL ||
	    !yaml_parser_initialize(&parser)) {
		ld.oom = true;
	} else {
		yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);
		yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
		load_documents(&ld, &parser);
		yaml_parser_delete(&parser);
	}

out:
	if (ld.nerrors > CONFIG_MAX_ERRORS &&
	    config_errors_addf(errs, "%s: %zu more errors not shown", name,
	    ld.nerrors - CONFIG_MAX_ERRORS) == -1)
		ld.oom = true;
	if (ld.oom)
		config_errors_addf(errs, "%s: out of memory", name);
	if (ld.oom || errs->n > 0) {
		config_free(ld.cfg);
		return -1;
	}
	*out = ld.cfg;
	return 0;
}

int
config_load(const char *path, struct config **out, struct config_errors *errs)
{
	char *text;
	size_t len;
	int r;

	config_errors_reset(errs);
	*out = NULL;
	if (config_read_file(path, CONFIG_MAX_BYTES, &text, &len, errs) == -1)
		return -1;
	r = config_parse(path, text, len, out, errs);
	free(text);
	return r;
}

int
config_load_default(const char *path, struct config **out,
    struct config_errors *errs, bool *defaulted)
{
	*defaulted = false;
	if (path == NULL && access(CONFIG_DEFAULT_PATH, F_OK) == -1 &&
	    errno == ENOENT) {
		config_errors_reset(errs);
		if ((*out = config_defaults()) == NULL) {
			config_errors_addf(errs, "out of memory");
			return -1;
		}
		*defaulted = true;
		return 0;
	}
	return config_load(path != NULL ? path : CONFIG_DEFAULT_PATH, out, errs);
}
