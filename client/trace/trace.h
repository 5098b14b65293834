/*
 * trace: a streaming reader of PyTorch profiler traces (Chrome Trace
 * Event Format JSON, plain or gzip-compressed).
 *
 * The reader never holds the document: yajl's callback parser sees the
 * bytes in chunks, and per event only the few members that matter (ph, ts,
 * dur, name, cat, pid) are kept, with the name cut at TRACE_NAME_MAX.
 * What it gathers is bounded too (steps, devices, pids; see the limits
 * below), so memory stays flat whatever the trace's size.
 *
 * Time rules (SPYRE.md, "Profiler traces and time"):
 *  - ts and dur are decimal microseconds, read as text into integer ns:
 *    three fraction digits are kept exactly, more are rounded to the
 *    nearest ns, exponents are applied exactly;
 *  - a header baseTimeNanoseconds makes ts relative to it, and events with
 *    ts == 0 are then skipped (Kineto clamps negative times to 0);
 *  - without a base, ts is absolute Unix-epoch µs; displayTimeUnit only
 *    changes how viewers show time, never the unit of ts;
 *  - M (metadata) events are skipped; an X event ends at ts + dur, any
 *    other at ts;
 *  - a negative dur, which no profiler writes, is taken as 0 (the event
 *    ends at its ts) and counted in negative_durs, so that a consumer
 *    never sees one and trace info can say so;
 *  - the header keys may come before or after traceEvents: extremes are
 *    kept on the trace's own time base and the base is applied at the end;
 *  - a top-level array (the profiler without Kineto) has no absolute time,
 *    and neither has an object without a base whose times lie before 2001:
 *    both are reported as such, never guessed.
 *
 * Merging telemetry into a trace reuses this reader in two passes: first
 * trace_read() gives the span, the time base, the pids in use and the
 * splice point (events_open, the offset of the '[' that opens the events
 * array, and nelements); then trace_stream_* copies the uncompressed bytes
 * through untouched, inserting new events right after that '[' (followed
 * by a ',' when nelements > 0).  Every original event thus stays byte for
 * byte what it was, and nothing but a copy buffer is held.  A consumer that
 * needs the events themselves sets on_event in trace_options; besides the
 * members above it sees cat, tid and, of args, stream, correlation,
 * device, flops and cycle stamps.
 */
#ifndef SPYREMON_TRACE_H
#define SPYREMON_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Bounds of what the reader keeps. */
#define TRACE_NAME_MAX		1024	/* longer event names never match a step */
#define TRACE_MAX_STEPS		100000	/* more step events are an error */
#define TRACE_MAX_DEVICES	256	/* deviceProperties entries kept */
#define TRACE_MAX_KERNEL_PIDS	256	/* distinct pids of kernel events kept */
#define TRACE_MAX_PIDS		4096	/* distinct integer pids counted */
#define TRACE_CAT_MAX		64	/* longer categories are cut */

/* Step names matched by default (POSIX ERE, matched against whole names). */
#define TRACE_STEP_PATTERN	"ProfilerStep#[0-9]+|iteration_[0-9]+"

/*
 * Times before this (2001-09-09, 1e9 s) cannot come from a profiler's
 * epoch clock: an object trace without a base whose events end before it
 * has relative times.
 */
#define TRACE_EPOCH_MIN_NS	1000000000000000000LL

enum trace_dialect {
	TRACE_DIALECT_BASE,	/* baseTimeNanoseconds + relative µs */
	TRACE_DIALECT_ABSOLUTE,	/* no base: ts is absolute epoch µs */
	TRACE_DIALECT_RELATIVE,	/* object, no base, ts not epoch: no absolute time */
	TRACE_DIALECT_LEGACY,	/* top-level array: no absolute time */
};

/* A step event; ts_ns is on the trace's own time base (see trace_info). */
struct trace_step {
	char	*name;
	int64_t	 ts_ns;
	int64_t	 dur_ns;
};

struct trace_device {
	bool	 has_id;
	int64_t	 id;
	char	*name;		/* NULL if the entry has none */
};

/*
 * What trace_read() or trace_reader_finish() found.  Times called "own"
 * are ts × 1000 as written: relative to base_ns under a base, absolute
 * otherwise, relative to the profiler's start without absolute time.  The
 * absolute time of an own time t is base_ns + t when absolute is true
 * (base_ns is 0 without a base).
 */
struct trace_info {
	enum trace_dialect dialect;
	bool	 compressed;		/* the file was gzip; offsets count uncompressed bytes */
	uint64_t bytes;			/* bytes parsed (uncompressed) */

	bool	 has_base;
	int64_t	 base_ns;		/* baseTimeNanoseconds, else 0 */
	bool	 ts_fraction;		/* some ts had a fraction or an exponent */
	int	 ts_decimals;		/* the most fraction digits of a ts (3 for an exponent) */
	char	 display_time_unit[16];	/* displayTimeUnit, "" when absent */

	bool	 absolute;		/* start_ns and end_ns are Unix-epoch ns */
	bool	 has_span;		/* some event counted: the times below are set */
	int64_t	 first_own_ns;		/* earliest ts, own base */
	int64_t	 last_own_ns;		/* latest end, own base */
	int64_t	 start_ns;		/* base_ns + first_own_ns, if absolute */
	int64_t	 end_ns;		/* base_ns + last_own_ns, if absolute */

	/*
	 * The earliest ts of an X event with a dur and a cat other than
	 * "Trace" and "python_function": an analyzer that keeps such slices
	 * (Holistic Trace Analysis) starts its clock at or before it.
	 */
	bool	 has_first_slice;
	int64_t	 first_slice_own_ns;
	uint64_t events;		/* non-M events with a usable ts: the span's events */
	uint64_t metadata_events;	/* M events, skipped */
	uint64_t metadata_timed;	/* of those, with a numeric ts */
	uint64_t clamped_events;	/* ts == 0 under a base, skipped */
	uint64_t untimed_events;	/* non-M events without a numeric ts */
	uint64_t negative_durs;		/* events whose dur < 0, taken as 0 */

	struct trace_step *steps;	/* in trace order */
	size_t	 nsteps;

	char	 host[256];		/* a header host_name (or hostname), "" if none */
	bool	 has_rank, has_world_size;
	int64_t	 rank, world_size;	/* distributedInfo */

	struct trace_device *devices;	/* deviceProperties, in order */
	size_t	 ndevices;
	bool	 devices_truncated;	/* more than TRACE_MAX_DEVICES */

	int64_t	 kernel_pids[TRACE_MAX_KERNEL_PIDS]; /* integer pids of cat "kernel", ascending */
	size_t	 nkernel_pids;
	bool	 kernel_pids_truncated;

	size_t	 npids;			/* distinct integer pids (M events too) */
	bool	 pids_truncated;	/* more than TRACE_MAX_PIDS: npids is a floor */
	bool	 has_max_pid;
	int64_t	 max_pid;		/* of every integer pid seen, bounded set or not */

	/* The splice point for a merge: see the top of this file. */
	uint64_t events_open;		/* offset of the events array's '[' */
	uint64_t events_close;		/* offset of its ']' */
	uint64_t nelements;		/* its elements, M events included */
};

/* One event as on_event sees it; strings are valid during the call only. */
struct trace_event {
	char	 ph;			/* '\0' if absent or not one character */
	const char *name;		/* NUL-terminated, cut at TRACE_NAME_MAX - 1 */
	bool	 name_truncated;
	bool	 has_ts, has_dur, has_pid;
	int64_t	 ts_ns;			/* own base */
	int64_t	 dur_ns;
	int64_t	 pid;			/* integer pids only */
	bool	 is_kernel;		/* cat "kernel" */
	const char *cat;		/* "" if absent; cut at TRACE_CAT_MAX - 1 */
	bool	 has_tid;
	int64_t	 tid;			/* integer tids only */
	uint64_t track;			/* a hash of the tid's text, number or string; 0 if none */
	/*
	 * Of the event's args (or attr, where the Spyre runtime's device
	 * traces put them): a "stream" member (of any type), an integer
	 * "device", a numeric "flops" (as a double), and the card's cycle
	 * stamps ("TS1" or "cycles_ts", of any type).
	 */
	bool	 has_stream, has_device, has_flops, has_cycles;
	int64_t	 device;
	double	 flops;
	/*
	 * The Spyre runtime's charge counter ("Power", 32 bits) and first
	 * cycle stamp ("TS1"), decimal numbers or strings: both, or neither.
	 */
	bool	 has_counter;
	uint32_t counter;
	uint64_t cycle_stamp;
	/*
	 * args.stream read as Holistic Trace Analysis reads it (a number or
	 * numeric string, truncated; -1 when absent or not numeric), and an
	 * integer args.correlation, which links a device event to its
	 * launch.  ts_float: ts was written with a fraction or exponent.
	 */
	int64_t	 stream_id;
	bool	 has_correlation;
	int64_t	 correlation;
	bool	 ts_float;
	bool	 is_step;		/* an X event whose name matches the step pattern */
	uint64_t offset;		/* of its '{' in the uncompressed stream */
	uint64_t length;		/* through its '}' */
};

struct trace_options {
	/*
	 * POSIX extended regex that step names must match as a whole; NULL
	 * means TRACE_STEP_PATTERN.
	 */
	const char *step_pattern;
	/* Called for every element of the events array, M events too. */
	void	(*on_event)(const struct trace_event *ev, void *arg);
	void	*arg;
};

/*
 * Why reading failed.  When has_offset, offset counts the bytes of the
 * uncompressed stream up to just past the token at fault (the end of the
 * data for a truncated trace, the bytes delivered for a read error);
 * compressed says the file was gzip.
 */
struct trace_error {
	bool	 has_offset;
	bool	 compressed;
	uint64_t offset;
	char	 msg[256];
};

/* Result codes. */
#define TRACE_OK		0
#define TRACE_ERR_IO		(-1)	/* cannot open or read the file */
#define TRACE_ERR_SYNTAX	(-2)	/* not JSON, corrupt or truncated */
#define TRACE_ERR_FORMAT	(-3)	/* JSON, but not a trace this reader knows */
#define TRACE_ERR_LIMIT		(-4)	/* more steps than TRACE_MAX_STEPS, or a time out of range */
#define TRACE_ERR_EMPTY		(-5)	/* nothing at all in the file */
#define TRACE_ERR_NOMEM		(-6)
#define TRACE_ERR_PATTERN	(-7)	/* the step pattern does not compile */

/*
 * Read the trace at path (a file or a pipe such as /dev/stdin), gzip or
 * not, whatever its name: the gzip magic bytes decide.  Fills *info (to be released with
 * trace_info_free, also on failure) and returns TRACE_OK, or a TRACE_ERR_*
 * with *err set.  opts may be NULL.
 */
int trace_read(const char *path, const struct trace_options *opts,
    struct trace_info *info, struct trace_error *err);

/* Release what *info holds and zero it. */
void trace_info_free(struct trace_info *info);

/*
 * err as one line without the file name, for example "parse error at
 * offset 120 of the uncompressed stream: premature EOF".  Returns buf.
 */
const char *trace_strerror(const struct trace_error *err, char *buf, size_t len);

/* Name and description of a dialect: "base-relative", "baseTimeNanoseconds + relative µs". */
const char *trace_dialect_name(enum trace_dialect d);
const char *trace_dialect_text(enum trace_dialect d);

/*
 * Why info has no absolute time (or no timed events), and the options
 * that give it one, as one sentence in buf.
 */
void trace_explain_no_time(const struct trace_info *in, char *buf,
    size_t len);

/*
 * The incremental reader under trace_read(), for bytes that are not a
 * file: feed chunks of any size in order, then finish.  new, feed and
 * finish return TRACE_OK or a TRACE_ERR_* with *err set (new fails with
 * TRACE_ERR_PATTERN or TRACE_ERR_NOMEM); after an error only free is
 * allowed.  finish fills *info as trace_read does.
 */
struct trace_reader;
int trace_reader_new(const struct trace_options *opts,
    struct trace_reader **out, struct trace_error *err);
int trace_reader_feed(struct trace_reader *r, const void *buf, size_t len,
    struct trace_error *err);
int trace_reader_finish(struct trace_reader *r, struct trace_info *info,
    struct trace_error *err);
void trace_reader_free(struct trace_reader *r);

/*
 * The uncompressed bytes of a trace file, for a pass that copies it.
 * open returns NULL with *err set; read returns the count read, 0 at the
 * end, -1 with *err set (its offset counts the bytes delivered before).
 * A gzip stream is inflated ahead by a thread that open starts and close
 * joins; a gzip file cut short is an error, not a quiet end.
 */
struct trace_stream;
struct trace_stream *trace_stream_open(const char *path, struct trace_error *err);
ssize_t trace_stream_read(struct trace_stream *s, void *buf, size_t len,
    struct trace_error *err);
bool trace_stream_compressed(const struct trace_stream *s);
void trace_stream_close(struct trace_stream *s);

/*
 * Parse the decimal number text s[0..len) (JSON number syntax) times
 * 10^scale into an integer, exactly, rounding to nearest (halves away
 * from zero) when fraction digits remain: trace_parse_decimal("1.5", 3,
 * 3, &v) gives 1500.  0, or -1 for bad syntax, -2 if out of int64 range.
 */
int trace_parse_decimal(const char *s, size_t len, int scale, int64_t *out);

#endif
