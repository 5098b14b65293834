/*
 * The wall-clock and CPU time of one command.
 *
 *   make B=build bench                 (builds build/bench-runtime)
 *   build/bench-runtime COMMAND [ARG...]
 *
 * Runs COMMAND with this program's stdin and stdout and its stderr sent
 * to /dev/null, and prints to stderr "WALL_US CPU_US EXIT": the time from
 * fork to the end of waitpid, the command's user plus system time (from
 * wait4; Linux counts it from the scheduler's runtime, to the microsecond
 * here), and its exit status.  CPU time is what to compare on a busy
 * machine, where wall-clock time also counts the waits for a CPU.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static long long
tv_us(const struct timeval *tv)
{
	return (long long)tv->tv_sec * 1000000 + tv->tv_usec;
}

int
main(int argc, char *argv[])
{
	struct rusage ru;
	long long t0, t1;
	pid_t pid;
	int status, null;

	if (argc < 2) {
		fprintf(stderr, "usage: bench-runtime COMMAND [ARG...]\n");
		return 2;
	}
	if ((null = open("/dev/null", O_WRONLY | O_CLOEXEC)) == -1)
		err(1, "/dev/null");
	t0 = now_us();
	if ((pid = fork()) == -1)
		err(1, "fork");
	if (pid == 0) {
		dup2(null, STDERR_FILENO);
		execvp(argv[1], argv + 1);
		_exit(127);
	}
	while (wait4(pid, &status, 0, &ru) == -1)
		if (errno != EINTR)
			err(1, "wait4");
	t1 = now_us();
	fprintf(stderr, "%lld %lld %d\n", t1 - t0,
	    tv_us(&ru.ru_utime) + tv_us(&ru.ru_stime),
	    WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	return 0;
}
