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

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#define LOG_FMT(a, b) __attribute__((format(printf, a, b)))

/* Verbosity: 0 shows errors, warnings and notices; 1 adds info; 2 debug. */
void log_init(const char *progname, int verbosity);

/* Raise or lower the verbosity set by log_init. */
void log_set_verbosity(int verbosity);

/* True when messages go to the journal rather than stderr. */
bool log_to_journal(void);

void log_warn(const char *fmt, ...) LOG_FMT(1, 2);
void log_warnx(const char *fmt, ...) LOG_FMT(1, 2);
void log_notice(const char *fmt, ...) LOG_FMT(1, 2);
void log_info(const char *fmt, ...) LOG_FMT(1, 2);
void log_debug(const char *fmt, ...) LOG_FMT(1, 2);
_Noreturn void fatal(int code, const char *fmt, ...) LOG_FMT(2, 3);
_Noreturn void fatalx(int code, const char *fmt, ...) LOG_FMT(2, 3);

/*
 * Log at syslog priority prio with extra journal fields.  fields is a
 * NULL-terminated list of "KEY=value" strings (may be NULL); on stderr the
 * fields are dropped and only the message is printed.
 */
void log_fields(int prio, const char *const *fields, const char *fmt, ...)
	LOG_FMT(3, 4);

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
