/*
 * source_child: the aiu-smi process.
 *
 * Its stdout and stderr are pipes read without blocking in the event loop.
 * A row is stamped with CLOCK_REALTIME when the read that completed it
 * returns.  A SOCK_SEQPACKET stdout with kernel arrival stamps
 * (SO_TIMESTAMPNS) was tried and measured at 8 cards x 100 Hz: it stamps
 * more exactly (p99 30 us instead of 230 us after the write) but cost the
 * daemon 24% more CPU and the child 35% more, for an error far below any
 * sampling interval; so pipes it is.
 *
 * Each start of the child also runs the configured command with "-v"
 * alone (SPYRE.md: -v/--version), beside it: the first line it prints, on
 * a zero exit, is aiu-smi's version (status shows it; the store keeps it
 * from the time the child started, for reports).  It is watched on the
 * loop like the child and killed if it has not answered in
 * VERSION_TIMEOUT_NS, so an aiu-smi that ignores -v costs nothing more.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clockstep.h"
#include "config.h"
#include "pace.h"
#include "source_base.h"
#include "source_child.h"
#include "source_rows.h"
#include "timeparse.h"

#define READ_CHUNK		65536	/* a pipe's whole default capacity */
#define SILENCE_CHECK_NS	(1ULL * NSEC_PER_SEC)
#define VERSION_TIMEOUT_NS	(5ULL * NSEC_PER_SEC)
#define VERSION_READ		4096	/* of its output: the first line is enough */

static char read_buf[READ_CHUNK];

/* ---- output ---- */

/*
 * Read one of the child's pipes, its stdout (rows) or its stderr (log
 * lines), until it would block.  Returns true at end of file or on an
 * error, when the pipe should be closed.
 */
static bool
drain(struct source *src, bool is_stdout)
{
	int fd = is_stdout ? src->out_fd : src->err_fd;
	ssize_t n;

	for (;;) {
		n = read(fd, read_buf, sizeof(read_buf));
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return n == 0 || errno != EAGAIN;
		if (is_stdout) {
			/* a step is seen before rows of the new clock */
			(void)clockstep_check();
			source_stdout_bytes(src, read_buf, (size_t)n,
			    now_realtime_ns());
		} else
			source_stderr_bytes(src, read_buf, (size_t)n);
	}
}

static void
close_pipe(struct source *src, bool is_stdout)
{
	int *fd = is_stdout ? &src->out_fd : &src->err_fd;
	sd_event_source **io = is_stdout ? &src->out_io : &src->err_io;

	*io = sd_event_source_disable_unref(*io);
	if (*fd != -1)
		close(*fd);
	*fd = -1;
}

static int
on_pipe(sd_event_source *s, int fd, uint32_t revents, void *arg)
{
	struct source *src = arg;
	bool is_stdout = fd == src->out_fd;

	(void)s;
	(void)revents;
	if (drain(src, is_stdout))
		close_pipe(src, is_stdout);
	return 0;
}

/* ---- the process ---- */

static char **
child_argv(const struct source *src)
{
	const struct config *cfg = src->cfg;
	size_t n = (size_t)cfg->source.argc + 9, i = 0;
	char **argv = calloc(n, sizeof(*argv));
	char delay[32], *ids = NULL;

	if (argv == NULL)
		return NULL;
	source_format_seconds(source_wanted_delay(src), delay, sizeof(delay));
	for (int a = 0; a < cfg->source.argc; a++)
		argv[i++] = strdup(cfg->source.argv[a]);
	argv[i++] = strdup("-s");
	argv[i++] = strdup("-g");
	argv[i++] = strdup(cfg->source.groups);
	argv[i++] = strdup("-d");
	argv[i++] = strdup(delay);
	if (!cfg->source.all_devices) {
		size_t len = cfg->source.ndevices * 5 + 1, o = 0;

		if ((ids = malloc(len)) != NULL) {
			for (size_t d = 0; d < cfg->source.ndevices; d++)
				o += (size_t)snprintf(ids + o, len - o, "%s%d",
				    d ? "," : "", cfg->source.devices[d]);
			argv[i++] = strdup("-i");
			argv[i++] = ids;
		}
	}
	argv[i++] = strdup(cfg->source.metric_files);
	argv[i] = NULL;
	for (size_t k = 0; k < i; k++)
		if (argv[k] == NULL) {
			for (size_t j = 0; j < i; j++)
				free(argv[j]);
			free(argv);
			return NULL;
		}
	return argv;
}

static void
free_argv(char **argv)
{
	for (size_t i = 0; argv != NULL && argv[i] != NULL; i++)
		free(argv[i]);
	free(argv);
}

/* In the forked child: become aiu-smi.  Never returns. */
static _Noreturn void
child_exec(char **argv, int out_w, int err_w, pid_t daemon_pid)
{
	sigset_t none;

	/* die with the daemon, whatever kills it */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != daemon_pid)
		_exit(127);
	setpgid(0, 0);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	if (dup2(out_w, STDOUT_FILENO) == -1 || dup2(err_w, STDERR_FILENO) == -1)
		_exit(127);
	/* Python block-buffers a pipe; rows would arrive late and mis-stamped */
	setenv("PYTHONUNBUFFERED", "1", 1);
	execvp(argv[0], argv);
	dprintf(STDERR_FILENO, "cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

static int on_child_exit(sd_event_source *s, const siginfo_t *si, void *arg);
static void describe_status(int code, int status, char *buf, size_t len);

/* ---- aiu-smi -v ---- */

/*
 * The first line of text[0..n) that holds more than blanks, trimmed, each
 * control character made a space, cut to fit out; "" if none.
 */
static void
first_line(const char *text, size_t n, char *out, size_t len)
{
	size_t i = 0, o = 0;

	out[0] = '\0';
	while (i < n) {
		size_t end = i;

		while (end < n && text[end] != '\n')
			end++;
		while (i < end && (text[i] == ' ' || text[i] == '\t' ||
		    text[i] == '\r'))
			i++;
		while (end > i && (text[end - 1] == ' ' || text[end - 1] ==
		    '\t' || text[end - 1] == '\r'))
			end--;
		if (end > i) {
			for (; i < end && o + 1 < len; i++)
				out[o++] = (unsigned char)text[i] < 0x20 ||
				    text[i] == 0x7f ? ' ' : text[i];
			out[o] = '\0';
			return;
		}
		i = end + 1;
	}
}

static void
version_done(struct source *src)
{
	src->ver_child = sd_event_source_disable_unref(src->ver_child);
	src->ver_timer = sd_event_source_disable_unref(src->ver_timer);
	if (src->ver_fd != -1)
		close(src->ver_fd);
	src->ver_fd = -1;
	src->ver_pid = 0;
}

static int
on_version_exit(sd_event_source *s, const siginfo_t *si, void *arg)
{
	struct source *src = arg;
	char buf[VERSION_READ], v[sizeof(src->stats.smi_version)], how[128];
	size_t got = 0;
	ssize_t n;

	(void)s;
	/* it has exited: what it wrote is all in the pipe */
	while (got < sizeof(buf) && ((n = read(src->ver_fd, buf + got,
	    sizeof(buf) - got)) > 0 || (n == -1 && errno == EINTR)))
		if (n > 0)
			got += (size_t)n;
	first_line(buf, got, v, sizeof(v));
	if (si->si_code == CLD_EXITED && si->si_status == 0 && v[0] != '\0') {
		if (strcmp(v, src->stats.smi_version) != 0)
			log_info("aiu-smi -v: %s", v);
		snprintf(src->stats.smi_version, sizeof(src->stats.smi_version),
		    "%s", v);
		if (store_smi_version(src->st, v, src->ver_since_ns) == -1)
			log_warnx("aiu-smi's version could not be stored");
	} else {
		if (si->si_code == CLD_EXITED && si->si_status == 0)
			snprintf(how, sizeof(how), "printed nothing");
		else
			describe_status(si->si_code, si->si_status, how,
			    sizeof(how));
		log_warnx("%s -v %s: aiu-smi's version is not known",
		    src->cfg->source.argv[0], how);
	}
	version_done(src);
	return 0;
}

static int
on_version_timer(sd_event_source *s, uint64_t usec, void *arg)
{
	struct source *src = arg;

	(void)s;
	(void)usec;
	if (src->ver_pid != 0) {
		log_warnx("%s -v gave no answer in %llus; killing it",
		    src->cfg->source.argv[0],
		    (unsigned long long)(VERSION_TIMEOUT_NS / NSEC_PER_SEC));
		kill(-src->ver_pid, SIGKILL);
	}
	return 0;
}

/* Run "COMMAND -v" beside the child; one still running is killed first. */
static void
version_query(struct source *src)
{
	const struct config *cfg = src->cfg;
	char **argv;
	int p[2] = { -1, -1 }, devnull = -1;
	pid_t pid, self = getpid();
	uint64_t now;

	source_stop_version(src);
	if ((argv = calloc((size_t)cfg->source.argc + 2, sizeof(*argv))) ==
	    NULL)
		return;
	for (int a = 0; a < cfg->source.argc; a++)
		if ((argv[a] = strdup(cfg->source.argv[a])) == NULL)
			goto out;
	if ((argv[cfg->source.argc] = strdup("-v")) == NULL ||
	    pipe2(p, O_CLOEXEC) == -1 ||
	    fcntl(p[0], F_SETFL, O_NONBLOCK) == -1 ||
	    (devnull = open("/dev/null", O_WRONLY | O_CLOEXEC)) == -1 ||
	    (pid = fork()) == -1) {
		log_warn("cannot run %s -v", cfg->source.argv[0]);
		goto out;
	}
	if (pid == 0)
		child_exec(argv, p[1], devnull, self);
	setpgid(pid, pid);
	src->ver_pid = pid;
	src->ver_fd = p[0];
	p[0] = -1;
	src->ver_since_ns = now_realtime_ns();
	sd_event_now(src->ev, CLOCK_MONOTONIC, &now);
	if (sd_event_add_child(src->ev, &src->ver_child, pid, WEXITED,
	    on_version_exit, src) < 0 || source_arm_timer(src,
	    &src->ver_timer, now + VERSION_TIMEOUT_NS / 1000,
	    on_version_timer) < 0) {
		log_warnx("cannot watch %s -v (pid %d)", cfg->source.argv[0],
		    (int)pid);
		source_stop_version(src);
	}
out:
	for (int i = 0; i < 2; i++)
		if (p[i] != -1)
			close(p[i]);
	if (devnull != -1)
		close(devnull);
	free_argv(argv);
}

void
source_stop_version(struct source *src)
{
	if (src->ver_pid != 0) {
		kill(-src->ver_pid, SIGKILL);
		(void)waitpid(src->ver_pid, NULL, 0);
	}
	version_done(src);
}

static int
on_restart_timer(sd_event_source *s, uint64_t usec, void *arg)
{
	struct source *src = arg;

	(void)s;
	(void)usec;
	if (src->pid == 0 && !src->stopping)
		source_spawn(src);
	return 0;
}

void
source_schedule_restart(struct source *src, uint64_t delay_ns)
{
	uint64_t now;

	sd_event_now(src->ev, CLOCK_MONOTONIC, &now);
	if (source_arm_timer(src, &src->restart_timer, now + delay_ns / 1000,
	    on_restart_timer) < 0)
		log_warnx("cannot arm the restart timer; aiu-smi stays stopped");
}

/* The child's stdout and stderr pipes; our ends do not block. */
static int
open_channels(int out[2], int err[2])
{
	if (pipe2(out, O_CLOEXEC) == -1 || pipe2(err, O_CLOEXEC) == -1) {
		log_warn("pipe");
		return -1;
	}
	if (fcntl(out[0], F_SETFL, O_NONBLOCK) == -1 ||
	    fcntl(err[0], F_SETFL, O_NONBLOCK) == -1) {
		log_warn("fcntl");
		return -1;
	}
	return 0;
}

static int
watch_child(struct source *src)
{
	if (sd_event_add_child(src->ev, &src->child_ev, src->pid, WEXITED,
	    on_child_exit, src) < 0 ||
	    sd_event_add_io(src->ev, &src->err_io, src->err_fd, EPOLLIN,
	    on_pipe, src) < 0 ||
	    sd_event_add_io(src->ev, &src->out_io, src->out_fd, EPOLLIN,
	    on_pipe, src) < 0)
		return -1;
	return 0;
}

void
source_spawn(struct source *src)
{
	int out[2] = { -1, -1 }, err[2] = { -1, -1 };
	char **argv;
	pid_t pid, self = getpid();
	char delay[32];

	if ((argv = child_argv(src)) == NULL) {
		log_warnx("out of memory building aiu-smi's command line");
		source_schedule_restart(src, src->backoff_ns);
		return;
	}
	if (open_channels(out, err) == -1)
		goto fail;
	if ((pid = fork()) == -1) {
		log_warn("fork");
		goto fail;
	}
	if (pid == 0)
		child_exec(argv, out[1], err[1], self);
	/* also set here, so a kill(-pid) right after fork reaches it */
	setpgid(pid, pid);
	close(out[1]);
	close(err[1]);
	free_argv(argv);

	src->pid = pid;
	src->out_fd = out[0];
	src->err_fd = err[0];
	src->child_interval_ns = source_wanted_delay(src);
	src->spawned_mono_ns = now_monotonic_ns();
	src->last_row_mono_ns = 0;
	if (src->started_once)
		src->stats.restarts++;
	src->started_once = true;
	src->stats.pid = pid;
	src->stats.interval_ns = src->child_interval_ns;
	source_format_seconds(src->child_interval_ns, delay, sizeof(delay));
	log_info("started %s (pid %d) every %ss", src->cfg->source.argv[0],
	    (int)pid, delay);
	version_query(src);
	if (watch_child(src) < 0) {
		log_warnx("cannot watch aiu-smi (pid %d); it is killed", (int)pid);
		source_kill(src, "not watchable");
	}
	return;
fail:
	for (int i = 0; i < 2; i++) {
		if (out[i] != -1)
			close(out[i]);
		if (err[i] != -1)
			close(err[i]);
	}
	free_argv(argv);
	source_set_error(src, "cannot start aiu-smi: %s", strerror(errno));
	source_schedule_restart(src, src->backoff_ns);
}

static void
describe_status(int code, int status, char *buf, size_t len)
{
	if (code == CLD_EXITED)
		snprintf(buf, len, "exited with status %d", status);
	else
		snprintf(buf, len, "killed by signal %d (%s)%s", status,
		    strsignal(status), code == CLD_DUMPED ? ", core dumped" : "");
}

/* The child is gone: keep what it wrote, then restart it unless stopping. */
static void
child_gone(struct source *src, int code, int status)
{
	uint64_t ran_ns = now_monotonic_ns() - src->spawned_mono_ns;
	char how[128];

	if (src->out_fd != -1) {
		drain(src, true);
		close_pipe(src, true);
	}
	if (src->err_fd != -1) {
		drain(src, false);
		close_pipe(src, false);
	}
	source_rows_reset(src);
	pace_flush(src->pace);
	src->child_ev = sd_event_source_disable_unref(src->child_ev);
	src->kill_timer = sd_event_source_disable_unref(src->kill_timer);
	describe_status(code, status, how, sizeof(how));
	if (!src->stopping && !src->restart_at_once)
		source_set_error(src, "aiu-smi (pid %d) %s after %llus",
		    (int)src->pid, how,
		    (unsigned long long)(ran_ns / NSEC_PER_SEC));
	src->pid = 0;
	src->stats.pid = 0;
	if (src->stopping)
		return;
	if (src->restart_at_once) {
		src->restart_at_once = false;
		source_spawn(src);
		return;
	}
	if (src->last_row_mono_ns != 0 && ran_ns >= SOURCE_HEALTHY_NS)
		src->backoff_ns = SOURCE_BACKOFF_MIN_NS;
	log_warnx("%s; restarting in %llus", src->stats.last_error,
	    (unsigned long long)(src->backoff_ns / NSEC_PER_SEC));
	source_schedule_restart(src, src->backoff_ns);
	src->backoff_ns *= 2;
	if (src->backoff_ns > SOURCE_BACKOFF_MAX_NS)
		src->backoff_ns = SOURCE_BACKOFF_MAX_NS;
}

static int
on_child_exit(sd_event_source *s, const siginfo_t *si, void *arg)
{
	(void)s;
	child_gone(arg, si->si_code, si->si_status);
	return 0;
}

static int
on_kill_timer(sd_event_source *s, uint64_t usec, void *arg)
{
	struct source *src = arg;

	(void)s;
	(void)usec;
	if (src->pid != 0) {
		log_warnx("aiu-smi (pid %d) ignored SIGTERM; sending SIGKILL",
		    (int)src->pid);
		kill(-src->pid, SIGKILL);
	}
	return 0;
}

void
source_kill(struct source *src, const char *why)
{
	uint64_t now;

	if (src->pid == 0)
		return;
	log_notice("stopping aiu-smi (pid %d): %s", (int)src->pid, why);
	kill(-src->pid, SIGTERM);
	sd_event_now(src->ev, CLOCK_MONOTONIC, &now);
	if (source_arm_timer(src, &src->kill_timer,
	    now + SOURCE_KILL_GRACE_NS / 1000, on_kill_timer) < 0)
		kill(-src->pid, SIGKILL);
}

static uint64_t
silence_limit_ns(const struct source *src)
{
	uint64_t limit = SOURCE_SILENCE_INTERVALS * src->child_interval_ns;

	if (src->last_row_mono_ns == 0)
		return SOURCE_STARTUP_GRACE_NS;
	return limit > SOURCE_SILENCE_MIN_NS ? limit : SOURCE_SILENCE_MIN_NS;
}

/*
 * The child's silence is measured in the daemon's own running time: a
 * check that comes more than a period late means the daemon itself did
 * not run (SIGSTOP, a held loop), and the child's output may be waiting
 * in the pipe, unread; its silence is then counted again from now.
 */
static int
on_silence_timer(sd_event_source *s, uint64_t usec, void *arg)
{
	struct source *src = arg;
	uint64_t now = now_monotonic_ns(), since;
	uint64_t due = usec * 1000;

	(void)s;
	if (now > due && now - due > SILENCE_CHECK_NS) {
		src->resumed_mono_ns = now;
		usec = now / 1000;	/* no catching up on the missed checks */
	}
	since = src->last_row_mono_ns ? src->last_row_mono_ns :
	    src->spawned_mono_ns;
	if (src->resumed_mono_ns > since)
		since = src->resumed_mono_ns;
	if (src->pid != 0 && src->kill_timer == NULL &&
	    now - since > silence_limit_ns(src)) {
		source_set_error(src, "aiu-smi (pid %d) printed no row for %llus",
		    (int)src->pid,
		    (unsigned long long)((now - since) / NSEC_PER_SEC));
		log_warnx("%s", src->stats.last_error);
		source_kill(src, "silent");
	}
	/* re-armed from its scheduled time, so it never drifts */
	source_arm_timer(src, &src->silence_timer,
	    usec + SILENCE_CHECK_NS / 1000, on_silence_timer);
	return 0;
}

int
source_watch_silence(struct source *src)
{
	uint64_t now;

	sd_event_now(src->ev, CLOCK_MONOTONIC, &now);
	return source_arm_timer(src, &src->silence_timer,
	    now + SILENCE_CHECK_NS / 1000, on_silence_timer);
}

void
source_stop_child(struct source *src, uint64_t grace_ns)
{
	uint64_t deadline;
	int status = 0;
	pid_t r;

	if (src->pid == 0)
		return;
	kill(-src->pid, SIGTERM);
	deadline = now_monotonic_ns() + grace_ns;
	for (;;) {
		struct pollfd pfd[2] = {
			{ .fd = src->out_fd, .events = POLLIN },
			{ .fd = src->err_fd, .events = POLLIN },
		};

		/* keep reading, or a child blocked on a full buffer never exits */
		poll(pfd, 2, 10);
		if (src->out_fd != -1 && (pfd[0].revents & (POLLIN | POLLHUP)) &&
		    drain(src, true))
			close_pipe(src, true);
		if (src->err_fd != -1 && (pfd[1].revents & (POLLIN | POLLHUP)) &&
		    drain(src, false))
			close_pipe(src, false);
		if ((r = waitpid(src->pid, &status, WNOHANG)) == src->pid ||
		    (r == -1 && errno == ECHILD))
			break;
		if (now_monotonic_ns() > deadline) {
			log_warnx("aiu-smi (pid %d) did not stop in time; "
			    "sending SIGKILL", (int)src->pid);
			kill(-src->pid, SIGKILL);
			waitpid(src->pid, &status, 0);
			break;
		}
	}
	child_gone(src, WIFSIGNALED(status) ? CLD_KILLED : CLD_EXITED,
	    WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
}
