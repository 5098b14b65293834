/*
 * config_priv: what config.c (walking the YAML against the key tables)
 * shares with config_print.c (a config and its errors as text, and a
 * config's life as a value).  Nothing else includes this.
 */
#ifndef SPYREMON_CONFIG_PRIV_H
#define SPYREMON_CONFIG_PRIV_H

#include <stddef.h>

#include <yaml.h>

#include "config.h"

/* The YAML being read, so an error can quote its offending line. */
struct config_text {
	const char *name;	/* file name for messages */
	const char *text;
	size_t len;
};

/*
 * "name: msg" (mark NULL), or "name:line:col: msg" followed by the line
 * mark points into and a caret under its column.  NULL if out of memory.
 */
char *config_error_text(const struct config_text *t, const yaml_mark_t *mark,
    const char *msg);

/* The position of byte offset in t, as libyaml would have marked it. */
yaml_mark_t config_mark_at_offset(const struct config_text *t, size_t offset);

/* What node is, for "expected X, got Y": "a list", "a mapping" or 'text'. */
void config_describe_node(const yaml_node_t *node, char *buf, size_t len);

/*
 * Read path whole into a malloc'd *out, but no more than limit + 1 bytes,
 * so the caller can tell a file over the limit.  Only a regular file is
 * read, and its open never blocks (regfile.h): a FIFO or a device is an
 * error that says what it is.  -1 with one error naming the file and why
 * added to errs.
 */
int config_read_file(const char *path, size_t limit, char **out, size_t *outlen,
    struct config_errors *errs);

/* Make errs empty without freeing anything. */
void config_errors_reset(struct config_errors *errs);

/* Append msg (which errs then owns); -1 if out of memory or msg is NULL, msg freed. */
int config_errors_add(struct config_errors *errs, char *msg);

int config_errors_addf(struct config_errors *errs, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Levenshtein distance from a to b; b has fewer than CONFIG_KEY_NAME_MAX bytes. */
#define CONFIG_KEY_NAME_MAX	32
size_t config_edit_distance(const char *a, const char *b);

/* Free a NULL-terminated argv and its strings; NULL is a no-op. */
void config_free_argv(char **argv);

#endif
