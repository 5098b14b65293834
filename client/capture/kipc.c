/* kipc: the daemon's side of Kineto's trace-request socket (kipc.h). */
#include "kipc.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The address of name in dir (NULL: abstract); its length in *len. */
static int
address(const char *dir, const char *name, struct sockaddr_un *sun,
    socklen_t *len)
{
	size_t n;

	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (dir == NULL) {
		/* "\0name\0": Kineto counts the trailing NUL in the length */
		n = strlen(name);
		if (n + 2 > sizeof(sun->sun_path)) {
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(sun->sun_path + 1, name, n);
		*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 2);
		return 0;
	}
	if ((size_t)snprintf(sun->sun_path, sizeof(sun->sun_path), "%s/%s", dir,
	    name) >= sizeof(sun->sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
	    strlen(sun->sun_path) + 1);
	return 0;
}

/* True if a socket is listening at the file sun names. */
static bool
file_is_live(const struct sockaddr_un *sun, socklen_t len)
{
	int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	bool live;

	if (s == -1)
		return true;	/* cannot tell: do not remove it */
	live = connect(s, (const struct sockaddr *)sun, len) == 0 ||
	    errno != ECONNREFUSED;
	close(s);
	return live;
}

int
kipc_bind(const char *dir, struct kipc *k)
{
	struct sockaddr_un sun;
	socklen_t len;
	int one = 1, s, error;

	k->fd = -1;
	k->abstract = dir == NULL;
	k->path[0] = '\0';
	if (address(dir, KIPC_DAEMON_NAME, &sun, &len) == -1)
		return -1;
	if (dir != NULL)
		memcpy(k->path, sun.sun_path, sizeof(k->path));
	if ((s = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1)
		return -1;
	if (setsockopt(s, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) == -1)
		goto fail;
	if (bind(s, (struct sockaddr *)&sun, len) == -1) {
		if (errno != EADDRINUSE)
			goto fail;
		if (dir == NULL || file_is_live(&sun, len)) {
			close(s);
			return KIPC_HELD;
		}
		/* a file left by a daemon that is gone */
		if (unlink(sun.sun_path) == -1 ||
		    bind(s, (struct sockaddr *)&sun, len) == -1)
			goto fail;
	}
	/* processes of every user may write to it, as dynolog allows */
	if (dir != NULL)
		(void)chmod(sun.sun_path, 0666);
	k->fd = s;
	return KIPC_BOUND;
fail:
	error = errno;
	close(s);
	errno = error;
	return -1;
}

void
kipc_close(struct kipc *k)
{
	if (k->fd == -1)
		return;
	close(k->fd);
	k->fd = -1;
	if (!k->abstract && k->path[0] != '\0')
		(void)unlink(k->path);
}

int
kipc_recv(const struct kipc *k, unsigned char *buf, size_t len,
    struct kipc_msg *m)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(struct ucred))];
	} ctl;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr mh = {
		.msg_name = &m->from, .msg_namelen = sizeof(m->from),
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf),
	};
	struct cmsghdr *c;
	uint64_t size;
	ssize_t n;

	memset(m, 0, sizeof(*m));
	if ((n = recvmsg(k->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC)) == -1)
		return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ?
		    0 : -1;
	m->fromlen = mh.msg_namelen;
	for (c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level == SOL_SOCKET &&
		    c->cmsg_type == SCM_CREDENTIALS &&
		    c->cmsg_len >= CMSG_LEN(sizeof(struct ucred))) {
			struct ucred cr;

			memcpy(&cr, CMSG_DATA(c), sizeof(cr));
			m->has_cred = true;
			m->pid = cr.pid;
			m->uid = cr.uid;
		}
	}
	if ((size_t)n < KIPC_HEADER || (mh.msg_flags & MSG_TRUNC)) {
		m->truncated = true;
		return 1;
	}
	memcpy(&size, buf, sizeof(size));
	memcpy(m->type, buf + sizeof(size), KIPC_TYPE_LEN);
	m->type[KIPC_TYPE_LEN] = '\0';
	m->size = (size_t)size;
	m->payload = buf + KIPC_HEADER;
	m->truncated = size > (uint64_t)n - KIPC_HEADER;
	return 1;
}

bool
kipc_parse_request(const unsigned char *p, size_t len, struct kipc_request *r)
{
	int32_t n;

	memset(r, 0, sizeof(*r));
	if (len < KIPC_REQ_FIXED)
		return false;
	memcpy(&r->type, p, sizeof(r->type));
	memcpy(&n, p + 4, sizeof(n));
	memcpy(&r->jobid, p + 8, sizeof(r->jobid));
	if (n < 1 || n > KIPC_MAX_PIDS ||
	    len != KIPC_REQ_FIXED + (size_t)n * sizeof(int32_t))
		return false;
	memcpy(r->pids, p + KIPC_REQ_FIXED, (size_t)n * sizeof(int32_t));
	r->npids = (size_t)n;
	return true;
}

bool
kipc_request_has(const struct kipc_request *r, int32_t pid)
{
	for (size_t i = 0; i < r->npids; i++)
		if (r->pids[i] == pid)
			return true;
	return false;
}

size_t
kipc_encode(const char *type, const void *payload, size_t len,
    unsigned char *out)
{
	uint64_t size = len;
	char t[KIPC_TYPE_LEN] = { 0 };

	memcpy(t, type, strnlen(type, KIPC_TYPE_LEN - 1));
	memcpy(out, &size, sizeof(size));
	memcpy(out + sizeof(size), t, KIPC_TYPE_LEN);
	if (len > 0)
		memcpy(out + KIPC_HEADER, payload, len);
	return KIPC_HEADER + len;
}

static int
send_to(const struct kipc *k, const struct kipc_msg *m, const char *type,
    const void *payload, size_t len)
{
	unsigned char buf[KIPC_MAX_DATAGRAM];
	size_t n;

	if (KIPC_HEADER + len > sizeof(buf)) {
		errno = EMSGSIZE;
		return -1;
	}
	n = kipc_encode(type, payload, len, buf);
	if (sendto(k->fd, buf, n, MSG_DONTWAIT | MSG_NOSIGNAL,
	    (const struct sockaddr *)&m->from, m->fromlen) == -1)
		return -1;
	return 0;
}

int
kipc_reply(const struct kipc *k, const struct kipc_msg *m, const char *config,
    size_t len)
{
	return send_to(k, m, "req", config, len);
}

int
kipc_reply_ctxt(const struct kipc *k, const struct kipc_msg *m, int32_t count)
{
	return send_to(k, m, "ctxt", &count, sizeof(count));
}

const char *
kipc_name(const struct kipc *k)
{
	return k->abstract ? "@" KIPC_DAEMON_NAME "@ (abstract)" : k->path;
}
