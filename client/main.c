/*
 * spyremon: the client of spyremond.
 *
 * Commands that talk to the daemon (mark, status) go through its control
 * socket; commands that read samples (windows, export) open the database
 * read-only and need no daemon; import writes through the store (store/),
 * linked in, and needs no daemon either.
 *
 * spyremon never calls setlocale(3): the C locale stays in force, so every
 * number it writes has a '.' decimal point whatever LC_ALL says.
 */
#include <err.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "cmd.h"
#include "timeparse.h"
#include "version.h"

/* A command: its frame (cmd.h), or the function that picks a subcommand's. */
struct command {
	const char *name;
	const struct cmd_spec *spec;
	int (*run)(struct client *, int, char *[]);
};

static const struct command commands[] = {
	{ "mark", NULL, cmd_mark },
	{ "windows", &windows_cmd, NULL },
	{ "status", &status_cmd, NULL },
	{ "export", &export_cmd, NULL },
	{ "trace", NULL, cmd_trace },
	{ "import", &import_cmd, NULL },
	{ "metrics", &metrics_cmd, NULL },
	{ "summary", &summary_cmd, NULL },
	{ "compare", &compare_cmd, NULL },
	{ "report", &report_cmd, NULL },
	{ "capture", &capture_cmd, NULL },
	{ "db", NULL, cmd_db },
	{ NULL, NULL, NULL },
};

static int
help(void)
{
	printf(
	    "usage: spyremon [-c file] [--socket path] [--db path] command [args]\n"
	    "       spyremon --version | --help\n"
	    "\n"
	    "commands:\n"
	    "  mark begin --tag TAG [--meta KEY=VALUE ...] [--same-tag]\n"
	    "             [--until-exit PID]\n"
	    "  mark end [--tag TAG | --id N] [--wait D]\n"
	    "  windows [--since TIME] [--tag TAG] [--json|--csv|--table]\n"
	    "          [--output FILE] [--partial]\n"
	    "  status [-v] [--json]\n"
	    "  export (--window TAG|ID [--all] | --from TIME [--to TIME])\n"
	    "         [--format csv|aiusmi|jsonl] [--output FILE]\n"
	    "         [--metrics KEY,...] [--device ID,...] [--pad DURATION]\n"
	    "  export --trace FILE ... [--window TAG|ID]\n"
	    "         [--trace-start TIME | --align-window TAG|ID] [--step-pattern REGEX]\n"
	    "         [--merge OUT[.gz] | --merge-dir DIR] [--include-unreliable]\n"
	    "         [--steps [--json|--csv|--table]] [--host-map TRACE=HOST ...]\n"
	    "         [export options as above]\n"
	    "  trace info [--json] [--step-pattern REGEX] FILE\n"
	    "  import [--tz ZONE] [--interval DURATION] [--device-map ID=BUSID,...]\n"
	    "         FILE.csv\n"
	    "  metrics [--format openmetrics|prometheus | --output FILE | --http]\n"
	    "  summary --window TAG|ID [--json|--csv|--table] [--output FILE]\n"
	    "  compare BASE NEW [--trace-base FILE --trace-new FILE [--align]]\n"
	    "          [--json] [--fail-on-regression PCT] [--min-change PCT]\n"
	    "  report --window TAG|ID [--trace FILE [--align-window TAG|ID]]\n"
	    "         [--baseline TAG|ID] --output DIR\n"
	    "  capture --pid PID [--duration D | --iterations N] [--tag TAG]\n"
	    "          [--output DIR] [--report] [--wait D] [--warmup D]\n"
	    "          [--socket-dir DIR] [--max-processes N] [--dynolog-port PORT]\n"
	    "  db check [--json]\n"
	    "  db salvage [--json] DAMAGED OUT\n"
	    "\n"
	    "-c names the daemon's config (default %s),\n"
	    "which gives the socket and the database; --socket and --db override\n"
	    "it.  export and summary take --db once per host and read them all.\n"
	    "\"spyremon COMMAND --help\" describes a command and its exit statuses;\n"
	    "see spyremon(1).\n",
	    CONFIG_DEFAULT_PATH);
	return CLIENT_EXIT_OK;
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		CLIENT_LONGOPTS,
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	static char prog[] = CMD_PROG;
	struct client cl = { 0 };
	const struct command *cmd;
	int ch, rc, common;

	/* past a file size limit, writes fail and are reported, not fatal */
	signal(SIGXFSZ, SIG_IGN);

	/*
	 * '+': stop at the command's name; its options are its own.  getopt
	 * names the program by argv[0] when it says what is wrong.
	 */
	argv[0] = prog;
	while ((ch = getopt_long(argc, argv, "+" CLIENT_SHORTOPTS, longopts,
	    NULL)) != -1) {
		if ((common = client_common_option(&cl, ch, optarg)) == 1)
			continue;
		if (common == -1)
			return cmd_usage_try(NULL);	/* it said why */
		switch (ch) {
		case 'V':
			printf("spyremon %s\n", SPYREMON_VERSION);
			return CLIENT_EXIT_OK;
		case 'h':
			return help();
		default:
			return cmd_usage_try(NULL);	/* getopt said why */
		}
	}
	if (optind == argc)
		return cmd_usage_error(NULL, "no command given");
	for (cmd = commands; cmd->name != NULL; cmd++)
		if (strcmp(cmd->name, argv[optind]) == 0)
			break;
	if (cmd->name == NULL)
		return cmd_usage_error(NULL, "unknown command '%s'",
		    argv[optind]);
	argc -= optind;
	argv += optind;
	client_getopt_reset();
	rc = cmd->spec != NULL ? cmd_run(&cl, cmd->spec, argc, argv) :
	    cmd->run(&cl, argc, argv);
	config_free(cl.cfg);
	/*
	 * Output the command did not check.  A command that failed has said
	 * why already (a full disk, say); saying it again would only add a
	 * second, stale error.
	 */
	if ((fflush(stdout) == EOF || ferror(stdout)) && rc == CLIENT_EXIT_OK) {
		warn("stdout");
		rc = CLIENT_EXIT_FAILED;
	}
	return rc;
}
