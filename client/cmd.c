/*
 * cmd: the frame of every command's command line (cmd.h).
 */
#include <err.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "cmd.h"

int
cmd_usage(const struct cmd_spec *spec, FILE *fp, int code)
{
	fputs(spec->usage, fp);
	return code;
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

/* The exit status to stop with, or -1 when the command is to run. */
static int
parse(struct client *cl, const struct cmd_spec *spec, void *opts, int argc,
    char *argv[])
{
	struct option *longopts = all_longopts(spec->longopts);
	char *shortopts;
	int ch, rc = -1;

	if (asprintf(&shortopts, "%s%s", CLIENT_SHORTOPTS,
	    spec->shortopts != NULL ? spec->shortopts : "") == -1)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	client_getopt_reset();
	while (rc == -1 && (ch = getopt_long(argc, argv, shortopts, longopts,
	    NULL)) != -1) {
		if (client_common_option(cl, ch, optarg))
			continue;
		if (ch == 'h')
			rc = cmd_usage(spec, stdout, CLIENT_EXIT_OK);
		else if (ch == '?' || spec->option == NULL)
			rc = cmd_usage(spec, stderr, CLIENT_EXIT_USAGE);
		else if ((rc = spec->option(opts, ch, optarg)) ==
		    CLIENT_EXIT_OK)
			rc = -1;
	}
	free(shortopts);
	free(longopts);
	if (rc == -1 && spec->operands != CMD_ANY_OPERANDS &&
	    argc - optind != spec->operands)
		rc = cmd_usage(spec, stderr, CLIENT_EXIT_USAGE);
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
	if ((rc = parse(cl, spec, opts, argc, argv)) == -1)
		rc = spec->run(cl, opts, argc - optind, argv + optind);
	if (spec->done != NULL)
		spec->done(opts);
	free(opts);
	return rc;
}
