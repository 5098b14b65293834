/*
 * Tests of spyremon capture's pure parts: Kineto's datagrams as kipc
 * encodes and decodes them (the 40-byte header, the request's layout, a
 * malformed request), the socket's names (abstract with the trailing NUL
 * counted, and DIR/dynolog, a stale file replaced, a live one held) over
 * real sockets, and capserve's rules: the plan (start in whole ms, a tick
 * and the warm-up ahead, later processes served only while they can make
 * it), who is served, and what polls say of a served process's trace;
 * and procinfo's walk up a process's parents, on a /proc of its own.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "capserve.h"
#include "kipc.h"
#include "procinfo.h"

#define MS	1000000LL
#define SEC	1000000000LL
#define T0	(1764670000LL * SEC)

static void
test_header_layout(void **state)
{
	unsigned char buf[128];
	uint64_t size;
	size_t n;

	(void)state;
	assert_int_equal(KIPC_HEADER, 40);
	n = kipc_encode("req", "ABC", 3, buf);
	assert_int_equal(n, 43);
	memcpy(&size, buf, sizeof(size));
	assert_int_equal(size, 3);
	assert_string_equal((char *)buf + 8, "req");
	for (size_t i = 8 + 3; i < 40; i++)
		assert_int_equal(buf[i], 0);
	assert_memory_equal(buf + 40, "ABC", 3);
	/* an empty reply: the header alone, size 0 */
	assert_int_equal(kipc_encode("req", NULL, 0, buf), 40);
}

/*
 * A request as Kineto builds it: int type, int n, int64_t jobid, then n
 * pids (none copied when n < 1).
 */
static size_t
request(unsigned char *p, int32_t type, int32_t n, int64_t jobid,
    const int32_t *pids)
{
	size_t k = n > 0 ? (size_t)n : 0;

	memcpy(p, &type, 4);
	memcpy(p + 4, &n, 4);
	memcpy(p + 8, &jobid, 8);
	if (k > 0)
		memcpy(p + 16, pids, k * 4);
	return 16 + k * 4;
}

static void
test_parse_request(void **state)
{
	static const int32_t pids[] = { 4242, 4200, 17 };
	unsigned char p[256];
	struct kipc_request r;
	size_t len;

	(void)state;
	len = request(p, KIPC_ACTIVITIES, 3, 4711, pids);
	assert_int_equal(len, 28);
	assert_true(kipc_parse_request(p, len, &r));
	assert_int_equal(r.type, 2);
	assert_int_equal(r.jobid, 4711);
	assert_int_equal(r.npids, 3);
	assert_int_equal(r.pids[0], 4242);
	assert_true(kipc_request_has(&r, 4200));
	assert_false(kipc_request_has(&r, 1));
	/* n disagreeing with the size, out of range, or too short */
	assert_false(kipc_parse_request(p, len - 1, &r));
	assert_false(kipc_parse_request(p, len + 4, &r));
	len = request(p, 2, 0, 0, pids);
	assert_false(kipc_parse_request(p, len, &r));
	assert_false(kipc_parse_request(p, 12, &r));
	len = request(p, 2, -1, 0, pids);
	assert_false(kipc_parse_request(p, 16, &r));
}

/* A client socket bound as Kineto binds its own, in dir (NULL: abstract). */
static int
client_socket(const char *dir, struct sockaddr_un *self, socklen_t *len)
{
	const char *name = "dynoconfigclient0000-test";
	int s = socket(AF_UNIX, SOCK_DGRAM, 0);

	assert_int_not_equal(s, -1);
	memset(self, 0, sizeof(*self));
	self->sun_family = AF_UNIX;
	if (dir == NULL) {
		snprintf(self->sun_path + 1, sizeof(self->sun_path) - 1,
		    "%s-%d", name, (int)getpid());
		*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
		    strlen(self->sun_path + 1) + 1);
	} else {
		snprintf(self->sun_path, sizeof(self->sun_path), "%s/%s", dir,
		    name);
		*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
		    strlen(self->sun_path) + 1);
	}
	assert_int_equal(bind(s, (struct sockaddr *)self, *len), 0);
	return s;
}

/* One poll and its reply over k, from a client as Kineto is. */
static void
round_trip(struct kipc *k, const char *dir)
{
	static const int32_t pids[] = { 0, 1234 };
	unsigned char out[256], in[KIPC_MAX_DATAGRAM], payload[64];
	struct sockaddr_un self, to;
	struct kipc_msg m;
	struct kipc_request r;
	socklen_t len, tolen;
	int32_t mine[2] = { (int32_t)getpid(), pids[1] };
	size_t n;
	ssize_t got;
	int c = client_socket(dir, &self, &len);

	memset(&to, 0, sizeof(to));
	to.sun_family = AF_UNIX;
	if (dir == NULL) {
		/* "\0dynolog\0": 2 + 1 + 7 + 1 bytes */
		memcpy(to.sun_path + 1, "dynolog", 7);
		tolen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 9);
	} else {
		snprintf(to.sun_path, sizeof(to.sun_path), "%s/dynolog", dir);
		tolen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
		    strlen(to.sun_path) + 1);
	}
	n = kipc_encode("req", payload, request(payload, 2, 2, 0, mine), out);
	assert_int_equal(sendto(c, out, n, 0, (struct sockaddr *)&to, tolen),
	    (ssize_t)n);
	assert_int_equal(kipc_recv(k, in, sizeof(in), &m), 1);
	assert_false(m.truncated);
	assert_string_equal(m.type, "req");
	assert_true(m.has_cred);
	assert_int_equal(m.pid, getpid());
	assert_true(kipc_parse_request(m.payload, m.size, &r));
	assert_int_equal(r.pids[0], getpid());
	/* the reply goes to the sender's address exactly as it bound it */
	assert_int_equal(m.fromlen, len);
	assert_int_equal(kipc_reply(k, &m, "A=1", 3), 0);
	got = recv(c, in, sizeof(in), 0);
	assert_int_equal(got, 43);
	assert_memory_equal(in + 40, "A=1", 3);
	assert_int_equal(kipc_recv(k, in, sizeof(in), &m), 0);
	close(c);
}

static void
test_socket_abstract(void **state)
{
	struct kipc k, k2;
	int r;

	(void)state;
	/*
	 * The abstract name is one per network namespace: a namespace of
	 * this test's own keeps it from a real dynolog, and from another run
	 * of this test.  Without one (not root), the test is skipped.
	 */
	if (unshare(CLONE_NEWNET) == -1) {
		fprintf(stderr, "no network namespace of its own: skipped\n");
		skip();
	}
	r = kipc_bind(NULL, &k);
	assert_int_equal(r, KIPC_BOUND);
	assert_true(k.abstract);
	assert_int_equal(kipc_bind(NULL, &k2), KIPC_HELD);
	round_trip(&k, NULL);
	kipc_close(&k);
}

static void
test_socket_dir(void **state)
{
	char dir[] = "/tmp/test_capture.XXXXXX", path[128];
	struct kipc k, k2;
	int s;
	struct sockaddr_un sun = { .sun_family = AF_UNIX };

	(void)state;
	assert_non_null(mkdtemp(dir));
	/* a stale file, left by a daemon that is gone, is replaced */
	snprintf(path, sizeof(path), "%s/dynolog", dir);
	memcpy(sun.sun_path, path, strlen(path) + 1);
	s = socket(AF_UNIX, SOCK_DGRAM, 0);
	assert_int_equal(bind(s, (struct sockaddr *)&sun, sizeof(sun)), 0);
	close(s);
	assert_int_equal(kipc_bind(dir, &k), KIPC_BOUND);
	assert_string_equal(k.path, path);
	/* a live one is held */
	assert_int_equal(kipc_bind(dir, &k2), KIPC_HELD);
	assert_string_equal(kipc_name(&k2), path);
	round_trip(&k, dir);
	kipc_close(&k);
	assert_int_equal(access(path, F_OK), -1);
	rmdir(dir);
}

/* ---- capserve ---- */

static struct kipc_request
poll_of(int32_t type, int32_t leaf, int32_t parent)
{
	struct kipc_request r = { .type = type, .npids = 2 };

	r.pids[0] = leaf;
	r.pids[1] = parent;
	return r;
}

static void
serve_setup(struct capserve *c)
{
	memset(c, 0, sizeof(*c));
	c->target = 100;
	c->uid = 1000;
	c->duration_ns = 2 * SEC;
	c->warmup_ns = 1 * SEC;
	c->quiet_ns = 10 * SEC;
	c->pending_ns = 10 * SEC;
	c->max_procs = 8;
}

static bool
always(int32_t pid)
{
	(void)pid;
	return true;
}

static bool
never(int32_t pid)
{
	(void)pid;
	return false;
}

static void
test_plan(void **state)
{
	struct capserve c;
	struct kipc_request r = poll_of(KIPC_ACTIVITIES, 100, 1);

	(void)state;
	serve_setup(&c);
	assert_int_equal(capserve_poll(&c, 100, 1000, &r, T0 + 123456, false),
	    CAPSERVE_REQUEST);
	/* now + warm-up + a tick + the margin, rounded up to a whole ms */
	assert_int_equal(c.start_ns, T0 + 2250 * MS + MS);
	assert_int_equal(c.start_ns % MS, 0);
	assert_int_equal(c.end_ns, c.start_ns + 2 * SEC);
	assert_true(c.start_ns - c.warmup_ns - CAPSERVE_TICK_NS >=
	    T0 + 123456 + CAPSERVE_MARGIN_NS);
	/* a later process is served only while a tick fits before the warm-up */
	assert_false(capserve_closed(&c, c.serve_until_ns));
	assert_true(capserve_closed(&c, c.serve_until_ns + 1));
	assert_true(c.serve_until_ns + CAPSERVE_TICK_NS <= c.start_ns -
	    c.warmup_ns);
	/* with others to wait for, one interval more */
	serve_setup(&c);
	c.extra_ns = 5 * SEC;
	capserve_plan(&c, T0);
	assert_int_equal(c.start_ns, T0 + 7250 * MS);
	assert_int_equal(c.serve_until_ns, T0 + 5125 * MS);
}

static void
test_who_is_served(void **state)
{
	struct capserve c;
	struct kipc_request r;

	(void)state;
	serve_setup(&c);
	/* not ours: another tree, a forged leaf, another user */
	r = poll_of(KIPC_ACTIVITIES, 300, 200);
	assert_int_equal(capserve_poll(&c, 300, 1000, &r, T0, false),
	    CAPSERVE_NOTHING);
	r = poll_of(KIPC_ACTIVITIES, 101, 100);
	assert_int_equal(capserve_poll(&c, 999, 1000, &r, T0, false),
	    CAPSERVE_NOTHING);
	assert_int_equal(capserve_poll(&c, 101, 0, &r, T0, false),
	    CAPSERVE_NOTHING);
	assert_int_equal(c.other_polls, 3);
	/* busy: not served, counted */
	r = poll_of(0, 101, 100);
	assert_int_equal(capserve_poll(&c, 101, 1000, &r, T0, false),
	    CAPSERVE_NOTHING);
	assert_int_equal(c.busy_polls, 1);
	assert_int_equal(c.nprocs, 0);
	/* a child of the target, then the target itself, then a repeat */
	r = poll_of(KIPC_ACTIVITIES, 101, 100);
	assert_int_equal(capserve_poll(&c, 101, 1000, &r, T0 + MS, false),
	    CAPSERVE_REQUEST);
	r = poll_of(KIPC_ACTIVITIES, 100, 1);
	assert_int_equal(capserve_poll(&c, 100, 1000, &r, T0 + 2 * MS, false),
	    CAPSERVE_REQUEST);
	assert_int_equal(capserve_poll(&c, 100, 1000, &r, T0 + 3 * MS, false),
	    CAPSERVE_NOTHING);
	assert_int_equal(c.nprocs, 2);
	/* too late for the planned start */
	r = poll_of(KIPC_ACTIVITIES, 102, 100);
	assert_int_equal(capserve_poll(&c, 102, 1000, &r, c.serve_until_ns + 1,
	    false), CAPSERVE_NOTHING);
	assert_int_equal(c.late_polls, 1);
	/* root serves processes of any user */
	serve_setup(&c);
	c.any_uid = true;
	r = poll_of(KIPC_ACTIVITIES, 101, 100);
	assert_int_equal(capserve_poll(&c, 101, 1234, &r, T0, false),
	    CAPSERVE_REQUEST);
	/* --max-processes */
	serve_setup(&c);
	c.max_procs = 1;
	assert_int_equal(capserve_poll(&c, 101, 1000, &r, T0, false),
	    CAPSERVE_REQUEST);
	r = poll_of(KIPC_ACTIVITIES, 103, 100);
	assert_int_equal(capserve_poll(&c, 103, 1000, &r, T0, false),
	    CAPSERVE_NOTHING);
}

static void
test_what_polls_say(void **state)
{
	struct capserve c;
	struct kipc_request idle = poll_of(KIPC_ACTIVITIES, 101, 100);
	struct kipc_request busy = poll_of(0, 101, 100);
	struct capproc *p;

	(void)state;
	/* idle after the start, never seen busy: refused */
	serve_setup(&c);
	capserve_poll(&c, 101, 1000, &idle, T0, false);
	p = capserve_find(&c, 101);
	capserve_poll(&c, 101, 1000, &idle, c.start_ns - MS, false);
	assert_int_equal(p->state, CAPPROC_SERVED);	/* still waiting */
	/* just after the start, its profiler may be waking to start it */
	capserve_poll(&c, 101, 1000, &idle, c.start_ns + CAPSERVE_MARGIN_NS / 2,
	    false);
	assert_int_equal(p->state, CAPPROC_SERVED);
	capserve_poll(&c, 101, 1000, &idle, c.start_ns + CAPSERVE_MARGIN_NS,
	    false);
	assert_int_equal(p->state, CAPPROC_REFUSED);
	assert_true(capserve_settled(&c));

	/* a lone process that refused is asked once more, with a new plan */
	serve_setup(&c);
	c.retries = 1;
	capserve_poll(&c, 101, 1000, &idle, T0, false);
	p = capserve_find(&c, 101);
	{
		int64_t first = c.start_ns, again = c.start_ns +
		    CAPSERVE_MARGIN_NS;

		assert_int_equal(capserve_poll(&c, 101, 1000, &idle, again,
		    false), CAPSERVE_AGAIN);
		assert_int_equal(p->state, CAPPROC_SERVED);
		assert_true(c.start_ns >= again + CAPSERVE_TICK_NS +
		    CAPSERVE_MARGIN_NS);
		assert_true(c.start_ns > first);
		assert_int_equal(c.end_ns, c.start_ns + c.duration_ns);
		assert_int_equal(capserve_poll(&c, 101, 1000, &idle,
		    c.start_ns + CAPSERVE_MARGIN_NS, false), CAPSERVE_NOTHING);
		assert_int_equal(p->state, CAPPROC_REFUSED);
		assert_non_null(strstr(p->why, "twice"));
	}
	/* not one of several: they trace one span */
	serve_setup(&c);
	c.retries = 1;
	capserve_poll(&c, 101, 1000, &idle, T0, false);
	{
		struct kipc_request other = poll_of(KIPC_ACTIVITIES, 102, 100);

		capserve_poll(&c, 102, 1000, &other, T0 + MS, false);
	}
	assert_int_equal(capserve_poll(&c, 101, 1000, &idle, c.start_ns +
	    CAPSERVE_MARGIN_NS, false), CAPSERVE_NOTHING);
	assert_int_equal(capserve_find(&c, 101)->state, CAPPROC_REFUSED);

	/* busy, then idle without a trace: it traced and wrote nothing */
	serve_setup(&c);
	capserve_poll(&c, 101, 1000, &idle, T0, false);
	p = capserve_find(&c, 101);
	capserve_poll(&c, 101, 1000, &busy, c.start_ns + SEC, false);
	assert_int_equal(p->state, CAPPROC_SERVED);
	capserve_poll(&c, 101, 1000, &idle, c.end_ns + 2 * SEC, false);
	assert_int_equal(p->state, CAPPROC_NO_TRACE);

	/* idle with the trace there: done */
	serve_setup(&c);
	capserve_poll(&c, 101, 1000, &idle, T0, false);
	capserve_poll(&c, 101, 1000, &idle, c.end_ns + 2 * SEC, true);
	assert_int_equal(capserve_find(&c, 101)->state, CAPPROC_DONE);

	/* gone, or silent too long after the end */
	serve_setup(&c);
	capserve_poll(&c, 101, 1000, &idle, T0, false);
	capserve_tick(&c, c.start_ns, never);
	assert_int_equal(capserve_find(&c, 101)->state, CAPPROC_NO_TRACE);
	serve_setup(&c);
	capserve_poll(&c, 101, 1000, &idle, T0, false);
	capserve_tick(&c, c.end_ns + c.quiet_ns, always);
	assert_int_equal(capserve_find(&c, 101)->state, CAPPROC_SERVED);
	capserve_tick(&c, c.end_ns + c.quiet_ns + 1, always);
	assert_int_equal(capserve_find(&c, 101)->state, CAPPROC_NO_TRACE);

	/* by iterations: idle is waiting for the next step, until pending_ns */
	serve_setup(&c);
	c.by_iterations = true;
	capserve_poll(&c, 101, 1000, &idle, T0, false);
	capserve_poll(&c, 101, 1000, &idle, T0 + 5 * SEC, false);
	assert_int_equal(capserve_find(&c, 101)->state, CAPPROC_SERVED);
	capserve_tick(&c, T0 + c.pending_ns + 1, always);
	assert_int_equal(capserve_find(&c, 101)->state, CAPPROC_REFUSED);
}

/* ---- procinfo ---- */

/* root/PID/stat holding line. */
static void
fake_stat(const char *root, int pid, const char *line)
{
	char path[256];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%d", root, pid);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/%d/stat", root, pid);
	assert_non_null(fp = fopen(path, "w"));
	fprintf(fp, "%s\n", line);
	fclose(fp);
}

static void
test_descends(void **state)
{
	char root[] = "/tmp/test_capture.XXXXXX", cmd[512];

	(void)state;
	assert_non_null(mkdtemp(root));
	fake_stat(root, 1, "1 (init) S 0 1 1 0");
	fake_stat(root, 10, "10 (sh) S 1 10 10 0");
	/* a name with spaces and parentheses: the state follows the last ')' */
	fake_stat(root, 11, "11 (a) S 1 (b) S 10 11 11 0");
	fake_stat(root, 12, "12 (python3) R 11 12 12 0");
	fake_stat(root, 20, "20 (sleep) S 1 20 20 0");
	fake_stat(root, 30, "30 (dead) Z 10 30 30 0");
	/* a loop, as a /proc read while pids are reused could show */
	fake_stat(root, 40, "40 (x) S 41 40 40 0");
	fake_stat(root, 41, "41 (y) S 40 41 41 0");
	procinfo_root(root);
	assert_true(procinfo_descends(10, 10));
	assert_true(procinfo_descends(12, 10));
	assert_true(procinfo_descends(12, 11));
	assert_true(procinfo_descends(11, 10));
	assert_false(procinfo_descends(10, 12));	/* a parent */
	assert_false(procinfo_descends(1, 10));		/* PID 1 */
	assert_false(procinfo_descends(20, 10));	/* unrelated */
	assert_false(procinfo_descends(30, 10));	/* a zombie */
	assert_false(procinfo_descends(99, 10));	/* gone */
	assert_false(procinfo_descends(40, 10));	/* the loop ends */
	assert_false(procinfo_descends(0, 10));
	procinfo_root(NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header_layout),
		cmocka_unit_test(test_parse_request),
		cmocka_unit_test(test_socket_abstract),
		cmocka_unit_test(test_socket_dir),
		cmocka_unit_test(test_plan),
		cmocka_unit_test(test_who_is_served),
		cmocka_unit_test(test_what_polls_say),
		cmocka_unit_test(test_descends),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
