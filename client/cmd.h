/*
 * cmd: the frame of every command's command line.  A command describes
 * its usage, options, operands and work in a struct cmd_spec.  cmd_run
 * makes room for the command's options, parses the options every command
 * takes (CLIENT_LONGOPTS: -c, --socket, --db, --wait) and the command's
 * own, answers -h and --help with the usage on stdout and exit 0, an
 * unknown option or a missing argument with the usage on stderr and exit
 * 2, checks the number of operands, and then runs the command.  The
 * getopt_long conventions are glibc's: options and operands may be mixed,
 * and "--" ends the options.
 */
#ifndef SPYREMON_CMD_H
#define SPYREMON_CMD_H

#include <getopt.h>
#include <stdio.h>

#include "client.h"

/* A macro's value as a string literal, for a usage text: CMD_STR(5) "5". */
#define CMD_STR_(x)	#x
#define CMD_STR(x)	CMD_STR_(x)

/* cmd_spec.operands: the command counts its operands itself. */
#define CMD_ANY_OPERANDS	(-1)

struct cmd_spec {
	/* printed whole by --help and before a usage error */
	const char *usage;
	/* the command's short options, after CLIENT_SHORTOPTS; NULL: none */
	const char *shortopts;
	/* the command's long options, after CLIENT_LONGOPTS; NULL name ends */
	const struct option *longopts;
	/* how many operands follow the options, or CMD_ANY_OPERANDS */
	int operands;
	/* the size of the command's options, and their values before any
	 * option is taken (NULL: all zero) */
	size_t opts_size;
	const void *defaults;
	/*
	 * Take the command's option ch (one of its shortopts or longopts'
	 * values) with its argument into opts: CLIENT_EXIT_OK, or the exit
	 * status to stop with, after printing why.  NULL: no options.
	 */
	int (*option)(void *opts, int ch, char *arg);
	/* The command, with its operands: an exit status. */
	int (*run)(struct client *cl, void *opts, int argc, char *argv[]);
	/* Frees what option took into opts, however it ended; or NULL. */
	void (*done)(void *opts);
};

/*
 * Parse argv (argv[0] the command's name) by spec into cl and the
 * command's options, then run spec->run with the operands; the exit
 * status.
 */
int cmd_run(struct client *cl, const struct cmd_spec *spec, int argc,
    char *argv[]);

/* Print spec's usage to fp; code, for "return cmd_usage(...)". */
int cmd_usage(const struct cmd_spec *spec, FILE *fp, int code);

#endif
