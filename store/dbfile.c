/*
 * dbfile: the database file under the daemon's feet (contracts in
 * store_priv.h).  When the path holds another file, or none, the old
 * connection is finished against the file it has open before anything
 * opens the path again: SQLite leaves the WAL of a database that moved
 * where it was, and the next connection at the path would apply those
 * frames to whatever file is there now.  What is at the path is then read
 * only through a descriptor (never followed, never blocked on) and only
 * a spyremon database is taken.
 *
 * A database whose log is damaged (walcheck.h) is copied aside, byte for
 * byte, before SQLite opens it: recovery drops what follows the damage,
 * and the first write after it overwrites the log.
 */
#include "store_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "schema.h"

#define SQLITE_MAGIC		"SQLite format 3"	/* and its NUL: 16 bytes */
#define HEADER_BYTES		100
#define USER_VERSION_AT		60	/* big-endian, 4 bytes */

/* The size of path's side file suffix ("-wal", "-shm"); -1 if none. */
static off_t
side_size(const char *path, const char *suffix)
{
	char p[4096];
	struct stat sb;

	if ((size_t)snprintf(p, sizeof(p), "%s%s", path, suffix) >= sizeof(p) ||
	    lstat(p, &sb) == -1 || !S_ISREG(sb.st_mode))
		return -1;
	return sb.st_size;
}

static void
side_unlink(const char *path, const char *suffix)
{
	char p[4096];

	if ((size_t)snprintf(p, sizeof(p), "%s%s", path, suffix) < sizeof(p) &&
	    unlink(p) == -1 && errno != ENOENT)
		log_warn("%s", p);
}

int
store_db_retire(struct store *st)
{
	off_t wal;
	int rc;

	if (st->db == NULL)
		return 0;
	/* every frame into the old file, through its descriptor; the WAL
	 * truncated to nothing */
	rc = sqlite3_wal_checkpoint_v2(st->db, NULL, SQLITE_CHECKPOINT_TRUNCATE,
	    NULL, NULL);
	if (rc != SQLITE_OK) {
		log_warnx("%s: cannot finish the old database's log yet: %s",
		    st->path, sqlite3_errmsg(st->db));
		return -1;
	}
	wal = side_size(st->path, "-wal");
	sqlite3_finalize(st->insert);
	sqlite3_finalize(st->begin);
	sqlite3_finalize(st->commit);
	sqlite3_finalize(st->rollback);
	st->insert = st->begin = st->commit = st->rollback = NULL;
	if ((rc = sqlite3_close(st->db)) != SQLITE_OK)
		log_warnx("%s: close: %s", st->path, sqlite3_errstr(rc));
	st->db = NULL;
	/* an empty WAL is the old one, finished: remove it and its index so
	 * that the file now at the path starts clean.  One with frames came
	 * with that file and is its own. */
	if (wal <= 0) {
		side_unlink(st->path, "-wal");
		side_unlink(st->path, "-shm");
	}
	return 0;
}

int
store_path_check(const char *path, char *why, size_t len)
{
	unsigned char h[HEADER_BYTES];
	struct stat sb;
	uint32_t version;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY |
	    O_CLOEXEC);
	if (fd == -1) {
		if (errno == ENOENT)
			return 0;
		snprintf(why, len, "%s", errno == ELOOP ?
		    "a symbolic link" : strerror(errno));
		return 1;
	}
	if (fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode)) {
		close(fd);
		snprintf(why, len, "not a regular file");
		return 1;
	}
	n = pread(fd, h, sizeof(h), 0);
	close(fd);
	if (n != (ssize_t)sizeof(h) ||
	    memcmp(h, SQLITE_MAGIC, sizeof(SQLITE_MAGIC)) != 0) {
		snprintf(why, len, "not an SQLite database");
		return 1;
	}
	version = (uint32_t)h[USER_VERSION_AT] << 24 |
	    (uint32_t)h[USER_VERSION_AT + 1] << 16 |
	    (uint32_t)h[USER_VERSION_AT + 2] << 8 | h[USER_VERSION_AT + 3];
	if (version == 0) {
		snprintf(why, len, "an SQLite database that is not spyremon's");
		return 1;
	}
	if (version > SCHEMA_VERSION) {
		snprintf(why, len, "a spyremon database of a newer build "
		    "(schema version %u)", version);
		return 1;
	}
	return 2;
}

/* ---- a damaged database kept aside ---- */

/*
 * Copy from (if it exists) to a new file to, byte for byte, with from's
 * permission bits, and sync it; 0, or -1 with errno (to removed).
 */
static int
copy_exact(const char *from, const char *to)
{
	char buf[65536];
	struct stat sb;
	ssize_t n;
	int in, out, saved;

	in = open(from, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	if (in == -1)
		return errno == ENOENT ? 0 : -1;
	if (fstat(in, &sb) == -1 || (out = open(to, O_WRONLY | O_CREAT |
	    O_EXCL | O_NOFOLLOW | O_CLOEXEC, sb.st_mode & 0777)) == -1) {
		saved = errno;
		close(in);
		errno = saved;
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		for (ssize_t done = 0, w; done < n; done += w)
			if ((w = write(out, buf + done, (size_t)(n - done))) == -1)
				goto fail;
	}
	if (n == -1 || fchmod(out, sb.st_mode & 0777) == -1 || fsync(out) == -1)
		goto fail;
	close(in);
	if (close(out) == -1) {
		saved = errno;
		unlink(to);
		errno = saved;
		return -1;
	}
	return 0;
fail:
	saved = errno;
	close(in);
	close(out);
	unlink(to);
	errno = saved;
	return -1;
}

/* Sync the folder that holds path, so the copies' names survive a crash. */
static void
sync_folder(const char *path)
{
	char dir[4096], *slash;
	int fd;

	snprintf(dir, sizeof(dir), "%s", path);
	if ((slash = strrchr(dir, '/')) == NULL)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) != -1) {
		(void)fsync(fd);
		close(fd);
	}
}

int
store_keep_aside(const char *path, char *kept, size_t len)
{
	static const char *const suffix[] = { "", "-wal", "-shm" };
	char stamp[32], from[4096], to[4096];
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	/* a name no earlier copy has: nothing kept is ever overwritten */
	for (int n = 1;; n++) {
		char tag[48];

		if (n > 1)
			snprintf(tag, sizeof(tag), "%s-%d", stamp, n);
		else
			snprintf(tag, sizeof(tag), "%s", stamp);
		if ((size_t)snprintf(kept, len, "%s.damaged-%s", path, tag) >=
		    len) {
			errno = ENAMETOOLONG;
			log_warn("%s: cannot keep the damaged database aside",
			    path);
			return -1;
		}
		if (side_size(kept, "") == -1 && side_size(kept, "-wal") == -1 &&
		    access(kept, F_OK) == -1 && errno == ENOENT)
			break;
		if (n == 100) {
			log_warnx("%s: cannot find a free name to keep the "
			    "damaged database aside", path);
			return -1;
		}
	}
	for (size_t i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++) {
		snprintf(from, sizeof(from), "%s%s", path, suffix[i]);
		snprintf(to, sizeof(to), "%s%s", kept, suffix[i]);
		if (copy_exact(from, to) == -1) {
			log_warn("%s: cannot copy the damaged database to %s",
			    path, to);
			/* no partial set left: the originals are untouched */
			while (i-- > 0) {
				snprintf(to, sizeof(to), "%s%s", kept,
				    suffix[i]);
				unlink(to);
			}
			return -1;
		}
	}
	sync_folder(path);
	return 0;
}

/* ---- a damaged page met while running ---- */

int
store_db_move_damaged(struct store *st, char *kept, size_t len)
{
	if (store_keep_aside(st->path, kept, len) == -1)
		return -1;
	/* the copies hold it all: the old file and its log can go */
	if (st->db != NULL && store_db_retire(st) == -1) {
		sqlite3_finalize(st->insert);
		sqlite3_finalize(st->begin);
		sqlite3_finalize(st->commit);
		sqlite3_finalize(st->rollback);
		st->insert = st->begin = st->commit = st->rollback = NULL;
		(void)sqlite3_close(st->db);
		st->db = NULL;
	}
	side_unlink(st->path, "");
	side_unlink(st->path, "-wal");
	side_unlink(st->path, "-shm");
	return 0;
}

/*
 * Rows of the samples table read per check: a month of 8 cards at 1 Hz
 * (20.7 million rows) is read through in 104 checks, and a check reads
 * about 19 MB in 10 to 30 ms from the page cache (spyremond(8), DAMAGED
 * DATABASE, has the measurement).
 */
#define CHECK_ROWS	200000

int
store_check_slice(const char *path, int64_t *cursor, char *why, size_t len)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *s = NULL;
	int64_t n = 0, last = *cursor;
	int rc;

	why[0] = '\0';
	/* its own connection: the writer's page cache would hide the file */
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY |
	    SQLITE_OPEN_NOFOLLOW, NULL) != SQLITE_OK) {
		sqlite3_close(db);
		return 0;		/* no file to check now */
	}
	sqlite3_busy_timeout(db, 100);
	/* the schema, then a slice of the samples in key order, every page */
	rc = sqlite3_prepare_v2(db, "SELECT " SCHEMA_C_TS " FROM "
	    SCHEMA_T_SAMPLES " WHERE " SCHEMA_C_TS " > ?1 ORDER BY "
	    SCHEMA_C_TS " LIMIT ?2", -1, &s, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_int64(s, 1, *cursor);
		sqlite3_bind_int(s, 2, CHECK_ROWS);
		while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
			last = sqlite3_column_int64(s, 0);
			n++;
		}
	}
	if (sql_is_damage(rc) || sql_is_damage(sqlite3_errcode(db))) {
		snprintf(why, len, "%s", sqlite3_errmsg(db));
		rc = 1;
	} else {
		/* the end of the table: start over from its beginning */
		*cursor = n < CHECK_ROWS ? INT64_MIN : last;
		rc = 0;
	}
	sqlite3_finalize(s);
	sqlite3_close(db);
	return rc;
}
