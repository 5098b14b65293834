/*
 * config_keys: the helpers every key's parser reports and stores through
 * (config_keys.h), below both config.c (the walk and the tables) and
 * config_source.c (the source section's values).
 */
#include "config_keys.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Report an error at mark (NULL: about the whole file). */
void
cfg_report(struct loader *ld, const yaml_mark_t *mark, const char *fmt, ...)
{
	va_list ap;
	char *msg;
	int r;

	if (ld->nerrors++ >= CONFIG_MAX_ERRORS)
		return;
	va_start(ap, fmt);
	r = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (r == -1) {
		ld->oom = true;
		return;
	}
	if (config_errors_add(ld->errs, config_error_text(&ld->in, mark, msg)) == -1)
		ld->oom = true;
	free(msg);
}

bool
cfg_is_null(const yaml_node_t *node)
{
	static const char *const nulls[] = { "", "~", "null", "Null", "NULL" };

	if (node->type != YAML_SCALAR_NODE ||
	    node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	for (size_t i = 0; i < sizeof(nulls) / sizeof(nulls[0]); i++)
		if (strcmp(cfg_scalar(node), nulls[i]) == 0)
			return true;
	return false;
}

void
cfg_report_type(struct loader *ld, const char *dotted, const char *what, const yaml_node_t *node)
{
	char got[64];

	config_describe_node(node, got, sizeof(got));
	cfg_report(ld, &node->start_mark, "%s: expected %s, got %s", dotted, what, got);
}

/* Check that node is a scalar without NUL bytes; else report it. */
bool
cfg_want_scalar(struct loader *ld, const struct key *k, const char *dotted,
    const yaml_node_t *node)
{
	if (node->type != YAML_SCALAR_NODE) {
		cfg_report_type(ld, dotted, k->what, node);
		return false;
	}
	if (cfg_scalar_has_nul(node)) {
		cfg_report(ld, &node->start_mark, "%s: contains a NUL character", dotted);
		return false;
	}
	return true;
}

/* Replace the string at *slot with a copy of value. */
void
cfg_set_string(struct loader *ld, char **slot, const char *value)
{
	char *copy = strdup(value);

	if (copy == NULL) {
		ld->oom = true;
		return;
	}
	free(*slot);
	*slot = copy;
}

bool
cfg_all_digits(const char *s)
{
	return *s != '\0' && strspn(s, "0123456789") == strlen(s);
}

void
cfg_parse_string(struct loader *ld, const struct key *k, const char *dotted,
    yaml_document_t *doc, yaml_node_t *node)
{
	(void)doc;
	if (!cfg_want_scalar(ld, k, dotted, node))
		return;
	if (node->data.scalar.length == 0) {
		cfg_report(ld, &node->start_mark, "%s: must not be empty", dotted);
		return;
	}
	if (k->max != 0 && node->data.scalar.length >= k->max) {
		cfg_report(ld, &node->start_mark, "%s: %zu bytes is too long (at most %" PRIu64 ")",
		    dotted, node->data.scalar.length, k->max - 1);
		return;
	}
	cfg_set_string(ld, cfg_field(ld, k), cfg_scalar(node));
}

void
cfg_parse_on_damage(struct loader *ld, const struct key *k, const char *dotted,
    yaml_document_t *doc, yaml_node_t *node)
{
	static const enum config_on_damage values[] = {
	    CONFIG_DAMAGE_KEEP_ASIDE, CONFIG_DAMAGE_REFUSE };

	(void)doc;
	if (!cfg_want_scalar(ld, k, dotted, node))
		return;
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
		if (strcmp(cfg_scalar(node), config_on_damage_name(values[i])) ==
		    0) {
			*(enum config_on_damage *)cfg_field(ld, k) = values[i];
			return;
		}
	cfg_report(ld, &node->start_mark, "%s: '%s' is not %s or %s", dotted,
	    cfg_scalar(node), config_on_damage_name(CONFIG_DAMAGE_KEEP_ASIDE),
	    config_on_damage_name(CONFIG_DAMAGE_REFUSE));
}
