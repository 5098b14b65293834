/*
 * arrays: the analysis layer's growable arrays and its sort of arrays
 * that mostly come in order.  A header alone: each is a few lines that
 * every file of the layer inlines.
 */
#ifndef SPYREMON_ARRAYS_H
#define SPYREMON_ARRAYS_H

#include <err.h>
#include <stddef.h>
#include <stdlib.h>

#include "client.h"

/* n elements of size bytes at p, room for cap; zeroed with size set is empty. */
struct vec {
	void	*p;
	size_t	 n, cap, size;
};

/* A new element at the end of v (not zeroed); exits when out of memory. */
static inline void *
vec_push(struct vec *v)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? 2 * v->cap : 64;

		if ((v->p = reallocarray(v->p, cap, v->size)) == NULL)
			errx(CLIENT_EXIT_FAILED, "out of memory");
		v->cap = cap;
	}
	return (char *)v->p + v->n++ * v->size;
}

/*
 * qsort(base, n, size, cmp), skipped when base is in order already (one
 * pass; never qsort of an empty array, which may be NULL): a trace's
 * events mostly come in the order they are sorted to.
 */
static inline void
sort_once(void *base, size_t n, size_t size,
    int (*cmp)(const void *, const void *))
{
	const char *p = base;

	for (size_t i = 1; i < n; i++)
		if (cmp(p + (i - 1) * size, p + i * size) > 0) {
			qsort(base, n, size, cmp);
			return;
		}
}

#endif
