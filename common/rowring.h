/*
 * rowring: a ring buffer of rows, each a fixed-size header plus `stride`
 * cells, the cells kept in up to two parallel arrays (for example a value
 * and its kind).  The store's rows waiting for a flush and pace's fine-rate
 * ring are both one.
 *
 * The ring holds cap rows from position head, n of them in use; row i (0
 * the oldest) sits at position rowring_at(r, i).  Resizing keeps the newest
 * rows, so steady state allocates nothing.
 */
#ifndef SPYREMON_ROWRING_H
#define SPYREMON_ROWRING_H

#include <stdbool.h>
#include <stddef.h>

#define ROWRING_CELL_ARRAYS 2

/* The shape of one ring's arrays. */
struct rowring_spec {
	size_t row_bytes;				/* the header per row */
	size_t cell_bytes[ROWRING_CELL_ARRAYS];		/* 0: array unused */
	unsigned char cell_fill[ROWRING_CELL_ARRAYS];	/* byte new cells hold */
};

struct rowring {
	struct rowring_spec spec;
	void *rows;
	void *cells[ROWRING_CELL_ARRAYS];
	size_t cap, head, n, stride;
};

/* An empty ring (cap 0) of the given shape and stride; allocates nothing. */
void rowring_init(struct rowring *r, const struct rowring_spec *spec,
    size_t stride);

/*
 * Reshape r to cap rows of stride cells, keeping its newest min(n, cap)
 * rows and the first min(old, new stride) cells of each; new cells hold
 * the spec's fill.  0, or -1 (out of memory) with r unchanged.
 */
int rowring_resize(struct rowring *r, size_t cap, size_t stride);

/* Forget the oldest row; n > 0. */
void rowring_drop_oldest(struct rowring *r);

/*
 * The position of a new row at the tail, its cells not yet set; cap > 0
 * and n < cap (drop the oldest first when full).
 */
size_t rowring_push(struct rowring *r);

/* Copy the row at position from, header and first ncells cells, to to. */
void rowring_copy(struct rowring *r, size_t to, size_t from, size_t ncells);

/* Forget every row, keeping the arrays. */
void rowring_clear(struct rowring *r);

/* Free the arrays; r is then an empty ring of cap 0. */
void rowring_free(struct rowring *r);

/* The position of row i, 0 the oldest; i < n. */
static inline size_t
rowring_at(const struct rowring *r, size_t i)
{
	return (r->head + i) % r->cap;
}

static inline bool
rowring_full(const struct rowring *r)
{
	return r->n == r->cap;
}

/* The header of the row at position k. */
static inline void *
rowring_row(const struct rowring *r, size_t k)
{
	return (char *)r->rows + k * r->spec.row_bytes;
}

/* The first of the stride cells of array a at position k. */
static inline void *
rowring_cells(const struct rowring *r, int a, size_t k)
{
	return (char *)r->cells[a] + k * r->stride * r->spec.cell_bytes[a];
}

#endif
