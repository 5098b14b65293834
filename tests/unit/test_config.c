/*
 * Tests of config: every key, the defaults, every kind of error with its
 * position and caret, printing and reading back, and which changes restart
 * the child.  Run from the top of the source tree (conf/ is read).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "config.h"

#define NAME		"t.yaml"
#define MSEC		1000000ULL
#define SEC		1000000000ULL
#define HOUR		(3600 * SEC)
#define DAY		(24 * HOUR)
#define MIB		(1024ULL * 1024)

static int
parse(const char *text, struct config **cfg, struct config_errors *errs)
{
	return config_parse(NAME, text, strlen(text), cfg, errs);
}

static void
dump_errors(const struct config_errors *errs)
{
	for (size_t i = 0; i < errs->n; i++)
		print_message("error %zu: %s\n", i, errs->msgs[i]);
}

/* Parse text that must be valid. */
static struct config *
parse_ok(const char *text)
{
	struct config_errors errs;
	struct config *cfg;

	if (parse(text, &cfg, &errs) != 0) {
		dump_errors(&errs);
		fail_msg("rejected:\n%s", text);
	}
	assert_non_null(cfg);
	assert_int_equal(errs.n, 0);
	config_errors_free(&errs);
	return cfg;
}

/* Parse text that must be invalid with exactly nerrs errors. */
static void
parse_bad(const char *text, size_t nerrs, struct config_errors *errs)
{
	struct config *cfg = (struct config *)&cfg;

	assert_int_equal(parse(text, &cfg, errs), -1);
	assert_null(cfg);
	if (errs->n != nerrs) {
		dump_errors(errs);
		fail_msg("%zu errors, want %zu, for:\n%s", errs->n, nerrs, text);
	}
}

/*
 * Assert that msg is "<where> ...<needle>...\n<line>\n<caret>": where is
 * "file:line:col:", line the offending line, caret the line under it.
 */
static void
assert_error(const char *msg, const char *where, const char *needle,
    const char *line, const char *caret)
{
	const char *nl1 = strchr(msg, '\n');
	const char *nl2 = nl1 != NULL ? strchr(nl1 + 1, '\n') : NULL;
	size_t wlen = strlen(where);

	if (strncmp(msg, where, wlen) != 0 || msg[wlen] != ' ')
		fail_msg("want position \"%s\" in:\n%s", where, msg);
	if (nl1 == NULL || nl2 == NULL || strchr(nl2 + 1, '\n') != NULL)
		fail_msg("want three lines in:\n%s", msg);
	if (memmem(msg, (size_t)(nl1 - msg), needle, strlen(needle)) == NULL)
		fail_msg("want \"%s\" in:\n%s", needle, msg);
	if (strlen(line) != (size_t)(nl2 - nl1 - 1) ||
	    memcmp(nl1 + 1, line, strlen(line)) != 0)
		fail_msg("want line \"%s\" in:\n%s", line, msg);
	if (strcmp(nl2 + 1, caret) != 0)
		fail_msg("want caret line \"%s\" in:\n%s", caret, msg);
}

/* Parse text with exactly one error, and check it as assert_error does. */
static void
assert_one_error(const char *text, const char *where, const char *needle,
    const char *line, const char *caret)
{
	struct config_errors errs;

	parse_bad(text, 1, &errs);
	assert_error(errs.msgs[0], where, needle, line, caret);
	config_errors_free(&errs);
}

static void
assert_config_equal(const struct config *a, const struct config *b)
{
	assert_string_equal(a->database, b->database);
	assert_string_equal(a->socket, b->socket);
	assert_int_equal(a->flush_interval_ns, b->flush_interval_ns);
	assert_string_equal(a->sysfs_root, b->sysfs_root);
	assert_int_equal(a->source.argc, b->source.argc);
	for (int i = 0; i < a->source.argc; i++)
		assert_string_equal(a->source.argv[i], b->source.argv[i]);
	assert_null(a->source.argv[a->source.argc]);
	assert_null(b->source.argv[b->source.argc]);
	assert_int_equal(a->source.interval_ns, b->source.interval_ns);
	assert_int_equal(a->source.window_interval_ns, b->source.window_interval_ns);
	assert_int_equal(a->source.pre_window_ns, b->source.pre_window_ns);
	assert_string_equal(a->source.groups, b->source.groups);
	assert_int_equal(a->source.all_devices, b->source.all_devices);
	assert_int_equal(a->source.ndevices, b->source.ndevices);
	for (size_t i = 0; i < a->source.ndevices; i++)
		assert_int_equal(a->source.devices[i], b->source.devices[i]);
	assert_string_equal(a->source.metric_files, b->source.metric_files);
	assert_int_equal(a->windows.max_open_ns, b->windows.max_open_ns);
	assert_int_equal(a->retention.max_age_ns, b->retention.max_age_ns);
	assert_int_equal(a->retention.max_size, b->retention.max_size);
	assert_int_equal(a->retention.windows_max_age_ns, b->retention.windows_max_age_ns);
}

static void
assert_defaults(const struct config *cfg)
{
	struct config *def = config_defaults();

	assert_non_null(def);
	assert_config_equal(cfg, def);
	config_free(def);
}

static char *
print_to_string(const struct config *cfg)
{
	char *text = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&text, &len);

	assert_non_null(fp);
	config_print(cfg, fp);
	assert_int_equal(fclose(fp), 0);
	return text;
}

static void
test_builtin_defaults(void **state)
{
	struct config *cfg = config_defaults();

	(void)state;
	assert_non_null(cfg);
	assert_null(cfg->path);
	assert_string_equal(cfg->database, "/var/lib/spyremond/spyremon.db");
	assert_string_equal(cfg->socket, "/run/spyremond/control.sock");
	assert_int_equal(cfg->flush_interval_ns, SEC);
	assert_string_equal(cfg->sysfs_root, "/sys");
	assert_int_equal(cfg->source.argc, 1);
	assert_string_equal(cfg->source.argv[0], "aiu-smi");
	assert_null(cfg->source.argv[1]);
	assert_int_equal(cfg->source.interval_ns, SEC);
	assert_int_equal(cfg->source.window_interval_ns, 100 * MSEC);
	assert_int_equal(cfg->source.pre_window_ns, 10 * SEC);
	assert_string_equal(cfg->source.groups, "A");
	assert_true(cfg->source.all_devices);
	assert_string_equal(cfg->source.metric_files, "/tmp/metrics.%BUSID");
	assert_int_equal(cfg->windows.max_open_ns, DAY);
	assert_int_equal(cfg->retention.max_age_ns, 7 * DAY);
	assert_int_equal(cfg->retention.max_size, 1024 * MIB);
	assert_int_equal(cfg->retention.windows_max_age_ns, 90 * DAY);
	config_free(cfg);
}

static void
test_empty_gives_defaults(void **state)
{
	static const char *const texts[] = {
		"", "\n", "# only a comment\n", "---\n", "~\n", "null\n",
		"source:\nretention:\n", "source: {}\nretention: ~\n",
		"windows:\n", "windows: {}\n",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		struct config *cfg = parse_ok(texts[i]);

		assert_defaults(cfg);
		assert_string_equal(cfg->path, NAME);
		config_free(cfg);
	}
}

static void
test_shipped_config_is_defaults(void **state)
{
	struct config_errors errs;
	struct config *cfg;

	(void)state;
	if (config_load("conf/spyremond.yaml", &cfg, &errs) != 0) {
		dump_errors(&errs);
		fail_msg("conf/spyremond.yaml rejected");
	}
	assert_int_equal(errs.n, 0);
	assert_string_equal(cfg->path, "conf/spyremond.yaml");
	assert_defaults(cfg);
	config_free(cfg);
}

static void
test_every_key(void **state)
{
	struct config *cfg;

	(void)state;
	cfg = parse_ok(
	    "database: db/samples.db\n"
	    "socket: /tmp/s.sock\n"
	    "flush_interval: 250ms\n"
	    "sysfs_root: /tmp/fake-sys\n"
	    "source:\n"
	    "  command: /opt/aiu/bin/aiu-smi --mem-details\n"
	    "  interval: 1.5s\n"
	    "  window_interval: 10ms\n"
	    "  pre_window: 2.5s\n"
	    "  groups: DRU\n"
	    "  devices: [3, 0, 255]\n"
	    "  metric_files: /var/tmp/m.%BUSID.bin\n"
	    "windows:\n"
	    "  max_open: 36h\n"
	    "retention:\n"
	    "  max_age: 1h30m\n"
	    "  max_size: 512MiB\n"
	    "  windows_max_age: 2w\n");
	assert_string_equal(cfg->database, "db/samples.db");
	assert_string_equal(cfg->socket, "/tmp/s.sock");
	assert_int_equal(cfg->flush_interval_ns, 250 * MSEC);
	assert_string_equal(cfg->sysfs_root, "/tmp/fake-sys");
	assert_int_equal(cfg->source.argc, 2);
	assert_string_equal(cfg->source.argv[0], "/opt/aiu/bin/aiu-smi");
	assert_string_equal(cfg->source.argv[1], "--mem-details");
	assert_null(cfg->source.argv[2]);
	assert_int_equal(cfg->source.interval_ns, 1500 * MSEC);
	assert_int_equal(cfg->source.window_interval_ns, 10 * MSEC);
	assert_int_equal(cfg->source.pre_window_ns, 2500 * MSEC);
	assert_string_equal(cfg->source.groups, "DRU");
	assert_false(cfg->source.all_devices);
	assert_int_equal(cfg->source.ndevices, 3);
	assert_int_equal(cfg->source.devices[0], 3);
	assert_int_equal(cfg->source.devices[1], 0);
	assert_int_equal(cfg->source.devices[2], 255);
	assert_string_equal(cfg->source.metric_files, "/var/tmp/m.%BUSID.bin");
	assert_int_equal(cfg->windows.max_open_ns, 36 * HOUR);
	assert_int_equal(cfg->retention.max_age_ns, 90 * 60 * SEC);
	assert_int_equal(cfg->retention.max_size, 512 * MIB);
	assert_int_equal(cfg->retention.windows_max_age_ns, 14 * DAY);
	config_free(cfg);
}

static void
test_range_limits_accepted(void **state)
{
	struct config *cfg;

	(void)state;
	cfg = parse_ok("flush_interval: 60s\n"
	    "source: {interval: 10ms, window_interval: 1m, groups: DRMUPSA}\n"
	    "retention: {max_age: 1h, max_size: 1MiB, windows_max_age: 60m}\n");
	assert_int_equal(cfg->flush_interval_ns, 60 * SEC);
	assert_int_equal(cfg->source.interval_ns, 10 * MSEC);
	assert_int_equal(cfg->source.window_interval_ns, 60 * SEC);
	assert_string_equal(cfg->source.groups, "DRMUPSA");
	assert_int_equal(cfg->retention.max_age_ns, HOUR);
	assert_int_equal(cfg->retention.max_size, MIB);
	assert_int_equal(cfg->retention.windows_max_age_ns, HOUR);
	config_free(cfg);

	/* pre_window 0 keeps no ring; max_open spans 1m to 30d */
	cfg = parse_ok("source: {pre_window: 0s}\nwindows: {max_open: 1m}\n");
	assert_int_equal(cfg->source.pre_window_ns, 0);
	assert_int_equal(cfg->windows.max_open_ns, 60 * SEC);
	config_free(cfg);
	cfg = parse_ok("source: {pre_window: 60s}\nwindows: {max_open: 30d}\n");
	assert_int_equal(cfg->source.pre_window_ns, 60 * SEC);
	assert_int_equal(cfg->windows.max_open_ns, 30 * DAY);
	config_free(cfg);
}

static void
test_command_forms(void **state)
{
	struct config *cfg;

	(void)state;
	/* a string is split on any run of whitespace, a folded scalar too */
	cfg = parse_ok("source:\n  command: \"  python3\\t-m  aiu_smi \"\n");
	assert_int_equal(cfg->source.argc, 3);
	assert_string_equal(cfg->source.argv[0], "python3");
	assert_string_equal(cfg->source.argv[1], "-m");
	assert_string_equal(cfg->source.argv[2], "aiu_smi");
	assert_null(cfg->source.argv[3]);
	config_free(cfg);

	cfg = parse_ok("source:\n  command: >\n    /usr/bin/env\n    aiu-smi\n");
	assert_int_equal(cfg->source.argc, 2);
	assert_string_equal(cfg->source.argv[0], "/usr/bin/env");
	assert_string_equal(cfg->source.argv[1], "aiu-smi");
	config_free(cfg);

	/* a list is taken as argv as it stands */
	cfg = parse_ok("source:\n  command:\n    - /opt/my tools/aiu-smi\n"
	    "    - --idle-power\n    - ''\n");
	assert_int_equal(cfg->source.argc, 3);
	assert_string_equal(cfg->source.argv[0], "/opt/my tools/aiu-smi");
	assert_string_equal(cfg->source.argv[1], "--idle-power");
	assert_string_equal(cfg->source.argv[2], "");
	assert_null(cfg->source.argv[3]);
	config_free(cfg);

	cfg = parse_ok("source: {command: [aiu-smi]}\n");
	assert_int_equal(cfg->source.argc, 1);
	assert_string_equal(cfg->source.argv[0], "aiu-smi");
	assert_null(cfg->source.argv[1]);
	config_free(cfg);
}

static void
test_devices_forms(void **state)
{
	struct config *cfg;

	(void)state;
	cfg = parse_ok("source:\n  devices:\n    - 7\n    - 2\n");
	assert_false(cfg->source.all_devices);
	assert_int_equal(cfg->source.ndevices, 2);
	assert_int_equal(cfg->source.devices[0], 7);
	assert_int_equal(cfg->source.devices[1], 2);
	config_free(cfg);

	cfg = parse_ok("source:\n  devices: all\n");
	assert_true(cfg->source.all_devices);
	assert_int_equal(cfg->source.ndevices, 0);
	config_free(cfg);

	cfg = parse_ok("source: {devices: [0]}\n");
	assert_false(cfg->source.all_devices);
	assert_int_equal(cfg->source.ndevices, 1);
	assert_int_equal(cfg->source.devices[0], 0);
	config_free(cfg);
}

static void
test_socket_length(void **state)
{
	char text[256], path[120];
	struct config_errors errs;
	struct config *cfg;

	(void)state;
	/* 107 bytes fit in sun_path with its NUL; 108 do not */
	memset(path, 'x', sizeof(path));
	path[0] = '/';
	path[107] = '\0';
	snprintf(text, sizeof(text), "socket: %s\n", path);
	cfg = parse_ok(text);
	assert_string_equal(cfg->socket, path);
	config_free(cfg);

	path[107] = 'x';
	path[108] = '\0';
	snprintf(text, sizeof(text), "socket: %s\n", path);
	parse_bad(text, 1, &errs);
	assert_non_null(strstr(errs.msgs[0], "t.yaml:1:9: socket: 108 bytes is too long (at most 107)"));
	config_errors_free(&errs);
}

/* One error per case: its position, a phrase of the message, the line and the caret. */
struct error_case {
	const char *text, *where, *needle, *line, *caret;
};

static const struct error_case error_cases[] = {
	/* range and type of scalars */
	{ "source:\n    interval: 5ms\n", "t.yaml:2:15:",
	    "source.interval: 5ms is out of range (10ms to 60s)",
	    "    interval: 5ms", "              ^" },
	{ "flush_interval: 2m\n", "t.yaml:1:17:",
	    "flush_interval: 2m is out of range (10ms to 60s)",
	    "flush_interval: 2m", "                ^" },
	{ "source: {window_interval: 9ms}\n", "t.yaml:1:27:",
	    "source.window_interval: 9ms is out of range",
	    "source: {window_interval: 9ms}", "                          ^" },
	{ "source:\n  pre_window: 61s\n", "t.yaml:2:15:",
	    "source.pre_window: 61s is out of range (0s to 60s)",
	    "  pre_window: 61s", "              ^" },
	{ "source:\n  pre_window: 0\n", "t.yaml:2:15:",
	    "source.pre_window: 0 needs a unit", "  pre_window: 0",
	    "              ^" },
	{ "windows:\n  max_open: 59s\n", "t.yaml:2:13:",
	    "windows.max_open: 59s is out of range (60s to 30d)",
	    "  max_open: 59s", "            ^" },
	{ "windows:\n  max_open: 30d1s\n", "t.yaml:2:13:",
	    "windows.max_open: 30d1s is out of range (60s to 30d)",
	    "  max_open: 30d1s", "            ^" },
	{ "windows:\n  max_ending_per_uid: 0\n", "t.yaml:2:23:",
	    "windows.max_ending_per_uid: 0 is out of range (1 to 4096)",
	    "  max_ending_per_uid: 0", "                      ^" },
	{ "windows:\n  max_open_per_uid: 5000\n", "t.yaml:2:21:",
	    "windows.max_open_per_uid: 5000 is out of range (1 to 4096)",
	    "  max_open_per_uid: 5000", "                    ^" },
	{ "windows:\n  max_open_per_uid: 10k\n", "t.yaml:2:21:",
	    "windows.max_open_per_uid: '10k' is not a whole number",
	    "  max_open_per_uid: 10k", "                    ^" },
	{ "windows: 24h\n", "t.yaml:1:10:",
	    "windows: expected a mapping of windows keys, got '24h'",
	    "windows: 24h", "         ^" },
	{ "windows:\n  max_opened: 1h\n", "t.yaml:2:3:",
	    "unknown key 'max_opened' in 'windows'; did you mean 'max_open'?",
	    "  max_opened: 1h", "  ^" },
	{ "flush_interval: 10\n", "t.yaml:1:17:",
	    "flush_interval: 10 needs a unit", "flush_interval: 10",
	    "                ^" },
	{ "flush_interval: soon\n", "t.yaml:1:17:",
	    "flush_interval: 'soon' is not a duration", "flush_interval: soon",
	    "                ^" },
	{ "retention:\n  max_age: 59m\n", "t.yaml:2:12:",
	    "retention.max_age: 59m is too short (at least 1h)", "  max_age: 59m",
	    "           ^" },
	{ "retention:\n  max_size: 1023KiB\n", "t.yaml:2:13:",
	    "retention.max_size: 1023KiB is too small (at least 1MiB)",
	    "  max_size: 1023KiB", "            ^" },
	{ "retention:\n  max_size: lots\n", "t.yaml:2:13:",
	    "retention.max_size: 'lots' is not a size", "  max_size: lots",
	    "            ^" },
	{ "database: \"\"\n", "t.yaml:1:11:", "database: must not be empty",
	    "database: \"\"", "          ^" },
	{ "database: \"/a\\0b\"\n", "t.yaml:1:11:", "database: contains a NUL",
	    "database: \"/a\\0b\"", "          ^" },
	{ "socket:\n  - a\n", "t.yaml:2:3:",
	    "socket: expected a path, got a list", "  - a", "  ^" },
	{ "checkpoint_interval: 500ms\n", "t.yaml:1:22:",
	    "checkpoint_interval: 500ms is out of range (1s to 1h)",
	    "checkpoint_interval: 500ms", "                     ^" },
	{ "on_damaged_database: start\n", "t.yaml:1:22:",
	    "on_damaged_database: 'start' is not keep-aside-and-start or "
	    "refuse", "on_damaged_database: start", "                     ^" },
	{ "sysfs_root: {a: 1}\n", "t.yaml:1:13:",
	    "sysfs_root: expected a path, got a mapping", "sysfs_root: {a: 1}",
	    "            ^" },
	{ "source:\n  metric_files: /tmp/metrics\n", "t.yaml:2:17:",
	    "source.metric_files: '/tmp/metrics' must contain %BUSID",
	    "  metric_files: /tmp/metrics", "                ^" },

	/* mappings */
	{ "source: [a]\n", "t.yaml:1:9:",
	    "source: expected a mapping of source keys, got a list",
	    "source: [a]", "        ^" },
	{ "retention: 3\n", "t.yaml:1:12:",
	    "retention: expected a mapping of retention keys, got '3'",
	    "retention: 3", "           ^" },
	{ "- a\n- b\n", "t.yaml:1:1:", "the top level: expected a mapping",
	    "- a", "^" },
	{ "just words\n", "t.yaml:1:1:", "got 'just words'", "just words", "^" },
	{ "source:\n  ? [a]\n  : 1\n", "t.yaml:2:5:",
	    "source: keys must be plain names, not a list", "  ? [a]", "    ^" },

	/* keys */
	{ "source:\n  intervl: 1s\n", "t.yaml:2:3:",
	    "unknown key 'intervl' in 'source'; did you mean 'interval'?",
	    "  intervl: 1s", "  ^" },
	{ "retention:\n  max_ages: 8d\n", "t.yaml:2:3:",
	    "unknown key 'max_ages' in 'retention'; did you mean 'max_age'?",
	    "  max_ages: 8d", "  ^" },
	{ "Database: /x\n", "t.yaml:1:1:",
	    "unknown key 'Database' at the top level; did you mean 'database'?",
	    "Database: /x", "^" },
	{ "source:\n  groups: D\n  groups: R\n", "t.yaml:3:3:",
	    "source.groups: duplicate key (first given on line 2)",
	    "  groups: R", "  ^" },
	{ "source:\n  interval:\n", "t.yaml:2:3:", "source.interval: missing value",
	    "  interval:", "  ^" },

	/* groups, devices, command */
	{ "source:\n  groups: DX\n", "t.yaml:2:11:",
	    "source.groups: 'X' in 'DX' is not a metric group", "  groups: DX",
	    "          ^" },
	{ "source:\n  groups: d\n", "t.yaml:2:11:", "'d' in 'd' is not a metric group",
	    "  groups: d", "          ^" },
	{ "source:\n  groups: DRD\n", "t.yaml:2:11:",
	    "source.groups: 'D' is given twice in 'DRD'", "  groups: DRD",
	    "          ^" },
	{ "source:\n  groups: ''\n", "t.yaml:2:11:", "source.groups: must not be empty",
	    "  groups: ''", "          ^" },
	{ "source:\n  devices: some\n", "t.yaml:2:12:",
	    "source.devices: expected 'all' or a list of device IDs",
	    "  devices: some", "           ^" },
	{ "source:\n  devices: []\n", "t.yaml:2:12:",
	    "source.devices: the list is empty", "  devices: []", "           ^" },
	{ "source:\n  devices: [1, 256]\n", "t.yaml:2:16:",
	    "source.devices[1]: '256' is not a device ID (0 to 255)",
	    "  devices: [1, 256]", "               ^" },
	{ "source:\n  devices: [-1]\n", "t.yaml:2:13:",
	    "source.devices[0]: '-1' is not a device ID", "  devices: [-1]",
	    "            ^" },
	{ "source:\n  devices: [01]\n", "t.yaml:2:13:",
	    "source.devices[0]: '01' is not a device ID", "  devices: [01]",
	    "            ^" },
	{ "source:\n  devices: [0, [1]]\n", "t.yaml:2:16:",
	    "source.devices[1]: expected a device ID from 0 to 255, got a list",
	    "  devices: [0, [1]]", "               ^" },
	{ "source:\n  devices: [2, 5, 2]\n", "t.yaml:2:19:",
	    "source.devices[2]: device 2 is listed twice", "  devices: [2, 5, 2]",
	    "                  ^" },
	{ "source:\n  command: ' '\n", "t.yaml:2:12:",
	    "source.command: must not be empty", "  command: ' '", "           ^" },
	{ "source:\n  command: []\n", "t.yaml:2:12:",
	    "source.command: must not be empty", "  command: []", "           ^" },
	{ "source:\n  command: [\"\", -x]\n", "t.yaml:2:13:",
	    "source.command[0]: the program must not be empty",
	    "  command: [\"\", -x]", "            ^" },
	{ "source:\n  command: [aiu-smi, {a: b}]\n", "t.yaml:2:22:",
	    "source.command[1]: expected a string, got a mapping",
	    "  command: [aiu-smi, {a: b}]",
	    "                     ^" },
	{ "source:\n  command: [aiu-smi, ~]\n", "t.yaml:2:22:",
	    "source.command[1]: missing value", "  command: [aiu-smi, ~]",
	    "                     ^" },
	{ "source:\n  command: {a: b}\n", "t.yaml:2:12:",
	    "source.command: expected a command", "  command: {a: b}",
	    "           ^" },

	/* between keys: windows_max_age must not be shorter than max_age */
	{ "retention:\n  max_age: 30d\n  windows_max_age: 10d\n", "t.yaml:3:20:",
	    "retention.windows_max_age: 10d is shorter than retention.max_age (30d)",
	    "  windows_max_age: 10d", "                   ^" },
	{ "retention:\n  windows_max_age: 72h\n  max_age: 4d\n", "t.yaml:2:20:",
	    "retention.windows_max_age: 72h is shorter than retention.max_age (4d)",
	    "  windows_max_age: 72h", "                   ^" },
	{ "retention:\n  max_age: 100d\n", "t.yaml:2:12:",
	    "retention.max_age: 100d is longer than retention.windows_max_age (90d",
	    "  max_age: 100d", "           ^" },
	{ "retention: {windows_max_age: 2h}\n", "t.yaml:1:30:",
	    "retention.windows_max_age: 2h is shorter than retention.max_age (7d)",
	    "retention: {windows_max_age: 2h}", "                             ^" },

	/* YAML itself */
	{ "source:\n\tinterval: 1s\n", "t.yaml:2:1:",
	    "invalid yaml: found character that cannot start any token",
	    "\tinterval: 1s", "^" },
	{ "a: b: c\n", "t.yaml:1:5:",
	    "invalid yaml: mapping values are not allowed in this context",
	    "a: b: c", "    ^" },
	{ "database: \"/tmp/x\n", "t.yaml:2:1:",
	    "invalid yaml: found unexpected end of stream (while scanning a "
	    "quoted scalar at line 1 column 11)", "", "^" },
	{ "database: /tmp/\xff\n", "t.yaml:1:16:",
	    "invalid yaml: invalid leading UTF-8 octet", "database: /tmp/\xff",
	    "               ^" },
	{ "database: /a\n---\ndatabase: /b\n", "t.yaml:3:1:",
	    "only one yaml document is allowed", "database: /b", "^" },
	{ "source: {interval: *nowhere}\n", "t.yaml:1:20:",
	    "invalid yaml: found undefined alias", "source: {interval: *nowhere}",
	    "                   ^" },

	/* where the caret goes: tabs are copied, characters counted, CR dropped */
	{ "source:\n  interval:\t5ms\n", "t.yaml:2:13:",
	    "source.interval: 5ms is out of range", "  interval:\t5ms",
	    "           \t^" },
	{ "source: {command: \"\xc3\xa9\", interval: 5ms}\n", "t.yaml:1:34:",
	    "source.interval: 5ms is out of range",
	    "source: {command: \"\xc3\xa9\", interval: 5ms}",
	    "                                 ^" },
	{ "source:\r\n  interval: 5ms\r\n", "t.yaml:2:13:",
	    "source.interval: 5ms is out of range", "  interval: 5ms",
	    "            ^" },
	{ "\xef\xbb\xbf" "flush_interval: 1\n", "t.yaml:1:17:",
	    "flush_interval: 1 needs a unit", "flush_interval: 1",
	    "                ^" },
};

static void
test_each_error(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(error_cases) / sizeof(error_cases[0]); i++) {
		const struct error_case *c = &error_cases[i];

		assert_one_error(c->text, c->where, c->needle, c->line, c->caret);
	}
}

static void
test_unknown_key_without_suggestion(void **state)
{
	struct config_errors errs;

	(void)state;
	parse_bad("source:\n  speed: 1s\n", 1, &errs);
	assert_string_equal(errs.msgs[0],
	    "t.yaml:2:3: unknown key 'speed' in 'source'\n  speed: 1s\n  ^");
	config_errors_free(&errs);
}

static void
test_exact_message(void **state)
{
	struct config_errors errs;

	(void)state;
	parse_bad("source:\n    interval: 5ms\n", 1, &errs);
	assert_string_equal(errs.msgs[0], "t.yaml:2:15: source.interval: 5ms is "
	    "out of range (10ms to 60s)\n    interval: 5ms\n              ^");
	config_errors_free(&errs);
}

static void
test_errors_all_reported(void **state)
{
	struct config_errors errs;

	(void)state;
	parse_bad("database: ''\n"
	    "source:\n"
	    "  interval: 1\n"
	    "  devices: [0, 0]\n", 3, &errs);
	assert_error(errs.msgs[0], "t.yaml:1:11:", "database: must not be empty",
	    "database: ''", "          ^");
	assert_error(errs.msgs[1], "t.yaml:3:13:", "source.interval: 1 needs a unit",
	    "  interval: 1", "            ^");
	assert_error(errs.msgs[2], "t.yaml:4:16:", "device 0 is listed twice",
	    "  devices: [0, 0]", "               ^");
	config_errors_free(&errs);

	/* errors in both sections, a duplicate, and an unknown key */
	parse_bad("source:\n  groups: Q\n  groups: D\nretention:\n  max_size: 1\n"
	    "colour: blue\n", 4, &errs);
	assert_error(errs.msgs[0], "t.yaml:2:11:", "'Q' in 'Q'", "  groups: Q",
	    "          ^");
	assert_error(errs.msgs[1], "t.yaml:3:3:", "duplicate key", "  groups: D", "  ^");
	assert_error(errs.msgs[2], "t.yaml:5:13:", "1 is too small", "  max_size: 1",
	    "            ^");
	assert_error(errs.msgs[3], "t.yaml:6:1:", "unknown key 'colour' at the top level",
	    "colour: blue", "^");
	config_errors_free(&errs);
}

static void
test_retention_check_needs_valid_ages(void **state)
{
	struct config_errors errs;

	(void)state;
	/* max_age is wrong on its own; no second error comparing it */
	parse_bad("retention:\n  max_age: 1y\n  windows_max_age: 2h\n", 1, &errs);
	assert_error(errs.msgs[0], "t.yaml:2:12:", "'1y' is not a duration",
	    "  max_age: 1y", "           ^");
	config_errors_free(&errs);
}

static void
test_error_count_is_bounded(void **state)
{
	struct config_errors errs;
	char *text = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&text, &len);

	(void)state;
	assert_non_null(fp);
	for (int i = 0; i < 150; i++)
		fprintf(fp, "unknown%d: 1\n", i);
	assert_int_equal(fclose(fp), 0);
	parse_bad(text, 101, &errs);
	assert_error(errs.msgs[99], "t.yaml:100:1:", "unknown key 'unknown99'",
	    "unknown99: 1", "^");
	assert_string_equal(errs.msgs[100], "t.yaml: 50 more errors not shown");
	config_errors_free(&errs);
	free(text);
}

static char *
write_temp(const char *content, size_t len)
{
	char *path = strdup("/tmp/test_config.XXXXXX");
	int fd;

	assert_non_null(path);
	assert_true((fd = mkstemp(path)) != -1);
	assert_int_equal(write(fd, content, len), (ssize_t)len);
	assert_int_equal(close(fd), 0);
	return path;
}

#define TEXT_BAD	"source:\n  groups: DR\n  interval: 2\n"
#define TEXT_GOOD	"source:\n  groups: DR\n"

static void
test_load_file(void **state)
{
	struct config_errors errs;
	struct config *cfg;
	char *path, *want;

	(void)state;
	path = write_temp(TEXT_BAD, strlen(TEXT_BAD));
	assert_int_equal(config_load(path, &cfg, &errs), -1);
	assert_null(cfg);
	assert_int_equal(errs.n, 1);
	assert_true(asprintf(&want, "%s:3:13: source.interval: 2 needs a unit", path) > 0);
	assert_true(strncmp(errs.msgs[0], want, strlen(want)) == 0);
	free(want);
	config_errors_free(&errs);
	assert_int_equal(errs.n, 0);
	assert_null(errs.msgs);
	unlink(path);
	free(path);

	path = write_temp(TEXT_GOOD, strlen(TEXT_GOOD));
	assert_int_equal(config_load(path, &cfg, &errs), 0);
	assert_int_equal(errs.n, 0);
	assert_string_equal(cfg->path, path);
	assert_string_equal(cfg->source.groups, "DR");
	config_free(cfg);
	unlink(path);
	free(path);
}

static void
test_load_failures(void **state)
{
	struct config_errors errs;
	struct config *cfg;
	char want[256], *path, *big;
	size_t bigsize = 1024 * 1024 + 1;

	(void)state;
	assert_int_equal(config_load("/nonexistent/spyremond.yaml", &cfg, &errs), -1);
	assert_null(cfg);
	assert_int_equal(errs.n, 1);
	snprintf(want, sizeof(want), "/nonexistent/spyremond.yaml: cannot open: %s",
	    strerror(ENOENT));
	assert_string_equal(errs.msgs[0], want);
	config_errors_free(&errs);

	assert_int_equal(config_load("/", &cfg, &errs), -1);
	assert_int_equal(errs.n, 1);
	assert_string_equal(errs.msgs[0],
	    "/: cannot open: is a directory, not a regular file");
	config_errors_free(&errs);

	/* a FIFO with no writer: an error at once, not an open that blocks */
	assert_true(asprintf(&path, "%s/spyremond.fifo.%d", getenv("TMPDIR") ?
	    getenv("TMPDIR") : "/tmp", (int)getpid()) > 0);
	unlink(path);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(config_load(path, &cfg, &errs), -1);
	assert_null(cfg);
	assert_int_equal(errs.n, 1);
	assert_non_null(strstr(errs.msgs[0], ": cannot open: is a FIFO, not a "
	    "regular file"));
	config_errors_free(&errs);
	unlink(path);
	free(path);

	/* nor a device */
	assert_int_equal(config_load("/dev/zero", &cfg, &errs), -1);
	assert_string_equal(errs.msgs[0], "/dev/zero: cannot open: is a "
	    "character device, not a regular file");
	config_errors_free(&errs);

	/* just over 1 MiB of comment: valid YAML, refused for its size */
	assert_non_null(big = malloc(bigsize));
	memset(big, '#', bigsize);
	big[bigsize - 1] = '\n';
	path = write_temp(big, bigsize);
	assert_int_equal(config_load(path, &cfg, &errs), -1);
	assert_null(cfg);
	assert_int_equal(errs.n, 1);
	assert_non_null(strstr(errs.msgs[0], ": larger than 1 MiB"));
	config_errors_free(&errs);
	unlink(path);
	free(path);

	/* exactly 1 MiB is still read */
	path = write_temp(big + 1, bigsize - 1);
	assert_int_equal(config_load(path, &cfg, &errs), 0);
	assert_defaults(cfg);
	config_free(cfg);
	unlink(path);
	free(path);
	free(big);
}

/* print, read back, print again: the same text and the same config */
static void
assert_round_trip(const char *text)
{
	struct config *cfg = parse_ok(text), *again;
	char *printed = print_to_string(cfg), *reprinted;

	again = parse_ok(printed);
	assert_config_equal(cfg, again);
	reprinted = print_to_string(again);
	assert_string_equal(printed, reprinted);
	free(printed);
	free(reprinted);
	config_free(cfg);
	config_free(again);
}

static void
test_print_round_trip(void **state)
{
	(void)state;
	assert_round_trip("");
	assert_round_trip(
	    "database: \"null\"\n"
	    "socket: \"/run/a b: c # d\"\n"
	    "flush_interval: 45s\n"
	    "sysfs_root: \"-\"\n"
	    "source:\n"
	    "  command: [\"/opt/x y/aiu-smi\", \"quote\\\"back\\\\slash\", '', \"tab\\tnl\\n\"]\n"
	    "  interval: 1.001s\n"
	    "  window_interval: 15500us\n"
	    "  pre_window: 0s\n"
	    "  groups: PS\n"
	    "  devices: [9, 4]\n"
	    "  metric_files: \"%BUSID: metrics\"\n"
	    "windows:\n"
	    "  max_open: 90061s\n"
	    "  idle_lookback: 0s\n"
	    "  max_open_per_uid: 4096\n"
	    "  max_ending_per_uid: 1\n"
	    "retention:\n"
	    "  max_age: 25h\n"
	    "  max_size: 1000000000\n"
	    "  windows_max_age: 8d1ns\n");
	assert_round_trip("source: {command: \"only one word with spaces\"}\n");
	assert_round_trip("source: {command: [\"one arg with spaces\"]}\n");
	assert_round_trip("source: {command: [true]}\ndatabase: \"~\"\n");
	assert_round_trip("database: \"caf\xc3\xa9.db\"\nsocket: \"@abstract\"\n");
}

static void
test_print_defaults(void **state)
{
	struct config *cfg = config_defaults();
	char *text;

	(void)state;
	text = print_to_string(cfg);
	assert_string_equal(text,
	    "database: /var/lib/spyremond/spyremon.db\n"
	    "socket: /run/spyremond/control.sock\n"
	    "flush_interval: 1s\n"
	    "sysfs_root: /sys\n"
	    "checkpoint_interval: 10s\n"
	    "on_damaged_database: keep-aside-and-start\n"
	    "source:\n"
	    "  command: aiu-smi\n"
	    "  interval: 1s\n"
	    "  window_interval: 100ms\n"
	    "  pre_window: 10s\n"
	    "  groups: A\n"
	    "  devices: all\n"
	    "  metric_files: /tmp/metrics.%BUSID\n"
	    "  direct: auto\n"
	    "windows:\n"
	    "  max_open: 1d\n"
	    "  idle_lookback: 1h\n"
	    "  max_open_per_uid: 256\n"
	    "  max_ending_per_uid: 64\n"
	    "retention:\n"
	    "  max_age: 7d\n"
	    "  max_size: 1GiB\n"
	    "  windows_max_age: 90d\n");
	free(text);
	config_free(cfg);

	cfg = parse_ok("source: {command: aiu-smi -q, devices: [1, 0]}\n");
	text = print_to_string(cfg);
	assert_non_null(strstr(text, "  command: [\"aiu-smi\", \"-q\"]\n"));
	assert_non_null(strstr(text, "  devices: [1, 0]\n"));
	free(text);
	config_free(cfg);

	cfg = parse_ok("on_damaged_database: refuse\n");
	assert_int_equal(cfg->on_damaged_database, CONFIG_DAMAGE_REFUSE);
	text = print_to_string(cfg);
	assert_non_null(strstr(text, "on_damaged_database: refuse\n"));
	free(text);
	config_free(cfg);
}

static void
test_source_differs(void **state)
{
	static const struct {
		const char *text;
		bool differs;
	} cases[] = {
		{ "", false },
		{ "source: {command: aiu-smi}", false },
		{ "source: {command: [aiu-smi]}", false },
		{ "source: {interval: 2s, window_interval: 20ms}", false },
		{ "source: {pre_window: 0s}\nwindows: {max_open: 1h}", false },
		{ "flush_interval: 5s\ndatabase: /x\nsocket: /y\nsysfs_root: /z", false },
		{ "retention: {max_age: 1h, max_size: 2MiB, windows_max_age: 1h}", false },
		{ "source: {command: /usr/bin/aiu-smi}", true },
		{ "source: {command: aiu-smi --mem-details}", true },
		{ "source: {command: [aiu-smi, '']}", true },
		{ "source: {groups: D}", true },
		{ "source: {devices: [0]}", true },
		{ "source: {metric_files: /tmp/m.%BUSID}", true },
	};
	struct config *base = config_defaults(), *cfg, *list01, *list10, *list12;

	(void)state;
	assert_non_null(base);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cfg = parse_ok(cases[i].text);
		if (config_source_differs(base, cfg) != cases[i].differs ||
		    config_source_differs(cfg, base) != cases[i].differs)
			fail_msg("config_source_differs wrong for \"%s\"", cases[i].text);
		assert_false(config_source_differs(cfg, cfg));
		config_free(cfg);
	}

	/* devices compare as a set: only membership changes the sampling */
	list01 = parse_ok("source: {devices: [0, 1]}");
	list10 = parse_ok("source: {devices: [1, 0]}");
	list12 = parse_ok("source: {devices: [1, 2]}");
	assert_false(config_source_differs(list01, list10));
	assert_true(config_source_differs(list01, list12));
	assert_true(config_source_differs(list10, list12));
	cfg = parse_ok("source: {devices: [1]}");
	assert_true(config_source_differs(list01, cfg));
	assert_true(config_source_differs(cfg, list01));
	config_free(cfg);
	config_free(list01);
	config_free(list10);
	config_free(list12);
	config_free(base);
}

/*
 * Nesting is bounded before a document is built: 16 levels are loaded
 * (and refused for their type), 17 are refused at the 17th, and 200,000
 * (which take libyaml tens of seconds to load) the same way.
 */
static void
test_nesting_bounded(void **state)
{
	static const size_t deep = 200000;
	struct config_errors errs;
	char text[128], line[128], caret[64];
	char *big;
	size_t off;

	(void)state;
	/* top and source are two levels; 14 brackets make 16 */
	snprintf(text, sizeof(text), "source:\n  command: %.14s%.14s\n",
	    "[[[[[[[[[[[[[[[[[[", "]]]]]]]]]]]]]]]]]]");
	parse_bad(text, 1, &errs);
	assert_null(strstr(errs.msgs[0], "nested"));
	config_errors_free(&errs);
	/* 15 brackets: the 15th, at column 26, is one too deep */
	snprintf(text, sizeof(text), "source:\n  command: %.15s%.15s\n",
	    "[[[[[[[[[[[[[[[[[[", "]]]]]]]]]]]]]]]]]]");
	snprintf(line, sizeof(line), "%.*s", (int)(strchr(text + 8, '\n') -
	    (text + 8)), text + 8);
	snprintf(caret, sizeof(caret), "%25s^", "");
	assert_one_error(text, "t.yaml:2:26:", "nested deeper than 16 levels",
	    line, caret);

	/* 200,000 deep, and a block-style mapping chain */
	big = malloc(2 * deep + 64);
	assert_non_null(big);
	off = (size_t)sprintf(big, "source:\n  command: ");
	memset(big + off, '[', deep);
	memset(big + off + deep, ']', deep);
	strcpy(big + off + 2 * deep, "\n");
	parse_bad(big, 1, &errs);
	assert_true(strncmp(errs.msgs[0], "t.yaml:2:26: ", 13) == 0);
	assert_non_null(strstr(errs.msgs[0], "nested deeper than 16 levels"));
	config_errors_free(&errs);
	off = 0;
	for (int i = 0; i < 40; i++)
		off += (size_t)sprintf(big + off, "%*sa:\n", 2 * i, "");
	sprintf(big + off, "%*sb: 1\n", 80, "");
	parse_bad(big, 1, &errs);
	assert_true(strncmp(errs.msgs[0], "t.yaml:17:33: ", 14) == 0);
	assert_non_null(strstr(errs.msgs[0], "nested deeper"));
	config_errors_free(&errs);
	free(big);
}

static void
test_free_null(void **state)
{
	struct config_errors errs = { 0 };

	(void)state;
	config_free(NULL);
	config_errors_free(NULL);
	config_errors_free(&errs);
	assert_int_equal(errs.n, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_builtin_defaults),
		cmocka_unit_test(test_empty_gives_defaults),
		cmocka_unit_test(test_shipped_config_is_defaults),
		cmocka_unit_test(test_every_key),
		cmocka_unit_test(test_range_limits_accepted),
		cmocka_unit_test(test_command_forms),
		cmocka_unit_test(test_devices_forms),
		cmocka_unit_test(test_socket_length),
		cmocka_unit_test(test_each_error),
		cmocka_unit_test(test_unknown_key_without_suggestion),
		cmocka_unit_test(test_exact_message),
		cmocka_unit_test(test_errors_all_reported),
		cmocka_unit_test(test_retention_check_needs_valid_ages),
		cmocka_unit_test(test_error_count_is_bounded),
		cmocka_unit_test(test_load_file),
		cmocka_unit_test(test_load_failures),
		cmocka_unit_test(test_print_round_trip),
		cmocka_unit_test(test_print_defaults),
		cmocka_unit_test(test_source_differs),
		cmocka_unit_test(test_nesting_bounded),
		cmocka_unit_test(test_free_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
