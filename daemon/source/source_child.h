/*
 * source_child: the aiu-smi process (spawn, output, exit, restart, and
 * its "-v" version query).  Above source_rows.h and source_base.h.
 */
#ifndef SPYREMON_SOURCE_CHILD_H
#define SPYREMON_SOURCE_CHILD_H

#include <stdint.h>

struct source;

/* Start the child now; on failure, schedule a retry after the back-off. */
void source_spawn(struct source *src);

/* Ask the child to go (SIGTERM, SIGKILL after a grace); its exit follows. */
void source_kill(struct source *src, const char *why);

/* Start the child after delay_ns. */
void source_schedule_restart(struct source *src, uint64_t delay_ns);

/* Arm the silence check; -1 if the timer cannot be set up. */
int source_watch_silence(struct source *src);

/*
 * Stop the child synchronously: SIGTERM, SIGKILL after grace_ns, reading
 * its output meanwhile, then reap it.  No restart follows.
 */
void source_stop_child(struct source *src, uint64_t grace_ns);

/* Kill and reap a running "aiu-smi -v" (source_spawn starts one). */
void source_stop_version(struct source *src);

#endif
