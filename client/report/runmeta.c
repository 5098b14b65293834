/*
 * runmeta: a run's own record of itself, read back (runmeta.h).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto.h"
#include "runmeta.h"

static const struct {
	const char *name, *unit;
} metrics[] = {
	[EXPECT_STEP_MS] = { "step_ms", "ms" },
	[EXPECT_STEP_J] = { "step_j", "J" },
	[EXPECT_ENERGY_J] = { "energy_j", "J" },
};

static const char *const ops[] = {
	[EXPECT_LE] = "<=", [EXPECT_LT] = "<", [EXPECT_GE] = ">=",
	[EXPECT_GT] = ">",
};

const char *
expect_metric_name(enum expect_metric m)
{
	return metrics[m].name;
}

const char *
expect_metric_unit(enum expect_metric m)
{
	return metrics[m].unit;
}

int
expect_parse(const char *s, struct expect *e, char *err, size_t errlen)
{
	const char *p = s, *name;
	size_t n, k;
	char *end;

	memset(e, 0, sizeof(*e));
	while (isspace((unsigned char)*p))
		p++;
	name = p;
	while (isalnum((unsigned char)*p) || *p == '_')
		p++;
	n = (size_t)(p - name);
	for (k = 0; k < sizeof(metrics) / sizeof(metrics[0]); k++)
		if (strlen(metrics[k].name) == n &&
		    strncmp(name, metrics[k].name, n) == 0)
			break;
	if (n == 0 || k == sizeof(metrics) / sizeof(metrics[0])) {
		snprintf(err, errlen, "expectation '%s': the metric '%.*s' is "
		    "not one of step_ms, step_j, energy_j", s, (int)n, name);
		return -1;
	}
	e->metric = (enum expect_metric)k;
	while (isspace((unsigned char)*p))
		p++;
	if (p[0] == '<' || p[0] == '>') {
		bool eq = p[1] == '=';

		e->op = p[0] == '<' ? (eq ? EXPECT_LE : EXPECT_LT) :
		    (eq ? EXPECT_GE : EXPECT_GT);
		p += eq ? 2 : 1;
	} else {
		snprintf(err, errlen, "expectation '%s': after %s comes one "
		    "of <=, <, >=, >", s, metrics[k].name);
		return -1;
	}
	errno = 0;
	e->value = strtod(p, &end);
	while (isspace((unsigned char)*end))
		end++;
	if (end == p || *end != '\0' || errno != 0 || !isfinite(e->value)) {
		snprintf(err, errlen, "expectation '%s': '%s' is not a number",
		    s, p);
		return -1;
	}
	snprintf(e->text, sizeof(e->text), "%s%s%g", metrics[k].name,
	    ops[e->op], e->value);
	return 0;
}

bool
expect_met(const struct expect *e, double seen)
{
	switch (e->op) {
	case EXPECT_LE:
		return seen <= e->value;
	case EXPECT_LT:
		return seen < e->value;
	case EXPECT_GE:
		return seen >= e->value;
	case EXPECT_GT:
		return seen > e->value;
	}
	return false;
}

/* f->path read whole into f->text, or f->why says why not. */
static void
read_runfile(struct runfile *f, const char *key)
{
	struct stat sb;
	ssize_t got;
	int fd;

	if ((fd = open(f->path, O_RDONLY | O_CLOEXEC)) == -1 ||
	    fstat(fd, &sb) == -1) {
		snprintf(f->why, sizeof(f->why), "%s (metadata %s): %s",
		    f->path, key, strerror(errno));
		if (fd != -1)
			close(fd);
		return;
	}
	if (!S_ISREG(sb.st_mode) || sb.st_size > RUNMETA_FILE_MAX) {
		snprintf(f->why, sizeof(f->why), "%s (metadata %s): %s",
		    f->path, key, S_ISREG(sb.st_mode) ? "larger than 1 MiB" :
		    "not a regular file");
		close(fd);
		return;
	}
	if ((f->text = malloc((size_t)sb.st_size + 1)) == NULL) {
		snprintf(f->why, sizeof(f->why), "%s: out of memory", f->path);
		close(fd);
		return;
	}
	for (f->len = 0; f->len < (size_t)sb.st_size; f->len += (size_t)got) {
		got = read(fd, f->text + f->len, (size_t)sb.st_size - f->len);
		if (got == -1 && errno == EINTR) {
			got = 0;
			continue;
		}
		if (got <= 0) {
			snprintf(f->why, sizeof(f->why), "%s (metadata %s): %s",
			    f->path, key, got == 0 ? "cut short while read" :
			    strerror(errno));
			free(f->text);
			f->text = NULL;
			close(fd);
			return;
		}
	}
	f->text[f->len] = '\0';
	close(fd);
}

/* The file metadata key names, read, if the key is there. */
static void
load_named(const struct winsum *ws, const char *key, struct runfile *f)
{
	char buf[PROTO_META_VALUE_MAX + 1];

	if (winsum_meta(ws, key, buf, sizeof(buf)) == NULL)
		return;
	snprintf(f->path, sizeof(f->path), "%s", buf);
	read_runfile(f, key);
}

int
runmeta_load(const struct winsum *ws, const char *expect_opt,
    struct runmeta *m, char *err, size_t errlen)
{
	char buf[PROTO_META_VALUE_MAX + 1];
	const char *ex;

	memset(m, 0, sizeof(*m));
	load_named(ws, RUNMETA_REPRODUCER, &m->reproducer);
	if (winsum_meta(ws, RUNMETA_REPRODUCER_SHA, buf, sizeof(buf)) != NULL)
		snprintf(m->sha_recorded, sizeof(m->sha_recorded), "%s", buf);
	if (m->reproducer.text != NULL) {
		struct sha256 s;

		sha256_init(&s);
		sha256_update(&s, m->reproducer.text, m->reproducer.len);
		sha256_hex(&s, m->sha_file);
	}
	load_named(ws, RUNMETA_TABLE, &m->table);
	if (winsum_meta(ws, RUNMETA_TRACE, buf, sizeof(buf)) != NULL)
		snprintf(m->trace, sizeof(m->trace), "%s", buf);
	m->trace_align_window = winsum_meta(ws, RUNMETA_TRACE_ALIGN, buf,
	    sizeof(buf)) != NULL && strcmp(buf, "window") == 0;
	ex = expect_opt;
	snprintf(m->expect_from, sizeof(m->expect_from), "--expect");
	if (ex == NULL && (ex = winsum_meta(ws, RUNMETA_EXPECT, buf,
	    sizeof(buf))) != NULL)
		snprintf(m->expect_from, sizeof(m->expect_from),
		    "window metadata");
	if (ex != NULL) {
		if (expect_parse(ex, &m->expect, err, errlen) == -1) {
			runmeta_free(m);
			return -1;
		}
		m->has_expect = true;
	}
	return 0;
}

bool
runmeta_reproducer_ok(const struct runmeta *m)
{
	return m->reproducer.text != NULL && m->sha_recorded[0] != '\0' &&
	    strcasecmp(m->sha_recorded, m->sha_file) == 0;
}

void
runmeta_free(struct runmeta *m)
{
	free(m->reproducer.text);
	free(m->table.text);
	m->reproducer.text = m->table.text = NULL;
}
