/*
 * spyremon: the client of spyremond.
 *
 * Commands that talk to the daemon go through its control socket; commands
 * that read samples open the database read-only and need no daemon.
 */
#include <stdio.h>
#include <string.h>

#include "version.h"

static int
usage(FILE *fp, int code)
{
	fprintf(fp,
	    "usage: spyremon --version\n"
	    "       spyremon --help\n"
	    "\n"
	    "The daemon, spyremond, stores samples in an SQLite database; see\n"
	    "spyremon-schema(5) to query it with sqlite3(1).\n");
	return code;
}

int
main(int argc, char *argv[])
{
	if (argc == 2 && strcmp(argv[1], "--version") == 0) {
		printf("spyremon %s\n", SPYREMON_VERSION);
		return 0;
	}
	if (argc == 2 && (strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0))
		return usage(stdout, 0);
	if (argc >= 2)
		fprintf(stderr, "spyremon: unknown command '%s'\n", argv[1]);
	return usage(stderr, 2);
}
