/*
 * hosts: several databases, one per host, read by one command ("export
 * --db A --db B", "summary --db A --db B"), and which database each
 * profiler trace goes with.
 *
 * A database names its host by its host table (schema version 5 on:
 * gethostname(2) and machine-id(5) when it was made).  That recorded
 * hostname is what a trace's host is matched against; the name rows carry
 * in the output (hosts_name) is that hostname too, unless another of the
 * databases records the same one, or it records none (an older schema):
 * then it is the database's path as given, so rows of two databases can
 * always be told apart.
 *
 * Matching (hosts_match) is pure: no database, no trace file, so that the
 * unit tests drive it directly.  A trace goes with
 *   1. the database its --host-map TRACE=HOST names: HOST is a recorded
 *      hostname or a --db path as given;
 *   2. else, with one database, that one (as with a single --db before);
 *   3. else the one database recording the trace's own host (the trace's
 *      host_name header, or the host of a Kineto file name
 *      HOST_PID.TIME.pt.trace.json); failing an exact match, the one
 *      whose hostname's first label (up to the first '.') equals the
 *      trace host's first label.
 * A trace that none or several databases fit is an error naming every
 * such trace with its reason and every database with its host, and
 * saying how to map them.
 */
#ifndef SPYREMON_HOSTS_H
#define SPYREMON_HOSTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <sqlite3.h>

/* The longest host name kept; longer ones are cut. */
#define HOSTS_NAME_MAX	256

/* A database as matching sees it. */
struct hosts_db {
	const char *path;		/* as given to --db */
	const char *hostname;		/* recorded; NULL before schema version 5 */
};

/* A trace as matching sees it. */
struct hosts_trace {
	const char *path;		/* as given to --trace */
	const char *host;		/* its own host, "" if it records none */
	bool	 has_rank;
	int64_t	 rank;
};

/* One --host-map TRACE=HOST. */
struct hosts_map {
	const char *trace;		/* points into the argument */
	size_t	 trace_len;
	const char *host;		/* the rest after the last '=' */
};

/*
 * Parse --host-map's argument "TRACE=HOST", split at the last '=' (a
 * host name has none).  -1, after printing why, if either side is empty
 * or there is no '='.
 */
int hosts_map_parse(const char *arg, struct hosts_map *m);

/*
 * Which database each of the nt traces goes with, by the rules above:
 * out[i] is an index into dbs.  0, or -1 after printing to errfp every
 * problem found (an unknown or repeated --host-map trace, a HOST no
 * database answers to, traces that fit no or several databases).
 */
int hosts_match(const struct hosts_trace *tr, size_t nt,
    const struct hosts_db *dbs, size_t nd, const struct hosts_map *map,
    size_t nmap, size_t *out, FILE *errfp);

/*
 * The name database i's rows carry among the nd: its hostname, or its
 * path when it records none or another records the same.
 */
const char *hosts_name(const struct hosts_db *dbs, size_t nd, size_t i);

/*
 * Print to errfp, once, the databases whose names fall back to their
 * paths because they record the same hostname, or none.
 */
void hosts_note_names(const struct hosts_db *dbs, size_t nd, FILE *errfp);

/*
 * The databases, open: one read transaction each (db.h).  open fills
 * hostname from each host table (NULL for an older schema); close
 * releases everything and may be called on a partly opened set.
 */
struct hosts_set {
	size_t	 n;
	sqlite3 **db;
	struct hosts_db *dbs;
	char	**hostnames;		/* owned; what dbs[i].hostname points to */
};

/* Returns CLIENT_EXIT_OK or the status of the first database that fails. */
int hosts_open(const char *const *paths, size_t n, struct hosts_set *set);
void hosts_close(struct hosts_set *set);

#endif
