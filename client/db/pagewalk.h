/*
 * pagewalk: rows read from the database file's pages themselves, without
 * SQLite, for the leaf pages that no b-tree reaches any more because a
 * page above them is damaged.  Only the pages of a WITHOUT ROWID table
 * (index b-tree leaves, type 0x0a) are read, as samples is one; a cell
 * whose record spills onto overflow pages is skipped.  The format is
 * SQLite's (https://sqlite.org/fileformat2.html): the header's page size,
 * reserved bytes and freelist; a leaf's cell pointers; a record's header
 * of serial types and its body.  The decoding is pure, and checks every
 * length against the page, so garbage yields no row rather than a wrong
 * one as far as the format can tell.
 */
#ifndef SPYREMON_PAGEWALK_H
#define SPYREMON_PAGEWALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One value of a record; text and blobs point into the page. */
struct pw_value {
	int type;		/* SQLITE_INTEGER, _FLOAT, _TEXT, _BLOB, _NULL */
	int64_t i;
	double d;
	const unsigned char *p;
	size_t n;
};

/*
 * Decode the record rec[0..len) into v[0..max): the number of values it
 * holds (values past max are not decoded), or -1 if it is malformed.
 */
int pagewalk_record(const unsigned char *rec, size_t len,
    struct pw_value *v, int max);

/* A record found on a page. */
typedef void (*pagewalk_cell_fn)(void *ctx, const unsigned char *rec,
    size_t len);

/*
 * The cells of one index page, leaf or interior (page_size bytes, of
 * which usable are not reserved; hdr is 100 on page 1, else 0): fn for
 * each whose payload is all on the page, once every cell was found to lie
 * on the page.  The cells handed over, or -1 (and none) if the page is
 * not a sound index page: another type, a pointer or a length off it.
 */
int pagewalk_index_page(const unsigned char *page, size_t page_size,
    size_t usable, size_t hdr, pagewalk_cell_fn fn, void *ctx);

/* The file's geometry and which pages a walk must not read. */
struct pagewalk_file {
	int fd;
	uint32_t page_size, usable;
	uint32_t pages;		/* whole pages in the file */
	uint8_t *skip;		/* pages + 1 flags: the freelist's, and
				   what the caller marks (the trees' own) */
};

/*
 * Open path read-only and read its header and freelist into *f; 0, or
 * -1 with errno (EINVAL: not an SQLite file) after which nothing is open.
 */
int pagewalk_open(const char *path, struct pagewalk_file *f);

/*
 * fn for each cell of each index page not skipped; the cells handed
 * over, or -1 if a read failed.
 */
int64_t pagewalk_pages(struct pagewalk_file *f, pagewalk_cell_fn fn,
    void *ctx);

void pagewalk_close(struct pagewalk_file *f);

#endif
