/*
 * metricfile_json: load the reference reader's section_types.json into a
 * struct mf_table (see metricfile.h).  The whole file is parsed with yajl's
 * tree parser (it is a few KiB); any entry that does not make sense fails
 * the load, naming the array and index, so a half-understood table is
 * never used.  Entries named "invalid" (ID 0) are placeholders and skipped.
 */
#include "metricfile.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_tree.h>

#define TABLE_FILE_MAX	(1024 * 1024)

static int errf(char *, size_t, const char *, const char *, ...)
	__attribute__((format(printf, 4, 5)));

static int
errf(char *err, size_t errlen, const char *path, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(err, errlen, "%s: ", path);
	if (n < 0 || (size_t)n >= errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

static const char *
str_field(yajl_val obj, const char *key)
{
	const char *p[] = { key, NULL };
	yajl_val v = yajl_tree_get(obj, p, yajl_t_string);

	return v != NULL ? YAJL_GET_STRING(v) : NULL;
}

/* "0x0010" (or decimal) to *out; -1 if not a 32-bit number. */
static int
parse_id(const char *s, uint32_t *out)
{
	char *end;
	unsigned long long v;

	if (s == NULL || s[0] == '\0' || s[0] == '-')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno != 0 || *end != '\0' || v > UINT32_MAX)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/* A word the table file uses and the enum value it stands for. */
struct code_name {
	const char *name;
	int code;
};

static const struct code_name vtype_codes[] = {
	{ "int", MF_VT_INT }, { "KiB", MF_VT_KIB }, { "MiB", MF_VT_MIB },
	{ "GiB", MF_VT_GIB }, { "fdec1", MF_VT_FDEC1 },
	{ "float", MF_VT_FLOAT }, { NULL, -1 },
};

static const struct code_name summ_codes[] = {
	{ "first", MF_SUM_FIRST }, { "last", MF_SUM_LAST },
	{ "sum", MF_SUM_SUM }, { "avg", MF_SUM_AVG },
	{ "max", MF_SUM_MAX }, { NULL, -1 },
};

/* The code table gives for name s (table ends at a NULL name), or -1. */
static int
code_of(const struct code_name *table, const char *s)
{
	for (; s != NULL && table->name != NULL; table++)
		if (strcmp(s, table->name) == 0)
			return table->code;
	return -1;
}

static int
copy_name(char *dst, const char *src)
{
	if (src == NULL || src[0] == '\0' || strlen(src) >= MF_NAME_MAX)
		return -1;
	strcpy(dst, src);
	return 0;
}

/* The reference table's placeholder entries: ID 0, or named "invalid". */
static bool
placeholder(uint32_t id, const char *name)
{
	return id == 0 || strcmp(name, "invalid") == 0;
}

static int
load_sections(yajl_val arr, struct mf_table *t, const char *path, char *err,
    size_t errlen)
{
	for (size_t i = 0; i < arr->u.array.len; i++) {
		yajl_val e = arr->u.array.values[i];
		const char *name = str_field(e, "name");
		struct mf_section_type *s;
		uint32_t id;

		if (name == NULL || parse_id(str_field(e, "id"), &id) == -1)
			return errf(err, errlen, path, "section_type[%zu]: "
			    "needs a \"name\" and a numeric \"id\"", i);
		if (placeholder(id, name))
			continue;
		if (t->nsections == MF_TABLE_SECTIONS)
			return errf(err, errlen, path, "more than %d section "
			    "types", MF_TABLE_SECTIONS);
		if (mf_table_section(t, id) != NULL)
			return errf(err, errlen, path, "section_type[%zu]: ID "
			    "0x%x repeats", i, id);
		s = &t->sections[t->nsections];
		if (copy_name(s->name, name) == -1)
			return errf(err, errlen, path, "section_type[%zu]: name "
			    "too long", i);
		s->id = id;
		t->nsections++;
	}
	return 0;
}

static int
load_metrics(yajl_val arr, struct mf_table *t, const char *path, char *err,
    size_t errlen)
{
	for (size_t i = 0; i < arr->u.array.len; i++) {
		yajl_val e = arr->u.array.values[i];
		const char *sec = str_field(e, "section");
		const char *name = str_field(e, "name");
		struct mf_metric_type m = { 0 };
		int vtype, summ;
		size_t k;

		if (sec == NULL || name == NULL ||
		    parse_id(str_field(e, "id"), &m.id) == -1)
			return errf(err, errlen, path, "metric_type[%zu]: needs "
			    "\"section\", \"name\" and a numeric \"id\"", i);
		if (placeholder(m.id, name))
			continue;
		for (k = 0; k < t->nsections; k++)
			if (strcmp(t->sections[k].name, sec) == 0)
				break;
		if (k == t->nsections)
			return errf(err, errlen, path, "metric_type[%zu] (%s): "
			    "no section_type named \"%s\"", i, name, sec);
		m.section = t->sections[k].id;
		vtype = code_of(vtype_codes, str_field(e, "type"));
		summ = code_of(summ_codes, str_field(e, "summarizer"));
		if (vtype == -1)
			return errf(err, errlen, path, "metric_type[%zu] (%s): "
			    "unknown \"type\"", i, name);
		if (summ == -1)
			return errf(err, errlen, path, "metric_type[%zu] (%s): "
			    "unknown \"summarizer\"", i, name);
		m.vtype = (enum mf_vtype)vtype;
		m.summ = (enum mf_summ)summ;
		if (copy_name(m.name, name) == -1)
			return errf(err, errlen, path, "metric_type[%zu]: name "
			    "too long", i);
		if (mf_table_metric(t, m.section, m.id) != NULL)
			return errf(err, errlen, path, "metric_type[%zu] (%s): "
			    "ID 0x%x repeats in section %s", i, name, m.id, sec);
		if (t->nmetrics == MF_TABLE_METRICS)
			return errf(err, errlen, path, "more than %d metric types",
			    MF_TABLE_METRICS);
		t->metrics[t->nmetrics++] = m;
	}
	return 0;
}

int
mf_table_load(const char *path, struct mf_table *out, char *err, size_t errlen)
{
	static struct mf_table t;	/* large: keep it off the stack */
	const char *ver_path[] = { "version", NULL };
	const char *sec_path[] = { "section_type", NULL };
	const char *met_path[] = { "metric_type", NULL };
	char perr[256], *text;
	yajl_val root, v, secs, mets;
	FILE *f;
	size_t n;
	int rc = -1;

	if ((f = fopen(path, "r")) == NULL)
		return errf(err, errlen, path, "%s", strerror(errno));
	if ((text = malloc(TABLE_FILE_MAX + 1)) == NULL) {
		fclose(f);
		return errf(err, errlen, path, "out of memory");
	}
	n = fread(text, 1, TABLE_FILE_MAX + 1, f);
	rc = ferror(f) ? -2 : -1;
	fclose(f);
	if (rc == -2 || n > TABLE_FILE_MAX) {
		free(text);
		return errf(err, errlen, path, rc == -2 ? "read error" :
		    "larger than 1 MiB");
	}
	text[n] = '\0';
	root = yajl_tree_parse(text, perr, sizeof(perr));
	free(text);
	if (root == NULL) {
		perr[strcspn(perr, "\n")] = '\0';
		return errf(err, errlen, path, "not JSON: %s", perr);
	}
	memset(&t, 0, sizeof(t));
	secs = yajl_tree_get(root, sec_path, yajl_t_array);
	mets = yajl_tree_get(root, met_path, yajl_t_array);
	if (secs == NULL || mets == NULL)
		errf(err, errlen, path, "needs arrays \"section_type\" and "
		    "\"metric_type\"");
	else if (load_sections(secs, &t, path, err, errlen) == 0 &&
	    load_metrics(mets, &t, path, err, errlen) == 0) {
		v = yajl_tree_get(root, ver_path, yajl_t_string);
		snprintf(t.version, sizeof(t.version), "%s",
		    v != NULL ? YAJL_GET_STRING(v) : "?");
		*out = t;
		rc = 0;
	}
	yajl_tree_free(root);
	return rc;
}
