/*
 * client: the helpers every command of spyremon shares (client.h): the
 * common options, the config loaded on first need, and the paths and
 * times the options name.
 */
#include <err.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "client.h"
#include "timeparse.h"

int
client_common_option(struct client *cl, int ch, const char *arg)
{
	uint64_t wait;

	switch (ch) {
	case 'c':
		cl->config_path = arg;
		return 1;
	case CLIENT_OPT_SOCKET:
		cl->socket_path = arg;
		return 1;
	case CLIENT_OPT_WAIT:
		if (parse_duration(arg, &wait) == -1 || wait > INT64_MAX / 2) {
			warnx("--wait %s: not a duration (such as 10s, 500ms "
			    "or 0s)", arg);
			return -1;
		}
		cl->wait_set = true;
		cl->wait_ns = (int64_t)wait;
		return 1;
	case CLIENT_OPT_DB:
		cl->db_path = arg;
		if (cl->ndb < CLIENT_MAX_DBS)
			cl->db_paths[cl->ndb++] = arg;
		else
			cl->too_many_dbs = true;
		return 1;
	default:
		return 0;
	}
}

int
client_parse_time(const char *s, int64_t *out_ns)
{
	uint64_t ago;

	if (parse_time(s, out_ns) == 0)
		return 0;
	if (parse_duration(s, &ago) == -1 || ago > (uint64_t)INT64_MAX)
		return -1;
	*out_ns = now_realtime_ns() - (int64_t)ago;
	return 0;
}

int
client_exit(const struct client *cl, int rc)
{
	return cl->partial && rc == CLIENT_EXIT_INCOMPLETE ? CLIENT_EXIT_OK :
	    rc;
}

void
client_getopt_reset(void)
{
	/* 0, not 1: glibc then also forgets its scan state */
	optind = 0;
}

/* The config, loaded once; NULL after printing every error. */
struct config *
client_config(struct client *cl)
{
	struct config_errors errs = { 0 };
	bool defaulted;

	if (cl->cfg != NULL)
		return cl->cfg;
	if (config_load_default(cl->config_path, &cl->cfg, &errs,
	    &defaulted) == -1) {
		for (size_t i = 0; i < errs.n; i++)
			warnx("%s", errs.msgs[i]);
		warnx("cannot use the config; -c names another, and "
		    "--socket and --db bypass it");
	}
	config_errors_free(&errs);
	return cl->cfg;
}

const char *
client_socket(struct client *cl)
{
	struct config *cfg;

	if (cl->socket_path != NULL)
		return cl->socket_path;
	return (cfg = client_config(cl)) != NULL ? cfg->socket : NULL;
}

const char *
client_database(struct client *cl)
{
	struct config *cfg;

	if (cl->db_path != NULL)
		return cl->db_path;
	return (cfg = client_config(cl)) != NULL ? cfg->database : NULL;
}

int
client_databases(struct client *cl, const char *const **paths, size_t *n)
{
	const char *path;

	if (cl->too_many_dbs) {
		warnx("--db: at most %d databases", CLIENT_MAX_DBS);
		return -1;
	}
	if (cl->ndb == 0) {
		if ((path = client_database(cl)) == NULL)
			return -1;
		cl->db_paths[cl->ndb++] = path;
	}
	*paths = cl->db_paths;
	*n = cl->ndb;
	return 0;
}
