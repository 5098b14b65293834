/* db: choosing the subcommand of "spyremon db" (dbtools.h). */
#include <stdio.h>
#include <string.h>

#include "client.h"
#include "cmd.h"
#include "dbtools.h"

static int
db_help(void)
{
	printf("usage: spyremon db check [--db FILE] [--json]\n"
	    "       spyremon db salvage [--json] DAMAGED OUT\n"
	    "\n"
	    "check runs SQLite's integrity check on the database, read-only;\n"
	    "salvage copies every row of a damaged database that can still be\n"
	    "read into a new one.  \"spyremon db check --help\" and \"spyremon\n"
	    "db salvage --help\" say more.\n");
	return CLIENT_EXIT_OK;
}

int
cmd_db(struct client *cl, int argc, char *argv[])
{
	if (argc >= 2 && strcmp(argv[1], "check") == 0)
		return cmd_run(cl, &db_check_cmd, argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "salvage") == 0)
		return cmd_run(cl, &db_salvage_cmd, argc - 1, argv + 1);
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0))
		return db_help();
	if (argc >= 2)
		return cmd_usage_error("db", "unknown subcommand '%s'; say "
		    "check or salvage", argv[1]);
	return cmd_usage_error("db", "missing subcommand: check or salvage");
}
