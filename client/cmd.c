/*
 * cmd: the frame of every command's command line (cmd.h).
 */
#include <err.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "cmd.h"

/* What each exit status means, for the table that ends every help. */
static const char *const exit_meaning[CMD_EXIT_MAX + 1] = {
	[CLIENT_EXIT_OK] = "success",
	[CLIENT_EXIT_FAILED] = "failed; the message says why",
	[CLIENT_EXIT_USAGE] = "bad command line",
	[CLIENT_EXIT_DAEMON] = "spyremond cannot be reached",
	[CLIENT_EXIT_DATABASE] = "the database cannot be read",
	[CLIENT_EXIT_REGRESSION] = "regressed past --fail-on-regression",
	[CLIENT_EXIT_PARTIAL] = "written, but samples were deleted or unreadable",
	[CLIENT_EXIT_INCOMPLETE] = "written as far as stored: window incomplete",
	/* capture's own (CAPTURE_EXIT_*, capture.h) */
	[8] = "no such process",
	[9] = "another user's process",
	[10] = "no process polled for the request",
	[11] = "the request was refused, or the profiler stayed busy",
	[12] = "no trace appeared",
	[13] = "dynolog answered for a process not of the target",
	[CLIENT_EXIT_DAMAGED] = ("the database is damaged (salvage: written "
	    "without the rows lost)"),
};

int
cmd_help(const struct cmd_spec *spec)
{
	fputs(spec->usage, stdout);
	printf("\ncommon options: -c FILE, --socket PATH, --db PATH, "
	    "--wait D, -h\n"
	    "exit status:\n");
	for (int code = 0; code <= CMD_EXIT_MAX; code++)
		if (spec->exits & CMD_EXIT(code))
			printf("  %2d  %s\n", code, exit_meaning[code]);
	return CLIENT_EXIT_OK;
}

int
cmd_usage_try(const char *name)
{
	fprintf(stderr, "try '" CMD_PROG "%s%s --help'\n",
	    name != NULL ? " " : "", name != NULL ? name : "");
	return CLIENT_EXIT_USAGE;
}

/* "spyremon NAME: message" on stderr. */
static void	vsay(const char *, const char *, va_list)
    __attribute__((format(printf, 2, 0)));

static void
vsay(const char *name, const char *fmt, va_list ap)
{
	fprintf(stderr, CMD_PROG "%s%s: ", name != NULL ? " " : "",
	    name != NULL ? name : "");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

/* vsay; CLIENT_EXIT_USAGE, for the frame to add the --help line. */
static int
say(const char *name, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int
say(const char *name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(name, fmt, ap);
	va_end(ap);
	return CLIENT_EXIT_USAGE;
}

int
cmd_usage_error(const char *name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(name, fmt, ap);
	va_end(ap);
	return cmd_usage_try(name);
}

/*
 * CLIENT_LONGOPTS, then the command's: the order getopt_long lists them
 * in when an abbreviation is ambiguous.
 */
static struct option *
all_longopts(const struct option *own)
{
	static const struct option common[] = {
		CLIENT_LONGOPTS,
	};
	size_t ncommon = sizeof(common) / sizeof(common[0]), nown = 0;
	struct option *all;

	while (own != NULL && own[nown].name != NULL)
		nown++;
	if ((all = calloc(ncommon + nown + 1, sizeof(*all))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	memcpy(all, common, sizeof(common));
	if (nown > 0)
		memcpy(all + ncommon, own, nown * sizeof(*own));
	return all;
}

/*
 * The exit status to stop with, or -1 when the command is to run.
 * getopt_long says what is wrong with an option itself, naming the
 * command by argv[0], which is "spyremon NAME" meanwhile.
 */
static int
parse(struct client *cl, const struct cmd_spec *spec, void *opts, int argc,
    char *argv[])
{
	struct option *longopts = all_longopts(spec->longopts);
	char *shortopts, *prog, *name = argv[0];
	int ch, rc = -1, given, common;

	if (asprintf(&shortopts, "%s%s", CLIENT_SHORTOPTS,
	    spec->shortopts != NULL ? spec->shortopts : "") == -1 ||
	    asprintf(&prog, CMD_PROG " %s", spec->name) == -1)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	argv[0] = prog;
	client_getopt_reset();
	while (rc == -1 && (ch = getopt_long(argc, argv, shortopts, longopts,
	    NULL)) != -1) {
		if ((common = client_common_option(cl, ch, optarg)) == 1)
			continue;
		if (common == -1)
			rc = CLIENT_EXIT_USAGE;		/* it said why */
		else if (ch == 'h')
			rc = cmd_help(spec);
		else if (ch == '?')
			rc = CLIENT_EXIT_USAGE;		/* getopt said why */
		else if (spec->option == NULL)
			rc = say(spec->name, "takes no option '%s'",
			    argv[optind - 1]);
		else if ((rc = spec->option(opts, ch, optarg)) ==
		    CLIENT_EXIT_OK)
			rc = -1;
	}
	argv[0] = name;
	free(prog);
	free(shortopts);
	free(longopts);
	given = argc - optind;
	if (rc == -1 && spec->operands != CMD_ANY_OPERANDS &&
	    given > spec->operands)
		rc = say(spec->name, "unexpected operand '%s'",
		    argv[optind + spec->operands]);
	else if (rc == -1 && spec->operands != CMD_ANY_OPERANDS &&
	    given < spec->operands)
		rc = say(spec->name, "%d operand%s expected, %d given",
		    spec->operands, spec->operands == 1 ? "" : "s", given);
	if (rc == CLIENT_EXIT_USAGE)
		cmd_usage_try(spec->name);
	return rc;
}

int
cmd_run(struct client *cl, const struct cmd_spec *spec, int argc,
    char *argv[])
{
	void *opts;
	int rc;

	if ((opts = calloc(1, spec->opts_size > 0 ? spec->opts_size : 1)) ==
	    NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	if (spec->defaults != NULL)
		memcpy(opts, spec->defaults, spec->opts_size);
	/* the command says what is wrong; the frame where to read more */
	if ((rc = parse(cl, spec, opts, argc, argv)) == -1 &&
	    (rc = spec->run(cl, opts, argc - optind, argv + optind)) ==
	    CLIENT_EXIT_USAGE)
		cmd_usage_try(spec->name);
	if (spec->done != NULL)
		spec->done(opts);
	free(opts);
	return rc;
}
