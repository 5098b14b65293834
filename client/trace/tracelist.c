/*
 * tracelist: the traces that trace options name (tracelist.h).
 */
#include <dirent.h>
#include <err.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "client.h"
#include "tracelist.h"

bool
trace_list_is_trace_name(const char *name)
{
	static const char *const suffixes[] = {
		TRACELIST_SUFFIX, TRACELIST_SUFFIX ".gz",
	};
	size_t len = strlen(name);

	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		size_t sl = strlen(suffixes[i]);

		/* a name that is the suffix alone is no worker's */
		if (len > sl && strcmp(name + len - sl, suffixes[i]) == 0)
			return true;
	}
	return false;
}

static int
bytewise(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/*
 * The traces directly in directory dir, as DIR/NAME sorted by NAME, in
 * *out (*n of them, none if it holds none).  CLIENT_EXIT_OK, or
 * CLIENT_EXIT_FAILED after saying why it cannot be read.
 */
static int
scan_dir(const char *label, const char *dir, char ***out, size_t *n)
{
	size_t dlen = strlen(dir), cap = 0;
	struct dirent *e;
	char **names = NULL;
	DIR *d;

	*out = NULL;
	*n = 0;
	while (dlen > 1 && dir[dlen - 1] == '/')
		dlen--;
	if ((d = opendir(dir)) == NULL) {
		warn("%s", label);
		return CLIENT_EXIT_FAILED;
	}
	for (errno = 0; (e = readdir(d)) != NULL; errno = 0) {
		struct stat sb;
		char *path;

		if (!trace_list_is_trace_name(e->d_name))
			continue;
		if (asprintf(&path, "%.*s%s%s", (int)dlen, dir,
		    dir[dlen - 1] == '/' ? "" : "/", e->d_name) == -1)
			errx(CLIENT_EXIT_FAILED, "out of memory");
		/* a symbolic link to a trace is one; a directory so named is not */
		if (stat(path, &sb) == -1 || !S_ISREG(sb.st_mode)) {
			free(path);
			continue;
		}
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			if ((names = realloc(names, cap * sizeof(*names))) ==
			    NULL)
				errx(CLIENT_EXIT_FAILED, "out of memory");
		}
		names[(*n)++] = path;
	}
	if (errno != 0) {
		warn("%s: reading the directory", label);
		closedir(d);
		free_names(names, *n);
		*n = 0;
		return CLIENT_EXIT_FAILED;
	}
	closedir(d);
	if (*n > 1)
		qsort(names, *n, sizeof(*names), bytewise);
	*out = names;
	return CLIENT_EXIT_OK;
}

/* "--trace DIR: 2 traces, the ranks of one run: a.pt.trace.json, b..." */
static void
say_taken(FILE *note, const char *label, char *const *names, size_t n)
{
	if (note == NULL)
		return;
	fprintf(note, "spyremon: %s: %zu trace%s, read as the ranks of one "
	    "run:", label, n, n == 1 ? "" : "s");
	for (size_t i = 0; i < n; i++) {
		const char *slash = strrchr(names[i], '/');

		fprintf(note, "%s %s", i ? "," : "", slash != NULL ? slash + 1 :
		    names[i]);
	}
	fputc('\n', note);
}

int
trace_list_add(struct trace_list *l, const char *opt, const char *arg,
    size_t max, FILE *note)
{
	struct stat sb;
	char **names, label[64 + PATH_MAX];
	size_t n;
	int rc;

	snprintf(label, sizeof(label), "%s%s%s", opt != NULL ? opt : "",
	    opt != NULL ? " " : "", arg);
	if (stat(arg, &sb) == -1 || !S_ISDIR(sb.st_mode)) {
		if (l->n >= max) {
			warnx("%s: at most %zu traces", label, max);
			return CLIENT_EXIT_USAGE;
		}
		if ((names = calloc(1, sizeof(*names))) == NULL ||
		    (names[0] = strdup(arg)) == NULL)
			errx(CLIENT_EXIT_FAILED, "out of memory");
		n = 1;
	} else {
		if ((rc = scan_dir(label, arg, &names, &n)) != CLIENT_EXIT_OK)
			return rc;
		if (n == 0) {
			warnx("%s: no profiler trace in the directory: no "
			    "file named *" TRACELIST_SUFFIX " or *"
			    TRACELIST_SUFFIX ".gz directly in it (what "
			    "torch.profiler.tensorboard_trace_handler writes)",
			    label);
			free(names);
			return CLIENT_EXIT_FAILED;
		}
		if (l->n > max || n > max - l->n) {
			warnx("%s: %zu traces, and at most %zu are taken in all",
			    label, n, max);
			free_names(names, n);
			return CLIENT_EXIT_USAGE;
		}
		say_taken(note, label, names, n);
	}
	if ((l->paths = realloc(l->paths, (l->n + n) * sizeof(*l->paths))) ==
	    NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	memcpy(l->paths + l->n, names, n * sizeof(*names));
	l->n += n;
	free(names);
	return CLIENT_EXIT_OK;
}

void
trace_list_free(struct trace_list *l)
{
	free_names(l->paths, l->n);
	memset(l, 0, sizeof(*l));
}
