/*
 * kipc: the daemon's side of the socket through which PyTorch's profiler
 * library, Kineto, asks a local daemon for trace requests (the "IPC
 * fabric" of dynolog, whose side spyremon capture takes while it runs).
 *
 * The wire, as Kineto (IpcFabricConfigClient.cpp) and dynolog's ipcfabric
 * headers have it:
 *  - AF_UNIX SOCK_DGRAM.  The daemon binds the abstract name "\0dynolog\0"
 *    (the trailing NUL counts in the address length), each process
 *    "\0dynoconfigclient<uuid4>\0"; when KINETO_IPC_SOCKET_DIR is set in
 *    the process, the names are files in that folder instead: DIR/dynolog,
 *    DIR being the variable's text as it is, since the process refuses a
 *    sender whose path does not begin with exactly "DIR/".
 *  - A datagram is struct { size_t size; char type[32]; } (KIPC_HEADER,
 *    40 bytes on a 64-bit host) and size bytes of payload.
 *  - A process polls with type "req" and the payload struct { int type;
 *    int n; int64_t jobid; int32_t pids[n]; }: type's bit 2 (ACTIVITIES)
 *    says it can take a trace now, 0 that one is running; jobid is its
 *    SLURM_JOB_ID or 0; pids is itself, then its ancestors up to, not
 *    including, PID 1.  It reads a reply for about 90 ms; one that comes
 *    later is read at its next poll.
 *  - The reply is a "req" datagram whose payload is the config text,
 *    without a NUL; size 0 means nothing to do.  A "ctxt" datagram
 *    (struct { int32_t gpu; int32_t pid; int64_t jobid; }, a registration
 *    older clients send) is answered with an int32_t count of instances.
 *
 * A datagram's sender is known from the kernel (SO_PASSCRED): its pid and
 * uid, which no payload can forge.
 */
#ifndef SPYREMON_KIPC_H
#define SPYREMON_KIPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#define KIPC_DAEMON_NAME	"dynolog"
#define KIPC_TYPE_LEN		32
#define KIPC_HEADER		(sizeof(uint64_t) + KIPC_TYPE_LEN)
#define KIPC_REQ_FIXED		16	/* int type, int n, int64_t jobid */
#define KIPC_MAX_PIDS		64	/* a request listing more is malformed */
#define KIPC_MAX_DATAGRAM	4096	/* more is not a poll: read and dropped */
#define KIPC_ACTIVITIES		0x2	/* request type bit: can take a trace */

/* The bound socket: fd, and the file to remove when done (dir mode). */
struct kipc {
	int	 fd;
	bool	 abstract;
	char	 path[sizeof(((struct sockaddr_un *)0)->sun_path)];
};

/* One datagram received. */
struct kipc_msg {
	struct sockaddr_un from;
	socklen_t fromlen;
	bool	 has_cred;
	pid_t	 pid;		/* the sender, from the kernel */
	uid_t	 uid;
	char	 type[KIPC_TYPE_LEN + 1];
	size_t	 size;		/* the header's size */
	const unsigned char *payload;	/* size bytes, valid until the next recv */
	bool	 truncated;	/* fewer bytes came than the header says */
};

/* A poll, decoded. */
struct kipc_request {
	int32_t	 type;
	int64_t	 jobid;
	int32_t	 pids[KIPC_MAX_PIDS];
	size_t	 npids;
};

#define KIPC_BOUND	0
#define KIPC_HELD	1	/* a live socket holds the name: dynolog, or another capture */

/*
 * Bind the daemon's name: the abstract one if dir is NULL, else
 * DIR/dynolog (a stale file there is removed first), non-blocking, with
 * SO_PASSCRED.  KIPC_BOUND, KIPC_HELD, or -1 with errno set.
 */
int kipc_bind(const char *dir, struct kipc *k);

/* Close the socket and remove its file; k->fd becomes -1. */
void kipc_close(struct kipc *k);

/*
 * Receive one datagram into m (its payload points into buf, len bytes).
 * 1 when one came, 0 when none is waiting, -1 with errno on an error.
 */
int kipc_recv(const struct kipc *k, unsigned char *buf, size_t len,
    struct kipc_msg *m);

/*
 * Decode a poll's payload; false if it is malformed (too short, n out of
 * range or not matching the size).
 */
bool kipc_parse_request(const unsigned char *p, size_t len,
    struct kipc_request *r);

/* True if pid is one of r's pids. */
bool kipc_request_has(const struct kipc_request *r, int32_t pid);

/*
 * Encode a datagram of type with len payload bytes into out (KIPC_HEADER +
 * len bytes); returns its length.  For tests and kipc_send.
 */
size_t kipc_encode(const char *type, const void *payload, size_t len,
    unsigned char *out);

/*
 * Send a "req" reply holding config (len bytes, 0 for nothing to do) to
 * m's sender, without waiting: 0, or -1 with errno (the sender is gone,
 * or its queue is full).
 */
int kipc_reply(const struct kipc *k, const struct kipc_msg *m,
    const char *config, size_t len);

/* Answer a "ctxt" registration with count. */
int kipc_reply_ctxt(const struct kipc *k, const struct kipc_msg *m,
    int32_t count);

/* The socket's name for messages: "@dynolog" or DIR/dynolog. */
const char *kipc_name(const struct kipc *k);

#endif
