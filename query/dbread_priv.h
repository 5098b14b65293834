/*
 * dbread_priv: what the readers of query/ share and nobody else calls
 * (the contracts of the readers themselves are in dbread.h).
 */
#ifndef SPYREMON_DBREAD_PRIV_H
#define SPYREMON_DBREAD_PRIV_H

#include <stddef.h>

#include <sqlite3.h>

/* Column i of s's row as a malloc'd string, "" for NULL; dies when out of memory. */
char *dbread_column_dup(sqlite3_stmt *s, int i);

/* arr of n elements of size sz, grown by one zeroed element; dies when out of memory. */
void *dbread_grow(void *arr, size_t n, size_t sz);

#endif
