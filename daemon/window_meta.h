/*
 * window_meta: a window's metadata, the key and value pairs of its begin,
 * in memory (struct window's meta) and as the JSON object of strings the
 * store keeps (windows.meta_json in spyremon-schema(5)).  Below windows.c
 * and windows_table.c; it knows nothing of the set of windows.
 */
#ifndef SPYREMON_WINDOW_META_H
#define SPYREMON_WINDOW_META_H

#include <stddef.h>

#include "windows.h"

/* Copy nmeta key, value pairs into win (which has none); -1 if out of memory. */
int window_meta_set(struct window *win, const char *const *meta, size_t nmeta);

/* Free win's pairs; it has none after. */
void window_meta_free(struct window *win);

/* A JSON object of meta's nmeta pairs, in their order; NULL if out of memory. */
char *window_meta_to_json(const char *const *meta, size_t nmeta);

/*
 * The string members of the JSON object json as win's pairs; anything else
 * is left out with a warning naming win->id (a database edited by hand).
 */
void window_meta_from_json(struct window *win, const char *json);

#endif
