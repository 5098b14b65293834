/*
 * simopts: aiu-smi's command line, its AIUSMI_OPTS environment variable and
 * the simulator's own long options.
 */
#include "sim.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "timeparse.h"

#define DEFAULT_PATTERN		"/tmp/metrics.%BUSID"
#define DEFAULT_IDLE_POWER	22.0
#define DELAY_MIN		0.01
#define DELAY_MAX		86400.0

enum {
	OPT_MEM_DETAILS = 256,
	OPT_IDLE_POWER,
	OPT_LLM_TYPE,
	OPT_CARDS,
	OPT_SEED,
	OPT_WORKLOAD,
	OPT_WRITE_METRIC_FILES,
	OPT_EXIT_AFTER,
	OPT_START,
	OPT_HANG_AFTER,
	OPT_GARBAGE_EVERY,
	OPT_HEADER_CHANGE_AFTER,
	OPT_MISSING_COLUMN_EVERY,
	OPT_SPLIT_ROWS,
	OPT_OVERLONG_EVERY,
	OPT_STAMP_LOG,
	OPT_STDERR_EVERY,
	OPT_METRIC_FORMAT,
	OPT_OLD_FORMAT_CARDS,
	OPT_FILE_INTERVAL,
	OPT_TEAR_EVERY,
	OPT_RECREATE_AFTER,
	OPT_FILE_LOG,
	OPT_POWER_SCHEDULE,
	OPT_POWER_LOG,
	OPT_HELP,
};

static const struct option long_options[] = {
	{ "csv", no_argument, NULL, 's' },
	{ "metric-groups", required_argument, NULL, 'g' },
	{ "delay", required_argument, NULL, 'd' },
	{ "id", required_argument, NULL, 'i' },
	{ "filename", required_argument, NULL, 'f' },
	{ "version", no_argument, NULL, 'v' },
	{ "mem-details", no_argument, NULL, OPT_MEM_DETAILS },
	{ "idle-power", required_argument, NULL, OPT_IDLE_POWER },
	{ "llm-type", required_argument, NULL, OPT_LLM_TYPE },
	{ "cards", required_argument, NULL, OPT_CARDS },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "workload", required_argument, NULL, OPT_WORKLOAD },
	{ "write-metric-files", no_argument, NULL, OPT_WRITE_METRIC_FILES },
	{ "exit-after", required_argument, NULL, OPT_EXIT_AFTER },
	{ "start", required_argument, NULL, OPT_START },
	{ "hang-after", required_argument, NULL, OPT_HANG_AFTER },
	{ "garbage-every", required_argument, NULL, OPT_GARBAGE_EVERY },
	{ "header-change-after", required_argument, NULL, OPT_HEADER_CHANGE_AFTER },
	{ "missing-column-every", required_argument, NULL, OPT_MISSING_COLUMN_EVERY },
	{ "split-rows", no_argument, NULL, OPT_SPLIT_ROWS },
	{ "overlong-every", required_argument, NULL, OPT_OVERLONG_EVERY },
	{ "stamp-log", required_argument, NULL, OPT_STAMP_LOG },
	{ "stderr-every", required_argument, NULL, OPT_STDERR_EVERY },
	{ "metric-format", required_argument, NULL, OPT_METRIC_FORMAT },
	{ "old-format-cards", required_argument, NULL, OPT_OLD_FORMAT_CARDS },
	{ "file-interval", required_argument, NULL, OPT_FILE_INTERVAL },
	{ "tear-every", required_argument, NULL, OPT_TEAR_EVERY },
	{ "recreate-after", required_argument, NULL, OPT_RECREATE_AFTER },
	{ "file-log", required_argument, NULL, OPT_FILE_LOG },
	{ "power-schedule", required_argument, NULL, OPT_POWER_SCHEDULE },
	{ "power-log", required_argument, NULL, OPT_POWER_LOG },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

static const char usage_text[] =
"usage: aiu-smi-sim [options] [metric-file-pattern]\n"
"\n"
"Simulates IBM aiu-smi: prints the telemetry of simulated Spyre cards every\n"
"interval, as a text table or (-s) as CSV.  Options may also be given in\n"
"AIUSMI_OPTS (split on whitespace); command-line options win.  The pattern\n"
"(default " DEFAULT_PATTERN ") names each card's metric file.\n"
"\n"
"aiu-smi options:\n"
"  -s, --csv                  CSV output instead of the text table\n"
"  -g, --metric-groups G      groups among D R M U P S, or A for all (default D)\n"
"  -d, --delay S              interval in seconds, fractional, >= 0.01 (default 1)\n"
"  -i, --id LIST              device IDs to print, e.g. 0,1 (default all)\n"
"  -f, --filename F           write to F (created or truncated), not stdout\n"
"  -v, --version              print the version and exit\n"
"      --mem-details          add the S group (per-segment reserved memory)\n"
"      --idle-power W         idle power for the pt_act estimate (default 22)\n"
"      --llm-type T           accepted, no effect\n"
"\n"
"simulator options:\n"
"      --cards N              number of cards, 1..64 (default 2); bus IDs\n"
"                             0000:13:00.0, 0000:14:00.0, ...\n"
"      --seed S               seed of every value (default 1); same seed and\n"
"                             options give the same values\n"
"      --workload W           idle, busy, zero (runtime not configured: card\n"
"                             values 0), cycle (per-card idle and busy phases\n"
"                             of seconds, from the seed; default) or\n"
"                             file:PATH (busy while PATH exists)\n"
"      --write-metric-files   create and update each card's metric file every\n"
"                             interval, as a running workload would\n"
"      --exit-after N         exit with status 0 after N rows\n"
"      --start TIME           the first row's date and time (ISO 8601, local\n"
"                             without a zone, or epoch ns); later rows follow\n"
"                             it by the time elapsed\n"
"      --hang-after N         stop writing after N rows; keep running\n"
"      --garbage-every N      write a garbage line after every N rows\n"
"      --header-change-after N  after N rows print a new header (group D\n"
"                             dropped, hbmtemp added) and go on under it\n"
"      --missing-column-every N  every Nth row line lacks its last cell\n"
"      --split-rows           write each row in two writes, 2 ms apart\n"
"      --overlong-every N     before every Nth row line, a 10000-byte line\n"
"      --stamp-log FILE       append '<realtime ns> <ID> <line>' per row written\n"
"      --stderr-every N       print a warning to stderr every N rows\n"
"      --power-schedule FILE  cards named in FILE draw the power it says:\n"
"                             lines 'card start_ns end_ns watts' (epoch ns,\n"
"                             [start, end), a later line wins), their idle\n"
"                             power outside; each pwr printed or written is\n"
"                             the exact mean over its interval\n"
"      --power-log FILE       append '<epoch ms> <ID> <watts>' per scheduled\n"
"                             card and millisecond: the mean power drawn in\n"
"                             [ms, ms + 1)\n";

static const char usage_files[] =
"\n"
"metric files (with --write-metric-files):\n"
"      --metric-format F      stub (a text record whose mtime moves; default),\n"
"                             new (the AiuM layout 1.0.0.1 in host byte\n"
"                             order), new-le or new-be (forced order)\n"
"      --old-format-cards L   these card IDs get the old format (first four\n"
"                             bytes zero) instead\n"
"      --file-interval S      update the files every S seconds (default: the\n"
"                             delay, which must be a multiple of S); the model\n"
"                             steps at S, rows print its latest values\n"
"      --tear-every N         every Nth update of each file is torn: after a\n"
"                             30 ms stall, no '!', data written word by word\n"
"                             1 ms apart, then the section header\n"
"      --recreate-after N     after N updates, card 0's file is deleted and\n"
"                             created again, once (new inode, sequence from 1)\n"
"      --file-log FILE        append '<section ms> <ID> <seq> <pwr tenths>\n"
"                             <torn 0|1> <realtime ns when written>' per\n"
"                             file update written\n"
"      --help                 print this text and exit\n"
"\n"
"Rows are written at start + k * delay (k = 1, 2, ...), one write per line;\n"
"intervals missed while stopped are skipped.  Cards whose ID is 3 modulo 4\n"
"have no RDMA: their rdrdma and wrrdma print '-'.  A 'row' in the fault\n"
"options is a complete data row (the lines --stamp-log records), counted over\n"
"all cards; --missing-column-every and --overlong-every count every row line.\n"
"Garbage, overlong and cut rows are never logged.  After a row, in order: the\n"
"stamp log, the stderr warning, the garbage line, the new header, then exit or\n"
"hang.  SIGTERM and SIGINT exit 0; a closed output exits 0 quietly.\n";

static _Noreturn void usage_error(const char *fmt, ...) LOG_FMT(1, 2);

static _Noreturn void
usage_error(const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fatalx(2, "%s (try --help)", msg);
}

static uint64_t
parse_count(const char *name, const char *s, uint64_t min, uint64_t max)
{
	unsigned long long v;
	char *end;

	errno = 0;
	if (!isdigit((unsigned char)s[0]))
		fatalx(2, "--%s: '%s' is not a whole number (try --help)", name, s);
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0')
		fatalx(2, "--%s: '%s' is not a whole number (try --help)", name, s);
	if (v < min || v > max)
		fatalx(2, "--%s: %s is out of range %llu..%llu", name, s,
		    (unsigned long long)min, (unsigned long long)max);
	return v;
}

static double
parse_real(const char *name, const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end != '\0' || errno != 0 || !isfinite(v))
		fatalx(2, "--%s: '%s' is not a number (try --help)", name, s);
	return v;
}

static uint64_t
parse_seconds(const char *name, const char *s)
{
	double d = parse_real(name, s);

	if (d < DELAY_MIN)
		fatalx(2, "--%s: %s s is below the minimum of 0.01 s", name, s);
	if (d > DELAY_MAX)
		fatalx(2, "--%s: %s s is above the maximum of 86400 s", name, s);
	return (uint64_t)(d * (double)NSEC_PER_SEC + 0.5);
}

static void
parse_delay(struct sim_options *opts, const char *s)
{
	opts->delay_ns = parse_seconds("delay", s);
}

/* An option's word and the value it stands for. */
struct word {
	const char *word;
	int value;
};

/* The value of word s in words (ended by a NULL word); false if none. */
static bool
word_value(const struct word *words, const char *s, int *value)
{
	for (; words->word != NULL; words++)
		if (strcmp(words->word, s) == 0) {
			*value = words->value;
			return true;
		}
	return false;
}

static void
parse_mformat(struct sim_options *opts, const char *s)
{
	static const struct word formats[] = {
		{ "stub", MFORMAT_STUB },
		{ "new", MFORMAT_NEW },
		{ "new-le", MFORMAT_NEW_LE },
		{ "new-be", MFORMAT_NEW_BE },
		{ NULL, 0 },
	};
	int v;

	if (word_value(formats, s, &v))
		opts->mformat = (enum sim_mformat)v;
	else
		usage_error("--metric-format: '%s' is not stub, new, new-le or "
		    "new-be", s);
}

/* A comma-separated list of card IDs 0..SIM_CARDS_MAX-1 into set. */
static void
parse_card_list(const char *name, const char *s, bool *set)
{
	const char *p = s;

	while (*p != '\0') {
		char *end;
		long id;

		errno = 0;
		id = isdigit((unsigned char)*p) ? strtol(p, &end, 10) : -1;
		if (id < 0 || id >= SIM_CARDS_MAX || errno != 0 ||
		    (*end != ',' && *end != '\0'))
			usage_error("--%s: '%s' is not a list of card IDs", name,
			    s);
		set[id] = true;
		p = *end == ',' ? end + 1 : end;
	}
}

static void
parse_groups(struct sim_options *opts, const char *s)
{
	size_t n = 0;

	if (*s == '\0')
		usage_error("--metric-groups: empty");
	for (; *s != '\0'; s++) {
		char g = (char)toupper((unsigned char)*s);

		if (strchr("DRMUPSA", g) == NULL)
			usage_error("--metric-groups: unknown group '%.1s' "
			    "(groups are D R M U P S A)", s);
		if (strchr(opts->groups, g) != NULL)
			continue;
		if (n + 2 > sizeof(opts->groups))
			break;
		opts->groups[n++] = g;
		opts->groups[n] = '\0';
	}
}

static void
parse_workload(struct sim_options *opts, const char *s)
{
	static const struct word workloads[] = {
		{ "idle", WORKLOAD_IDLE },
		{ "busy", WORKLOAD_BUSY },
		{ "cycle", WORKLOAD_CYCLE },
		{ "zero", WORKLOAD_ZERO },
		{ NULL, 0 },
	};
	int v;

	if (word_value(workloads, s, &v))
		opts->workload = (enum sim_workload)v;
	else if (strncmp(s, "file:", 5) == 0 && s[5] != '\0') {
		opts->workload = WORKLOAD_FILE;
		opts->workload_path = s + 5;
	} else
		usage_error("--workload: '%s' is not idle, busy, zero, cycle "
		    "or file:PATH", s);
}

/* -i LIST, once --cards is known: comma-separated IDs below ncards. */
static void
parse_ids(struct sim_options *opts)
{
	const char *s = opts->ids_arg;
	int n = 0;

	memset(opts->selected, 0, sizeof(opts->selected));
	while (*s != '\0') {
		char *end;
		long id;

		while (*s == ' ')
			s++;
		errno = 0;
		id = isdigit((unsigned char)*s) ? strtol(s, &end, 10) : -1;
		if (id < 0 || errno != 0)
			usage_error("--id: '%s' is not a list of device IDs",
			    opts->ids_arg);
		if (id >= opts->ncards)
			fatalx(2, "--id: no device %ld (there are %d cards, "
			    "IDs 0..%d)", id, opts->ncards, opts->ncards - 1);
		opts->selected[id] = true;
		n++;
		for (s = end; *s == ' '; s++)
			;
		if (*s == ',' && s[1] != '\0')
			s++;
		else if (*s != '\0')
			usage_error("--id: '%s' is not a list of device IDs",
			    opts->ids_arg);
	}
	if (n == 0)
		usage_error("--id: empty list");
}

/*
 * argv with the words of AIUSMI_OPTS inserted after argv[0], kept in opts
 * because the options point into it.
 */
static char **
merge_env_options(struct sim_options *opts, int argc, char **argv,
    int *out_argc)
{
	const char *env = getenv("AIUSMI_OPTS");
	char *word, *save = NULL, *env_copy, **merged_argv;
	int n = 0;

	if (env == NULL)
		env = "";
	env_copy = opts->env_words = strdup(env);
	merged_argv = opts->argv = calloc((size_t)argc + strlen(env) / 2 + 2,
	    sizeof(char *));
	if (env_copy == NULL || merged_argv == NULL)
		fatal(1, "memory");
	merged_argv[n++] = argv[0];
	for (word = strtok_r(env_copy, " \t\r\n\v\f", &save); word != NULL;
	    word = strtok_r(NULL, " \t\r\n\v\f", &save))
		merged_argv[n++] = word;
	for (int i = 1; i < argc; i++)
		merged_argv[n++] = argv[i];
	merged_argv[n] = NULL;
	*out_argc = n;
	return merged_argv;
}

static void
set_defaults(struct sim_options *opts)
{
	memset(opts, 0, sizeof(*opts));
	strcpy(opts->groups, "D");
	opts->delay_ns = NSEC_PER_SEC;
	opts->idle_power = DEFAULT_IDLE_POWER;
	opts->pattern = DEFAULT_PATTERN;
	opts->ncards = 2;
	opts->seed = 1;
	opts->workload = WORKLOAD_CYCLE;
}

/* Apply one option; false if it is not one of aiu-smi's own. */
static bool
apply_aiusmi_option(struct sim_options *opts, int c, const char *arg)
{
	switch (c) {
	case 's':
		opts->csv = true;
		break;
	case 'g':
		opts->groups[0] = '\0';
		parse_groups(opts, arg);
		break;
	case 'd':
		parse_delay(opts, arg);
		break;
	case 'i':
		opts->ids_arg = arg;
		break;
	case 'f':
		if (*arg == '\0')
			usage_error("--filename: empty");
		opts->filename = arg;
		break;
	case 'v':
		printf("aiu-smi-sim version %s (simulated aiu-smi)\n",
		    SIM_VERSION);
		exit(0);
	case OPT_MEM_DETAILS:
		opts->mem_details = true;
		break;
	case OPT_IDLE_POWER:
		opts->idle_power = parse_real("idle-power", arg);
		if (opts->idle_power < 0 || opts->idle_power >= SIM_PWR_MAX)
			fatalx(2, "--idle-power: %s W is outside 0..75 W", arg);
		break;
	case OPT_LLM_TYPE:
		opts->llm_type = arg;
		break;
	default:
		return false;
	}
	return true;
}

static void
apply_sim_option(struct sim_options *opts, int c, const char *arg)
{
	switch (c) {
	case OPT_CARDS:
		opts->ncards = (int)parse_count("cards", arg, 1, SIM_CARDS_MAX);
		break;
	case OPT_SEED:
		opts->seed = parse_count("seed", arg, 0, UINT64_MAX);
		break;
	case OPT_WORKLOAD:
		parse_workload(opts, arg);
		break;
	case OPT_WRITE_METRIC_FILES:
		opts->write_metric_files = true;
		break;
	case OPT_EXIT_AFTER:
		opts->exit_after = parse_count("exit-after", arg, 0, UINT64_MAX);
		opts->exit_after_set = true;
		break;
	case OPT_START:
		if (parse_time(arg, &opts->start_ns) == -1)
			usage_error("--start: '%s' is not ISO 8601 or epoch ns",
			    arg);
		opts->start_set = true;
		break;
	case OPT_HANG_AFTER:
		opts->hang_after = parse_count("hang-after", arg, 0, UINT64_MAX);
		opts->hang_after_set = true;
		break;
	case OPT_GARBAGE_EVERY:
		opts->garbage_every = parse_count("garbage-every", arg, 1,
		    UINT64_MAX);
		break;
	case OPT_HEADER_CHANGE_AFTER:
		opts->header_change_after = parse_count("header-change-after",
		    arg, 0, UINT64_MAX);
		opts->header_change_set = true;
		break;
	case OPT_MISSING_COLUMN_EVERY:
		opts->missing_column_every = parse_count("missing-column-every",
		    arg, 1, UINT64_MAX);
		break;
	case OPT_SPLIT_ROWS:
		opts->split_rows = true;
		break;
	case OPT_OVERLONG_EVERY:
		opts->overlong_every = parse_count("overlong-every", arg, 1,
		    UINT64_MAX);
		break;
	case OPT_STAMP_LOG:
		opts->stamp_log = arg;
		break;
	case OPT_STDERR_EVERY:
		opts->stderr_every = parse_count("stderr-every", arg, 1,
		    UINT64_MAX);
		break;
	case OPT_METRIC_FORMAT:
		parse_mformat(opts, arg);
		break;
	case OPT_OLD_FORMAT_CARDS:
		parse_card_list("old-format-cards", arg, opts->old_cards);
		break;
	case OPT_FILE_INTERVAL:
		opts->file_interval_ns = parse_seconds("file-interval", arg);
		break;
	case OPT_TEAR_EVERY:
		opts->tear_every = parse_count("tear-every", arg, 1, UINT64_MAX);
		break;
	case OPT_RECREATE_AFTER:
		opts->recreate_after = parse_count("recreate-after", arg, 1,
		    UINT64_MAX);
		opts->recreate_set = true;
		break;
	case OPT_FILE_LOG:
		opts->file_log = arg;
		break;
	case OPT_POWER_SCHEDULE:
		opts->power_schedule = arg;
		break;
	case OPT_POWER_LOG:
		opts->power_log = arg;
		break;
	case OPT_HELP:
		fputs(usage_text, stdout);
		fputs(usage_files, stdout);
		exit(0);
	default:
		fprintf(stderr, "Try 'aiu-smi-sim --help'.\n");
		exit(2);
	}
}

void
sim_options_parse(struct sim_options *opts, int argc, char **argv)
{
	char **av;
	int ac, c;

	set_defaults(opts);
	av = merge_env_options(opts, argc, argv, &ac);
	while ((c = getopt_long(ac, av, "sg:d:i:f:vh", long_options,
	    NULL)) != -1) {
		if (c == 'h')
			c = OPT_HELP;
		if (!apply_aiusmi_option(opts, c, optarg))
			apply_sim_option(opts, c, optarg);
	}
	/* Positional words keep their order, so the command line's is last. */
	if (optind < ac)
		opts->pattern = av[ac - 1];
	if (opts->mem_details && strchr(opts->groups, 'S') == NULL &&
	    strlen(opts->groups) + 1 < sizeof(opts->groups))
		strcat(opts->groups, "S");
	if (opts->file_interval_ns == 0)
		opts->file_interval_ns = opts->delay_ns;
	if (opts->delay_ns % opts->file_interval_ns != 0)
		fatalx(2, "--delay must be a multiple of --file-interval");
	if (opts->ids_arg != NULL)
		parse_ids(opts);
	else
		for (int i = 0; i < opts->ncards; i++)
			opts->selected[i] = true;
}

void
sim_options_free(struct sim_options *opts)
{
	free(opts->argv);
	free(opts->env_words);
	opts->argv = NULL;
	opts->env_words = NULL;
}

void
sim_bus_id(int card, char *buf, size_t len)
{
	snprintf(buf, len, "0000:%02x:00.0", 0x13 + card);
}

void
sim_metric_path(const char *pattern, int card, char *buf, size_t len)
{
	static const char token[] = "%BUSID";
	char bus[16];
	size_t n = 0;

	sim_bus_id(card, bus, sizeof(bus));
	buf[0] = '\0';
	while (*pattern != '\0' && n + 1 < len) {
		if (strncmp(pattern, token, sizeof(token) - 1) == 0) {
			n += (size_t)snprintf(buf + n, len - n, "%s", bus);
			pattern += sizeof(token) - 1;
		} else {
			buf[n++] = *pattern++;
			buf[n] = '\0';
		}
		if (n >= len)
			n = len - 1;
	}
}
