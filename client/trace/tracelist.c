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
#include "trace.h"
#include "tracelist.h"

#define SNIFF_BYTES	(64 * 1024)	/* read of a file to tell a trace */

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

/* Whether name ends in ".json" or ".json.gz": a file that may be a trace. */
static bool
json_name(const char *name)
{
	size_t len = strlen(name);

	return (len > 5 && strcmp(name + len - 5, ".json") == 0) ||
	    (len > 8 && strcmp(name + len - 8, ".json.gz") == 0);
}

/*
 * Whether path (plain or gzip) begins as a profiler trace: a JSON object
 * with a "traceEvents" member within its first SNIFF_BYTES, or an array
 * whose first element is an object.  NULL if it does, else why not.
 */
static const char *
not_a_trace(const char *path)
{
	struct trace_stream *ts;
	struct trace_error err;
	char *buf;
	ssize_t n, got = 0;
	const char *p, *why = NULL;

	if ((ts = trace_stream_open(path, &err)) == NULL)
		return "it cannot be read";
	if ((buf = malloc(SNIFF_BYTES + 1)) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	while (got < SNIFF_BYTES && (n = trace_stream_read(ts, buf + got,
	    (size_t)(SNIFF_BYTES - got), &err)) > 0)
		got += n;
	trace_stream_close(ts);
	buf[got] = '\0';
	for (p = buf; *p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'; p++)
		;
	if (*p == '[') {
		for (p++; *p == ' ' || *p == '\t' || *p == '\n' || *p == '\r';
		    p++)
			;
		if (*p != '{')
			why = "an array, but not of events";
	} else if (*p != '{')
		why = "not JSON";
	else if (strstr(buf, "\"traceEvents\"") == NULL)
		why = "no \"traceEvents\" in its first 64 KiB";
	free(buf);
	return why;
}

/* names (*n of them) grown by one: path, owned. */
static void
push_name(char ***names, size_t *n, size_t *cap, char *path)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		if ((*names = realloc(*names, *cap * sizeof(**names))) == NULL)
			errx(CLIENT_EXIT_FAILED, "out of memory");
	}
	(*names)[(*n)++] = path;
}

/*
 * The traces directly in directory dir, as DIR/NAME sorted by NAME, in
 * *out (*n of them, none if it holds none): those named as
 * tensorboard_trace_handler names them if there are any, else every
 * *.json and *.json.gz that begins as a profiler trace; the other JSON
 * files, with why each was skipped, in *skipped ("NAME (why)", *nskipped).
 * CLIENT_EXIT_OK, or CLIENT_EXIT_FAILED after saying why it cannot be
 * read.
 */
static int
scan_dir(const char *label, const char *dir, char ***out, size_t *n,
    char ***skipped, size_t *nskipped)
{
	size_t dlen = strlen(dir), cap = 0, ocap = 0, nother = 0, scap = 0;
	struct dirent *e;
	char **names = NULL, **other = NULL;
	bool any_named;
	DIR *d;

	*out = *skipped = NULL;
	*n = *nskipped = 0;
	while (dlen > 1 && dir[dlen - 1] == '/')
		dlen--;
	if ((d = opendir(dir)) == NULL) {
		warn("%s", label);
		return CLIENT_EXIT_FAILED;
	}
	for (errno = 0; (e = readdir(d)) != NULL; errno = 0) {
		bool named = trace_list_is_trace_name(e->d_name);
		struct stat sb;
		char *path;

		if (!named && !json_name(e->d_name))
			continue;
		if (asprintf(&path, "%.*s%s%s", (int)dlen, dir,
		    dir[dlen - 1] == '/' ? "" : "/", e->d_name) == -1)
			errx(CLIENT_EXIT_FAILED, "out of memory");
		/* a symbolic link to a trace is one; a directory so named is not */
		if (stat(path, &sb) == -1 || !S_ISREG(sb.st_mode)) {
			free(path);
			continue;
		}
		if (named)
			push_name(&names, n, &cap, path);
		else
			push_name(&other, &nother, &ocap, path);
	}
	if (errno != 0) {
		warn("%s: reading the directory", label);
		closedir(d);
		free_names(names, *n);
		free_names(other, nother);
		*n = 0;
		return CLIENT_EXIT_FAILED;
	}
	closedir(d);
	/* other JSON files: traces of other names where none is so named */
	any_named = *n > 0;
	for (size_t i = 0; i < nother; i++) {
		const char *slash = strrchr(other[i], '/'), *why;
		char *note;

		why = any_named ? "the folder's traces are named *"
		    TRACELIST_SUFFIX : not_a_trace(other[i]);
		if (why == NULL) {
			push_name(&names, n, &cap, other[i]);
			continue;
		}
		if (asprintf(&note, "%s (%s)", slash + 1, why) == -1)
			errx(CLIENT_EXIT_FAILED, "out of memory");
		push_name(skipped, nskipped, &scap, note);
		free(other[i]);
	}
	free(other);
	if (*n > 1)
		qsort(names, *n, sizeof(*names), bytewise);
	if (*nskipped > 1)
		qsort(*skipped, *nskipped, sizeof(**skipped), bytewise);
	*out = names;
	return CLIENT_EXIT_OK;
}

/* "--trace DIR: skipped notes.json (not JSON), ..." */
static void
say_skipped(FILE *note, const char *label, char *const *skipped, size_t n)
{
	if (note == NULL || n == 0)
		return;
	fprintf(note, "spyremon: %s: skipped", label);
	for (size_t i = 0; i < n; i++)
		fprintf(note, "%s %s", i ? "," : "", skipped[i]);
	fputc('\n', note);
}

/* "--trace DIR: 2 traces, the ranks of one run: a.pt.trace.json, b..." */
static void
say_taken(FILE *note, const char *label, char *const *names, size_t n,
    char *const *skipped, size_t nskipped)
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
	say_skipped(note, label, skipped, nskipped);
}

int
trace_list_add(struct trace_list *l, const char *opt, const char *arg,
    size_t max, FILE *note)
{
	struct stat sb;
	char **names, **skipped = NULL, label[64 + PATH_MAX];
	size_t n, nskipped = 0;
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
		if ((rc = scan_dir(label, arg, &names, &n, &skipped,
		    &nskipped)) != CLIENT_EXIT_OK)
			return rc;
		if (n == 0) {
			warnx("%s: no profiler trace in the directory: no "
			    "file named *" TRACELIST_SUFFIX " or *"
			    TRACELIST_SUFFIX ".gz directly in it (what "
			    "torch.profiler.tensorboard_trace_handler writes), "
			    "nor any *.json or *.json.gz that begins as one",
			    label);
			say_skipped(stderr, label, skipped, nskipped);
			free(names);
			free_names(skipped, nskipped);
			return CLIENT_EXIT_FAILED;
		}
		if (l->n > max || n > max - l->n) {
			warnx("%s: %zu traces, and at most %zu are taken in all",
			    label, n, max);
			free_names(names, n);
			free_names(skipped, nskipped);
			return CLIENT_EXIT_USAGE;
		}
		say_taken(note, label, names, n, skipped, nskipped);
		free_names(skipped, nskipped);
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
