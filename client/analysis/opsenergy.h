/*
 * opsenergy: the energy of each operator (device event name) of a
 * profiled run, per card, from the stored samples and the trace
 * (attrib.h for the sharing and its bound, devevents.h for which events
 * are the devices'), for "spyremon export --ops" and the commands that
 * will show it too.
 *
 * The span is the trace's, placed on the samples' clock by the caller
 * (export's target.h).  The trace's events come from the read that found
 * its span (ops_events, below), or a read of their own, through the
 * streaming reader; each card's samples overlapping the span are
 * read through db_select_samples (the best-source rule), with those just
 * outside it as neighbours for the bound; each card's idle power is the
 * one its summary learns (summary.h: the median power of its samples
 * with busy 0 in the look-back before the span), learned before the
 * sharing, whose idle time takes it.
 *
 * Functions returning int give CLIENT_EXIT_OK, or another CLIENT_EXIT_*
 * after printing why (naming the trace).
 */
#ifndef SPYREMON_OPSENERGY_H
#define SPYREMON_OPSENERGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "attrib.h"
#include "db.h"
#include "devcounter.h"
#include "devevents.h"
#include "energy.h"
#include "trace.h"

/* An operator: the events of one name. */
struct ops_name {
	char	*name;
	enum ops_category category;	/* of its first event */
};

struct ops_card {
	int	 device;
	struct attrib_card a;		/* a.ops[i] is names[i] on this card */
	bool	 has_idle_w;
	double	 idle_w;		/* the idle power learned */
	bool	 has_energy;
	char	 energy_j[ENERGY_BUFLEN];	/* the span's, exactly (energy.h) */
	double	 closure;		/* |ops + idle - energy_j| / energy_j */
	uint64_t events;		/* its device events in the span */
	/*
	 * The card's charge counter, where two or more of its device
	 * events carry one (devcounter.h): the fit (no scale without an
	 * interval in it), and per operator the energy and the calls of the
	 * intervals in it.
	 */
	bool	 has_counter;
	struct devcounter_fit fit;
	double	*counter_j;		/* NULL without readings */
	uint64_t *counter_calls;
	/*
	 * With rq->keep_events: its device events (kept), sorted by
	 * start, and each one's energy; else NULL and 0.
	 */
	struct attrib_event *kept;
	double	*event_j;
	size_t	 nkept;
};

struct ops_result {
	int64_t	 span_lo, span_hi;
	struct ops_name *names;		/* in the order first met */
	size_t	 nnames;
	struct ops_card *cards;		/* by device */
	size_t	 ncards;
	uint64_t device_events, host_events;
	uint64_t no_card;		/* device events with no pid or device */
	uint64_t unpaired;		/* B/E device events without their other half */
	uint64_t unsampled;		/* device events on cards with no samples */
	int64_t	 unsampled_card;	/* the first such card */
	size_t	 unsampled_cards;	/* how many */
	uint64_t bad_values;		/* stored power values out of range */
};

/*
 * A trace's device events (and host events if asked), gathered while
 * another reader reads it, for ops_load to share without reading the
 * trace again: trace_options' on_event = ops_events_on_event, arg = the
 * collector.  They are kept on the trace's own clock and placed by
 * ops_load (ops_request.events), which takes them over.
 */
struct ops_events;

/* An empty collector; host: keep the host events (host-only time). */
struct ops_events *ops_events_new(bool host);

/* trace_options.on_event of a collector. */
void ops_events_on_event(const struct trace_event *ev, void *arg);

/* Free c and what it still holds; NULL is nothing. */
void ops_events_free(struct ops_events *c);

struct ops_request {
	const char *path;		/* the trace */
	const struct trace_info *info;	/* its first reading */
	int64_t	 shift_ns;		/* absolute ns = own ns + shift_ns */
	int64_t	 span_lo, span_hi;	/* absolute */
	/* the trace's time across steps of the host clock (dbread.h): each
	 * epoch's samples shifted into it; NULL: the stamps are its times */
	const struct db_trace_clock *clock;
	const char *step_pattern;	/* NULL: the default */
	const struct db_catalog *cat;
	const char *device_sql;		/* "" or " AND device IN (...)" */
	int64_t	 idle_lookback_ns;
	bool	 none_ok;		/* no device event: an empty result, no error */
	double	 max_w;			/* a card's maximum power; 0: ATTRIB_MAX_W */
	bool	 keep_events;		/* each card's events and their energy */
	/* NULL: read the trace at path; else its events, gathered (taken) */
	struct ops_events *events;
};

/*
 * Read the trace's events and db's samples and share each card's energy
 * over the span: *out (free with ops_result_free, also on failure).  A
 * trace without device events is an error that says what they are, or
 * with rq->none_ok a result with no card and device_events 0.
 */
int ops_load(sqlite3 *db, const struct ops_request *rq,
    struct ops_result *out);

void ops_result_free(struct ops_result *r);

#endif
