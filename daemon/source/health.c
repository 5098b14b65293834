/* health: whether a card's metric file is there, moving, and non-zero. */
#include "health.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "regfile.h"

#define NSEC_PER_SEC	1000000000ULL

void
health_init(struct health *h, const char *path)
{
	size_t n = strlen(path);

	memset(h, 0, sizeof(*h));
	if (n >= sizeof(h->path))
		n = sizeof(h->path) - 1;
	memcpy(h->path, path, n);
	h->path[n] = '\0';
	h->file = HEALTH_FILE_UNKNOWN;
}

/*
 * A file that appears, whether at the first check or after being missing
 * (or something else being there), counts as changed now: its mtime alone cannot say whether it is still
 * being written, and calling it STALE at once would blame a workload that
 * only just started.
 */
bool
health_observe(struct health *h, bool exists, int64_t mtime_ns,
    uint64_t now_mono_ns, uint64_t stale_after_ns)
{
	enum health_file before = h->file;

	h->checked_mono_ns = now_mono_ns;
	if (!exists)
		h->file = HEALTH_FILE_MISSING;
	else if (h->file == HEALTH_FILE_UNKNOWN ||
	    h->file == HEALTH_FILE_MISSING || h->file == HEALTH_FILE_NOT_FILE ||
	    mtime_ns != h->mtime_ns) {
		h->file = HEALTH_FILE_FRESH;
		h->mtime_ns = mtime_ns;
		h->changed_mono_ns = now_mono_ns;
	} else if (now_mono_ns >= h->changed_mono_ns &&
	    now_mono_ns - h->changed_mono_ns >= stale_after_ns)
		h->file = HEALTH_FILE_STALE;
	return h->file != before;
}

bool
health_observe_not_file(struct health *h, mode_t type, uint64_t now_mono_ns)
{
	bool changed = h->file != HEALTH_FILE_NOT_FILE ||
	    h->type != (type & S_IFMT);

	h->checked_mono_ns = now_mono_ns;
	h->file = HEALTH_FILE_NOT_FILE;
	h->type = type & S_IFMT;
	return changed;
}

void
health_note_row(struct health *h, bool all_zero)
{
	h->rows++;
	if (all_zero)
		h->zero_rows++;
	else
		h->zero_rows = 0;
}

bool
health_counters_zero(const struct health *h)
{
	return h->zero_rows >= HEALTH_ZERO_ROWS;
}

/* Append to buf, which holds *used bytes; output that does not fit is cut. */
static void appendf(char *, size_t, size_t *, const char *, ...)
	__attribute__((format(printf, 4, 5)));

static void
appendf(char *buf, size_t len, size_t *used, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*used >= len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *used, len - *used, fmt, ap);
	va_end(ap);
	if (n > 0)
		*used += (size_t)n;
}

void
health_describe(const struct health *h, char *buf, size_t len)
{
	size_t used = 0;

	if (len == 0)
		return;
	buf[0] = '\0';
	appendf(buf, len, &used, "metric file %s ", h->path);
	switch (h->file) {
	case HEALTH_FILE_UNKNOWN:
		appendf(buf, len, &used, "not checked yet");
		break;
	case HEALTH_FILE_MISSING:
		appendf(buf, len, &used, "missing: is the workload running "
		    "with SENLIB_DEVEL_CONFIG_FILE set?");
		break;
	case HEALTH_FILE_STALE:
		appendf(buf, len, &used, "not updated for %llus: the workload "
		    "may have stopped", (unsigned long long)
		    ((h->checked_mono_ns - h->changed_mono_ns) / NSEC_PER_SEC));
		break;
	case HEALTH_FILE_FRESH:
		appendf(buf, len, &used, "fresh");
		break;
	case HEALTH_FILE_NOT_FILE:
		appendf(buf, len, &used, "is %s, not a regular file: no "
		    "reader can use it (who put it there?)",
		    regfile_kind(h->type));
		break;
	}
	if (health_counters_zero(h))
		appendf(buf, len, &used, "; counters are all zero: was the "
		    "workload started with SENLIB_DEVEL_CONFIG_FILE?");
}
