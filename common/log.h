/*
 * log: the one place every program of spyremon reports through.
 *
 * Under systemd (JOURNAL_STREAM names our stderr) messages go natively to
 * the journal, with PRIORITY and any structured fields the caller adds;
 * otherwise they go to stderr as "prog: message".  log_warn appends
 * strerror(errno); log_warnx does not.  fatal/fatalx log and exit with the
 * given code and never return.
 */
#ifndef SPYREMON_LOG_H
#define SPYREMON_LOG_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <syslog.h>

#define LOG_FMT(a, b) __attribute__((format(printf, a, b)))

/* Verbosity: 0 shows errors, warnings and notices; 1 adds info; 2 debug. */
void log_init(const char *progname, int verbosity);

/* Raise or lower the verbosity set by log_init. */
void log_set_verbosity(int verbosity);

/* True when messages go to the journal rather than stderr. */
bool log_to_journal(void);

/* errnum for log_at when no ": strerror" suffix is wanted. */
#define LOG_NOERR (-1)

/*
 * Log at syslog priority prio, adding ": strerror(errnum)" unless errnum is
 * LOG_NOERR.  fields is a NULL-terminated list of "KEY=value" journal
 * fields (may be NULL); on stderr the fields are dropped and only the
 * message is printed.
 */
void log_at(int prio, int errnum, const char *const *fields, const char *fmt,
    ...) LOG_FMT(4, 5);

/*
 * The usual entry points, by priority; the ones ending in x (and
 * log_notice, log_info, log_debug) leave errno out.
 */
#define log_warn(...)	log_at(LOG_WARNING, errno, NULL, __VA_ARGS__)
#define log_warnx(...)	log_at(LOG_WARNING, LOG_NOERR, NULL, __VA_ARGS__)
#define log_notice(...)	log_at(LOG_NOTICE, LOG_NOERR, NULL, __VA_ARGS__)
#define log_info(...)	log_at(LOG_INFO, LOG_NOERR, NULL, __VA_ARGS__)
#define log_debug(...)	log_at(LOG_DEBUG, LOG_NOERR, NULL, __VA_ARGS__)
#define log_fields(prio, fields, ...) \
	log_at((prio), LOG_NOERR, (fields), __VA_ARGS__)
#define fatal(code, ...) \
	(log_at(LOG_ERR, errno, NULL, __VA_ARGS__), exit(code))
#define fatalx(code, ...) \
	(log_at(LOG_ERR, LOG_NOERR, NULL, __VA_ARGS__), exit(code))

/*
 * A rate limit for repeated messages: at most burst messages per interval.
 * ratelimit_pass returns true if the caller may log now; when a new
 * interval begins after suppression, *suppressed receives the number of
 * messages dropped in the last one (else 0), so the caller can say so.
 */
struct ratelimit {
	uint64_t interval_ns;
	unsigned burst;
	uint64_t begin_ns;
	unsigned count;
	unsigned dropped;
};

#define RATELIMIT_INIT(interval_ns_, burst_) \
	{ .interval_ns = (interval_ns_), .burst = (burst_) }

bool ratelimit_pass(struct ratelimit *rl, uint64_t now_ns, unsigned *suppressed);

#endif
