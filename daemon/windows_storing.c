/*
 * windows_storing: the ended windows not complete yet, by uid (contract in
 * windows_storing.h).  An unordered array; an entry is forgotten when a
 * count finds, through store_sync_window, that its window is complete.
 */
#include "windows_storing.h"

#include <stdlib.h>

#include "store.h"

void
windows_storing_add(struct windows_storing *s, uint32_t uid, int64_t id)
{
	struct windows_storing_entry *v;
	size_t cap;

	if (s->n == s->cap) {
		cap = s->cap > 0 ? 2 * s->cap : 64;
		if ((v = reallocarray(s->v, cap, sizeof(*v))) == NULL)
			return;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n].uid = uid;
	s->v[s->n++].id = id;
}

size_t
windows_storing_count(struct windows_storing *s, struct store *st,
    uint32_t uid)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n;) {
		if (store_sync_window(st, s->v[i].id) == 0) {
			s->v[i] = s->v[--s->n];
			continue;
		}
		if (s->v[i].uid == uid)
			n++;
		i++;
	}
	return n;
}

void
windows_storing_free(struct windows_storing *s)
{
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}
