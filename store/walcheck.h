/*
 * walcheck: before SQLite opens a database, whether its write-ahead log
 * ("-wal") holds committed data that SQLite's recovery would drop: a
 * header that does not validate, or a frame of the current log whose
 * checksum chain fails while later frames of the same log follow it.
 * Frames of an earlier log (old salts, after a reset) and a torn last
 * frame are what SQLite rightly ignores, and are no damage.  Reads only.
 */
#ifndef SPYREMON_WALCHECK_H
#define SPYREMON_WALCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum walcheck_verdict {
	WALCHECK_CLEAN,		/* no log, or SQLite recovers every commit in it */
	WALCHECK_BAD_HEADER,	/* the header does not validate: the whole log is dropped */
	WALCHECK_BAD_FRAME,	/* a frame fails and frames of the same log follow it */
};

struct walcheck {
	enum walcheck_verdict verdict;
	bool main_empty;	/* the main file is empty or missing */
	uint64_t wal_bytes;	/* size of the -wal file, 0 if none */
	uint32_t page_size;	/* from the header, 0 if it has none valid */
	uint64_t frames;	/* whole frames in the file, of any log */
	uint64_t kept_frames;	/* what recovery keeps: through the last commit */
	uint64_t kept_commits;	/* before the damage */
	uint64_t bad_frame;	/* BAD_FRAME: the first frame that fails, from 1 */
	uint64_t lost_frames;	/* of the current log from the damage on */
	uint64_t lost_commits;	/* commit frames among them */
};

/*
 * Check the log beside the database at db_path (db_path "-wal").  0 with
 * *out filled; -1 with errno set when a file exists and cannot be read.
 */
int walcheck_db(const char *db_path, struct walcheck *out);

/* Check the log at wal_path alone (main_empty false); as walcheck_db. */
int walcheck_wal(const char *wal_path, struct walcheck *out);

/* One line saying what *c found and what recovery keeps, into buf. */
void walcheck_describe(const struct walcheck *c, char *buf, size_t len);

#endif
