/* windows_read: the windows table, read (contracts in dbread.h). */
#include "dbread.h"
#include "dbread_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "schema.h"

void
db_window_filter_name(struct db_window_filter *f, const char *name)
{
	char *end;

	if (*name >= '0' && *name <= '9') {
		errno = 0;
		f->id = strtoll(name, &end, 10);
		if (errno == 0 && *end == '\0') {
			f->by_id = true;
			return;
		}
	}
	f->by_id = false;
	f->tag = name;
}

int
db_windows(sqlite3 *db, const struct db_window_filter *f,
    struct db_window **out, size_t *n)
{
	char sql[512];
	sqlite3_stmt *s;
	int rc;

	*out = NULL;
	*n = 0;
	snprintf(sql, sizeof(sql), "SELECT id, tag, uid, pid, begin_ns, end_ns, "
	    "auto_closed, meta FROM " SCHEMA_T_WINDOWS " WHERE "
	    "(?1 IS NULL OR id = ?1) AND (?2 IS NULL OR tag = ?2) AND "
	    "(?3 IS NULL OR end_ns IS NULL OR end_ns >= ?3) "
	    "ORDER BY begin_ns %s, id %s", f->newest_first ? "DESC" : "ASC",
	    f->newest_first ? "DESC" : "ASC");
	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		return db_error(db, "the windows");
	if (f->by_id)
		sqlite3_bind_int64(s, 1, f->id);
	if (f->tag != NULL)
		sqlite3_bind_text(s, 2, f->tag, -1, SQLITE_STATIC);
	if (f->have_since)
		sqlite3_bind_int64(s, 3, f->since_ns);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct db_window *w;

		*out = dbread_grow(*out, *n, sizeof(*w));
		w = &(*out)[(*n)++];

		w->id = sqlite3_column_int64(s, 0);
		w->tag = dbread_column_dup(s, 1);
		w->uid = (uint32_t)sqlite3_column_int64(s, 2);
		w->pid = sqlite3_column_int(s, 3);
		w->begin_ns = sqlite3_column_int64(s, 4);
		w->open = sqlite3_column_type(s, 5) == SQLITE_NULL;
		w->end_ns = w->open ? 0 : sqlite3_column_int64(s, 5);
		w->auto_closed = sqlite3_column_int(s, 6) != 0;
		w->meta = dbread_column_dup(s, 7);
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE) {
		db_windows_free(*out, *n);
		*out = NULL;
		*n = 0;
		return db_error(db, "the windows");
	}
	return 0;
}

void
db_windows_free(struct db_window *w, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(w[i].tag);
		free(w[i].meta);
	}
	free(w);
}
