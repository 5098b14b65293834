/*
 * control: the control socket and its connections (contract in control.h).
 *
 * Each connection is an sd-event I/O source plus a CLOCK_MONOTONIC timer
 * for its idle timeout.  Input collects in a fixed buffer of
 * PROTO_MAX_REQUEST bytes; each complete line is answered in turn, and the
 * reply goes out with a non-blocking send, the rest waiting in an output
 * buffer for EPOLLOUT.  The event sources run at a priority below every
 * other source of the loop.
 */
#include "control.h"

#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "clockstep.h"
#include "log.h"
#include "proto.h"
#include "store.h"
#include "timeparse.h"

/* After every other event source: sampling never waits for a client. */
#define CONTROL_PRIORITY	(SD_EVENT_PRIORITY_NORMAL + 10)
/* Connections accepted per wake-up of the listening socket. */
#define ACCEPT_BURST		16
/* Accepting pauses this long when the process is out of descriptors. */
#define ACCEPT_PAUSE_USEC	(100 * 1000)
#define GROUP_BUF		16384

struct conn {
	struct control *ctl;
	struct conn *prev, *next;
	int fd;
	struct control_peer peer;
	sd_event_source *io, *idle;
	bool closing;		/* answer no more: close once out is sent */
	uint64_t wait_ticket;	/* a sync waits for this; later lines wait too */
	sd_event_source *wait;	/* its deadline */

	char in[PROTO_MAX_REQUEST];
	size_t inlen;

	char *out;		/* unsent reply bytes: out[outoff .. outlen) */
	size_t outoff, outlen, outcap;
};

struct control {
	sd_event *ev;
	struct control_ctx ctx;
	char *path;
	int fd;
	dev_t dev;		/* of the socket file bound, to remove only it */
	ino_t ino;
	sd_event_source *listener, *pause;
	struct conn *conns;
	size_t nconns;
	struct ratelimit rl;
};

/* ---- connections ---- */

static void
conn_close(struct conn *c)
{
	struct control *ctl = c->ctl;

	sd_event_source_disable_unref(c->io);
	sd_event_source_disable_unref(c->idle);
	sd_event_source_disable_unref(c->wait);
	close(c->fd);
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		ctl->conns = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	ctl->nconns--;
	free(c->out);
	free(c);
}

static void
conn_idle_restart(struct conn *c)
{
	uint64_t now;

	sd_event_now(c->ctl->ev, CLOCK_MONOTONIC, &now);
	sd_event_source_set_time(c->idle, now + PROTO_IDLE_TIMEOUT_MS * 1000ULL);
	sd_event_source_set_enabled(c->idle, SD_EVENT_ONESHOT);
}

/* Send what is pending; -1 if the client is gone. */
static int
conn_flush(struct conn *c)
{
	ssize_t n;

	while (c->outoff < c->outlen) {
		n = send(c->fd, c->out + c->outoff, c->outlen - c->outoff,
		    MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n == -1) {
			if (errno == EAGAIN || errno == EINTR)
				return 0;
			return -1;
		}
		c->outoff += (size_t)n;
	}
	c->outoff = c->outlen = 0;
	return 0;
}

/*
 * Queue reply text; -1 if the client must be dropped: it has left replies
 * unread and this one would take the unsent bytes past CONTROL_OUTPUT_MAX,
 * or memory ran out.  One reply alone always fits.
 */
static int
conn_queue(struct conn *c, const char *text, size_t len)
{
	size_t unsent = c->outlen - c->outoff, cap;
	char *grown;

	if (unsent > 0 && unsent + len > CONTROL_OUTPUT_MAX)
		return -1;
	if (c->outoff > 0) {
		memmove(c->out, c->out + c->outoff, unsent);
		c->outoff = 0;
		c->outlen = unsent;
	}
	if (c->outlen + len > c->outcap) {
		cap = c->outlen + len < 4096 ? 4096 : c->outlen + len;
		if ((grown = realloc(c->out, cap)) == NULL)
			return -1;
		c->out = grown;
		c->outcap = cap;
	}
	memcpy(c->out + c->outlen, text, len);
	c->outlen += len;
	return 0;
}

static int on_conn_wait(sd_event_source *, uint64_t, void *);

/* Hold the client until ticket is done or wait_ms passed; -1: drop it. */
static int
conn_wait(struct conn *c, uint64_t ticket, uint64_t wait_ms)
{
	if (c->wait == NULL) {
		if (sd_event_add_time_relative(c->ctl->ev, &c->wait,
		    CLOCK_MONOTONIC, wait_ms * 1000, 0, on_conn_wait, c) < 0)
			return -1;
		sd_event_source_set_priority(c->wait, CONTROL_PRIORITY);
	} else {
		sd_event_source_set_time_relative(c->wait, wait_ms * 1000);
		sd_event_source_set_enabled(c->wait, SD_EVENT_ONESHOT);
	}
	/* the wait has its own bound: idleness is not the client's */
	sd_event_source_set_enabled(c->idle, SD_EVENT_OFF);
	c->wait_ticket = ticket;
	return 0;
}

/* Answer one complete request line (NUL-terminated in place); -1: drop the client. */
static int
conn_request(struct conn *c, const char *line, size_t len, int64_t now_ns)
{
	struct control_reply reply;
	int r;

	if (control_request_handle(&c->ctl->ctx, line, len, &c->peer, now_ns,
	    &reply) == -1) {
		log_warnx("control: out of memory answering uid %u",
		    (unsigned)c->peer.uid);
		return -1;
	}
	if (reply.wait_ticket != 0)
		return conn_wait(c, reply.wait_ticket, reply.wait_ms);
	r = conn_queue(c, reply.text, reply.len);
	free(reply.text);
	if (r == -1) {
		log_info("control: dropped the client of uid %u, pid %d: it "
		    "does not read its replies", (unsigned)c->peer.uid,
		    (int)c->peer.pid);
		return -1;
	}
	if (reply.close)
		c->closing = true;
	return 0;
}

/* Answer with an error and stop reading; -1: drop the client. */
static int
conn_refuse(struct conn *c, const char *message)
{
	struct control_reply reply;
	int r;

	if (control_request_error(PROTO_E_BAD_REQUEST, message, &reply) == -1)
		return -1;
	r = conn_queue(c, reply.text, reply.len);
	free(reply.text);
	c->closing = true;
	return r;
}

/* Answer every complete line in the input buffer; -1: drop the client. */
static int
conn_lines(struct conn *c, int64_t now_ns)
{
	size_t start = 0;
	char *nl;

	while (!c->closing && c->wait_ticket == 0 &&
	    (nl = memchr(c->in + start, '\n', c->inlen - start)) != NULL) {
		size_t len = (size_t)(nl - (c->in + start));

		*nl = '\0';
		if (conn_request(c, c->in + start, len, now_ns) == -1)
			return -1;
		start += len + 1;
		if (c->wait_ticket == 0)
			conn_idle_restart(c);
	}
	memmove(c->in, c->in + start, c->inlen - start);
	c->inlen -= start;
	if (!c->closing && c->wait_ticket == 0 && c->inlen == sizeof(c->in))
		return conn_refuse(c, "a request is at most 4096 bytes, its "
		    "newline included");
	return 0;
}

/* Read once into the input buffer and answer; -1: drop the client. */
static int
conn_read(struct conn *c)
{
	ssize_t n;
	int64_t now_ns;

	n = recv(c->fd, c->in + c->inlen, sizeof(c->in) - c->inlen, MSG_DONTWAIT);
	/* a request arrives when the read that completes it returns; a
	 * step of the clock is seen first, so that a window begun or ended
	 * now is of the clock's new epoch (store_clock_epoch) */
	(void)clockstep_check();
	now_ns = now_realtime_ns();
	if (n == -1)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	if (n == 0) {
		c->closing = true;
		if (c->inlen > 0)
			return conn_refuse(c, "the request was cut off: the "
			    "input ended before its newline");
		return 0;
	}
	c->inlen += (size_t)n;
	return conn_lines(c, now_ns);
}

/* Listen for what the connection needs next; -1 when it is done. */
static int
conn_rearm(struct conn *c)
{
	uint32_t events = 0;

	if (c->outlen > c->outoff)
		events |= EPOLLOUT;
	else if (c->closing)
		return -1;
	/* while a sync waits, what follows it waits unread in the socket */
	if (!c->closing && c->wait_ticket == 0)
		events |= EPOLLIN;
	sd_event_source_set_io_events(c->io, events);
	return 0;
}

static int
on_conn_io(sd_event_source *s, int fd, uint32_t revents, void *arg)
{
	struct conn *c = arg;
	int r = 0;

	(void)s;
	(void)fd;
	if (revents & EPOLLOUT)
		r = conn_flush(c);
	/* a client that hangs up while its sync waits has given up on it */
	if (c->wait_ticket != 0 && (revents & (EPOLLHUP | EPOLLERR)))
		r = -1;
	if (r == 0 && !c->closing && c->wait_ticket == 0 &&
	    (revents & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		r = conn_read(c);
	if (r == 0 && c->outlen > c->outoff)
		r = conn_flush(c);
	if (r == -1 || conn_rearm(c) == -1)
		conn_close(c);
	return 0;
}

/*
 * The sync c waits for is done, or its time ran out: answer it, then the
 * lines that came after it.
 */
static void
conn_wait_over(struct conn *c)
{
	struct control_reply reply;
	uint64_t ticket = c->wait_ticket;
	int r;

	c->wait_ticket = 0;
	sd_event_source_set_enabled(c->wait, SD_EVENT_OFF);
	conn_idle_restart(c);
	r = control_request_sync_reply(&c->ctl->ctx, ticket, 0, &reply);
	if (r == 0) {
		r = conn_queue(c, reply.text, reply.len);
		free(reply.text);
	}
	if (r == 0)
		r = conn_lines(c, now_realtime_ns());
	if (r == 0)
		r = conn_flush(c);
	if (r == -1 || conn_rearm(c) == -1)
		conn_close(c);
}

static int
on_conn_wait(sd_event_source *s, uint64_t usec, void *arg)
{
	(void)s;
	(void)usec;
	conn_wait_over(arg);
	return 0;
}

void
control_syncs_done(struct control *ctl)
{
	struct conn *c, *next;

	for (c = ctl->conns; c != NULL; c = next) {
		next = c->next;
		if (c->wait_ticket != 0 &&
		    !store_sync_pending(ctl->ctx.st, c->wait_ticket, NULL, 0,
		    NULL))
			conn_wait_over(c);
	}
}

static int
on_conn_idle(sd_event_source *s, uint64_t usec, void *arg)
{
	struct conn *c = arg;

	(void)s;
	(void)usec;
	log_debug("control: closed the idle client of uid %u, pid %d",
	    (unsigned)c->peer.uid, (int)c->peer.pid);
	conn_close(c);
	return 0;
}

/*
 * Why a new client of uid may not be served now, or NULL if it may.  One
 * user's idle connections must not lock the others out, so each uid has
 * PROTO_MAX_PER_UID; and the last PROTO_RESERVED places are kept for root
 * and the daemon's own user, so that an administrator can always get in.
 */
static const char *
over_limit(const struct control *ctl, uid_t uid)
{
	bool privileged = uid == 0 || uid == geteuid();
	size_t mine = 0;

	if (ctl->nconns >= PROTO_MAX_CLIENTS)
		return "too many clients; try again";
	if (privileged)
		return NULL;
	if (ctl->nconns >= PROTO_MAX_CLIENTS - PROTO_RESERVED)
		return "too many clients (the rest are kept for root); try again";
	for (const struct conn *c = ctl->conns; c != NULL; c = c->next)
		if (c->peer.uid == uid)
			mine++;
	if (mine >= PROTO_MAX_PER_UID)
		return "too many connections of your uid (at most 16 at once); "
		    "close some and try again";
	return NULL;
}

/* Tell a client over the limit why, and close it. */
static void
refuse_busy(int fd, const char *why)
{
	struct control_reply reply;

	if (control_request_error(PROTO_E_BUSY, why, &reply) == 0) {
		(void)send(fd, reply.text, reply.len, MSG_NOSIGNAL | MSG_DONTWAIT);
		free(reply.text);
	}
	close(fd);
}

/* Serve the client on fd, or refuse it as busy; -1 (fd still open) on error. */
static int
conn_add(struct control *ctl, int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct conn *c;
	const char *why;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1) {
		log_warn("control: SO_PEERCRED");
		return -1;
	}
	if ((why = over_limit(ctl, cred.uid)) != NULL) {
		log_debug("control: refused uid %u, pid %d: %s",
		    (unsigned)cred.uid, (int)cred.pid, why);
		refuse_busy(fd, why);
		return 0;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		log_warn("control: new client");
		return -1;
	}
	c->ctl = ctl;
	c->fd = fd;
	c->peer.uid = cred.uid;
	c->peer.pid = cred.pid;
	if (sd_event_add_io(ctl->ev, &c->io, fd, EPOLLIN, on_conn_io, c) < 0 ||
	    sd_event_add_time_relative(ctl->ev, &c->idle, CLOCK_MONOTONIC,
	    PROTO_IDLE_TIMEOUT_MS * 1000ULL, 0, on_conn_idle, c) < 0) {
		log_warnx("control: cannot watch a new client");
		sd_event_source_disable_unref(c->io);
		free(c);
		return -1;
	}
	sd_event_source_set_priority(c->io, CONTROL_PRIORITY);
	sd_event_source_set_priority(c->idle, CONTROL_PRIORITY);
	c->next = ctl->conns;
	if (ctl->conns != NULL)
		ctl->conns->prev = c;
	ctl->conns = c;
	ctl->nconns++;
	log_debug("control: client uid %u, pid %d", (unsigned)cred.uid,
	    (int)cred.pid);
	return 0;
}

/* ---- the listening socket ---- */

static int
on_pause_over(sd_event_source *s, uint64_t usec, void *arg)
{
	struct control *ctl = arg;

	(void)usec;
	sd_event_source_set_enabled(s, SD_EVENT_OFF);
	sd_event_source_set_enabled(ctl->listener, SD_EVENT_ON);
	return 0;
}

/* Out of descriptors: stop accepting for a moment rather than spin. */
static void
pause_accepting(struct control *ctl)
{
	uint64_t now;
	unsigned dropped;

	if (ratelimit_pass(&ctl->rl, now_monotonic_ns(), &dropped))
		log_warn("control: accept");
	sd_event_now(ctl->ev, CLOCK_MONOTONIC, &now);
	sd_event_source_set_enabled(ctl->listener, SD_EVENT_OFF);
	sd_event_source_set_time(ctl->pause, now + ACCEPT_PAUSE_USEC);
	sd_event_source_set_enabled(ctl->pause, SD_EVENT_ONESHOT);
}

static int
on_listener(sd_event_source *s, int fd, uint32_t revents, void *arg)
{
	struct control *ctl = arg;

	(void)s;
	(void)revents;
	for (int i = 0; i < ACCEPT_BURST; i++) {
		int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (cfd == -1) {
			if (errno == EMFILE || errno == ENFILE ||
			    errno == ENOBUFS || errno == ENOMEM)
				pause_accepting(ctl);
			/* EAGAIN, or a client that left before we got to it */
			return 0;
		}
		if (conn_add(ctl, cfd) == -1)
			close(cfd);
	}
	return 0;
}

/*
 * Make path free for bind: absent, or a socket nobody accepts on, which is
 * removed.  -1 (logged) if a daemon answers there or it is no socket.
 */
static int
clear_stale(const char *path, const struct sockaddr_un *sa)
{
	struct stat sb;
	int fd, r, saved;

	if (lstat(path, &sb) == -1) {
		if (errno == ENOENT)
			return 0;
		log_warn("%s", path);
		return -1;
	}
	if (!S_ISSOCK(sb.st_mode)) {
		log_warnx("%s exists and is not a socket; not replacing it", path);
		return -1;
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0)) == -1) {
		log_warn("socket");
		return -1;
	}
	r = connect(fd, (const struct sockaddr *)sa, sizeof(*sa));
	saved = errno;
	close(fd);
	if (r == 0 || saved == EAGAIN || saved == EINPROGRESS) {
		log_warnx("%s: another daemon is listening on it; is spyremond "
		    "running already?", path);
		return -1;
	}
	if (saved != ECONNREFUSED) {
		errno = saved;
		log_warn("%s: cannot tell whether it is in use", path);
		return -1;
	}
	if (unlink(path) == -1 && errno != ENOENT) {
		log_warn("%s: cannot remove the stale socket", path);
		return -1;
	}
	log_info("removed the stale socket %s", path);
	return 0;
}

/*
 * Root with primary group root is a daemon started by hand, not by the
 * unit (which sets Group=): give the socket to CONTROL_GROUP, if it exists,
 * so that its members can connect.
 */
static void
set_group(const char *path)
{
	struct group gr, *found = NULL;
	char *buf;
	int r;

	if (geteuid() != 0 || getegid() != 0)
		return;
	if ((buf = malloc(GROUP_BUF)) == NULL)
		return;
	r = getgrnam_r(CONTROL_GROUP, &gr, buf, GROUP_BUF, &found);
	if (found == NULL) {
		if (r != 0)
			log_warnx("group %s: %s", CONTROL_GROUP, strerror(r));
		log_notice("%s: no group %s, so only root can use the socket",
		    path, CONTROL_GROUP);
	} else if (chown(path, 0, found->gr_gid) == -1)
		log_warn("%s: chown to group %s", path, CONTROL_GROUP);
	else
		log_info("%s: group %s", path, CONTROL_GROUP);
	free(buf);
}

static int
bind_socket(struct control *ctl, const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat sb;
	mode_t mask;
	int r;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		log_warnx("%s: too long for a socket", path);
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (clear_stale(path, &sa) == -1)
		return -1;
	if ((ctl->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0)) == -1) {
		log_warn("socket");
		return -1;
	}
	/* created with no more than its final mode, whatever the umask */
	mask = umask(0777 & ~CONTROL_SOCKET_MODE);
	r = bind(ctl->fd, (const struct sockaddr *)&sa, sizeof(sa));
	umask(mask);
	if (r == -1) {
		log_warn("cannot bind the control socket %s", path);
		return -1;
	}
	if (stat(path, &sb) == 0) {
		ctl->dev = sb.st_dev;
		ctl->ino = sb.st_ino;
	}
	if (chmod(path, CONTROL_SOCKET_MODE) == -1) {
		log_warn("%s: chmod", path);
		return -1;
	}
	set_group(path);
	if (listen(ctl->fd, CONTROL_BACKLOG) == -1) {
		log_warn("%s: listen", path);
		return -1;
	}
	return 0;
}

int
control_open(sd_event *ev, const char *path, struct control **out)
{
	struct control *ctl;

	*out = NULL;
	if ((ctl = calloc(1, sizeof(*ctl))) == NULL ||
	    (ctl->path = strdup(path)) == NULL) {
		log_warn("control");
		free(ctl);
		return -1;
	}
	ctl->ev = sd_event_ref(ev);
	ctl->fd = -1;
	ctl->rl = (struct ratelimit)RATELIMIT_INIT(10 * NSEC_PER_SEC, 1);
	if (bind_socket(ctl, path) == -1) {
		control_free(ctl);
		return -1;
	}
	*out = ctl;
	return 0;
}

int
control_start(struct control *ctl, const struct control_ctx *ctx)
{
	ctl->ctx = *ctx;
	if (sd_event_add_io(ctl->ev, &ctl->listener, ctl->fd, EPOLLIN,
	    on_listener, ctl) < 0 ||
	    sd_event_add_time(ctl->ev, &ctl->pause, CLOCK_MONOTONIC, 0, 0,
	    on_pause_over, ctl) < 0) {
		log_warnx("control: cannot watch the socket");
		return -1;
	}
	sd_event_source_set_enabled(ctl->pause, SD_EVENT_OFF);
	sd_event_source_set_priority(ctl->listener, CONTROL_PRIORITY);
	log_info("listening on %s", ctl->path);
	return 0;
}

void
control_set_config(struct control *ctl, const struct config *cfg)
{
	ctl->ctx.cfg = cfg;
}

void
control_set_pending(struct control *ctl, const char *database,
    const char *socket)
{
	ctl->ctx.database_next = database;
	ctl->ctx.socket_next = socket;
}

size_t
control_clients(const struct control *ctl)
{
	return ctl->nconns;
}

void
control_free(struct control *ctl)
{
	struct stat sb;

	if (ctl == NULL)
		return;
	while (ctl->conns != NULL)
		conn_close(ctl->conns);
	sd_event_source_disable_unref(ctl->listener);
	sd_event_source_disable_unref(ctl->pause);
	if (ctl->fd != -1) {
		close(ctl->fd);
		/* the socket file, unless another process has replaced it */
		if (ctl->ino != 0 && lstat(ctl->path, &sb) == 0 &&
		    sb.st_dev == ctl->dev && sb.st_ino == ctl->ino)
			unlink(ctl->path);
	}
	sd_event_unref(ctl->ev);
	free(ctl->path);
	free(ctl);
}
