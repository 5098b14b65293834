/*
 * config_keys: what the files that read spyremond.yaml share (config.c,
 * the walk and the key tables; config_source.c, the source section's
 * values): the loader, a key's entry in a table, and the helpers a key's
 * parser reports through (config_keys.c, below both).  Nothing else
 * includes this.
 */
#ifndef SPYREMON_CONFIG_KEYS_H
#define SPYREMON_CONFIG_KEYS_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <yaml.h>

#include "config_priv.h"
#include "timeparse.h"

#define GROUP_LETTERS		"DRMUPSA"
/* Past this many errors the rest are dropped, so no input can make the report huge. */
#define CONFIG_MAX_ERRORS	100

#define MSEC			NSEC_PER_MSEC
#define SEC			NSEC_PER_SEC
#define HOUR			(3600 * SEC)
#define DAY			(24 * HOUR)
#define MIB			(1024ULL * 1024)

struct loader {
	struct config_text in;		/* the YAML, for quoting offending lines */
	struct config *cfg;		/* defaults, overwritten key by key */
	struct config_errors *errs;
	size_t nerrors;			/* reported, including those dropped */
	bool oom;
};

struct key;
typedef void key_parser(struct loader *, const struct key *, const char *,
    yaml_document_t *, yaml_node_t *);
/* Rules between keys of one mapping; values[i] is the node given for key i or NULL. */
typedef void mapping_check(struct loader *, yaml_node_t *const *values);

struct key {
	const char *name;
	key_parser *parse;
	const char *what;		/* the expected value, for type errors */
	size_t offset;			/* of the value in struct config */
	uint64_t min, max;		/* durations and sizes; max bounds string length */
	const struct key *subkeys;	/* mappings: table ending with a NULL name */
	mapping_check *check;		/* mappings: run when every subkey was valid */
};

#define FIELD(k)	.offset = offsetof(struct config, k)

/* Where key k's value goes in the config being built. */
static inline void *
cfg_field(struct loader *ld, const struct key *k)
{
	return (char *)ld->cfg + k->offset;
}

/* A scalar node's text. */
static inline const char *
cfg_scalar(const yaml_node_t *node)
{
	return (const char *)node->data.scalar.value;
}

/* A scalar is read as a C string; one holding "\0" cannot be one. */
static inline bool
cfg_scalar_has_nul(const yaml_node_t *node)
{
	return strlen(cfg_scalar(node)) != node->data.scalar.length;
}

/* A plain scalar YAML reads as null: empty, ~ or null. */
bool cfg_is_null(const yaml_node_t *node);

/* Report an error at mark (NULL: about the whole file). */
void cfg_report(struct loader *ld, const yaml_mark_t *mark, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Report "dotted: expected what, got ..." at node. */
void cfg_report_type(struct loader *ld, const char *dotted, const char *what,
    const yaml_node_t *node);

/* Check that node is a scalar without NUL bytes; else report it. */
bool cfg_want_scalar(struct loader *ld, const struct key *k,
    const char *dotted, const yaml_node_t *node);

/* Replace the string at *slot with a copy of value (out of memory noted). */
void cfg_set_string(struct loader *ld, char **slot, const char *value);

/* s is one or more ASCII digits. */
bool cfg_all_digits(const char *s);

/* A string key (max bounds its length). */
key_parser cfg_parse_string;

/* on_damaged_database: one of config_on_damage_name's names. */
key_parser cfg_parse_on_damage;

/* The source section's values (config_source.c). */
key_parser cfg_parse_command, cfg_parse_groups, cfg_parse_devices,
    cfg_parse_metric_files, cfg_parse_direct;

#endif
