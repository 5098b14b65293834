/*
 * windows_table: the set of open windows' bookkeeping (contracts in
 * windows_priv.h): a small array in the order the windows were opened,
 * each window's fields, and the log line and result of each change done.
 * It writes nothing to the store: the files above it write first and
 * change the set only once the store accepted the change.
 */
#include "windows_priv.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "window_meta.h"

void
windows_table_clear(struct window *win)
{
	/* closes the pidfd too (sd_event_source_set_io_fd_own) */
	win->exit_src = sd_event_source_disable_unref(win->exit_src);
	window_meta_free(win);
}

void
windows_table_fill(struct window *win, int64_t id, const char *tag,
    uint32_t uid, int32_t pid, int64_t begin_ns)
{
	win->id = id;
	snprintf(win->tag, sizeof(win->tag), "%s", tag);
	win->uid = uid;
	win->pid = pid;
	win->begin_ns = begin_ns;
}

int
windows_table_reserve(struct windows *w)
{
	struct window *grown;
	size_t cap;

	if (w->n < w->cap)
		return 0;
	cap = w->cap == 0 ? 8 : w->cap * 2;
	if ((grown = realloc(w->open, cap * sizeof(*grown))) == NULL)
		return -1;
	w->open = grown;
	w->cap = cap;
	return 0;
}

void
windows_table_forget(struct windows *w, size_t i, int64_t end_ns)
{
	windows_table_clear(&w->open[i]);
	memmove(&w->open[i], &w->open[i + 1], (w->n - i - 1) * sizeof(*w->open));
	if (--w->n == 0 && w->notify != NULL)
		w->notify(w->arg, false, end_ns);
}

void
windows_table_log(int prio, const struct window *win, int32_t client_pid,
    const char *what)
{
	char f_id[40], f_tag[16 + PROTO_TAG_MAX], f_uid[32], f_pid[32];
	const char *const fields[] = { f_id, f_tag, f_uid, f_pid, NULL };

	snprintf(f_id, sizeof(f_id), "WINDOW_ID=%" PRId64, win->id);
	snprintf(f_tag, sizeof(f_tag), "WINDOW_TAG=%s", win->tag);
	snprintf(f_uid, sizeof(f_uid), "CLIENT_UID=%" PRIu32, win->uid);
	snprintf(f_pid, sizeof(f_pid), "CLIENT_PID=%" PRId32, client_pid);
	log_fields(prio, fields, "window %" PRId64 " '%s' %s", win->id, win->tag,
	    what);
}

void
windows_table_succeed(struct windows_result *res, const struct window *win,
    int64_t end_ns)
{
	res->error = NULL;
	res->message[0] = '\0';
	res->elapsed_ns = 0;
	res->end_note[0] = '\0';
	res->id = win->id;
	snprintf(res->tag, sizeof(res->tag), "%s", win->tag);
	res->begin_ns = win->begin_ns;
	res->end_ns = end_ns;
}
