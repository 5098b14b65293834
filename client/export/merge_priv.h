/*
 * merge_priv: the pieces of a merge (merge.h) that merge.c, which copies
 * the trace through, and merge_events.c, which writes the new events,
 * share; and the pure functions under them, for the unit tests.
 */
#ifndef SPYREMON_MERGE_PRIV_H
#define SPYREMON_MERGE_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "db.h"
#include "merge.h"

/*
 * The cards' pids stay at or below this: Kineto's pids are 32-bit, and
 * Perfetto takes a pid above UINT32_MAX as none at all.
 */
#define MERGE_PID_MAX		INT32_MAX

/*
 * The cards' process_sort_index: above every index Kineto writes (a
 * process's pid, below 2^22; a device's 0x1000000 + id; 0x20000000 for
 * "Spans"), so chrome://tracing lists the cards after the trace's own
 * processes.
 */
#define MERGE_SORT_INDEX	0x40000000

/* Room for merge_fmt_us: a sign, 19 digits, a point and a NUL. */
#define MERGE_US_BUFLEN		24
/* Room for merge_fmt_us_prec: six more fraction digits. */
#define MERGE_US_PREC_BUFLEN	(MERGE_US_BUFLEN + 6)

/*
 * Where the new events go: put writes n bytes of text and returns 0, or
 * -1 after printing why (the writer then stops).
 */
typedef int (*merge_put_fn)(void *arg, const char *p, size_t n);

/* A member's value in an object's text: p[0..n) as written; p NULL if absent. */
struct merge_json_value {
	const char *p;
	size_t	 n;
};

/*
 * The values of the top-level members keys[0..nkeys) of the JSON object
 * whose text is s[0..n), in out (the last of a repeated key): 0, or -1 if
 * the text is not an object.  Strings and nesting are skipped, not
 * checked: s must be JSON the trace reader has accepted.  Key names are
 * compared as written, so keys with escapes never match.
 */
int merge_json_scan(const char *s, size_t n, const char *const *keys,
    size_t nkeys, struct merge_json_value *out);

/*
 * The output of a combined merge (combine.c), written as merge_write
 * writes its own: whole or not at all, gzip for a name ending in ".gz".
 * open returns NULL after printing why; put is a merge_put_fn with the
 * sink as its arg; close finishes on rc == CLIENT_EXIT_OK (else removes
 * the output), frees the sink and returns rc or the failure.
 */
struct merge_sink;
struct merge_sink *merge_sink_open(const char *path);
int merge_sink_put(void *arg, const char *p, size_t n);
int merge_sink_close(struct merge_sink *s, int rc);

/*
 * Write the new events (merge.h) through put, each but the first preceded
 * by ",\n" and the first by "\n"; *st says what was written (st->events
 * counts them).  Nothing is written when no sample falls in the trace's
 * span.  Returns a CLIENT_EXIT_* after printing any error.
 */
int merge_events_write(sqlite3 *db, const struct merge_request *rq,
    merge_put_fn put, void *arg, struct merge_stats *st);

/* The text of one new event, grown as needed (merge_buf.c). */
struct merge_buf {
	char	*p;
	size_t	 len, cap;
};

/* Append p[0..n), or printf's text, or s as a JSON string; dies when out of memory. */
void merge_buf_add(struct merge_buf *b, const char *p, size_t n);
void merge_buf_fmt(struct merge_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void merge_buf_json(struct merge_buf *b, const char *s);

/*
 * Append own_ns in µs as the merged trace writes times (merge.h): whole
 * µs, the nearest, where the original's are integers, else with its
 * decimals.
 */
void merge_buf_us(struct merge_buf *b, const struct merge_request *rq,
    int64_t own_ns);

/*
 * Start b anew with an M event named name (a plain word) on pid and tid,
 * with the trace's first ts where rq->metadata_ts says so; its args and
 * closing '}' are the caller's.
 */
void merge_buf_meta(struct merge_buf *b, const struct merge_request *rq,
    const char *name, int64_t pid, int64_t tid);

/*
 * Write b's event through put as merge_events_write writes its own ("\n"
 * before the merge's first, ",\n" before each other) and count it in
 * st->events: 0, or -1 after put printed why.
 */
int merge_buf_put(struct merge_buf *b, merge_put_fn put, void *arg,
    struct merge_stats *st);

/*
 * ns as decimal µs with exactly three fraction digits, by integer
 * arithmetic: 1500 gives "1.500", -1 gives "-0.001".  buf holds at least
 * MERGE_US_BUFLEN bytes; returns the length written.
 */
size_t merge_fmt_us(int64_t ns, char *buf);

/*
 * ns as decimal µs with exactly decimals (0..9) fraction digits: to fewer
 * than three rounded to the nearest, a half up (toward +inf), to more
 * padded with zeros; with 0 an integer, without a point.  buf holds
 * MERGE_US_PREC_BUFLEN bytes; returns the length written.
 */
size_t merge_fmt_us_prec(int64_t ns, int decimals, char *buf);

/* The decimals the merged trace writes its times with (0: whole µs). */
int merge_decimals(const struct merge_request *rq);

/* t (ns) rounded to what merge_fmt_us_prec writes with decimals. */
int64_t merge_round_ns(int64_t t, int decimals);

/*
 * The first of ncards consecutive pids that no integer pid of the trace
 * uses: one above the highest (has_max_pid), but at least 1.  Returns 0,
 * or -1 if the last would pass MERGE_PID_MAX.
 */
int merge_first_pid(bool has_max_pid, int64_t max_pid, size_t ncards,
    int64_t *first);

/*
 * The args key of m's counter events.  Perfetto names a counter track
 * "<event name> <args key>", so with the metric's key as the event's name
 * this key is the rest of the track's name: "(W)", "(MiB, unreliable)"
 * for an unreliable metric, "(unreliable)" without a unit, and "value"
 * for a reliable metric without a unit, which has nothing else to say.
 */
void merge_series_key(const struct db_metric *m, char *buf, size_t len);

/*
 * A card's process name: "Spyre 0 · 0000:13:00.0", or "Spyre 0" without
 * a bus ID.
 */
void merge_card_name(int device, const char *bus_id, char *buf, size_t len);

#endif
