/*
 * capture: "spyremon capture --pid PID": a running PyTorch job's profiler
 * trace taken on demand, through Kineto's daemon socket (kipc.h) or
 * dynolog (dynoreq.h), with a window on spyremond over the traced span
 * and the cards' telemetry merged into the trace (capout.c, which runs
 * export and report as their commands do).
 *
 * What capture.c (the command line and the outcome), caploop.c (serving
 * the polls and waiting for the traces) and capout.c (the output
 * directory) share.
 */
#ifndef SPYREMON_CAPTURE_H
#define SPYREMON_CAPTURE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "capserve.h"
#include "client.h"
#include "kipc.h"

/*
 * Exit statuses of capture beyond client.h's (0 to 6; 7 is the readers'
 * "incomplete").  Each failure says why on stderr.
 */
#define CAPTURE_EXIT_NO_PROCESS	8	/* no such process */
#define CAPTURE_EXIT_NOT_YOURS	9	/* another user's, and the caller is not root */
#define CAPTURE_EXIT_NO_POLL	10	/* no process of it polled: no KINETO_USE_DAEMON? */
#define CAPTURE_EXIT_REFUSED	11	/* it refused the request, or stayed busy */
#define CAPTURE_EXIT_NO_TRACE	12	/* it took the request, but no trace appeared */
#define CAPTURE_EXIT_NOT_TARGET	13	/* dynolog answered for a process not of PID */

#define CAPTURE_DEFAULT_DURATION_NS	(2LL * 1000000000LL)
#define CAPTURE_DEFAULT_MAX_PROCS	32
#define CAPTURE_KINETO_INTERVAL_S	5	/* Kineto's default poll interval */
/* By iterations, how long a request may wait for a step, unless --wait. */
#define CAPTURE_STEP_WAIT_NS		(60LL * 1000000000LL)
#define CAPTURE_META_MAX		8	/* pairs capture records */
#define CAPTURE_STOP_TIMEOUT_NS	(600LL * 1000000000LL)	/* --stop-timeout */
#define CAPTURE_PROMPT_TOKENS	32	/* --prompt-tokens */
#define CAPTURE_OUTPUT_TOKENS	64	/* --output-tokens */
#define CAPTURE_LOAD_TIMEOUT_NS	(60LL * 1000000000LL)	/* --load-timeout */

/* A trace asked of one process, and where it was found. */
struct captrace {
	int32_t	 pid;
	uid_t	 uid;
	char	 request[PATH_MAX];	/* ACTIVITIES_LOG_FILE of its request */
	char	 asked[PATH_MAX];	/* the file that makes: _PID inserted */
	char	 fallback[PATH_MAX];	/* Kineto's default, if it refused that path */
	int	 fd;			/* the trace, open once found; -1 before */
	char	 found[PATH_MAX];	/* where it was found */
	bool	 at_fallback;
	bool	 keep;			/* copied, not moved: a vLLM server's
					   profiler folder keeps its traces */
	/* set by capout_add_trace */
	char	 name[NAME_MAX + 1];	/* its name in the output directory */
	bool	 has_span;
	bool	 gz;			/* name ends in .gz */
	int64_t	 start_ns, end_ns;
};

struct capture {
	struct client *cl;
	/* the command line */
	pid_t	 pid;
	bool	 by_iterations;
	int64_t	 duration_ns;
	long	 iterations;
	const char *tag;
	const char *output;
	bool	 report;
	int64_t	 wait_ns;
	bool	 wait_given;
	int64_t	 warmup_ns;
	const char *socket_dir;		/* NULL: abstract */
	char	 socket_dir_buf[PATH_MAX];	/* the job's, when socket_dir points here */
	int	 max_procs;
	int	 dynolog_port;
	const char *vllm_url;		/* --vllm: a vLLM server, not --pid */
	const char *profiler_dir;	/* its VLLM_TORCH_PROFILER_DIR */
	int64_t	 stop_timeout_ns;	/* for its stop_profile's answer */
	long	 load_n;		/* --load: completions to send; 0: none */
	long	 prompt_tokens, output_tokens;
	int	 concurrency;
	const char *model;		/* NULL: the server's first */
	int64_t	 load_timeout_ns;	/* per request */
	/* what is known of the process */
	uid_t	 uid;
	int64_t	 interval_ns;		/* how often it polls */
	size_t	 expected;		/* processes with KINETO_USE_DAEMON set */
	size_t	 env_unread;		/* processes whose environment is unreadable */
	int64_t	 jobid;
	char	 trace_id[40];
	char	 base[64];		/* the trace file's name, before _PID */
	char	 host[256];
	/* the window */
	bool	 telemetry;		/* spyremond answered */
	int	 telemetry_rc;		/* why not, when it did not */
	int64_t	 window_id;		/* 0: none */
	int64_t	 window_begin_ns, window_end_ns;
	const char *meta[2 * CAPTURE_META_MAX];
	size_t	 nmeta;
	/* the work */
	struct kipc sock;
	bool	 via_dynolog;
	struct capserve serve;
	struct captrace traces[CAPSERVE_MAX_PROCS];
	size_t	 ntraces;
	bool	 tty;			/* progress on stderr */
	char	 tmp[PATH_MAX];		/* the output being written */
	bool	 published;		/* renamed to --output */
};

/*
 * Serve the polls on c->sock, or hand the request to dynolog, and wait
 * until every trace asked for is there or given up.  CLIENT_EXIT_OK once
 * a process took the request (the traces' fate is in c->serve), else
 * CAPTURE_EXIT_NO_POLL, CAPTURE_EXIT_REFUSED, CAPTURE_EXIT_NOT_TARGET
 * (dynolog named a process not of c->pid: no window is opened) or another
 * status, after saying why.  Opens the window (c->window_id) at the first request.
 * SIGINT, SIGTERM and SIGHUP end it (CLIENT_EXIT_FAILED, after naming
 * the traces the processes may still write).
 */
int caploop_run(struct capture *c);

/*
 * capture --vllm: check the server, open the window with its counters,
 * start_profile, wait c->duration_ns (or, with c->load_n, run the load
 * of completions: any failure is CLIENT_EXIT_FAILED), stop_profile (within
 * c->stop_timeout_ns), end the window keeping the counters again, and
 * write the traces the server wrote in c->profiler_dir during the window
 * with the cards' telemetry merged (capout).  An exit status, after
 * saying why; no window is left open.
 */
int capvllm_run(struct capture *c);

/*
 * The folder process pid is asked to write its trace in, with a trailing
 * '/', as it spells it: its KINETO_ONDEMAND_TRACE_DIR, else /tmp/.
 */
void caploop_trace_dir(int32_t pid, char *dir, size_t len);

/*
 * The output: copy each found trace into c->tmp (capout_add_trace, its
 * span read), then with a window the merged traces and steps.csv
 * (capout_telemetry), rename it to --output (capout_publish), then with
 * --report write the report into it (capout_report); capout_list prints
 * what is there.  Each returns an exit status after saying why.
 */
int capout_add_trace(struct capture *c, struct captrace *t);
int capout_telemetry(struct capture *c);
int capout_publish(struct capture *c);
int capout_report(struct capture *c);
void capout_list(const struct capture *c);

#endif
