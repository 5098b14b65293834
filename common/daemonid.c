/* daemonid: a process's identity, and whether it still runs (daemonid.h). */
#include "daemonid.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void
daemonid_read_word(const char *path, char *buf, size_t len)
{
	FILE *fp = fopen(path, "re");

	buf[0] = '\0';
	if (fp == NULL)
		return;
	if (fgets(buf, (int)len, fp) == NULL)
		buf[0] = '\0';
	buf[strcspn(buf, " \t\r\n")] = '\0';
	fclose(fp);
}

int
daemonid_parse_stat(const char *line, int64_t *start_ticks)
{
	const char *p = strrchr(line, ')');
	char *end;
	long long v;

	if (p == NULL)
		return -1;
	p++;
	/* fields 3 (state) to 22 (starttime): skip 19 to reach the 20th */
	for (int field = 3; field < 22; field++) {
		while (*p == ' ')
			p++;
		if (*p == '\0')
			return -1;
		p += strcspn(p, " ");
	}
	while (*p == ' ')
		p++;
	errno = 0;
	v = strtoll(p, &end, 10);
	if (end == p || errno != 0 || v < 0 || (*end != ' ' && *end != '\0' &&
	    *end != '\n'))
		return -1;
	*start_ticks = v;
	return 0;
}

/*
 * The start time of process pid: 0, -1 with errno ENOENT if there is no
 * such process, or -1 with another errno if it cannot be read.
 */
static int
start_ticks_of(int32_t pid, int64_t *out)
{
	char path[64], line[1024];
	FILE *fp;
	bool ok;

	snprintf(path, sizeof(path), "/proc/%" PRId32 "/stat", pid);
	if ((fp = fopen(path, "re")) == NULL)
		return -1;
	ok = fgets(line, sizeof(line), fp) != NULL;
	fclose(fp);
	if (!ok || daemonid_parse_stat(line, out) == -1) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

void
daemonid_self(struct daemonid *out)
{
	struct stat sb;

	memset(out, 0, sizeof(*out));
	out->pid = (int32_t)getpid();
	if (start_ticks_of(out->pid, &out->start_ticks) == -1)
		out->start_ticks = 0;
	daemonid_read_word("/proc/sys/kernel/random/boot_id", out->boot_id,
	    sizeof(out->boot_id));
	if (stat("/proc/self/ns/pid", &sb) == 0)
		out->pidns = (uint64_t)sb.st_ino;
	if (gethostname(out->hostname, sizeof(out->hostname) - 1) == -1)
		out->hostname[0] = '\0';
	daemonid_read_word("/etc/machine-id", out->machine_id, sizeof(out->machine_id));
}

/* True if rec and here are known to be one host. */
static bool
same_host(const struct daemonid *rec, const struct daemonid *here)
{
	if (rec->machine_id[0] != '\0' && here->machine_id[0] != '\0')
		return strcmp(rec->machine_id, here->machine_id) == 0;
	/* without machine IDs (containers), the names must do */
	return rec->hostname[0] != '\0' &&
	    strcmp(rec->hostname, here->hostname) == 0;
}

enum daemonid_state
daemonid_check(const struct daemonid *rec, const struct daemonid *here,
    char *why, size_t len)
{
	int64_t ticks;

	why[0] = '\0';
	if (!same_host(rec, here)) {
		snprintf(why, len, "it runs on host %s, not this one",
		    rec->hostname[0] != '\0' ? rec->hostname : "(unnamed)");
		return DAEMONID_UNKNOWN;
	}
	if (rec->boot_id[0] == '\0' || here->boot_id[0] == '\0') {
		snprintf(why, len, "the boot ID is not known");
		return DAEMONID_UNKNOWN;
	}
	if (strcmp(rec->boot_id, here->boot_id) != 0) {
		snprintf(why, len, "the host has booted again since it ran");
		return DAEMONID_GONE;
	}
	if (rec->pidns != 0 && here->pidns != 0 && rec->pidns != here->pidns) {
		snprintf(why, len, "it runs in another PID namespace (a "
		    "container?)");
		return DAEMONID_UNKNOWN;
	}
	if (rec->pid <= 0) {
		snprintf(why, len, "no pid is recorded");
		return DAEMONID_UNKNOWN;
	}
	/* EPERM: it exists, another user's; /proc may still show its start */
	if (kill((pid_t)rec->pid, 0) == -1 && errno == ESRCH) {
		snprintf(why, len, "there is no process %" PRId32, rec->pid);
		return DAEMONID_GONE;
	}
	if (start_ticks_of(rec->pid, &ticks) == -1) {
		if (errno == ENOENT) {
			snprintf(why, len, "there is no process %" PRId32,
			    rec->pid);
			return DAEMONID_GONE;
		}
		/* /proc hidden (hidepid): the pid exists, which must do */
		return DAEMONID_ALIVE;
	}
	if (rec->start_ticks != 0 && ticks != rec->start_ticks) {
		snprintf(why, len, "pid %" PRId32 " is another process now",
		    rec->pid);
		return DAEMONID_GONE;
	}
	return DAEMONID_ALIVE;
}
