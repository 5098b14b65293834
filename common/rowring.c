/*
 * rowring: a ring of rows with parallel cell arrays (contract in
 * rowring.h).
 */
#include <stdlib.h>
#include <string.h>

#include "rowring.h"

void
rowring_init(struct rowring *r, const struct rowring_spec *spec, size_t stride)
{
	memset(r, 0, sizeof(*r));
	r->spec = *spec;
	r->stride = stride;
}

int
rowring_resize(struct rowring *r, size_t cap, size_t stride)
{
	const struct rowring_spec *sp = &r->spec;
	void *rows = NULL, *cells[ROWRING_CELL_ARRAYS] = { NULL };
	size_t keep = r->n < cap ? r->n : cap, skip = r->n - keep;
	size_t ncopy = r->stride < stride ? r->stride : stride;
	int a;

	if (cap > 0) {
		bool ok = (rows = calloc(cap, sp->row_bytes)) != NULL;

		for (a = 0; ok && a < ROWRING_CELL_ARRAYS; a++) {
			/* never empty, so a row's cells are never at NULL */
			size_t bytes = cap * stride * sp->cell_bytes[a];

			if (sp->cell_bytes[a] == 0)
				continue;
			if (bytes == 0)
				bytes = 1;
			if ((cells[a] = malloc(bytes)) == NULL)
				ok = false;
			else
				memset(cells[a], sp->cell_fill[a], bytes);
		}
		if (!ok) {
			free(rows);
			for (a = 0; a < ROWRING_CELL_ARRAYS; a++)
				free(cells[a]);
			return -1;
		}
	}
	for (size_t i = 0; i < keep; i++) {
		size_t from = rowring_at(r, skip + i);

		memcpy((char *)rows + i * sp->row_bytes, rowring_row(r, from),
		    sp->row_bytes);
		for (a = 0; a < ROWRING_CELL_ARRAYS; a++)
			if (cells[a] != NULL && ncopy > 0)
				memcpy((char *)cells[a] +
				    i * stride * sp->cell_bytes[a],
				    rowring_cells(r, a, from),
				    ncopy * sp->cell_bytes[a]);
	}
	free(r->rows);
	for (a = 0; a < ROWRING_CELL_ARRAYS; a++) {
		free(r->cells[a]);
		r->cells[a] = cells[a];
	}
	r->rows = rows;
	r->cap = cap;
	r->head = 0;
	r->n = keep;
	r->stride = stride;
	return 0;
}

void
rowring_drop_oldest(struct rowring *r)
{
	r->head = (r->head + 1) % r->cap;
	r->n--;
}

size_t
rowring_push(struct rowring *r)
{
	return rowring_at(r, r->n++);
}

void
rowring_copy(struct rowring *r, size_t to, size_t from, size_t ncells)
{
	memcpy(rowring_row(r, to), rowring_row(r, from), r->spec.row_bytes);
	for (int a = 0; a < ROWRING_CELL_ARRAYS; a++)
		if (r->cells[a] != NULL)
			memcpy(rowring_cells(r, a, to), rowring_cells(r, a, from),
			    ncells * r->spec.cell_bytes[a]);
}

void
rowring_clear(struct rowring *r)
{
	r->head = 0;
	r->n = 0;
}

void
rowring_free(struct rowring *r)
{
	free(r->rows);
	r->rows = NULL;
	for (int a = 0; a < ROWRING_CELL_ARRAYS; a++) {
		free(r->cells[a]);
		r->cells[a] = NULL;
	}
	r->cap = r->head = r->n = 0;
}
