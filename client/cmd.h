/*
 * cmd: the frame of every command's command line.  A command describes
 * its usage, options, operands and work in a struct cmd_spec.  cmd_run
 * makes room for the command's options, parses the options every command
 * takes (CLIENT_LONGOPTS: -c, --socket, --db, --wait) and the command's
 * own, answers -h and --help with the help on stdout and exit 0, checks
 * the number of operands, and then runs the command.  A usage error (exit
 * 2: an unknown option, a missing argument, a wrong number of operands, or
 * any the command finds) is one line naming the problem on stderr, then
 * "try 'spyremon NAME --help'".  The getopt_long conventions are glibc's:
 * options and operands may be mixed, and "--" ends the options.
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

/* cmd_spec.exits: the exit statuses a command may return, as bits. */
#define CMD_EXIT(code)		(1u << (code))
#define CMD_EXITS_BASE		(CMD_EXIT(CLIENT_EXIT_OK) | \
	CMD_EXIT(CLIENT_EXIT_FAILED) | CMD_EXIT(CLIENT_EXIT_USAGE))
/* the highest status cmd_help can name (db's, CLIENT_EXIT_DAMAGED) */
#define CMD_EXIT_MAX		14

/* The program's name in messages and in the help. */
#define CMD_PROG		"spyremon"

struct cmd_spec {
	/* the command as typed after "spyremon": "export", "mark begin" */
	const char *name;
	/*
	 * --help's text: the synopsis, a few lines on what it does, and a
	 * table of every option; cmd_help adds the common options and the
	 * exit statuses
	 */
	const char *usage;
	/* the exit statuses it may return: CMD_EXITS_BASE | CMD_EXIT(...) */
	unsigned exits;
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

/* Print spec's help on stdout; CLIENT_EXIT_OK, for "return cmd_help()". */
int cmd_help(const struct cmd_spec *spec);

/*
 * A usage error: "spyremon NAME: message" and the line pointing to NAME's
 * --help on stderr; CLIENT_EXIT_USAGE.  name is a command ("mark") or
 * NULL for the program.
 */
int cmd_usage_error(const char *name, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * The line that ends a usage error said already, pointing to NAME's
 * --help (NULL: the program's); CLIENT_EXIT_USAGE.
 */
int cmd_usage_try(const char *name);

#endif
