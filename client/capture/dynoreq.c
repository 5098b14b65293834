/* dynoreq: a trace request handed to dynolog over TCP (dynoreq.h). */
#include "dynoreq.h"

#include <arpa/inet.h>
#include <err.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "json.h"
#include "timeparse.h"

/* Milliseconds left until deadline (monotonic ns), at least 0. */
static int
ms_left(uint64_t deadline)
{
	uint64_t now = now_monotonic_ns();

	return now >= deadline ? 0 :
	    (int)((deadline - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC);
}

/* Wait for events on fd until deadline; false (errno ETIMEDOUT) if not. */
static bool
wait_fd(int fd, short events, uint64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = events };
	int r;

	while ((r = poll(&p, 1, ms_left(deadline))) == -1 && errno == EINTR)
		;
	if (r == 0)
		errno = ETIMEDOUT;
	return r > 0;
}

static int
connect_local(int port, uint64_t deadline)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
	    .sin_port = htons((uint16_t)port),
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t elen = sizeof(int);
	int s, error = 0;

	if ((s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1)
		return -1;
	if (connect(s, (struct sockaddr *)&sin, sizeof(sin)) == 0)
		return s;
	if (errno != EINPROGRESS) {
		error = errno;
	} else if (!wait_fd(s, POLLOUT, deadline)) {
		error = ETIMEDOUT;
	} else if (getsockopt(s, SOL_SOCKET, SO_ERROR, &error, &elen) == -1) {
		error = errno;
	}
	if (error == 0)
		return s;
	close(s);
	errno = error;
	return -1;
}

static bool
send_all(int s, const void *buf, size_t len, uint64_t deadline)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = send(s, p, len, MSG_NOSIGNAL);

		if (n > 0) {
			p += n;
			len -= (size_t)n;
		} else if (n == -1 && errno != EAGAIN && errno != EINTR) {
			return false;
		} else if (!wait_fd(s, POLLOUT, deadline)) {
			return false;
		}
	}
	return true;
}

static bool
recv_all(int s, void *buf, size_t len, uint64_t deadline)
{
	char *p = buf;

	while (len > 0) {
		ssize_t n = recv(s, p, len, 0);

		if (n > 0) {
			p += n;
			len -= (size_t)n;
		} else if (n == 0) {
			errno = ECONNRESET;
			return false;
		} else if (errno != EAGAIN && errno != EINTR) {
			return false;
		} else if (!wait_fd(s, POLLIN, deadline)) {
			return false;
		}
	}
	return true;
}

/* The integers of array key of reply into out (at most max): how many. */
static size_t
int_array(yajl_val reply, const char *key, int32_t *out, size_t max)
{
	yajl_val a = json_array(reply, key);
	size_t n = 0;

	for (size_t i = 0; a != NULL && i < a->u.array.len && n < max; i++)
		if (YAJL_IS_INTEGER(a->u.array.values[i]))
			out[n++] = (int32_t)YAJL_GET_INTEGER(a->u.array.values[i]);
	return n;
}

static char *
request_json(const char *config, int64_t jobid, int32_t pid, int limit,
    size_t *len)
{
	const unsigned char *buf;
	yajl_gen g = json_gen_new(false);
	char *out;

	yajl_gen_map_open(g);
	jsonw_put_str(g, "fn", "setKinetOnDemandRequest");
	jsonw_put_str(g, "config", config);
	jsonw_put_int(g, "job_id", jobid);
	jsonw_str(g, "pids");
	yajl_gen_array_open(g);
	yajl_gen_integer(g, pid);
	yajl_gen_array_close(g);
	jsonw_put_int(g, "process_limit", limit);
	yajl_gen_map_close(g);
	yajl_gen_get_buf(g, &buf, len);
	if ((out = malloc(*len + 1)) == NULL)
		errx(1, "out of memory");
	memcpy(out, buf, *len);
	out[*len] = '\0';
	yajl_gen_free(g);
	return out;
}

int
dynoreq_send(int port, const char *config, int64_t jobid, int32_t pid,
    int limit, struct dynoreq_result *res)
{
	uint64_t deadline = now_monotonic_ns() + DYNOREQ_TIMEOUT_MS *
	    NSEC_PER_MSEC;
	char *req, *rbuf = NULL, ebuf[256];
	yajl_val reply = NULL;
	int32_t n32;
	size_t len;
	int s, rc = -1;

	memset(res, 0, sizeof(*res));
	if ((s = connect_local(port, deadline)) == -1) {
		warn("cannot connect to dynolog on 127.0.0.1:%d", port);
		return -1;
	}
	req = request_json(config, jobid, pid, limit, &len);
	n32 = (int32_t)len;
	if (!send_all(s, &n32, sizeof(n32), deadline) ||
	    !send_all(s, req, len, deadline)) {
		warn("dynolog on 127.0.0.1:%d: cannot send the request", port);
		goto done;
	}
	if (!recv_all(s, &n32, sizeof(n32), deadline)) {
		warn("dynolog on 127.0.0.1:%d: no reply", port);
		goto done;
	}
	if (n32 <= 0 || n32 > DYNOREQ_MAX_REPLY) {
		warnx("dynolog on 127.0.0.1:%d: a reply of %d bytes is not "
		    "one dynolog sends", port, (int)n32);
		goto done;
	}
	if ((rbuf = malloc((size_t)n32 + 1)) == NULL)
		errx(1, "out of memory");
	if (!recv_all(s, rbuf, (size_t)n32, deadline)) {
		warn("dynolog on 127.0.0.1:%d: the reply was cut off", port);
		goto done;
	}
	rbuf[n32] = '\0';
	reply = yajl_tree_parse(rbuf, ebuf, sizeof(ebuf));
	if (reply == NULL || !YAJL_IS_OBJECT(reply) ||
	    json_array(reply, "processesMatched") == NULL) {
		warnx("dynolog on 127.0.0.1:%d: the reply is not what dynolog "
		    "sends: %.200s", port, rbuf);
		goto done;
	}
	res->nmatched = int_array(reply, "processesMatched", res->matched,
	    DYNOREQ_MAX_PIDS);
	res->ntriggered = int_array(reply, "activityProfilersTriggered",
	    res->triggered, DYNOREQ_MAX_PIDS);
	(void)json_int(reply, "activityProfilersBusy", &res->busy);
	rc = 0;
done:
	yajl_tree_free(reply);
	free(rbuf);
	free(req);
	close(s);
	return rc;
}
