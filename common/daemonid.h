/*
 * daemonid: who a process is, recorded so that another process can tell
 * later whether it still runs: its pid, its start time in clock ticks
 * after boot (field 22 of /proc/PID/stat, proc(5)), the boot ID
 * (/proc/sys/kernel/random/boot_id), its PID namespace (the inode of
 * /proc/self/ns/pid), the host name and the machine ID (machine-id(5)).
 * spyremond records its own in the database (table daemon of
 * spyremon-schema(5)); readers check it.
 *
 * A pid alone is not enough: pids are reused, and a pid recorded before a
 * reboot names nothing after it.  The start time tells a reused pid, the
 * boot ID a reboot.  A record from another host or PID namespace cannot be
 * checked at all, and the check says so rather than guess.
 */
#ifndef SPYREMON_DAEMONID_H
#define SPYREMON_DAEMONID_H

#include <stddef.h>
#include <stdint.h>

struct daemonid {
	int32_t pid;
	int64_t start_ticks;	/* 0: unknown */
	char boot_id[40];	/* "": unknown */
	uint64_t pidns;		/* 0: unknown */
	char hostname[256];
	char machine_id[64];	/* "": none (a container without one) */
};

enum daemonid_state {
	DAEMONID_ALIVE,		/* the very process runs */
	DAEMONID_GONE,		/* it does not: exited, killed, or rebooted */
	DAEMONID_UNKNOWN,	/* cannot be checked from here */
};

/*
 * The first word of path's first line (a boot ID, a machine ID) into buf;
 * "" when it cannot be read.
 */
void daemonid_read_word(const char *path, char *buf, size_t len);

/* The calling process's identity; fields that cannot be read are unknown. */
void daemonid_self(struct daemonid *out);

/*
 * The start time (field 22) of a /proc/PID/stat line: 0, or -1 if the
 * line is malformed.  The command name in parentheses may hold anything,
 * parentheses and spaces too; the last ')' ends it.
 */
int daemonid_parse_stat(const char *line, int64_t *start_ticks);

/*
 * Whether the process rec names still runs, judged from here (the
 * caller's own identity, daemonid_self).  For GONE and UNKNOWN, why (len
 * bytes) says why as a sentence fragment ("the host has booted again
 * since it ran", "it runs on host h2, not this one").
 */
enum daemonid_state daemonid_check(const struct daemonid *rec,
    const struct daemonid *here, char *why, size_t len);

#endif
