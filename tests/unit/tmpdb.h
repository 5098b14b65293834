/*
 * A database file in a fresh temporary directory, for tests that need a
 * real store on disk and must leave nothing behind.
 */
#ifndef TMPDB_H
#define TMPDB_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct tmpdb {
	char dir[64];		/* the directory, made by mkdtemp */
	char path[128];		/* dir/spyremon.db, not created here */
};

/* Creates /tmp/<name>.XXXXXX and names a database in it; 0, or -1. */
static inline int
tmpdb_make(struct tmpdb *t, const char *name)
{
	int n;

	n = snprintf(t->dir, sizeof(t->dir), "/tmp/%s.XXXXXX", name);
	if (n < 0 || (size_t)n >= sizeof(t->dir) || mkdtemp(t->dir) == NULL)
		return -1;
	n = snprintf(t->path, sizeof(t->path), "%s/spyremon.db", t->dir);
	if (n < 0 || (size_t)n >= sizeof(t->path))
		return -1;
	return 0;
}

/*
 * Unlinks the database and whichever of its -wal, -shm and -journal files
 * exist, then removes the directory; 0, or -1 if the directory cannot be
 * removed (as when something else is left in it).  Close the store first.
 */
static inline int
tmpdb_remove(const struct tmpdb *t)
{
	static const char *const suffix[] = { "", "-wal", "-shm", "-journal" };
	char p[sizeof(t->path) + 16];

	for (size_t i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++) {
		snprintf(p, sizeof(p), "%s%s", t->path, suffix[i]);
		unlink(p);
	}
	return rmdir(t->dir);
}

#endif /* TMPDB_H */
