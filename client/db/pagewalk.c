/* pagewalk: index leaf pages read without SQLite (contract in pagewalk.h). */
#include "pagewalk.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#define PAGE_INDEX_LEAF		0x0a
#define PAGE_INDEX_INTERIOR	0x02
#define LEAF_HEADER		8
#define INTERIOR_HEADER		12	/* and a cell's child pointer: 4 */
#define FILE_HEADER	100

static uint32_t
be16(const unsigned char *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

static uint32_t
be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

/* A varint at p[0..end): its length, or 0 if it runs past end. */
static size_t
varint(const unsigned char *p, const unsigned char *end, uint64_t *out)
{
	uint64_t v = 0;

	for (size_t i = 0; i < 9; i++) {
		if (p + i >= end)
			return 0;
		if (i == 8) {
			*out = v << 8 | p[i];
			return 9;
		}
		v = v << 7 | (p[i] & 0x7f);
		if ((p[i] & 0x80) == 0) {
			*out = v;
			return i + 1;
		}
	}
	return 0;
}

/* The body bytes of serial type t; -1 for the reserved 10 and 11. */
static int64_t
serial_len(uint64_t t)
{
	static const int8_t fixed[12] = { 0, 1, 2, 3, 4, 6, 8, 8, 0, 0, -1, -1 };

	if (t < 12)
		return fixed[t];
	return (int64_t)((t - 12) / 2);
}

int
pagewalk_record(const unsigned char *rec, size_t len, struct pw_value *v,
    int max)
{
	const unsigned char *end = rec + len, *body;
	uint64_t hlen, t;
	size_t n, off;
	int count = 0;

	if ((n = varint(rec, end, &hlen)) == 0 || hlen < n || hlen > len)
		return -1;
	body = rec + hlen;
	for (off = n; off < hlen; off += n) {
		int64_t bl;

		if ((n = varint(rec + off, rec + hlen, &t)) == 0 ||
		    (bl = serial_len(t)) < 0 || bl > end - body)
			return -1;
		if (count < max) {
			struct pw_value *x = &v[count];

			memset(x, 0, sizeof(*x));
			if (t == 0)
				x->type = SQLITE_NULL;
			else if (t == 8 || t == 9) {
				x->type = SQLITE_INTEGER;
				x->i = (int64_t)t - 8;
			} else if (t <= 6) {
				/* big-endian two's complement of bl bytes */
				uint64_t u = body[0] & 0x80 ? UINT64_MAX : 0;

				for (int64_t k = 0; k < bl; k++)
					u = u << 8 | body[k];
				x->type = SQLITE_INTEGER;
				x->i = (int64_t)u;
			} else if (t == 7) {
				uint64_t u = 0;

				for (int k = 0; k < 8; k++)
					u = u << 8 | body[k];
				memcpy(&x->d, &u, sizeof(x->d));
				x->type = SQLITE_FLOAT;
			} else {
				x->type = t % 2 == 0 ? SQLITE_BLOB : SQLITE_TEXT;
				x->p = body;
				x->n = (size_t)bl;
			}
		}
		body += bl;
		count++;
	}
	return body == end ? count : -1;
}

/*
 * Cell i of the page: 0 with its payload, all on the page; 1 if the
 * payload spills onto overflow pages; -1 if the cell is not on the page.
 */
static int
index_cell(const unsigned char *page, size_t usable, size_t ptrs,
    size_t content, size_t max_local, size_t skip, size_t i,
    const unsigned char **rec, size_t *len)
{
	size_t at = be16(page + ptrs + 2 * i) + skip, n;
	uint64_t plen;

	if (at < content + skip || at >= usable ||
	    (n = varint(page + at, page + usable, &plen)) == 0)
		return -1;
	if (plen > max_local)
		return at + n + 4 <= usable ? 1 : -1;
	if (plen > usable - at - n)
		return -1;
	*rec = page + at + n;
	*len = (size_t)plen;
	return 0;
}

int
pagewalk_index_page(const unsigned char *page, size_t page_size,
    size_t usable, size_t hdr, pagewalk_cell_fn fn, void *ctx)
{
	const unsigned char *h = page + hdr, *rec;
	size_t ncells, content, ptrs, max_local, len, child;
	int handed = 0;

	if (usable < 480 || usable > page_size ||
	    hdr + INTERIOR_HEADER > usable ||
	    (h[0] != PAGE_INDEX_LEAF && h[0] != PAGE_INDEX_INTERIOR))
		return -1;
	/* an interior cell starts with its child's page number */
	child = h[0] == PAGE_INDEX_INTERIOR ? 4 : 0;
	ncells = be16(h + 3);
	content = be16(h + 5);
	if (content == 0)
		content = 65536;
	ptrs = hdr + (child > 0 ? INTERIOR_HEADER : LEAF_HEADER);
	if (ncells == 0 || ptrs + 2 * ncells > usable || content > usable ||
	    content < ptrs + 2 * ncells)
		return -1;
	/* the most payload an index cell keeps on its page */
	max_local = (usable - 12) * 64 / 255 - 23;
	for (size_t i = 0; i < ncells; i++)
		if (index_cell(page, usable, ptrs, content, max_local, child, i,
		    &rec, &len) == -1)
			return -1;
	for (size_t i = 0; i < ncells; i++)
		if (index_cell(page, usable, ptrs, content, max_local, child, i,
		    &rec, &len) == 0) {
			fn(ctx, rec, len);
			handed++;
		}
	return handed;
}

/* Read page no (from 1) into buf; 0 or -1. */
static int
read_page(const struct pagewalk_file *f, uint32_t no, unsigned char *buf)
{
	off_t at = (off_t)(no - 1) * f->page_size;
	ssize_t n = pread(f->fd, buf, f->page_size, at);

	return n == (ssize_t)f->page_size ? 0 : -1;
}

/* Mark the freelist's trunk and leaf pages; a loop or a bad number ends it. */
static void
mark_freelist(struct pagewalk_file *f, uint32_t trunk, unsigned char *buf)
{
	uint32_t steps = 0;

	while (trunk >= 1 && trunk <= f->pages && !f->skip[trunk] &&
	    steps++ < f->pages) {
		uint32_t n;

		f->skip[trunk] = 1;
		if (read_page(f, trunk, buf) == -1)
			return;
		n = be32(buf + 4);
		for (uint32_t i = 0; i < n && 8 + 4 * (size_t)i + 4 <=
		    f->usable; i++) {
			uint32_t leaf = be32(buf + 8 + 4 * (size_t)i);

			if (leaf >= 1 && leaf <= f->pages)
				f->skip[leaf] = 1;
		}
		trunk = be32(buf);
	}
}

int
pagewalk_open(const char *path, struct pagewalk_file *f)
{
	unsigned char hdr[FILE_HEADER], *buf;
	struct stat sb;
	int e;

	memset(f, 0, sizeof(*f));
	if ((f->fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	if (fstat(f->fd, &sb) == -1 || pread(f->fd, hdr, sizeof(hdr), 0) !=
	    (ssize_t)sizeof(hdr) || memcmp(hdr, "SQLite format 3", 16) != 0) {
		e = errno != 0 ? errno : EINVAL;
		goto fail;
	}
	f->page_size = be16(hdr + 16) == 1 ? 65536 : be16(hdr + 16);
	if (f->page_size < 512 || (f->page_size & (f->page_size - 1)) != 0 ||
	    hdr[20] > f->page_size - 480) {
		e = EINVAL;
		goto fail;
	}
	f->usable = f->page_size - hdr[20];
	f->pages = (uint32_t)(sb.st_size / f->page_size);
	if ((f->skip = calloc((size_t)f->pages + 1, 1)) == NULL ||
	    (buf = malloc(f->page_size)) == NULL) {
		e = ENOMEM;
		goto fail;
	}
	f->skip[0] = 1;
	mark_freelist(f, be32(hdr + 32), buf);
	free(buf);
	return 0;
fail:
	close(f->fd);
	free(f->skip);
	memset(f, 0, sizeof(*f));
	f->fd = -1;
	errno = e;
	return -1;
}

int64_t
pagewalk_pages(struct pagewalk_file *f, pagewalk_cell_fn fn, void *ctx)
{
	unsigned char *buf = malloc(f->page_size);
	int64_t cells = 0;
	int n;

	if (buf == NULL)
		return -1;
	for (uint32_t no = 1; no <= f->pages; no++) {
		if (f->skip[no])
			continue;
		if (read_page(f, no, buf) == -1) {
			free(buf);
			return -1;
		}
		n = pagewalk_index_page(buf, f->page_size, f->usable,
		    no == 1 ? FILE_HEADER : 0, fn, ctx);
		if (n > 0)
			cells += n;
	}
	free(buf);
	return cells;
}

void
pagewalk_close(struct pagewalk_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	free(f->skip);
	memset(f, 0, sizeof(*f));
	f->fd = -1;
}
