/*
 * client: what the commands of spyremon share.
 *
 * Every command takes the options -c FILE, --socket PATH and --db PATH,
 * before or after its name; the config (the daemon's, by default
 * /etc/spyremond/spyremond.yaml) is read only when a path it holds is
 * needed and no option overrides it.
 *
 * Commands return an exit status, one of the CLIENT_EXIT_* below, after
 * printing any error to stderr as "spyremon: message".
 */
#ifndef SPYREMON_CLIENT_H
#define SPYREMON_CLIENT_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"

#define CLIENT_EXIT_OK		0
#define CLIENT_EXIT_FAILED	1	/* the command failed: no such window, ... */
#define CLIENT_EXIT_USAGE	2	/* bad command line */
#define CLIENT_EXIT_DAEMON	3	/* spyremond cannot be reached */
#define CLIENT_EXIT_DATABASE	4	/* the database cannot be read */
#define CLIENT_EXIT_REGRESSION	5	/* compare --fail-on-regression: it regressed */
#define CLIENT_EXIT_PARTIAL	6	/* written, but part of a window's samples
					   were deleted, or could not be read (a
					   damaged page) */
#define CLIENT_EXIT_INCOMPLETE	7	/* written as far as it goes: a window is not complete */
/* 8 to 13 are capture's (capture.h) */
#define CLIENT_EXIT_DAMAGED	14	/* db check: damaged; db salvage: written, rows lost */

/* --db given more often is refused. */
#define CLIENT_MAX_DBS	256

struct client {
	const char *config_path;	/* -c; NULL: the default, which may be absent */
	const char *socket_path;	/* --socket; NULL: the config's */
	const char *db_path;		/* --db, the last given; NULL: the config's */
	/*
	 * Every --db, in order (before and after the command's name): the
	 * commands that read several databases take them all (export,
	 * summary); the others take the last, db_path.
	 */
	const char *db_paths[CLIENT_MAX_DBS];
	size_t ndb;
	bool too_many_dbs;		/* more than CLIENT_MAX_DBS --db */
	struct config *cfg;		/* loaded on first need */
	bool wait_set;			/* --wait: how long a reader waits for */
	int64_t wait_ns;		/* spyremond to store a window (settle.h) */
	bool partial;			/* --partial of the readers: data read as
					   far as it goes is the answer */
};

/* getopt_long values of the options every command takes. */
enum {
	CLIENT_OPT_SOCKET = 0x100,
	CLIENT_OPT_DB,
	CLIENT_OPT_WAIT,
	CLIENT_OPT_FIRST_FREE		/* commands number their own from here */
};

#define CLIENT_LONGOPTS \
	{ "config", required_argument, NULL, 'c' }, \
	{ "socket", required_argument, NULL, CLIENT_OPT_SOCKET }, \
	{ "db", required_argument, NULL, CLIENT_OPT_DB }, \
	{ "wait", required_argument, NULL, CLIENT_OPT_WAIT }, \
	{ "help", no_argument, NULL, 'h' }

/* The short options of CLIENT_LONGOPTS, for the start of an optstring. */
#define CLIENT_SHORTOPTS "c:h"

/*
 * Take option ch (with its argument) if it is one of CLIENT_LONGOPTS but
 * 'h': 1 if it was, 0 if it is not one of them, -1 after saying why its
 * argument is wrong (a --wait that is not a duration: a usage error).
 */
int client_common_option(struct client *cl, int ch, const char *arg);

/*
 * The socket and database paths in force: the option's, else the config's.
 * A missing default config file means the built-in defaults; any other
 * problem with the config is printed and gives NULL.
 */
const char *client_socket(struct client *cl);
/* The config in force, loaded on first call; NULL after printing why. */
struct config *client_config(struct client *cl);
const char *client_database(struct client *cl);

/*
 * Every database given with --db, in order, else the config's one: n is
 * at least 1 on success.  -1 after printing why (no config, or more than
 * CLIENT_MAX_DBS).  *paths points into cl.
 */
int client_databases(struct client *cl, const char *const **paths,
    size_t *n);

/*
 * A point in time as the options take it: what parse_time(3) takes (ISO
 * 8601 or epoch ns), or a duration ago such as "90m" (parse_duration).
 * -1 on bad input.
 */
int client_parse_time(const char *s, int64_t *out_ns);

/*
 * A reader's exit status rc as the user asked for it: with --partial,
 * CLIENT_EXIT_INCOMPLETE (read as far as it goes, the note on stderr)
 * is CLIENT_EXIT_OK.
 */
int client_exit(const struct client *cl, int rc);

/* Reset getopt_long for a new argument vector. */
void client_getopt_reset(void);

/*
 * The commands (cmd.h).  mark, trace and db take a subcommand first: they are
 * functions that choose its frame; argv[0] is the command's name.
 */
struct cmd_spec;
extern const struct cmd_spec windows_cmd, status_cmd, export_cmd,
    import_cmd, metrics_cmd, summary_cmd, compare_cmd, report_cmd,
    capture_cmd;
int cmd_mark(struct client *cl, int argc, char *argv[]);
int cmd_trace(struct client *cl, int argc, char *argv[]);
int cmd_db(struct client *cl, int argc, char *argv[]);

#endif
