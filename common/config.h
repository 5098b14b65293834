/*
 * config: spyremond.yaml, parsed with libyaml against a table of keys.
 * The daemon runs by it; the client reads it to find the socket and database.
 *
 * Every key has a default and a type- and range-check; unknown keys are
 * errors.  All errors are collected, not just the first, each as
 * "file:line:col: message" followed by the offending line and a caret.
 * A config is only ever produced whole: on any error, no config is returned,
 * so a reload can keep the old one.
 */
#ifndef SPYREMON_CONFIG_H
#define SPYREMON_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CONFIG_DEFAULT_PATH "/etc/spyremond/spyremond.yaml"

/* source.direct: whether the daemon reads new-format metric files itself. */
enum config_direct {
	CONFIG_DIRECT_AUTO,	/* where a card's file is in the new format */
	CONFIG_DIRECT_ON,	/* the same, and say so loudly where it is not */
	CONFIG_DIRECT_OFF,	/* aiu-smi alone, as before */
};

/* "auto", "on" or "off". */
const char *config_direct_name(enum config_direct d);

/* on_damaged_database: a database whose write-ahead log is damaged. */
enum config_on_damage {
	CONFIG_DAMAGE_KEEP_ASIDE,	/* copy the originals aside, start */
	CONFIG_DAMAGE_REFUSE,		/* touch nothing, exit */
};

/* "keep-aside-and-start" or "refuse". */
const char *config_on_damage_name(enum config_on_damage d);

struct config {
	char *path;			/* file (or name) it came from; NULL for built-in defaults */
	char *database;			/* default /var/lib/spyremond/spyremon.db */
	char *socket;			/* default /run/spyremond/control.sock */
	uint64_t flush_interval_ns;	/* default 1s; 10ms..60s */
	char *sysfs_root;		/* default /sys */
	enum config_on_damage on_damaged_database; /* default keep-aside-and-start */
	uint64_t checkpoint_interval_ns;	/* default 10s; 1s..1h */
	struct {
		char **argv;		/* command: NULL-terminated, argc >= 1 */
		int argc;		/* default {"aiu-smi"} */
		uint64_t interval_ns;	/* default 1s; 10ms..60s */
		uint64_t window_interval_ns; /* default 100ms; 10ms..60s */
		char groups[8];		/* default "A"; letters of DRMUPSA, no repeats */
		bool all_devices;	/* default true */
		int *devices;		/* when !all_devices: distinct IDs 0..255 in the
					   order given, ndevices >= 1; else NULL */
		size_t ndevices;
		char *metric_files;	/* default "/tmp/metrics.%BUSID" */
		uint64_t pre_window_ns;	/* default 10s; 0..60s: fine-rate ring kept before a window opens */
		enum config_direct direct; /* default off; auto reads new-format metric files */
	} source;
	struct {
		uint64_t max_open_ns;	/* default 24h; 1m..30d: longer-open windows are closed */
		uint64_t idle_lookback_ns; /* default 1h; 0..30d: idle power learned over it */
		uint64_t max_open_per_uid;	/* default 256; 1..4096 */
		uint64_t max_ending_per_uid;	/* default 64; 1..4096: ended, not
						   yet stored (complete) */
	} windows;
	struct {
		uint64_t max_age_ns;		/* default 7d; >= 1h */
		uint64_t max_size;		/* default 1GiB; >= 1MiB */
		uint64_t windows_max_age_ns;	/* default 90d; >= max_age */
	} retention;
};

/*
 * Errors collected by config_load; each msg is complete and may span lines:
 * "file:line:col: key: message", the offending line, and a caret under the
 * column (lines and columns from 1, columns in characters).  Errors about
 * the whole file are one line, "file: message".
 */
struct config_errors {
	char **msgs;
	size_t n;
};

/* A config holding every default; never fails except on ENOMEM (then NULL). */
struct config *config_defaults(void);

/*
 * Parse path.  On success returns 0 and *out is a new config the caller
 * frees.  On failure returns -1, *out is NULL and errs holds every error
 * (a file that cannot be opened is one error naming the file and errno).
 * A file over 1 MiB is refused.  errs is overwritten on entry, not
 * freed, and is empty on success; after 100 errors the rest are counted
 * in one last message instead.  Out of memory fails with whatever errors
 * could be recorded, normally "file: out of memory".
 */
int config_load(const char *path, struct config **out, struct config_errors *errs);

/*
 * config_load of path, or of CONFIG_DEFAULT_PATH when path is NULL; a
 * missing default file is no error but the built-in defaults, and then
 * *defaulted is true.  Same contract as config_load otherwise.
 */
int config_load_default(const char *path, struct config **out,
    struct config_errors *errs, bool *defaulted);

/*
 * Parse YAML from a memory buffer, naming it `name` in errors.  Same
 * contract as config_load.  Used by config_load and by tests.
 */
int config_parse(const char *name, const char *text, size_t len,
    struct config **out, struct config_errors *errs);

/*
 * Print the effective config, every key, as YAML that config_load accepts
 * and that reads back to the same config.
 */
void config_print(const struct config *cfg, FILE *fp);

/*
 * True if the child must be restarted to go from a to b: its command line
 * would differ in the command's argv, groups, the set of devices (their
 * order does not matter) or metric_files.  The interval, though also on
 * the child's command line (-d), is left out: the daemon applies interval
 * changes itself (source_set_interval).  window_interval is left out too.
 */
bool config_source_differs(const struct config *a, const struct config *b);

/* NULL is a no-op. */
void config_free(struct config *cfg);

/* Free every message and leave errs empty, ready for reuse; NULL is a no-op. */
void config_errors_free(struct config_errors *errs);

#endif
