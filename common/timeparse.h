/*
 * timeparse: durations, sizes and points in time as people write them,
 * shared by the daemon's config and the client's options.
 *
 * All functions are pure: they return 0 on success and -1 on bad input,
 * leaving *out untouched on failure, and never allocate.
 */
#ifndef SPYREMON_TIMEPARSE_H
#define SPYREMON_TIMEPARSE_H

#include <stddef.h>
#include <stdint.h>

#define NSEC_PER_USEC 1000ULL
#define NSEC_PER_MSEC 1000000ULL
#define NSEC_PER_SEC 1000000000ULL

/*
 * Parse a duration such as "10ms", "1.5s", "2m", "7d" or "1h30m" into ns.
 * Units: ns us ms s m h d w.  A bare number is rejected: units are required.
 */
int parse_duration(const char *s, uint64_t *out_ns);

/*
 * Parse a size such as "512KiB", "1GiB", "100MB" or "4096" (bytes) into
 * bytes.  IEC (KiB MiB GiB TiB) and SI (kB MB GB TB) units; B optional.
 */
int parse_size(const char *s, uint64_t *out_bytes);

/*
 * Parse a point in time: epoch nanoseconds (all digits), or ISO 8601
 * "YYYY-MM-DD[THH:MM[:SS[.fff...]]][Z|+HH:MM|-HH:MM]".  Without a zone the
 * time is local.  Result in Unix-epoch ns.
 */
int parse_time(const char *s, int64_t *out_ns);

/* Write a duration in the largest unit that divides it exactly ("1s", "100ms", "7d", "90m"). */
void format_duration(uint64_t ns, char *buf, size_t len);

/* Write a size in the largest exact IEC unit ("1GiB", "512KiB", "100B"). */
void format_size(uint64_t bytes, char *buf, size_t len);

/* Write epoch ns as UTC ISO 8601 with nanoseconds: 2026-12-02T10:26:12.123456789Z */
void format_time_utc(int64_t ns, char *buf, size_t len);

/* CLOCK_REALTIME and CLOCK_MONOTONIC in ns. */
int64_t now_realtime_ns(void);
uint64_t now_monotonic_ns(void);

#endif
