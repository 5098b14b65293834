/*
 * proto: the control socket's protocol, shared by spyremond (server) and
 * spyremon (client).  Documented for other languages in spyremond(8).
 *
 * Transport: a SOCK_STREAM Unix socket.  The client writes one request, a
 * JSON object on one line ending in "\n", at most PROTO_MAX_REQUEST bytes
 * including the newline; the daemon answers with one JSON object on one
 * line.  A connection may carry several requests in turn.  After a
 * malformed request the daemon answers with an error and closes; a
 * connection idle for PROTO_IDLE_TIMEOUT_MS is closed.
 *
 * Every request has "v": PROTO_VERSION and "cmd".  Every reply has "ok":
 * true plus the command's fields, or "ok": false, "error": <code> and
 * "message": <text for a person>.
 *
 *   {"v":1,"cmd":"hello"}
 *     -> {"ok":true,"v":1,"daemon":"spyremond 0.1.0"}
 *   {"v":1,"cmd":"begin","tag":"llama-bs4","meta":{"commit":"abc123"},
 *    "same_tag":false}
 *     -> {"ok":true,"id":12,"tag":"llama-bs4","begin_ns":1764670000123456789}
 *     "same_tag": true opens a window even if the caller has one open with
 *     this tag; such windows are then ended by id.  "until_pid": PID ends
 *     the window when process PID exits (spyremon mark begin --until-exit).
 *     "begin_ns": T begins the window at T instead of the arrival, for a
 *     span planned ahead (spyremon capture): T from the arrival to an hour
 *     after it, else "bad_time".
 *   {"v":1,"cmd":"end"}                  the caller's newest open window
 *   {"v":1,"cmd":"end","tag":"llama-bs4"}  the caller's open window with tag
 *   {"v":1,"cmd":"end","id":12}          window 12 (its owner, or root)
 *     -> {"ok":true,"id":12,"tag":"llama-bs4","begin_ns":...,"end_ns":...}
 *     "end_ns": T ends it at T instead of the arrival: T from the window's
 *     begin to the arrival (a trace's end, read once written), else
 *     "bad_time".  "meta": {...} (at most PROTO_META_MAX pairs, as
 *     begin's) is merged into the window's metadata as it ends (spyremon
 *     mark end keeps a vLLM server's counters so); a key the window has
 *     from its begin is refused with "bad_meta" and the window stays open.
 *   {"v":1,"cmd":"status"}
 *     -> {"ok":true, "daemon":{...}, "child":{...}, "sampling":{...},
 *         "cards":[...], "health":[...], "database":{...},
 *         "retention":{...}, "unreliable":[...], "windows":[...]}
 *
 *   {"v":1,"cmd":"sync","window":12,"wait_ms":10000,
 *    "db":{"dev":2049,"ino":1311}}
 *   {"v":1,"cmd":"sync","through_ns":1764670000123456789,"wait_ms":10000}
 *     -> {"ok":true} once every sample that covers window 12's end (or
 *     through_ns) is committed, and for a window its summary and
 *     complete_ns with them; answered only then.  Within "wait_ms" (at
 *     most PROTO_MAX_WAIT_MS) or not at all: "incomplete", whose message
 *     says what is still missing, with "through_ns", the time it stores
 *     through (a window's end).  A window completed though part of its
 *     rows could not be read (a damaged page) is answered
 *     {"ok":true,"partial":"about N rows of this window could not be
 *     read (damaged store: FILE): ..."}.  A window still open is answered at once.  "db", the database file's st_dev and
 *     st_ino as the caller sees them, must name the daemon's own database,
 *     else "other_database".  Requests after a sync on the same connection
 *     wait for its answer.
 *
 * begin and end may carry "expires_ns": a CLOCK_REALTIME time after which
 * the caller no longer waits for the answer (spyremon sends now plus its
 * 5 s timeout).  A request read after it is refused with "expired" and has
 * no effect, so a mark the caller gave up on never takes effect later.
 *
 * The daemon takes the caller's uid and pid from SO_PEERCRED; a request
 * cannot claim them.
 */
#ifndef SPYREMON_PROTO_H
#define SPYREMON_PROTO_H

#include <stdbool.h>
#include <stddef.h>

#define PROTO_VERSION		1
#define PROTO_MAX_REQUEST	4096	/* bytes, including the newline */
#define PROTO_IDLE_TIMEOUT_MS	5000	/* a silent client is closed */
#define PROTO_MAX_CLIENTS	64	/* more are refused with "busy" */
#define PROTO_MAX_PER_UID	16	/* per uid but root and the daemon's own */
#define PROTO_RESERVED		8	/* of MAX_CLIENTS, for root and the daemon's uid */
#define PROTO_TAG_MAX		64	/* bytes of a tag */
#define PROTO_META_MAX		32	/* key=value pairs per window */
#define PROTO_META_KEY_MAX	64
#define PROTO_META_VALUE_MAX	256
#define PROTO_MAX_WAIT_MS	600000	/* the longest a sync may wait */

/* Error codes, the "error" field of a failed reply. */
#define PROTO_E_BAD_REQUEST	"bad_request"	/* not JSON, too long, wrong types */
#define PROTO_E_VERSION		"unsupported_version"
#define PROTO_E_UNKNOWN_CMD	"unknown_command"
#define PROTO_E_BAD_TAG		"bad_tag"
#define PROTO_E_BAD_META	"bad_meta"
#define PROTO_E_TAG_OPEN	"tag_open"	/* caller already has it open */
#define PROTO_E_NOT_OPEN	"not_open"	/* no such open window */
#define PROTO_E_AMBIGUOUS	"ambiguous"	/* several open with that tag: use an id */
#define PROTO_E_NOT_OWNER	"not_owner"	/* someone else's window */
#define PROTO_E_BUSY		"busy"		/* too many clients */
#define PROTO_E_TOO_MANY	"too_many"	/* too many windows open: end some */
#define PROTO_E_INTERNAL	"internal"	/* the daemon could not do it; see its log */
#define PROTO_E_NO_PROCESS	"no_process"	/* until_pid names no process */
#define PROTO_E_EXPIRED		"expired"	/* read after its expires_ns: not done */
#define PROTO_E_INCOMPLETE	"incomplete"	/* sync: not all stored within wait_ms */
#define PROTO_E_OTHER_DB	"other_database"	/* sync: "db" is not the daemon's */
#define PROTO_E_BAD_TIME	"bad_time"	/* begin_ns or end_ns out of range */

/*
 * True if tag is acceptable: 1..PROTO_TAG_MAX bytes of printable ASCII
 * (0x21..0x7e; no spaces, no control characters).  On false, *why (if not
 * NULL) says what is wrong, for a person.
 */
bool proto_tag_valid(const char *tag, const char **why);

/*
 * True if key=value metadata is acceptable: key 1..PROTO_META_KEY_MAX bytes
 * of [A-Za-z0-9_.-]; value at most PROTO_META_VALUE_MAX bytes of valid
 * UTF-8 without control characters (C0, DEL or C1).  *why as for
 * proto_tag_valid.
 */
bool proto_meta_valid(const char *key, const char *value, const char **why);

#endif
