/* log: stderr or native journal logging, and a small rate limiter. */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <systemd/sd-journal.h>

static const char *log_progname = "spyremon";
static int log_verbosity;
static bool log_journal;

/* JOURNAL_STREAM is "dev:ino" of the stream systemd connected to stderr. */
static bool
stderr_is_journal(void)
{
	const char *e = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (e == NULL || sscanf(e, "%llu:%llu", &dev, &ino) != 2)
		return false;
	if (fstat(STDERR_FILENO, &st) == -1)
		return false;
	return st.st_dev == (dev_t)dev && st.st_ino == (ino_t)ino;
}

void
log_init(const char *progname, int verbosity)
{
	log_progname = progname;
	log_verbosity = verbosity;
	log_journal = stderr_is_journal();
}

void
log_set_verbosity(int verbosity)
{
	log_verbosity = verbosity;
}

bool
log_to_journal(void)
{
	return log_journal;
}

static bool
log_enabled(int prio)
{
	if (prio <= LOG_NOTICE)
		return true;
	if (prio == LOG_INFO)
		return log_verbosity >= 1;
	return log_verbosity >= 2;
}

static void
log_emit(int prio, const char *const *fields, const char *msg)
{
	if (log_journal) {
		struct iovec iov[16];
		char pbuf[16], *mbuf;
		size_t n = 0;

		if (asprintf(&mbuf, "MESSAGE=%s", msg) == -1)
			return;
		snprintf(pbuf, sizeof(pbuf), "PRIORITY=%d", prio);
		iov[n].iov_base = mbuf;
		iov[n++].iov_len = strlen(mbuf);
		iov[n].iov_base = pbuf;
		iov[n++].iov_len = strlen(pbuf);
		for (; fields != NULL && *fields != NULL && n < 16; fields++) {
			iov[n].iov_base = (void *)(uintptr_t)*fields;
			iov[n++].iov_len = strlen(*fields);
		}
		sd_journal_sendv(iov, (int)n);
		free(mbuf);
		return;
	}
	fprintf(stderr, "%s: %s\n", log_progname, msg);
}

void
log_at(int prio, int errnum, const char *const *fields, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;
	int n;

	if (!log_enabled(prio))
		return;
	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (errnum != LOG_NOERR && n >= 0 && (size_t)n < sizeof(msg))
		snprintf(msg + n, sizeof(msg) - (size_t)n, ": %s",
		    strerror(errnum));
	log_emit(prio, fields, msg);
}

bool
ratelimit_pass(struct ratelimit *rl, uint64_t now_ns, unsigned *suppressed)
{
	if (suppressed != NULL)
		*suppressed = 0;
	if (rl->begin_ns == 0 || now_ns - rl->begin_ns >= rl->interval_ns) {
		if (suppressed != NULL)
			*suppressed = rl->dropped;
		rl->begin_ns = now_ns;
		rl->count = 0;
		rl->dropped = 0;
	}
	if (rl->count < rl->burst) {
		rl->count++;
		return true;
	}
	rl->dropped++;
	return false;
}
