/*
 * hosts: databases of several hosts and the traces that go with them
 * (contract and matching rules in hosts.h).
 */
#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "db.h"
#include "hosts.h"

int
hosts_map_parse(const char *arg, struct hosts_map *m)
{
	const char *eq = strrchr(arg, '=');

	if (eq == NULL || eq == arg || eq[1] == '\0') {
		warnx("--host-map %s: say TRACE=HOST, HOST being a host a "
		    "database records or a --db path", arg);
		return -1;
	}
	m->trace = arg;
	m->trace_len = (size_t)(eq - arg);
	m->host = eq + 1;
	return 0;
}

const char *
hosts_name(const struct hosts_db *dbs, size_t nd, size_t i)
{
	const char *h = dbs[i].hostname;

	if (h == NULL || h[0] == '\0')
		return dbs[i].path;
	for (size_t j = 0; j < nd; j++)
		if (j != i && dbs[j].hostname != NULL &&
		    strcmp(dbs[j].hostname, h) == 0)
			return dbs[i].path;
	return h;
}

void
hosts_note_names(const struct hosts_db *dbs, size_t nd, FILE *errfp)
{
	for (size_t i = 0; i < nd; i++) {
		if (hosts_name(dbs, nd, i) != dbs[i].path)
			continue;
		if (dbs[i].hostname == NULL || dbs[i].hostname[0] == '\0')
			fprintf(errfp, "spyremon: %s records no host (a schema "
			    "before version 5): its rows carry its path\n",
			    dbs[i].path);
		else
			fprintf(errfp, "spyremon: %s records host %s, as "
			    "another --db does: its rows carry its path\n",
			    dbs[i].path, dbs[i].hostname);
	}
}

/* "A (host a), B (no host recorded)": every database, on errfp. */
static void
list_dbs(const struct hosts_db *dbs, size_t nd, FILE *errfp)
{
	for (size_t i = 0; i < nd; i++) {
		if (dbs[i].hostname != NULL && dbs[i].hostname[0] != '\0')
			fprintf(errfp, "%s%s (host %s)", i ? ", " : "",
			    dbs[i].path, dbs[i].hostname);
		else
			fprintf(errfp, "%s%s (no host recorded)", i ? ", " : "",
			    dbs[i].path);
	}
}

/* The length of a host name's first label, up to its first '.'. */
static size_t
label_len(const char *h)
{
	return strcspn(h, ".");
}

/* Does recorded hostname h fit host name want, exactly or by first label? */
static bool
fits(const char *h, const char *want, bool exact)
{
	size_t n;

	if (h == NULL || h[0] == '\0')
		return false;
	if (exact)
		return strcmp(h, want) == 0;
	n = label_len(want);
	return n > 0 && label_len(h) == n && strncmp(h, want, n) == 0;
}

/*
 * The databases that fit host: their count, the first in *first and the
 * second in *second (SIZE_MAX if none).
 */
static size_t
find_host(const struct hosts_db *dbs, size_t nd, const char *host,
    bool exact, size_t *first, size_t *second)
{
	size_t n = 0;

	*first = *second = SIZE_MAX;
	for (size_t i = 0; i < nd; i++) {
		if (!fits(dbs[i].hostname, host, exact))
			continue;
		if (n == 0)
			*first = i;
		else if (n == 1)
			*second = i;
		n++;
	}
	return n;
}

/* The trace a --host-map entry names: as given, else by unique file name. */
static size_t
find_trace(const struct hosts_trace *tr, size_t nt, const struct hosts_map *m)
{
	size_t found = SIZE_MAX;

	for (size_t k = 0; k < nt; k++)
		if (strlen(tr[k].path) == m->trace_len &&
		    memcmp(tr[k].path, m->trace, m->trace_len) == 0)
			return k;
	for (size_t k = 0; k < nt; k++) {
		const char *slash = strrchr(tr[k].path, '/');
		const char *base = slash != NULL ? slash + 1 : tr[k].path;

		if (strlen(base) != m->trace_len ||
		    memcmp(base, m->trace, m->trace_len) != 0)
			continue;
		if (found != SIZE_MAX)
			return SIZE_MAX - 1;	/* two traces of that name */
		found = k;
	}
	return found;
}

/* The database HOST of a --host-map names, or SIZE_MAX after saying why. */
static size_t
map_db(const struct hosts_db *dbs, size_t nd, const struct hosts_map *m,
    FILE *errfp)
{
	size_t a, b;

	for (size_t i = 0; i < nd; i++)
		if (strcmp(dbs[i].path, m->host) == 0)
			return i;
	switch (find_host(dbs, nd, m->host, true, &a, &b)) {
	case 1:
		return a;
	case 0:
		fprintf(errfp, "spyremon: --host-map %.*s=%s: no database "
		    "records host %s; the databases: ", (int)m->trace_len,
		    m->trace, m->host, m->host);
		list_dbs(dbs, nd, errfp);
		fputc('\n', errfp);
		return SIZE_MAX;
	default:
		fprintf(errfp, "spyremon: --host-map %.*s=%s: %s and %s both "
		    "record host %s: name one by its --db path\n",
		    (int)m->trace_len, m->trace, m->host, dbs[a].path,
		    dbs[b].path, m->host);
		return SIZE_MAX;
	}
}

/* Apply the --host-map entries; false if any is wrong. */
static bool
apply_map(const struct hosts_trace *tr, size_t nt, const struct hosts_db *dbs,
    size_t nd, const struct hosts_map *map, size_t nmap, size_t *out,
    bool *mapped, FILE *errfp)
{
	bool ok = true;

	for (size_t j = 0; j < nmap; j++) {
		const struct hosts_map *m = &map[j];
		size_t k = find_trace(tr, nt, m), d;

		if (k >= SIZE_MAX - 1) {
			fprintf(errfp, "spyremon: --host-map %.*s=%s: %s\n",
			    (int)m->trace_len, m->trace, m->host,
			    k == SIZE_MAX ? "no --trace names that file" :
			    "several --trace files have that name: give its "
			    "path as in --trace");
			ok = false;
			continue;
		}
		if (mapped[k]) {
			fprintf(errfp, "spyremon: --host-map: %s is mapped "
			    "twice\n", tr[k].path);
			ok = false;
			continue;
		}
		if ((d = map_db(dbs, nd, m, errfp)) == SIZE_MAX) {
			ok = false;
			continue;
		}
		out[k] = d;
		mapped[k] = true;
	}
	return ok;
}

/* Why trace t fits no single database; NULL when it fits one, in *out. */
static const char *
by_own_host(const struct hosts_trace *t, const struct hosts_db *dbs,
    size_t nd, size_t *out, char *why, size_t len)
{
	size_t n, a, b;

	if (t->host == NULL || t->host[0] == '\0')
		return "records no host (no host_name in its header, and its "
		    "file name is not HOST_PID.TIME.pt.trace.json)";
	if ((n = find_host(dbs, nd, t->host, true, &a, &b)) == 0)
		n = find_host(dbs, nd, t->host, false, &a, &b);
	if (n == 1) {
		*out = a;
		return NULL;
	}
	if (n == 0)
		snprintf(why, len, "records host %s, which no database "
		    "records", t->host);
	else
		snprintf(why, len, "records host %s, which fits %s and %s%s",
		    t->host, dbs[a].path, dbs[b].path, n > 2 ? " and more" :
		    "");
	return why;
}

int
hosts_match(const struct hosts_trace *tr, size_t nt,
    const struct hosts_db *dbs, size_t nd, const struct hosts_map *map,
    size_t nmap, size_t *out, FILE *errfp)
{
	char why[HOSTS_NAME_MAX * 2 + 1024];
	const char *reason;
	size_t unresolved = 0;
	bool *mapped, ok;

	if ((mapped = calloc(nt + 1, sizeof(*mapped))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	ok = apply_map(tr, nt, dbs, nd, map, nmap, out, mapped, errfp);
	for (size_t k = 0; k < nt; k++) {
		if (mapped[k])
			continue;
		if (nd == 1) {
			out[k] = 0;
			continue;
		}
		if ((reason = by_own_host(&tr[k], dbs, nd, &out[k], why,
		    sizeof(why))) == NULL)
			continue;
		if (unresolved++ == 0)
			fprintf(errfp, "spyremon: cannot tell which database "
			    "each trace goes with:\n");
		fprintf(errfp, "spyremon:   %s", tr[k].path);
		if (tr[k].has_rank)
			fprintf(errfp, " (rank %lld)", (long long)tr[k].rank);
		fprintf(errfp, ": %s\n", reason);
	}
	if (unresolved > 0) {
		fprintf(errfp, "spyremon: the databases: ");
		list_dbs(dbs, nd, errfp);
		fprintf(errfp, "\nspyremon: say which with --host-map "
		    "TRACE=HOST for %s, HOST being a host above or a --db "
		    "path\n", unresolved == 1 ? "that trace" : "each of them");
		ok = false;
	}
	free(mapped);
	return ok ? 0 : -1;
}

int
hosts_open(const char *const *paths, size_t n, struct hosts_set *set)
{
	char *mid;
	int rc;

	memset(set, 0, sizeof(*set));
	if ((set->db = calloc(n, sizeof(*set->db))) == NULL ||
	    (set->dbs = calloc(n, sizeof(*set->dbs))) == NULL ||
	    (set->hostnames = calloc(n, sizeof(*set->hostnames))) == NULL)
		errx(CLIENT_EXIT_FAILED, "out of memory");
	for (size_t i = 0; i < n; i++) {
		set->dbs[i].path = paths[i];
		set->n = i + 1;
		if ((rc = db_open(paths[i], &set->db[i])) != CLIENT_EXIT_OK)
			return rc;
		if ((rc = db_host(set->db[i], &set->hostnames[i], &mid)) !=
		    CLIENT_EXIT_OK)
			return rc;
		free(mid);
		if (set->hostnames[i] != NULL &&
		    strlen(set->hostnames[i]) >= HOSTS_NAME_MAX)
			set->hostnames[i][HOSTS_NAME_MAX - 1] = '\0';
		set->dbs[i].hostname = set->hostnames[i];
	}
	return CLIENT_EXIT_OK;
}

void
hosts_close(struct hosts_set *set)
{
	for (size_t i = 0; i < set->n; i++) {
		db_close(set->db[i]);
		free(set->hostnames[i]);
	}
	free(set->db);
	free(set->dbs);
	free(set->hostnames);
	memset(set, 0, sizeof(*set));
}
