/*
 * dynoreq: a trace request handed to dynolog, for when dynolog holds
 * Kineto's socket name and so answers the processes' polls itself.
 *
 * dynolog takes requests on TCP (port DYNOREQ_PORT, as "dyno gputrace"
 * sends them): a message is a native-endian int32_t length and that many
 * bytes of JSON, the reply likewise.  The request:
 *   {"fn":"setKinetOnDemandRequest","config":"<Kineto config text>",
 *    "job_id":J,"pids":[P,...],"process_limit":N}
 * and the reply lists "processesMatched" (the processes dynolog knows
 * whose pids include one of P), "activityProfilersTriggered" (those given
 * the config; each takes it at its next poll) and "activityProfilersBusy".
 * dynolog appends its own REQUEST_TRACE_ID to each process's config.
 */
#ifndef SPYREMON_DYNOREQ_H
#define SPYREMON_DYNOREQ_H

#include <stddef.h>
#include <stdint.h>

#define DYNOREQ_PORT		1778
#define DYNOREQ_TIMEOUT_MS	5000	/* connecting, sending, the reply */
#define DYNOREQ_MAX_REPLY	(1 << 20)
#define DYNOREQ_MAX_PIDS	256

struct dynoreq_result {
	int32_t	 matched[DYNOREQ_MAX_PIDS];
	size_t	 nmatched;
	int32_t	 triggered[DYNOREQ_MAX_PIDS];
	size_t	 ntriggered;
	int64_t	 busy;
};

/*
 * Send config for pid (and the processes it started) to dynolog on
 * 127.0.0.1:port, with job id jobid and at most limit processes.
 * 0 with *res filled, or -1 after saying why ("cannot connect", no
 * answer within DYNOREQ_TIMEOUT_MS, a reply that is not what dynolog
 * sends).
 */
int dynoreq_send(int port, const char *config, int64_t jobid, int32_t pid,
    int limit, struct dynoreq_result *res);

#endif
