/*
 * windows_storing: per uid, the windows that have ended and are not
 * complete yet (their rows, summary and complete_ns still to be stored by
 * the writer), which windows.max_ending_per_uid bounds (windows.h).  A
 * set kept by windows.c (windows_ends.c adds each window it closes);
 * asking the store is how an entry is forgotten.
 */
#ifndef SPYREMON_WINDOWS_STORING_H
#define SPYREMON_WINDOWS_STORING_H

#include <stddef.h>
#include <stdint.h>

struct store;

struct windows_storing {
	struct windows_storing_entry {
		uint32_t uid;
		int64_t id;
	} *v;
	size_t n, cap;
};

/* Remember that window id of uid ended and is being stored (best effort:
 * out of memory, it is not counted). */
void windows_storing_add(struct windows_storing *s, uint32_t uid, int64_t id);

/* uid's ended windows not complete yet in st, forgetting those that are now. */
size_t windows_storing_count(struct windows_storing *s, struct store *st,
    uint32_t uid);

/* Free the set's memory; it is empty after. */
void windows_storing_free(struct windows_storing *s);

#endif
