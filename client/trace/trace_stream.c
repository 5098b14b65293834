/*
 * trace_stream: the bytes of a trace file, plain or gzip, and trace_read
 * over them (contracts in trace.h).
 *
 * A gzip file is inflated by a thread of its own a few slots ahead of the
 * reader, so that parsing and inflating overlap: reading a .json.gz then
 * costs about what the slower of the two costs, not their sum.  Plain
 * files are read(2) straight into the caller's buffer.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "trace.h"

/* Bytes handed to the parser at a time. */
#define TRACE_CHUNK	(64 * 1024)
/* zlib's input buffer, and the inflated slots the thread fills ahead. */
#define GZ_BUFFER	(128 * 1024)
#define GZ_SLOTS	4
#define GZ_SLOT_SIZE	(256 * 1024)

/*
 * The inflating thread and its slots.  Slots fill and drain in order: the
 * thread writes slot tail outside the lock while count < GZ_SLOTS, the
 * reader reads slot head while count > 0.  A slot's len 0 is the end of
 * the data, -1 an error described in why; the thread stops after either.
 */
struct inflater {
	pthread_t	 thread;
	pthread_mutex_t	 lock;
	pthread_cond_t	 changed;
	gzFile		 gz;
	char		*buf[GZ_SLOTS];
	int		 len[GZ_SLOTS];
	char		 why[128];
	unsigned	 head, tail, count;
	int		 pos;		/* bytes of slot head already read */
	bool		 stop;		/* the reader is closing */
};

struct trace_stream {
	int	 fd;
	gzFile	 gz;		/* NULL: plain reads of fd */
	struct inflater *inf;	/* with gz */
	bool	 compressed;
	uint64_t delivered;
};

static void
io_error(struct trace_error *err, const char *why)
{
	snprintf(err->msg, sizeof(err->msg), "%s", why);
}

static void *
inflate_ahead(void *arg)
{
	struct inflater *inf = arg;
	bool stop;
	int n, zerr;

	for (;;) {
		pthread_mutex_lock(&inf->lock);
		while (inf->count == GZ_SLOTS && !inf->stop)
			pthread_cond_wait(&inf->changed, &inf->lock);
		stop = inf->stop;
		pthread_mutex_unlock(&inf->lock);
		if (stop)
			break;
		n = gzread(inf->gz, inf->buf[inf->tail], GZ_SLOT_SIZE);
		if (n <= 0) {
			const char *why = gzerror(inf->gz, &zerr);

			/* a cut file ends quietly: zlib only notes it */
			if (n == 0 && zerr == Z_BUF_ERROR) {
				n = -1;
				why = "unexpected end of file: the file is cut short";
			}
			snprintf(inf->why, sizeof(inf->why), "%s", zerr == Z_ERRNO ?
			    strerror(errno) : why);
		}
		pthread_mutex_lock(&inf->lock);
		inf->len[inf->tail] = n;
		inf->tail = (inf->tail + 1) % GZ_SLOTS;
		inf->count++;
		pthread_cond_broadcast(&inf->changed);
		pthread_mutex_unlock(&inf->lock);
		if (n <= 0)
			break;
	}
	return NULL;
}

static void
inflater_free(struct inflater *inf)
{
	for (int i = 0; i < GZ_SLOTS; i++)
		free(inf->buf[i]);
	pthread_cond_destroy(&inf->changed);
	pthread_mutex_destroy(&inf->lock);
	free(inf);
}

static struct inflater *
inflater_start(gzFile gz)
{
	struct inflater *inf;

	if ((inf = calloc(1, sizeof(*inf))) == NULL)
		return NULL;
	inf->gz = gz;
	pthread_mutex_init(&inf->lock, NULL);
	pthread_cond_init(&inf->changed, NULL);
	for (int i = 0; i < GZ_SLOTS; i++)
		if ((inf->buf[i] = malloc(GZ_SLOT_SIZE)) == NULL)
			goto fail;
	if (pthread_create(&inf->thread, NULL, inflate_ahead, inf) == 0)
		return inf;
fail:
	inflater_free(inf);
	return NULL;
}

static void
inflater_stop(struct inflater *inf)
{
	pthread_mutex_lock(&inf->lock);
	inf->stop = true;
	pthread_cond_broadcast(&inf->changed);
	pthread_mutex_unlock(&inf->lock);
	pthread_join(inf->thread, NULL);
	inflater_free(inf);
}

/* Up to len bytes from the slots: a count, 0 at the end, -1 with *why. */
static ssize_t
inflater_read(struct inflater *inf, void *buf, size_t len, const char **why)
{
	int have;
	size_t n;

	pthread_mutex_lock(&inf->lock);
	while (inf->count == 0)
		pthread_cond_wait(&inf->changed, &inf->lock);
	have = inf->len[inf->head];
	pthread_mutex_unlock(&inf->lock);
	if (have <= 0) {
		/* the slot stays: reading again gives the same answer */
		*why = inf->why;
		return have;
	}
	n = (size_t)(have - inf->pos) < len ? (size_t)(have - inf->pos) : len;
	memcpy(buf, inf->buf[inf->head] + inf->pos, n);
	inf->pos += (int)n;
	if (inf->pos == have) {
		pthread_mutex_lock(&inf->lock);
		inf->pos = 0;
		inf->head = (inf->head + 1) % GZ_SLOTS;
		inf->count--;
		pthread_cond_broadcast(&inf->changed);
		pthread_mutex_unlock(&inf->lock);
	}
	return (ssize_t)n;
}

/* The file's first bytes decide: gzip (zlib for a pipe) or plain. */
static bool
stream_setup(struct trace_stream *s, struct trace_error *err)
{
	unsigned char magic[2];
	ssize_t n;

	n = pread(s->fd, magic, sizeof(magic), 0);
	if (n == sizeof(magic) && magic[0] == 0x1f && magic[1] == 0x8b)
		s->compressed = true;
	else if (n >= 0) {
		posix_fadvise(s->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
		return true;
	}
	/* a pipe cannot be peeked at: zlib tells gzip from plain */
	if ((s->gz = gzdopen(s->fd, "rb")) == NULL) {
		io_error(err, "out of memory");
		return false;
	}
	gzbuffer(s->gz, GZ_BUFFER);
	if (!s->compressed)
		s->compressed = !gzdirect(s->gz);
	if ((s->inf = inflater_start(s->gz)) == NULL) {
		io_error(err, "cannot start inflating: out of memory");
		return false;
	}
	return true;
}

struct trace_stream *
trace_stream_open(const char *path, struct trace_error *err)
{
	struct stat st = { .st_mode = 0 };
	struct trace_stream *s;

	memset(err, 0, sizeof(*err));
	if ((s = calloc(1, sizeof(*s))) == NULL) {
		io_error(err, "out of memory");
		return NULL;
	}
	if ((s->fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		io_error(err, strerror(errno));
		free(s);
		return NULL;
	}
	if (fstat(s->fd, &st) == -1 || S_ISDIR(st.st_mode)) {
		io_error(err, S_ISDIR(st.st_mode) ? "is a directory" :
		    strerror(errno));
		trace_stream_close(s);
		return NULL;
	}
	if (!stream_setup(s, err)) {
		trace_stream_close(s);
		return NULL;
	}
	return s;
}

bool
trace_stream_compressed(const struct trace_stream *s)
{
	return s->compressed;
}

ssize_t
trace_stream_read(struct trace_stream *s, void *buf, size_t len,
    struct trace_error *err)
{
	const char *why = NULL;
	ssize_t n;

	if (len > INT32_MAX)
		len = INT32_MAX;
	if (s->inf != NULL)
		n = inflater_read(s->inf, buf, len, &why);
	else {
		while ((n = read(s->fd, buf, len)) == -1 && errno == EINTR)
			continue;
		if (n == -1)
			why = strerror(errno);
	}
	if (n == -1) {
		err->has_offset = true;
		err->compressed = s->compressed;
		err->offset = s->delivered;
		snprintf(err->msg, sizeof(err->msg), "%s%s",
		    s->compressed ? "gzip: " : "read: ", why);
		return -1;
	}
	s->delivered += (uint64_t)n;
	return n;
}

void
trace_stream_close(struct trace_stream *s)
{
	if (s == NULL)
		return;
	if (s->inf != NULL)
		inflater_stop(s->inf);
	if (s->gz != NULL)
		gzclose_r(s->gz);
	else if (s->fd != -1)
		close(s->fd);
	free(s);
}

int
trace_read(const char *path, const struct trace_options *opts,
    struct trace_info *info, struct trace_error *err)
{
	struct trace_stream *s;
	struct trace_reader *r;
	bool compressed;
	ssize_t n;
	char *buf;
	int rc;

	memset(info, 0, sizeof(*info));
	if ((s = trace_stream_open(path, err)) == NULL)
		return TRACE_ERR_IO;
	compressed = s->compressed;
	if ((rc = trace_reader_new(opts, &r, err)) != TRACE_OK) {
		trace_stream_close(s);
		return rc;
	}
	if ((buf = malloc(TRACE_CHUNK)) == NULL) {
		rc = TRACE_ERR_NOMEM;
		io_error(err, "out of memory");
		goto out;
	}
	for (;;) {
		if ((n = trace_stream_read(s, buf, TRACE_CHUNK, err)) == -1) {
			rc = TRACE_ERR_IO;
			goto out;
		}
		if (n == 0)
			break;
		if ((rc = trace_reader_feed(r, buf, (size_t)n, err)) != TRACE_OK)
			goto out;
	}
	rc = trace_reader_finish(r, info, err);
	info->compressed = compressed;
out:
	err->compressed = compressed;
	free(buf);
	trace_reader_free(r);
	trace_stream_close(s);
	return rc;
}
