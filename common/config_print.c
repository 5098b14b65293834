/*
 * config_print: a config as a value and as text.  Built-in defaults,
 * printing a config as YAML that reads back the same, comparing what the
 * child's command line depends on, freeing; the text of an error
 * message: its position, the offending line and a caret under the column;
 * the file's bytes, read with a bound.  The YAML itself is walked in
 * config.c.
 */
#include "config_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "regfile.h"
#include "timeparse.h"

#define MSEC			NSEC_PER_MSEC
#define SEC			NSEC_PER_SEC
#define HOUR			(3600 * SEC)
#define DAY			(24 * HOUR)
#define MIB			(1024ULL * 1024)

#define DEFAULT_DATABASE	"/var/lib/spyremond/spyremon.db"
#define DEFAULT_SOCKET		"/run/spyremond/control.sock"
#define DEFAULT_SYSFS_ROOT	"/sys"
#define DEFAULT_COMMAND		"aiu-smi"
#define DEFAULT_GROUPS		"A"
#define DEFAULT_METRIC_FILES	"/tmp/metrics.%BUSID"

/* ---- error messages ---- */

/* Length in bytes of the line break at p (libyaml's set), or 0. */
static size_t
break_len(const char *p, const char *end)
{
	size_t left = (size_t)(end - p);

	if (left >= 2 && p[0] == '\r' && p[1] == '\n')
		return 2;
	if (p[0] == '\r' || p[0] == '\n')
		return 1;
	if (left >= 2 && (unsigned char)p[0] == 0xc2 && (unsigned char)p[1] == 0x85)
		return 2;
	if (left >= 3 && (unsigned char)p[0] == 0xe2 && (unsigned char)p[1] == 0x80 &&
	    ((unsigned char)p[2] == 0xa8 || (unsigned char)p[2] == 0xa9))
		return 3;
	return 0;
}

static bool
is_utf8_continuation(char c)
{
	return ((unsigned char)c & 0xc0) == 0x80;
}

/* The text of 0-based line lineno, without its line break. */
static void
find_line(const struct config_text *t, size_t lineno, const char **start, size_t *linelen)
{
	const char *p = t->text;
	const char *end = t->text + t->len;
	size_t n;

	for (size_t line = 0; line < lineno && p < end; ) {
		if ((n = break_len(p, end)) != 0) {
			p += n;
			line++;
		} else
			p++;
	}
	*start = p;
	while (p < end && break_len(p, end) == 0)
		p++;
	*linelen = (size_t)(p - *start);
}

/*
 * A line that puts a caret under character column of line: tabs before it
 * are copied so the caret lines up however the terminal expands them.
 */
static char *
caret_line(const char *line, size_t linelen, size_t column)
{
	char *caret = malloc(column + 2);
	size_t i = 0;

	if (caret == NULL)
		return NULL;
	for (size_t col = 0; col < column; col++) {
		if (i < linelen) {
			caret[col] = line[i] == '\t' ? '\t' : ' ';
			for (i++; i < linelen && is_utf8_continuation(line[i]); i++)
				;
		} else
			caret[col] = ' ';
	}
	caret[column] = '^';
	caret[column + 1] = '\0';
	return caret;
}

yaml_mark_t
config_mark_at_offset(const struct config_text *t, size_t offset)
{
	yaml_mark_t mark = { 0 };
	const char *end = t->text + (offset < t->len ? offset : t->len);
	const char *p = t->text;
	size_t n;

	mark.index = offset;
	while (p < end) {
		if ((n = break_len(p, end)) != 0) {
			p += n;
			mark.line++;
			mark.column = 0;
		} else if (!is_utf8_continuation(*p++))
			mark.column++;
	}
	return mark;
}

void
config_errors_reset(struct config_errors *errs)
{
	errs->msgs = NULL;
	errs->n = 0;
}

int
config_errors_add(struct config_errors *errs, char *msg)
{
	char **msgs;

	if (msg == NULL)
		return -1;
	msgs = realloc(errs->msgs, (errs->n + 1) * sizeof(*msgs));
	if (msgs == NULL) {
		free(msg);
		return -1;
	}
	errs->msgs = msgs;
	errs->msgs[errs->n++] = msg;
	return 0;
}

int
config_errors_addf(struct config_errors *errs, const char *fmt, ...)
{
	va_list ap;
	char *msg;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&msg, fmt, ap);
	va_end(ap);
	return config_errors_add(errs, r == -1 ? NULL : msg);
}

char *
config_error_text(const struct config_text *t, const yaml_mark_t *mark,
    const char *msg)
{
	const char *line;
	size_t linelen;
	char *caret, *out;
	int r;

	if (mark == NULL)
		r = asprintf(&out, "%s: %s", t->name, msg);
	else {
		find_line(t, mark->line, &line, &linelen);
		if ((caret = caret_line(line, linelen, mark->column)) == NULL)
			return NULL;
		r = asprintf(&out, "%s:%zu:%zu: %s\n%.*s\n%s", t->name,
		    mark->line + 1, mark->column + 1, msg, (int)linelen, line, caret);
		free(caret);
	}
	return r == -1 ? NULL : out;
}

void
config_describe_node(const yaml_node_t *node, char *buf, size_t len)
{
	switch (node->type) {
	case YAML_MAPPING_NODE:
		snprintf(buf, len, "a mapping");
		break;
	case YAML_SEQUENCE_NODE:
		snprintf(buf, len, "a list");
		break;
	default:
		if (node->data.scalar.length > 40)
			snprintf(buf, len, "'%.37s...'", (const char *)node->data.scalar.value);
		else
			snprintf(buf, len, "'%s'", (const char *)node->data.scalar.value);
		break;
	}
}

/* ---- key names ---- */

size_t
config_edit_distance(const char *a, const char *b)
{
	size_t lb = strlen(b);
	size_t row[CONFIG_KEY_NAME_MAX];

	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; a[i - 1] != '\0'; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

/* ---- the file ---- */

int
config_read_file(const char *path, size_t limit, char **out, size_t *outlen,
    struct config_errors *errs)
{
	size_t cap = 0, len = 0;
	char *buf = NULL, *grown, why[256];
	struct stat sb;
	mode_t kind;
	ssize_t n;
	int fd, saved;

	/* a reload must not hang on a FIFO put in the file's place */
	if ((fd = regfile_open(path, false, &sb, &kind, why, sizeof(why))) == -1) {
		config_errors_addf(errs, "%s: cannot open: %s", path, why);
		return -1;
	}
	while (len <= limit) {
		if (len == cap) {
			cap = cap == 0 ? 4096 : cap * 2;
			if (cap > limit + 1)
				cap = limit + 1;
			if ((grown = realloc(buf, cap)) == NULL)
				goto fail;
			buf = grown;
		}
		if ((n = read(fd, buf + len, cap - len)) == -1) {
			if (errno == EINTR)
				continue;
			goto fail;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	*out = buf;
	*outlen = len;
	return 0;

fail:
	saved = errno;
	free(buf);
	close(fd);
	config_errors_addf(errs, "%s: cannot read: %s", path, strerror(saved));
	return -1;
}

/* ---- the config as a value ---- */

void
config_free_argv(char **argv)
{
	if (argv == NULL)
		return;
	for (char **a = argv; *a != NULL; a++)
		free(*a);
	free(argv);
}

const char *
config_direct_name(enum config_direct d)
{
	switch (d) {
	case CONFIG_DIRECT_AUTO:	return "auto";
	case CONFIG_DIRECT_ON:		return "on";
	case CONFIG_DIRECT_OFF:		return "off";
	}
	return "?";
}

const char *
config_on_damage_name(enum config_on_damage d)
{
	switch (d) {
	case CONFIG_DAMAGE_KEEP_ASIDE:	return "keep-aside-and-start";
	case CONFIG_DAMAGE_REFUSE:	return "refuse";
	}
	return "?";
}

struct config *
config_defaults(void)
{
	struct config *cfg = calloc(1, sizeof(*cfg));

	if (cfg == NULL)
		return NULL;
	cfg->database = strdup(DEFAULT_DATABASE);
	cfg->socket = strdup(DEFAULT_SOCKET);
	cfg->flush_interval_ns = 1 * SEC;
	cfg->sysfs_root = strdup(DEFAULT_SYSFS_ROOT);
	/* a daemon that refuses collects nothing; the copies lose nothing */
	cfg->on_damaged_database = CONFIG_DAMAGE_KEEP_ASIDE;
	/* what a damaged log can cost at most */
	cfg->checkpoint_interval_ns = 10 * SEC;
	cfg->source.argc = 1;
	if ((cfg->source.argv = calloc(2, sizeof(char *))) != NULL)
		cfg->source.argv[0] = strdup(DEFAULT_COMMAND);
	cfg->source.interval_ns = 1 * SEC;
	cfg->source.window_interval_ns = 100 * MSEC;
	cfg->source.pre_window_ns = 10 * SEC;
	/* every reader takes one source per metric per card (bestsrc.h) */
	cfg->source.direct = CONFIG_DIRECT_AUTO;
	snprintf(cfg->source.groups, sizeof(cfg->source.groups), "%s", DEFAULT_GROUPS);
	cfg->source.all_devices = true;
	cfg->source.metric_files = strdup(DEFAULT_METRIC_FILES);
	cfg->windows.max_open_ns = 24 * HOUR;
	cfg->windows.idle_lookback_ns = HOUR;
	cfg->windows.max_open_per_uid = 256;
	cfg->windows.max_ending_per_uid = 64;
	cfg->retention.max_age_ns = 7 * DAY;
	cfg->retention.max_size = 1024 * MIB;
	cfg->retention.windows_max_age_ns = 90 * DAY;
	if (cfg->database == NULL || cfg->socket == NULL || cfg->sysfs_root == NULL ||
	    cfg->source.argv == NULL || cfg->source.argv[0] == NULL ||
	    cfg->source.metric_files == NULL) {
		config_free(cfg);
		return NULL;
	}
	return cfg;
}

void
config_free(struct config *cfg)
{
	if (cfg == NULL)
		return;
	free(cfg->path);
	free(cfg->database);
	free(cfg->socket);
	free(cfg->sysfs_root);
	config_free_argv(cfg->source.argv);
	free(cfg->source.devices);
	free(cfg->source.metric_files);
	free(cfg);
}

void
config_errors_free(struct config_errors *errs)
{
	if (errs == NULL)
		return;
	for (size_t i = 0; i < errs->n; i++)
		free(errs->msgs[i]);
	free(errs->msgs);
	config_errors_reset(errs);
}

/* ---- printing ---- */

/*
 * True if s reads back as the same string when written plain after "key: "
 * or inside a flow sequence: a conservative set of characters that no YAML
 * reader takes for an indicator, a number or null.
 */
static bool
plain_safe(const char *s)
{
	static const char first[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_/.";
	static const char rest[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789_/.%+=@-";
	static const char *const words[] = { "null", "Null", "NULL", "true", "True",
	    "TRUE", "false", "False", "FALSE", "yes", "Yes", "YES", "no", "No", "NO",
	    "on", "On", "ON", "off", "Off", "OFF", "y", "Y", "n", "N" };

	if (*s == '\0' || strchr(first, *s) == NULL || strspn(s, rest) != strlen(s))
		return false;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strcmp(s, words[i]) == 0)
			return false;
	return true;
}

static void
print_quoted(FILE *fp, const char *s)
{
	fputc('"', fp);
	for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(fp, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(fp, "\\x%02x", *p);
		else
			fputc(*p, fp);
	}
	fputc('"', fp);
}

static void
print_string(FILE *fp, const char *s)
{
	if (plain_safe(s))
		fputs(s, fp);
	else
		print_quoted(fp, s);
}

static void
print_command(FILE *fp, const struct config *cfg)
{
	/* one word prints bare; anything else as a list, so it is not re-split */
	if (cfg->source.argc == 1 && plain_safe(cfg->source.argv[0])) {
		fputs(cfg->source.argv[0], fp);
		return;
	}
	fputc('[', fp);
	for (int i = 0; i < cfg->source.argc; i++) {
		if (i > 0)
			fputs(", ", fp);
		print_quoted(fp, cfg->source.argv[i]);
	}
	fputc(']', fp);
}

static void
print_devices(FILE *fp, const struct config *cfg)
{
	if (cfg->source.all_devices) {
		fputs("all", fp);
		return;
	}
	fputc('[', fp);
	for (size_t i = 0; i < cfg->source.ndevices; i++)
		fprintf(fp, "%s%d", i > 0 ? ", " : "", cfg->source.devices[i]);
	fputc(']', fp);
}

static void
print_duration(FILE *fp, const char *key, uint64_t ns)
{
	char buf[32];

	format_duration(ns, buf, sizeof(buf));
	fprintf(fp, "%s: %s\n", key, buf);
}

void
config_print(const struct config *cfg, FILE *fp)
{
	char buf[32];

	fputs("database: ", fp);
	print_string(fp, cfg->database);
	fputs("\nsocket: ", fp);
	print_string(fp, cfg->socket);
	fputc('\n', fp);
	print_duration(fp, "flush_interval", cfg->flush_interval_ns);
	fputs("sysfs_root: ", fp);
	print_string(fp, cfg->sysfs_root);
	fputc('\n', fp);
	print_duration(fp, "checkpoint_interval", cfg->checkpoint_interval_ns);
	fprintf(fp, "on_damaged_database: %s",
	    config_on_damage_name(cfg->on_damaged_database));
	fputs("\nsource:\n  command: ", fp);
	print_command(fp, cfg);
	fputc('\n', fp);
	print_duration(fp, "  interval", cfg->source.interval_ns);
	print_duration(fp, "  window_interval", cfg->source.window_interval_ns);
	print_duration(fp, "  pre_window", cfg->source.pre_window_ns);
	fprintf(fp, "  groups: %s\n  devices: ", cfg->source.groups);
	print_devices(fp, cfg);
	fputs("\n  metric_files: ", fp);
	print_string(fp, cfg->source.metric_files);
	fprintf(fp, "\n  direct: %s", config_direct_name(cfg->source.direct));
	fputs("\nwindows:\n", fp);
	print_duration(fp, "  max_open", cfg->windows.max_open_ns);
	print_duration(fp, "  idle_lookback", cfg->windows.idle_lookback_ns);
	fprintf(fp, "  max_open_per_uid: %" PRIu64 "\n",
	    cfg->windows.max_open_per_uid);
	fprintf(fp, "  max_ending_per_uid: %" PRIu64 "\n",
	    cfg->windows.max_ending_per_uid);
	fputs("retention:\n", fp);
	print_duration(fp, "  max_age", cfg->retention.max_age_ns);
	format_size(cfg->retention.max_size, buf, sizeof(buf));
	fprintf(fp, "  max_size: %s\n", buf);
	print_duration(fp, "  windows_max_age", cfg->retention.windows_max_age_ns);
}

/* ---- what the child depends on ---- */

static bool
device_listed(const struct config *cfg, int id)
{
	for (size_t i = 0; i < cfg->source.ndevices; i++)
		if (cfg->source.devices[i] == id)
			return true;
	return false;
}

/* Devices compare as sets: the order of -i does not change what is sampled. */
static bool
devices_differ(const struct config *a, const struct config *b)
{
	if (a->source.all_devices || b->source.all_devices)
		return a->source.all_devices != b->source.all_devices;
	if (a->source.ndevices != b->source.ndevices)
		return true;
	for (size_t i = 0; i < a->source.ndevices; i++)
		if (!device_listed(b, a->source.devices[i]))
			return true;
	return false;
}

bool
config_source_differs(const struct config *a, const struct config *b)
{
	if (a == NULL || b == NULL)
		return a != b;
	if (a->source.argc != b->source.argc)
		return true;
	for (int i = 0; i < a->source.argc; i++)
		if (strcmp(a->source.argv[i], b->source.argv[i]) != 0)
			return true;
	return strcmp(a->source.groups, b->source.groups) != 0 ||
	    strcmp(a->source.metric_files, b->source.metric_files) != 0 ||
	    devices_differ(a, b);
}
