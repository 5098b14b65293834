/*
 * catalog_read: the metric catalog and the device map, as every reader
 * sees them (contracts in dbread.h).
 */
#include "dbread.h"
#include "dbread_priv.h"

#include <err.h>
#include <stdlib.h>
#include <string.h>

#include "schema.h"

#define MAX_DECIMALS		18

struct db_devmap_entry {
	int device;
	int64_t since_ns;
	char *bus_id;
	char *metric_file;
};

/* Column i of s's row, malloc'd, "" for NULL; NULL when out of memory. */
static char *
text_dup(sqlite3_stmt *s, int i)
{
	const unsigned char *t = sqlite3_column_text(s, i);

	return strdup(t != NULL ? (const char *)t : "");
}

/*
 * The next metric of s into cat: 0, -2 when out of memory (cat keeps what
 * it had).
 */
static int
catalog_add(struct db_catalog *cat, sqlite3_stmt *s)
{
	struct db_metric *grown, *m;

	if ((grown = reallocarray(cat->m, cat->n + 1, sizeof(*m))) == NULL)
		return -2;
	cat->m = grown;
	m = &cat->m[cat->n];
	m->id = sqlite3_column_int64(s, 0);
	m->key = text_dup(s, 1);
	m->unit = text_dup(s, 2);
	m->col = text_dup(s, 3);
	m->decimals = sqlite3_column_int(s, 4);
	m->reliable = sqlite3_column_int(s, 5) != 0;
	if (m->key == NULL || m->unit == NULL || m->col == NULL) {
		free(m->key);
		free(m->unit);
		free(m->col);
		return -2;
	}
	cat->n++;
	return 0;
}

int
db_catalog_read(sqlite3 *db, struct db_catalog *cat)
{
	sqlite3_stmt *s;
	int rc, err = 0;

	cat->m = NULL;
	cat->n = 0;
	if (sqlite3_prepare_v2(db, "SELECT id, key, unit, col, decimals, "
	    "reliable FROM " SCHEMA_T_METRICS " ORDER BY id", -1, &s,
	    NULL) != SQLITE_OK)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		if ((err = catalog_add(cat, s)) != 0)
			break;
	sqlite3_finalize(s);
	if (err == 0 && rc != SQLITE_DONE)
		err = -3;
	if (err != 0)
		db_catalog_free(cat);
	return err;
}

int
db_catalog_load(sqlite3 *db, struct db_catalog *cat)
{
	int rc = db_catalog_read(db, cat);

	if (rc == -2)
		errx(EXIT_FAILURE, "out of memory");
	if (rc == -1 || rc == -3)
		return db_error(db, "the metric catalog");
	for (size_t i = 0; i < cat->n; i++) {
		const struct db_metric *m = &cat->m[i];

		if (m->decimals < 0 || m->decimals > MAX_DECIMALS) {
			warnx("the metric catalog gives %s %d decimals; "
			    "0 to %d are possible", m->key, m->decimals,
			    MAX_DECIMALS);
			return DB_READ_FAILED;
		}
	}
	return 0;
}

const struct db_metric *
db_catalog_find(const struct db_catalog *cat, const char *key)
{
	for (size_t i = 0; i < cat->n; i++)
		if (strcmp(cat->m[i].key, key) == 0)
			return &cat->m[i];
	return NULL;
}

void
db_catalog_free(struct db_catalog *cat)
{
	for (size_t i = 0; i < cat->n; i++) {
		free(cat->m[i].key);
		free(cat->m[i].unit);
		free(cat->m[i].col);
	}
	free(cat->m);
	cat->m = NULL;
	cat->n = 0;
}

int
db_devmap_load(sqlite3 *db, struct db_devmap *map)
{
	sqlite3_stmt *s;
	int rc;

	map->e = NULL;
	map->n = 0;
	if (sqlite3_prepare_v2(db, "SELECT device, since_ns, bus_id, metric_file FROM "
	    SCHEMA_T_DEVICE_MAP " ORDER BY device, since_ns", -1, &s,
	    NULL) != SQLITE_OK)
		return db_error(db, "the device map");
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct db_devmap_entry *e;

		map->e = dbread_grow(map->e, map->n, sizeof(*e));
		e = &map->e[map->n++];

		e->device = sqlite3_column_int(s, 0);
		e->since_ns = sqlite3_column_int64(s, 1);
		e->bus_id = dbread_column_dup(s, 2);
		e->metric_file = dbread_column_dup(s, 3);
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 :
	    db_error(db, "the device map");
}

/* The entry of device in force at ts_ns, NULL if none. */
static const struct db_devmap_entry *
devmap_at(const struct db_devmap *map, int device, int64_t ts_ns)
{
	const struct db_devmap_entry *found = NULL;

	/* few entries: only changes are recorded */
	for (size_t i = 0; i < map->n; i++) {
		if (map->e[i].device != device)
			continue;
		if (map->e[i].since_ns > ts_ns)
			break;
		found = &map->e[i];
	}
	return found;
}

const char *
db_devmap_bus_id(const struct db_devmap *map, int device, int64_t ts_ns)
{
	const struct db_devmap_entry *e = devmap_at(map, device, ts_ns);

	return e != NULL ? e->bus_id : "";
}

const char *
db_devmap_file(const struct db_devmap *map, int device, int64_t ts_ns)
{
	const struct db_devmap_entry *e = devmap_at(map, device, ts_ns);

	return e != NULL ? e->metric_file : "";
}

void
db_devmap_free(struct db_devmap *map)
{
	for (size_t i = 0; i < map->n; i++) {
		free(map->e[i].bus_id);
		free(map->e[i].metric_file);
	}
	free(map->e);
	map->e = NULL;
	map->n = 0;
}

const char *
db_card_function(sqlite3 *db, const char *bus_id)
{
	sqlite3_stmt *s;
	const char *t = "";

	if (bus_id[0] == '\0' || sqlite3_prepare_v2(db, "SELECT function FROM "
	    SCHEMA_T_CARDS " WHERE bus_id = ?1", -1, &s, NULL) != SQLITE_OK)
		return t;
	sqlite3_bind_text(s, 1, bus_id, -1, SQLITE_STATIC);
	if (sqlite3_step(s) == SQLITE_ROW) {
		const char *f = (const char *)sqlite3_column_text(s, 0);

		if (f != NULL && strcmp(f, "vf") == 0)
			t = "vf";
		else if (f != NULL && strcmp(f, "pf") == 0)
			t = "pf";
	}
	sqlite3_finalize(s);
	return t;
}

/* Column i of s's row, malloc'd, or NULL where the column is NULL. */
static char *
text_or_null(sqlite3_stmt *s, int i)
{
	const unsigned char *t = sqlite3_column_text(s, i);
	char *p;

	if (t == NULL)
		return NULL;
	if ((p = strdup((const char *)t)) == NULL)
		errx(EXIT_FAILURE, "out of memory");
	return p;
}

int
db_cards(sqlite3 *db, struct db_card **out, size_t *n)
{
	sqlite3_stmt *s;

	*out = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(db, "SELECT c.bus_id, coalesce(c.numa_node, "
	    "-1), coalesce(c.link_speed, ''), coalesce(c.link_width, 0), "
	    "(SELECT group_concat(DISTINCT m.device) FROM device_map m WHERE "
	    "m.bus_id = c.bus_id) FROM cards c ORDER BY c.bus_id", -1, &s,
	    NULL) != SQLITE_OK)
		return -1;
	while (sqlite3_step(s) == SQLITE_ROW) {
		struct db_card *c;

		*out = dbread_grow(*out, *n, sizeof(**out));
		c = &(*out)[(*n)++];
		c->bus_id = text_or_null(s, 0);
		c->numa_node = sqlite3_column_int(s, 1);
		c->link_speed = text_or_null(s, 2);
		c->link_width = sqlite3_column_int(s, 3);
		c->devices = text_or_null(s, 4);
	}
	sqlite3_finalize(s);
	return 0;
}

void
db_cards_free(struct db_card *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(c[i].bus_id);
		free(c[i].link_speed);
		free(c[i].devices);
	}
	free(c);
}
