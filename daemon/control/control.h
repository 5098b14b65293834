/*
 * control: the control socket, a Unix stream socket served inside the
 * event loop (protocol in proto.h, documented in spyremond(8)).
 *
 * control.c owns the socket and the connections: at most
 * PROTO_MAX_CLIENTS at once (one more is answered "busy" and closed), each
 * with an input buffer of PROTO_MAX_REQUEST bytes, a bounded output
 * buffer, and an idle timeout of PROTO_IDLE_TIMEOUT_MS that only a
 * complete request restarts.  Nothing a client does blocks the loop:
 * every read and write is non-blocking, each event reads at most one
 * buffer, and the socket's event sources run after every other source of
 * the loop, so sampling always goes first.  The caller's uid and pid come
 * from SO_PEERCRED when it connects.
 *
 * control_request.c turns one request line into one reply line.
 */
#ifndef SPYREMON_CONTROL_H
#define SPYREMON_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <systemd/sd-event.h>

struct config;
struct control;
struct source;
struct store;
struct windows;

/* A client whose unsent replies would pass this is dropped. */
#define CONTROL_OUTPUT_MAX	(64 * 1024)
/* The group given the socket when the daemon runs as root:root. */
#define CONTROL_GROUP		"spyremon"
#define CONTROL_SOCKET_MODE	0660
#define CONTROL_BACKLOG		64

/* What the requests are answered from; every pointer outlives the control. */
struct control_ctx {
	const struct config *cfg;	/* swapped by control_set_config */
	struct store *st;
	struct source *src;
	struct windows *win;
	int64_t started_ns;		/* the daemon's start, CLOCK_REALTIME */
	const char *database_next;	/* the config's new database path, */
	const char *socket_next;	/* socket: a restart is needed; or NULL */
};

/* Who is asking: from SO_PEERCRED. */
struct control_peer {
	uint32_t uid;
	int32_t pid;
};

/*
 * One reply: a JSON object on one line, "\n" included; or, for a sync
 * still pending, no text yet but the ticket to wait for (store_sync) and
 * for how long, after which control_request_sync_reply gives the text.
 */
struct control_reply {
	char *text;		/* malloc'd, and NUL-terminated past len */
	size_t len;
	bool close;		/* the request was malformed: close after sending */
	uint64_t wait_ticket;	/* > 0: text is NULL; answer once it is done */
	uint64_t wait_ms;
};

/*
 * Bind path and listen on it; connections wait in the backlog until
 * control_start.  A socket file there is replaced only if nothing accepts
 * on it (connect fails with ECONNREFUSED); if another daemon answers, or
 * path is something else than a socket, this fails.  The socket gets mode
 * CONTROL_SOCKET_MODE; run as root with primary group root (outside
 * systemd, whose unit sets Group=), it is given to group CONTROL_GROUP if
 * that exists.  -1 (logged) on any failure.
 */
int control_open(sd_event *ev, const char *path, struct control **out);

/* Accept and answer clients from ctx, from now on.  -1 (logged) on failure. */
int control_start(struct control *ctl, const struct control_ctx *ctx);

/* Answer from cfg from now on (after a reload); the socket path stays. */
void control_set_config(struct control *ctl, const struct config *cfg);

/*
 * The paths a reloaded config names that only a restart opens (kept by
 * pointer; NULL: the running one): status says a restart is needed.
 */
void control_set_pending(struct control *ctl, const char *database,
    const char *socket);

/* The clients connected now. */
size_t control_clients(const struct control *ctl);

/* Close every connection and the socket, remove the socket file if it is
 * still the one bound; NULL is a no-op. */
void control_free(struct control *ctl);

/*
 * Answer the request line from peer, which arrived at now_ns
 * (CLOCK_REALTIME): len bytes without the "\n", followed by a NUL.  A NUL
 * byte among the len makes it a bad request.  Fills *out; -1 only if out
 * of memory.
 */
int control_request_handle(const struct control_ctx *ctx, const char *line,
    size_t len, const struct control_peer *peer, int64_t now_ns,
    struct control_reply *out);

/*
 * The answer to a sync that waited for ticket (of window window_id, 0 if
 * unknown): ok if it is done, with "partial" if part of the window's rows
 * could not be read, else "incomplete" with what it still waits for.  -1
 * only if out of memory.
 */
int control_request_sync_reply(const struct control_ctx *ctx, uint64_t ticket,
    int64_t window_id, struct control_reply *out);

/* Answer the clients whose sync is done; for the store's sync descriptor. */
void control_syncs_done(struct control *ctl);

/* A reply that is only an error; -1 only if out of memory. */
int control_request_error(const char *code, const char *message,
    struct control_reply *out);

#endif
