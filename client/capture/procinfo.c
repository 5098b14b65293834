/* procinfo: what /proc says about a process (procinfo.h). */
#include "procinfo.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *proc = "/proc";

void
procinfo_root(const char *root)
{
	proc = root != NULL ? root : "/proc";
}

/* The whole of /proc/PID/name into a new buffer (NUL added); NULL if not. */
static char *
slurp(pid_t pid, const char *name, size_t max, size_t *len)
{
	char path[PATH_MAX], *buf, *p;
	size_t cap = 4096, n = 0;
	ssize_t r;
	int fd;

	snprintf(path, sizeof(path), "%s/%d/%s", proc, (int)pid, name);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return NULL;
	if ((buf = malloc(cap)) == NULL) {
		close(fd);
		return NULL;
	}
	for (;;) {
		if (n + 1 == cap) {
			if (cap >= max)
				break;
			if ((p = realloc(buf, cap * 2)) == NULL)
				break;
			buf = p;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r == -1) {
				free(buf);
				close(fd);
				return NULL;
			}
			break;
		}
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* The state letter and parent of pid from /proc/PID/stat; false if gone. */
static bool
stat_of(pid_t pid, char *state, pid_t *ppid)
{
	char *buf, *rp;
	size_t len;
	int pp;
	bool ok;

	if ((buf = slurp(pid, "stat", 4096, &len)) == NULL)
		return false;
	/* the name may hold spaces and parentheses: skip to the last ')' */
	ok = (rp = strrchr(buf, ')')) != NULL &&
	    sscanf(rp + 1, " %c %d", state, &pp) == 2;
	free(buf);
	if (ok && ppid != NULL)
		*ppid = (pid_t)pp;
	return ok;
}

bool
procinfo_alive(pid_t pid)
{
	char state;

	return stat_of(pid, &state, NULL) && state != 'Z' && state != 'X';
}

enum procinfo_access
procinfo_check(pid_t pid, uid_t *uid)
{
	char *buf, *line;
	size_t len;
	unsigned long u;

	*uid = (uid_t)-1;
	if (pid < 1 || !procinfo_alive(pid))
		return PROCINFO_NONE;
	if ((buf = slurp(pid, "status", 1 << 16, &len)) != NULL) {
		if ((line = strstr(buf, "\nUid:")) != NULL &&
		    sscanf(line + 5, "%lu", &u) == 1)
			*uid = (uid_t)u;
		free(buf);
	}
	/* the kernel's rule for signals: the same real or effective uid, or root */
	if (kill(pid, 0) == -1)
		return errno == ESRCH ? PROCINFO_NONE : PROCINFO_NOT_YOURS;
	if (geteuid() != 0 && *uid != (uid_t)-1 && *uid != getuid() &&
	    *uid != geteuid())
		return PROCINFO_NOT_YOURS;
	return PROCINFO_OK;
}

int
procinfo_getenv(pid_t pid, const char *name, char *buf, size_t len)
{
	size_t n, klen = strlen(name);
	char *env, *p;

	buf[0] = '\0';
	if ((env = slurp(pid, "environ", 1 << 22, &n)) == NULL)
		return -1;
	for (p = env; p < env + n; p += strlen(p) + 1) {
		if (strncmp(p, name, klen) == 0 && p[klen] == '=') {
			snprintf(buf, len, "%s", p + klen + 1);
			free(env);
			return 1;
		}
	}
	free(env);
	return 0;
}

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 if invalid. */
static size_t
utf8_len(const unsigned char *s, size_t n)
{
	size_t k;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		k = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		k = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		k = 4;
	else
		return 0;
	if (k > n)
		return 0;
	for (size_t i = 1; i < k; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	/* C1 controls (U+0080..U+009F) are refused as metadata */
	if (k == 2 && s[0] == 0xc2 && s[1] < 0xa0)
		return 0;
	return k;
}

bool
procinfo_cmdline(pid_t pid, char *buf, size_t len)
{
	const unsigned char *p;
	size_t n, o = 0, k;
	char *raw;

	if (len == 0 || (raw = slurp(pid, "cmdline", 1 << 16, &n)) == NULL)
		return false;
	while (n > 0 && raw[n - 1] == '\0')
		n--;
	p = (const unsigned char *)raw;
	for (size_t i = 0; i < n; i += k) {
		k = utf8_len(p + i, n - i);
		if (o + (k > 0 ? k : 1) + 1 > len)
			break;
		if (k == 0 || p[i] < 0x20 || p[i] == 0x7f) {
			buf[o++] = p[i] == '\0' ? ' ' : '?';
			k = 1;
		} else {
			memcpy(buf + o, p + i, k);
			o += k;
		}
	}
	buf[o] = '\0';
	free(raw);
	return n > 0;
}

bool
procinfo_torch_version(pid_t pid, char *buf, size_t len)
{
	char *maps, *line, *save = NULL, *lib, vpath[PATH_MAX], text[512];
	size_t n;
	FILE *fp;
	bool found = false;

	if ((maps = slurp(pid, "maps", 1 << 24, &n)) == NULL)
		return false;
	for (line = strtok_r(maps, "\n", &save); line != NULL && !found;
	    line = strtok_r(NULL, "\n", &save)) {
		char *cut;

		/*
		 * torch's own files: .../torch/lib/libtorch_cpu.so of a wheel,
		 * .../torch/_C.cpython-*.so everywhere (Debian's libtorch is in
		 * /usr/lib): .../torch/version.py is beside them
		 */
		if ((lib = strchr(line, '/')) == NULL ||
		    ((cut = strstr(lib, "/torch/lib/libtorch")) == NULL &&
		    (cut = strstr(lib, "/torch/_C.")) == NULL))
			continue;
		if ((size_t)snprintf(vpath, sizeof(vpath), "%.*s/torch/version.py",
		    (int)(cut - lib), lib) >= sizeof(vpath) ||
		    !procinfo_path(pid, vpath, text, sizeof(text)) ||
		    ((fp = fopen(text, "re")) == NULL &&
		    (fp = fopen(vpath, "re")) == NULL))
			continue;
		while (!found && fgets(text, sizeof(text), fp) != NULL) {
			char *q, *e;

			if (strncmp(text, "__version__", 11) != 0 ||
			    (q = strpbrk(text, "'\"")) == NULL ||
			    (e = strchr(q + 1, *q)) == NULL || e == q + 1)
				continue;
			snprintf(buf, len, "%.*s", (int)(e - q - 1), q + 1);
			for (char *c = buf; *c != '\0'; c++)
				if (!isprint((unsigned char)*c))
					*c = '?';
			found = true;
		}
		fclose(fp);
	}
	free(maps);
	return found;
}

bool
procinfo_descends(pid_t pid, pid_t ancestor)
{
	char state;
	pid_t p = pid, pp;

	if (pid < 1 || ancestor < 1 || !procinfo_alive(pid))
		return false;
	for (int depth = 0; depth < PROCINFO_MAX_DEPTH; depth++) {
		if (p == ancestor)
			return true;
		/* PID 1's parent is 0; a parent outside the namespace is 0 */
		if (p <= 1 || !stat_of(p, &state, &pp) || pp == p)
			return false;
		p = pp;
	}
	return false;
}

size_t
procinfo_descendants(pid_t pid, pid_t *out, size_t max)
{
	struct { pid_t pid, ppid; } *all = NULL, *p;
	size_t nall = 0, cap = 0, n = 0;
	struct dirent *e;
	DIR *d;

	if ((d = opendir(proc)) == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		char state, *end;
		long v = strtol(e->d_name, &end, 10);
		pid_t pp;

		if (*end != '\0' || v < 1 || !stat_of((pid_t)v, &state, &pp) ||
		    state == 'Z')
			continue;
		if (nall == cap) {
			cap = cap ? cap * 2 : 256;
			if ((p = realloc(all, cap * sizeof(*all))) == NULL)
				break;
			all = p;
		}
		all[nall].pid = (pid_t)v;
		all[nall++].ppid = pp;
	}
	closedir(d);
	/* breadth first from pid: out[] is the queue */
	for (size_t i = 0; i < nall && n < max; i++)
		if (all[i].ppid == pid)
			out[n++] = all[i].pid;
	for (size_t head = 0; head < n; head++)
		for (size_t i = 0; i < nall && n < max; i++)
			if (all[i].ppid == out[head])
				out[n++] = all[i].pid;
	free(all);
	return n;
}

bool
procinfo_path(pid_t pid, const char *path, char *buf, size_t len)
{
	return (size_t)snprintf(buf, len, "%s/%d/root%s", proc, (int)pid,
	    path) < len;
}
