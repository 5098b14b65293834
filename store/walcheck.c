/*
 * walcheck: the write-ahead log checked the way SQLite's recovery reads it
 * (contract in walcheck.h; the format is SQLite's "WAL File Format"), so
 * that what recovery would silently drop is known before it runs.
 *
 * The log is a 32-byte header then frames of a 24-byte header and one
 * page.  Every field is big-endian; the checksums are sums over 32-bit
 * words in the byte order the magic names (its low bit set: big-endian).
 * The header's checksum covers its first 24 bytes; each frame's continues
 * the chain from the one before (the first from the header's) over the
 * frame header's first 8 bytes and the page.  A frame is valid when its
 * salts are the header's and its checksum is the chain's; recovery stops
 * at the first one that is not and keeps the frames through the last
 * commit frame (nonzero "database size after commit") before it.
 */
#include "walcheck.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define WAL_MAGIC		0x377f0682u	/* | 1: big-endian checksums */
#define WAL_VERSION		3007000u
#define WAL_HEADER_BYTES	32
#define FRAME_HEADER_BYTES	24
#define PAGE_MIN		512u
#define PAGE_MAX		65536u

static uint32_t
get32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

/* Continue the checksum s over n bytes (a multiple of 8) of p. */
static void
checksum(bool big, const unsigned char *p, size_t n, uint32_t s[2])
{
	for (size_t i = 0; i + 8 <= n; i += 8) {
		uint32_t x0, x1;

		if (big) {
			x0 = get32(p + i);
			x1 = get32(p + i + 4);
		} else {
			x0 = (uint32_t)p[i + 3] << 24 | (uint32_t)p[i + 2] << 16 |
			    (uint32_t)p[i + 1] << 8 | p[i];
			x1 = (uint32_t)p[i + 7] << 24 | (uint32_t)p[i + 6] << 16 |
			    (uint32_t)p[i + 5] << 8 | p[i + 4];
		}
		s[0] += x0 + s[1];
		s[1] += x1 + s[0];
	}
}

static bool
page_size_valid(uint32_t ps)
{
	return ps >= PAGE_MIN && ps <= PAGE_MAX && (ps & (ps - 1)) == 0;
}

/* Read exactly n bytes at off; 1, 0 at the end of the file, -1 on error. */
static int
read_at(int fd, void *buf, size_t n, uint64_t off)
{
	ssize_t got = pread(fd, buf, n, (off_t)off);

	if (got == -1)
		return -1;
	return (size_t)got == n;
}

/* A log whose header does not validate: every whole frame in it is lost. */
static int
count_unreadable(int fd, struct walcheck *c, const unsigned char *h)
{
	unsigned char fh[FRAME_HEADER_BYTES];
	uint32_t ps = get32(h + 8);

	c->verdict = WALCHECK_BAD_HEADER;
	if (c->wal_bytes < WAL_HEADER_BYTES || !page_size_valid(ps))
		return 0;	/* frames cannot even be told apart */
	c->frames = (c->wal_bytes - WAL_HEADER_BYTES) /
	    (FRAME_HEADER_BYTES + ps);
	c->lost_frames = c->frames;
	for (uint64_t i = 0; i < c->frames; i++) {
		int rc = read_at(fd, fh, sizeof(fh), WAL_HEADER_BYTES +
		    i * (FRAME_HEADER_BYTES + ps));

		if (rc == -1)
			return -1;
		if (rc == 1 && get32(fh + 4) != 0)
			c->lost_commits++;
	}
	return 0;
}

/* Walk the frames of a log with a valid header h. */
static int
walk_frames(int fd, struct walcheck *c, const unsigned char *h)
{
	bool big = (get32(h) & 1) != 0;
	uint32_t ps = c->page_size, salt1 = get32(h + 16), salt2 = get32(h + 20);
	uint32_t s[2] = { get32(h + 24), get32(h + 28) };
	uint64_t size = FRAME_HEADER_BYTES + (uint64_t)ps, valid = 0, after = 0;
	unsigned char *f;
	bool broken = false;
	int rc = 0;

	c->frames = (c->wal_bytes - WAL_HEADER_BYTES) / size;
	if ((f = malloc(size)) == NULL)
		return -1;
	for (uint64_t i = 0; i < c->frames && rc == 0; i++) {
		bool current, ok;

		if ((rc = read_at(fd, f, size, WAL_HEADER_BYTES + i * size)) != 1) {
			if (rc == 0)
				errno = EIO;	/* it shrank while read */
			rc = -1;
			break;
		}
		rc = 0;
		current = get32(f + 8) == salt1 && get32(f + 12) == salt2;
		if (broken) {
			/* past the break only frames of this log count */
			if (current) {
				after++;
				c->lost_frames++;
				c->lost_commits += get32(f + 4) != 0;
			}
			continue;
		}
		ok = current && get32(f) != 0;
		if (ok) {
			checksum(big, f, 8, s);
			checksum(big, f + FRAME_HEADER_BYTES, ps, s);
			ok = s[0] == get32(f + 16) && s[1] == get32(f + 20);
		}
		if (!ok) {
			broken = true;
			c->bad_frame = i + 1;
			/* the valid frames of a transaction it cut go too */
			c->lost_frames = valid - c->kept_frames;
			if (current) {
				c->lost_frames++;
				c->lost_commits += get32(f + 4) != 0;
			}
			continue;
		}
		valid++;
		if (get32(f + 4) != 0) {
			c->kept_frames = valid;
			c->kept_commits++;
		}
	}
	free(f);
	/*
	 * Damage only when frames of this log follow the break: a break with
	 * none after it is the last write torn, never committed, and frames
	 * with other salts are an earlier log's, rightly ignored.
	 */
	if (after > 0)
		c->verdict = WALCHECK_BAD_FRAME;
	else
		c->bad_frame = c->lost_frames = c->lost_commits = 0;
	return rc;
}

static int
check_fd(int fd, struct walcheck *c)
{
	unsigned char h[WAL_HEADER_BYTES];
	uint32_t s[2] = { 0, 0 };
	struct stat sb;
	int rc;

	if (fstat(fd, &sb) == -1)
		return -1;
	c->wal_bytes = (uint64_t)sb.st_size;
	if (c->wal_bytes == 0)
		return 0;	/* a log checkpointed and truncated */
	memset(h, 0, sizeof(h));
	if ((rc = read_at(fd, h, sizeof(h), 0)) == -1)
		return -1;
	if (rc == 0)
		return count_unreadable(fd, c, h);
	if ((get32(h) & ~1u) != WAL_MAGIC || get32(h + 4) != WAL_VERSION ||
	    !page_size_valid(get32(h + 8)))
		return count_unreadable(fd, c, h);
	checksum((get32(h) & 1) != 0, h, 24, s);
	if (s[0] != get32(h + 24) || s[1] != get32(h + 28))
		return count_unreadable(fd, c, h);
	c->page_size = get32(h + 8);
	return walk_frames(fd, c, h);
}

int
walcheck_wal(const char *wal_path, struct walcheck *out)
{
	int fd, rc, saved;

	memset(out, 0, sizeof(*out));
	fd = open(wal_path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY |
	    O_CLOEXEC);
	if (fd == -1)
		return errno == ENOENT ? 0 : -1;
	rc = check_fd(fd, out);
	saved = errno;
	close(fd);
	errno = saved;
	return rc;
}

int
walcheck_db(const char *db_path, struct walcheck *out)
{
	char wal[4096];
	struct stat sb;
	bool empty;

	if ((size_t)snprintf(wal, sizeof(wal), "%s-wal", db_path) >=
	    sizeof(wal)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (stat(db_path, &sb) == -1) {
		if (errno != ENOENT)
			return -1;
		empty = true;
	} else
		empty = sb.st_size == 0;
	if (walcheck_wal(wal, out) == -1)
		return -1;
	out->main_empty = empty;
	return 0;
}

void
walcheck_describe(const struct walcheck *c, char *buf, size_t len)
{
	const char *all = c->main_empty ? " (the main file is empty: "
	    "everything was in the log)" : "";

	switch (c->verdict) {
	case WALCHECK_CLEAN:
		snprintf(buf, len, "write-ahead log sound: %llu frames, %llu "
		    "commits", (unsigned long long)c->kept_frames,
		    (unsigned long long)c->kept_commits);
		break;
	case WALCHECK_BAD_HEADER:
		if (c->frames == 0) {
			/* no whole frame, or no page size to tell them by */
			snprintf(buf, len, "write-ahead log header damaged: "
			    "none of its %llu bytes can be recovered%s",
			    (unsigned long long)c->wal_bytes, all);
			break;
		}
		snprintf(buf, len, "write-ahead log header damaged: none of "
		    "its %llu bytes (%llu frames, %llu commits) can be "
		    "recovered%s", (unsigned long long)c->wal_bytes,
		    (unsigned long long)c->lost_frames,
		    (unsigned long long)c->lost_commits, all);
		break;
	case WALCHECK_BAD_FRAME:
		snprintf(buf, len, "write-ahead log frame %llu of %llu "
		    "damaged: %llu frames (%llu commits) before it can be "
		    "kept, %llu frames (%llu commits) from it on would be "
		    "dropped%s", (unsigned long long)c->bad_frame,
		    (unsigned long long)c->frames,
		    (unsigned long long)c->kept_frames,
		    (unsigned long long)c->kept_commits,
		    (unsigned long long)c->lost_frames,
		    (unsigned long long)c->lost_commits, all);
		break;
	}
}
