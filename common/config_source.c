/*
 * config_source: the values of spyremond.yaml's source section that are
 * more than a duration: the command (a string split as a shell would, or
 * a list), the metric groups, the devices, the metric-file path and
 * direct.  Each is a key parser (config_keys.h) that checks its node and
 * stores the value, or reports what is wrong where.
 */
#include "config_keys.h"

#include <stdlib.h>
#include <string.h>

#define DEVICE_ID_MAX		255

void
cfg_parse_metric_files(struct loader *ld, const struct key *k, const char *dotted,
    yaml_document_t *doc, yaml_node_t *node)
{
	if (node->type == YAML_SCALAR_NODE && !cfg_scalar_has_nul(node) &&
	    strstr(cfg_scalar(node), "%BUSID") == NULL) {
		cfg_report(ld, &node->start_mark, "%s: '%s' must contain %%BUSID, which "
		    "stands for each card's PCI bus ID", dotted, cfg_scalar(node));
		return;
	}
	cfg_parse_string(ld, k, dotted, doc, node);
}

void
cfg_parse_direct(struct loader *ld, const struct key *k, const char *dotted,
    yaml_document_t *doc, yaml_node_t *node)
{
	static const enum config_direct values[] = { CONFIG_DIRECT_AUTO,
	    CONFIG_DIRECT_ON, CONFIG_DIRECT_OFF };

	(void)doc;
	if (!cfg_want_scalar(ld, k, dotted, node))
		return;
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
		if (strcmp(cfg_scalar(node), config_direct_name(values[i])) == 0) {
			*(enum config_direct *)cfg_field(ld, k) = values[i];
			return;
		}
	cfg_report(ld, &node->start_mark, "%s: '%s' is not auto, on or off",
	    dotted, cfg_scalar(node));
}

/* Install argv (NULL-terminated, argc entries) as the command. */
static void
set_command(struct loader *ld, char **argv, int argc)
{
	config_free_argv(ld->cfg->source.argv);
	ld->cfg->source.argv = argv;
	ld->cfg->source.argc = argc;
}

/* The command as one string: split on whitespace, no quoting. */
static void
command_from_string(struct loader *ld, const char *dotted, const yaml_node_t *node)
{
	static const char space[] = " \t\r\n\f\v";
	const char *s = cfg_scalar(node);
	char **argv;
	int argc = 0;

	for (const char *p = s + strspn(s, space); *p != '\0'; p += strspn(p, space)) {
		p += strcspn(p, space);
		argc++;
	}
	if (argc == 0) {
		cfg_report(ld, &node->start_mark, "%s: must not be empty", dotted);
		return;
	}
	if ((argv = calloc((size_t)argc + 1, sizeof(*argv))) == NULL) {
		ld->oom = true;
		return;
	}
	argc = 0;
	for (const char *p = s + strspn(s, space); *p != '\0'; p += strspn(p, space)) {
		size_t n = strcspn(p, space);

		if ((argv[argc++] = strndup(p, n)) == NULL) {
			ld->oom = true;
			config_free_argv(argv);
			return;
		}
		p += n;
	}
	set_command(ld, argv, argc);
}

static void
command_from_list(struct loader *ld, const char *dotted, yaml_document_t *doc,
    const yaml_node_t *node)
{
	yaml_node_item_t *items = node->data.sequence.items.start;
	size_t n = (size_t)(node->data.sequence.items.top - items);
	size_t nerrors = ld->nerrors;
	char **argv;

	if (n == 0) {
		cfg_report(ld, &node->start_mark, "%s: must not be empty", dotted);
		return;
	}
	if ((argv = calloc(n + 1, sizeof(*argv))) == NULL) {
		ld->oom = true;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *item = yaml_document_get_node(doc, items[i]);
		char name[80];

		snprintf(name, sizeof(name), "%s[%zu]", dotted, i);
		if (cfg_is_null(item))
			cfg_report(ld, &item->start_mark, "%s: missing value", name);
		else if (item->type != YAML_SCALAR_NODE)
			cfg_report_type(ld, name, "a string", item);
		else if (cfg_scalar_has_nul(item))
			cfg_report(ld, &item->start_mark, "%s: contains a NUL character", name);
		else if (i == 0 && item->data.scalar.length == 0)
			cfg_report(ld, &item->start_mark, "%s: the program must not be empty", name);
		else if ((argv[i] = strdup(cfg_scalar(item))) == NULL)
			ld->oom = true;
	}
	if (ld->nerrors != nerrors || ld->oom) {
		/* argv has holes where items were bad: free every slot */
		for (size_t i = 0; i < n; i++)
			free(argv[i]);
		free(argv);
		return;
	}
	set_command(ld, argv, (int)n);
}

void
cfg_parse_command(struct loader *ld, const struct key *k, const char *dotted,
    yaml_document_t *doc, yaml_node_t *node)
{
	if (node->type == YAML_SEQUENCE_NODE)
		command_from_list(ld, dotted, doc, node);
	else if (cfg_want_scalar(ld, k, dotted, node))
		command_from_string(ld, dotted, node);
}

void
cfg_parse_groups(struct loader *ld, const struct key *k, const char *dotted,
    yaml_document_t *doc, yaml_node_t *node)
{
	const char *s;
	char *groups = ld->cfg->source.groups;

	(void)doc;
	if (!cfg_want_scalar(ld, k, dotted, node))
		return;
	s = cfg_scalar(node);
	if (*s == '\0') {
		cfg_report(ld, &node->start_mark, "%s: must not be empty", dotted);
		return;
	}
	for (size_t i = 0; s[i] != '\0'; i++) {
		if (strchr(GROUP_LETTERS, s[i]) == NULL) {
			cfg_report(ld, &node->start_mark, "%s: '%c' in '%s' is not a metric "
			    "group (letters of %s)", dotted, s[i], s, GROUP_LETTERS);
			return;
		}
		if (strchr(s + i + 1, s[i]) != NULL) {
			cfg_report(ld, &node->start_mark, "%s: '%c' is given twice in '%s'",
			    dotted, s[i], s);
			return;
		}
	}
	/* distinct letters of GROUP_LETTERS: at most 7, so it fits */
	snprintf(groups, sizeof(ld->cfg->source.groups), "%s", s);
}

/* A device ID: decimal 0..DEVICE_ID_MAX without sign or leading zeros. */
static int
device_id(const yaml_node_t *node)
{
	const char *s = cfg_scalar(node);

	if (!cfg_all_digits(s) || (s[0] == '0' && s[1] != '\0') || strlen(s) > 3 ||
	    atoi(s) > DEVICE_ID_MAX)
		return -1;
	return atoi(s);
}

static void
devices_from_list(struct loader *ld, const char *dotted, yaml_document_t *doc,
    const yaml_node_t *node)
{
	yaml_node_item_t *items = node->data.sequence.items.start;
	size_t n = (size_t)(node->data.sequence.items.top - items);
	size_t nerrors = ld->nerrors;
	bool listed[DEVICE_ID_MAX + 1] = { false };
	int *devices;

	if (n == 0) {
		cfg_report(ld, &node->start_mark, "%s: the list is empty; write 'all' "
		    "for every device", dotted);
		return;
	}
	if ((devices = calloc(n, sizeof(*devices))) == NULL) {
		ld->oom = true;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *item = yaml_document_get_node(doc, items[i]);
		char name[80];
		int id;

		snprintf(name, sizeof(name), "%s[%zu]", dotted, i);
		if (item->type != YAML_SCALAR_NODE)
			cfg_report_type(ld, name, "a device ID from 0 to 255", item);
		else if ((id = device_id(item)) == -1)
			cfg_report(ld, &item->start_mark, "%s: '%s' is not a device ID "
			    "(0 to %d)", name, cfg_scalar(item), DEVICE_ID_MAX);
		else if (listed[id])
			cfg_report(ld, &item->start_mark, "%s: device %d is listed twice",
			    name, id);
		else {
			listed[id] = true;
			devices[i] = id;
		}
	}
	if (ld->nerrors != nerrors) {
		free(devices);
		return;
	}
	free(ld->cfg->source.devices);
	ld->cfg->source.devices = devices;
	ld->cfg->source.ndevices = n;
	ld->cfg->source.all_devices = false;
}

void
cfg_parse_devices(struct loader *ld, const struct key *k, const char *dotted,
    yaml_document_t *doc, yaml_node_t *node)
{
	if (node->type == YAML_SEQUENCE_NODE) {
		devices_from_list(ld, dotted, doc, node);
		return;
	}
	if (node->type != YAML_SCALAR_NODE || strcmp(cfg_scalar(node), "all") != 0 ||
	    cfg_scalar_has_nul(node)) {
		cfg_report_type(ld, dotted, k->what, node);
		return;
	}
	free(ld->cfg->source.devices);
	ld->cfg->source.devices = NULL;
	ld->cfg->source.ndevices = 0;
	ld->cfg->source.all_devices = true;
}
