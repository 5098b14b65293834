/*
 * writer_priv: what the writer thread's two files share (writer.c: the
 * thread, rows, status and a recreated database; writer_jobs.c: the queue of
 * other changes).  Not for the rest of the store: it reaches the thread
 * through the writer_* calls of store_priv.h.
 */
#ifndef SPYREMON_WRITER_PRIV_H
#define SPYREMON_WRITER_PRIV_H

#include "store_priv.h"

#include "clocksync.h"
#include "inventory.h"

#define ENDED_KEPT		64	/* ended windows remembered for messages */

enum job_kind {
	JOB_WINDOW_BEGIN, JOB_WINDOW_END, JOB_DELETE_AFTER, JOB_DEVICE_MAP,
	JOB_CARD, JOB_WINDOW_RESTARTS, JOB_SMI_VERSION,
};

struct job {
	struct job *next;
	enum job_kind kind;
	struct store_window win;	/* WINDOW_BEGIN (all), WINDOW_END (id, end_ns), RESTARTS (id) */
	struct clocksync clock;		/* WINDOW_BEGIN, WINDOW_END: known or not */
	enum store_ended_by by;		/* WINDOW_END */
	unsigned restarts;		/* WINDOW_RESTARTS */
	int device, src;		/* DELETE_AFTER (both), DEVICE_MAP */
	int64_t ns;			/* DELETE_AFTER: after; DEVICE_MAP, CARD, SMI_VERSION: since */
	char *metric_file, *bus_id;	/* DEVICE_MAP */
	char *version;			/* SMI_VERSION */
	struct card card;		/* CARD */
};

/* An open window as stored: what a recreated database must get back. */
struct open_win {
	struct store_window win;
	struct clocksync clock;		/* at its begin */
	unsigned restarts;
};

struct writer {
	pthread_t th;
	pthread_cond_t cv;		/* with st->mu: work for the thread */
	bool stop, flush_req, have_ret;
	bool summarize_req;		/* summarize the windows due, then clear */
	int64_t settle_ns, idle_lookback_ns;	/* of the last summarize_req */
	struct job *head, *tail;	/* queued, not yet run */
	bool jobs_failed;		/* the last attempt failed: wait for a flush */
	size_t njobs;
	struct store_retention ret;
	uint64_t next_retention_ns;	/* monotonic */
	struct rowring spare;		/* an empty ring, handed to the loop at a take */
	struct writer_ops ops;

	/* under st->mu, for status */
	uint64_t busy_since_ns;		/* monotonic start of the running write, 0 idle */
	uint64_t failing_since_ns;	/* first failure of the current run of them, 0 none */
	char why[128];			/* the last failure */
	uint64_t recreated;
	int64_t next_window_id;
	char **unreliable;
	size_t nunreliable;
	struct store_window ended[ENDED_KEPT];	/* tag, end_ns, auto_closed */
	size_t nended;

	/* the thread's own: what a recreated database must get back */
	struct open_win *open;		/* windows whose begin was stored */
	size_t nopen;
	struct job **maps;		/* the newest DEVICE_MAP job per device */
	size_t nmaps;
	struct job **cards;		/* the newest CARD job per bus ID */
	size_t ncards;
	struct job *version;		/* the newest SMI_VERSION job, or NULL */
};

/* Free n windows' strings and the array; NULL is a no-op. */
void writer_windows_free(struct store_window *w, size_t n);

/* Free n strings and the array; NULL is a no-op. */
void writer_strings_free(char **s, size_t n);

/* Free a job and its strings; NULL is a no-op. */
void writer_job_free(struct job *j);

/* Keep j (run) as the newest of its device or card in list; true if kept. */
bool writer_job_remember(struct job ***list, size_t *n, struct job *j);

/* Free n open windows and the array; NULL is a no-op. */
void writer_open_free(struct open_win *o, size_t n);

/* Run job j on the connection (dbmu held); 0, or -1 to retry it later. */
int writer_job_run(struct store *st, struct job *j);

#endif
