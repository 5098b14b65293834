/*
 * writer_recover: what the writer thread goes on in when the file under its
 * connection is no longer the database it opened (contracts in
 * writer_priv.h).
 *
 * Before every flush the file is checked: deleted (its path gone) or
 * replaced (another inode), the old connection is finished against its
 * own file first; then the database is created again at the path, or the
 * spyremon database found there is used, with the open windows, the device
 * map, the cards, aiu-smi's version and every pending row.  Any other file
 * there is left alone and nothing is written until it is gone.
 *
 * A damaged page met while running (a write, a summary, or the scheduled
 * check of a slice of the samples) has the file copied aside and the
 * thread go on in a fresh database the same way, with the windows waiting
 * for their completion carried over too.
 */
#include "store_priv.h"
#include "writer_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "timeparse.h"

/* ---- a database deleted or replaced under us ---- */

/* Put back what the new database must hold, in this order. */
static void
restore(struct store *st)
{
	struct writer *w = st->w;

	for (size_t i = 0; i < w->nopen; i++)
		if (w->ops.window_insert(st, &w->open[i].win, &w->open[i].clock,
		    w->open[i].restarts) == -1)
			log_warnx("%s: window %" PRId64 " could not be stored "
			    "again", st->path, w->open[i].win.id);
	for (size_t i = 0; i < w->nmaps; i++)
		(void)w->ops.device_map(st, w->maps[i]->device,
		    w->maps[i]->metric_file, w->maps[i]->bus_id, w->maps[i]->ns);
	for (size_t i = 0; i < w->ncards; i++)
		(void)w->ops.card(st, &w->cards[i]->card, w->cards[i]->ns);
	if (w->version != NULL)
		(void)w->ops.smi_version(st, w->version->version,
		    w->version->ns);
}

bool
writer_recover_replaced(struct store *st)
{
	struct writer *w = st->w;
	struct stat sb;
	char why[96], msg[sizeof(w->why)];
	int64_t max_id = 0;
	bool gone;
	int rc;

	gone = stat(st->path, &sb) == -1;
	if (gone && errno != ENOENT)
		return st->db != NULL;	/* unreadable for a moment: not proof */
	if (st->db != NULL) {
		if (!gone && sb.st_dev == st->dev && sb.st_ino == st->ino)
			return true;
		log_warnx("%s: the database file was %s under the daemon",
		    st->path, gone ? "deleted" : "replaced");
	}
	why[0] = '\0';
	pthread_mutex_lock(&st->mu);
	rc = w->ops.reopen(st, why, sizeof(why));
	if (rc == 1) {
		snprintf(msg, sizeof(msg), "refused: the path now holds %s; "
		    "it is left untouched and nothing is written", why);
		writer_status_stopped(w, msg);
	} else if (rc == -1)
		writer_status_stopped(w, "cannot open the database again (see the log)");
	else {
		w->recreated++;
		w->refused[0] = '\0';
		/* a restored database may hold later windows: no id given twice */
		if (w->ops.max_window_id(st, &max_id) == 0 &&
		    max_id > w->next_window_id)
			w->next_window_id = max_id;
	}
	pthread_mutex_unlock(&st->mu);
	if (rc == 1) {
		if (strcmp(w->refused, why) != 0)
			log_warnx("%s: now holds %s, not a spyremon database: "
			    "left untouched; samples are buffered (then dropped "
			    "and counted) until it is moved away", st->path, why);
		snprintf(w->refused, sizeof(w->refused), "%s", why);
		return false;
	}
	if (rc == -1)
		return false;
	restore(st);
	if (gone)
		log_notice("%s: created again", st->path);
	else
		log_notice("%s: the spyremon database now at the path is "
		    "used, with all its contents", st->path);
	return true;
}

/* ---- a damaged page met while running ---- */

/* Add id to the windows carried into the fresh database (dbmu held). */
static void
carry(struct store *st, int64_t id, int64_t since_ns)
{
	struct store_carried *c;

	for (size_t i = 0; i < st->ncarried; i++)
		if (st->carried[i].id == id)
			return;
	if ((c = reallocarray(st->carried, st->ncarried + 1,
	    sizeof(*c))) == NULL)
		return;		/* its summary then does not say where the rest is */
	st->carried = c;
	c[st->ncarried++] = (struct store_carried){ id, since_ns };
}

void
writer_recover_damaged(struct store *st)
{
	struct writer *w = st->w;
	struct store_window **pend = NULL;
	int64_t *ids = NULL;
	size_t npend = 0;
	char kept[sizeof(st->carried_kept)], why[sizeof(st->err_status)];
	int64_t now = now_realtime_ns();

	w->corrupt_seen = atomic_load(&st->sql_corrupt);
	if (st->db == NULL || w->damage_gave_up)
		return;
	pthread_mutex_lock(&st->errmu);
	snprintf(why, sizeof(why), "%s", st->err_status);
	pthread_mutex_unlock(&st->errmu);
	log_warnx("%s: DAMAGED: %s; keeping the file aside and going on in a "
	    "fresh database", st->path, why);
	/* the windows waiting for their completion, as the old file has them */
	pthread_mutex_lock(&st->mu);
	if (w->nsyncs > 0 && (ids = calloc(w->nsyncs, sizeof(*ids))) != NULL &&
	    (pend = calloc(w->nsyncs, sizeof(*pend))) == NULL) {
		free(ids);
		ids = NULL;
	}
	for (size_t i = 0; ids != NULL && i < w->nsyncs; i++)
		if (w->syncs[i].window_id > 0)
			ids[npend++] = w->syncs[i].window_id;
	pthread_mutex_unlock(&st->mu);
	for (size_t i = 0; i < npend; i++) {
		if (w->ops.window_get(st, ids[i], &pend[i]) == -1 ||
		    pend[i] == NULL)
			log_warnx("%s: window %" PRId64 " cannot be read from "
			    "the damaged file: it is not carried over", st->path,
			    ids[i]);
		if (pend[i] != NULL && pend[i]->end_ns == 0) {
			writer_windows_free(pend[i], 1);	/* open: restore's */
			pend[i] = NULL;
		}
	}
	if (w->ops.move_damaged(st, kept, sizeof(kept)) == -1) {
		log_warnx("%s: the damaged database could not be kept aside: "
		    "writes go on into it", st->path);
		w->damage_gave_up = true;
		st->damage_stays = true;	/* windows complete in it */
		goto out;
	}
	log_warnx("%s: DAMAGED: the original is kept as %s (and -wal, -shm)",
	    st->path, kept);
	snprintf(st->carried_kept, sizeof(st->carried_kept), "%s", kept);
	snprintf(st->carried_why, sizeof(st->carried_why), "%.*s",
	    (int)sizeof(st->carried_why) - 1, strstr(why, ": ") != NULL ?
	    strstr(why, ": ") + 2 : why);
	pthread_mutex_lock(&st->mu);
	st->damaged = true;
	st->damaged_running = true;
	snprintf(st->damaged_found, sizeof(st->damaged_found), "%.*s",
	    (int)sizeof(st->damaged_found) - 1, why);
	snprintf(st->damaged_kept, sizeof(st->damaged_kept), "%s", kept);
	pthread_mutex_unlock(&st->mu);
	/* the path is empty now: made anew with the open windows */
	if (!writer_recover_replaced(st))
		goto out;
	for (size_t i = 0; i < w->nopen; i++)
		carry(st, w->open[i].win.id, now);
	for (size_t i = 0; i < npend; i++) {
		struct store_window open;

		if (pend[i] == NULL)
			continue;
		open = *pend[i];
		open.end_ns = 0;
		if (w->ops.window_insert(st, &open, NULL, 0) == -1 ||
		    w->ops.window_end(st, pend[i],
		    pend[i]->auto_closed ? STORE_ENDED_MAX_OPEN :
		    STORE_ENDED_MARK, NULL, NULL) == -1)
			log_warnx("%s: window %" PRId64 " could not be carried "
			    "over", st->path, open.id);
		else
			carry(st, open.id, now);
	}
	store_counter_add(st, STORE_COUNTER_DAMAGED, 1);
	w->check_cursor = INT64_MIN;
out:
	for (size_t i = 0; i < npend; i++)
		if (pend[i] != NULL)
			writer_windows_free(pend[i], 1);
	free(pend);
	free(ids);
	w->corrupt_seen = atomic_load(&st->sql_corrupt);
}

void
writer_recover_check(struct store *st)
{
	char why[96];

	if (store_check_slice(st->path, &st->w->check_cursor, why,
	    sizeof(why)) == 1)
		sql_note(st, "check the samples", SQLITE_CORRUPT, why);
}
