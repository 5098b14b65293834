/*
 * import: an aiu-smi CSV log, or spyremon's own csv export, loaded into a
 * database through the store (store/storedb.h), so that the schema is
 * created and migrated in one place only.
 *
 * The file is read twice.  The first pass parses and checks every line
 * and keeps only each row's key (device, stamp, line).  Between the passes
 * the keys are sorted to find repeated rows, the interval of an aiu-smi
 * log is inferred, and, inside the write transaction, the database is
 * searched for samples already in the spans imported.  The second pass
 * parses the rows again and appends them.  Rows, device map changes and
 * import records are committed in one transaction: a bad line, a clash
 * with the database or a failed write imports nothing.  Memory grows with
 * the rows as keys only (some 40 bytes each); the values are flushed every
 * FLUSH_ROWS rows into the open transaction.
 */
#include <err.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client.h"
#include "cmd.h"
#include "db.h"
#include "format.h"
#include "import_parse.h"
#include "import_run.h"
#include "storedb.h"
#include "timeparse.h"


_Static_assert(IMPORT_INTERVAL_MAX_MS * NSEC_PER_MSEC == DB_MAX_INTERVAL_NS,
    "the longest interval an import takes is the one export reads");

enum {
	OPT_TZ = CLIENT_OPT_FIRST_FREE,
	OPT_INTERVAL,
	OPT_DEVICE_MAP,
};

static int
import_option(void *opts, int ch, char *arg)
{
	struct import_opts *o = opts;
	char err[IMPORT_ERR_MAX];
	uint64_t ns;

	switch (ch) {
	case OPT_TZ:
		o->tz = arg;
		break;
	case OPT_INTERVAL:
		if (parse_duration(arg, &ns) == -1 || ns < NSEC_PER_SEC ||
		    ns > IMPORT_INTERVAL_MAX_MS * NSEC_PER_MSEC ||
		    ns % NSEC_PER_MSEC != 0) {
			warnx("--interval %s: give 1s to 60s, in whole "
			    "milliseconds", arg);
			return CLIENT_EXIT_USAGE;
		}
		o->interval_ms = (uint32_t)(ns / NSEC_PER_MSEC);
		break;
	case OPT_DEVICE_MAP:
		free(o->map);
		if (import_devmap_parse(arg, &o->map, &o->nmap, err,
		    sizeof(err)) == -1) {
			warnx("%s", err);
			return CLIENT_EXIT_USAGE;
		}
		break;
	}
	return CLIENT_EXIT_OK;
}

/*
 * Take the file, and set the zone: a bad one is a usage error before
 * anything is read.
 */
static int
check_options(struct import_opts *o, const char *file)
{
	char err[IMPORT_ERR_MAX];

	o->file = file;
	if (strcmp(o->file, "-") == 0) {
		warnx("import reads its file twice: name a file, not -");
		return CLIENT_EXIT_USAGE;
	}
	if (o->tz != NULL && import_set_zone(o->tz, err, sizeof(err)) == -1) {
		warnx("%s", err);
		return CLIENT_EXIT_USAGE;
	}
	return CLIENT_EXIT_OK;
}

/* Remove the database an import created and could not fill. */
static void
remove_created(const char *path)
{
	static const char *const suffix[] = { "", "-wal", "-shm", "-journal" };
	char p[PATH_MAX];

	for (size_t i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++) {
		if ((size_t)snprintf(p, sizeof(p), "%s%s", path, suffix[i]) >=
		    sizeof(p))
			continue;
		if (unlink(p) == -1 && errno != ENOENT)
			warn("cannot remove %s", p);
	}
}

/*
 * The metrics of the file into the catalog; outside the transaction.  A
 * unit the header states must be the one the database has for the key:
 * checked for all before any is added, so a refusal changes nothing.
 */
static int
add_metrics(struct import_run *r)
{
	char unit[CSV_UNIT_MAX];
	int found;

	for (size_t i = 0; i < r->nmetrics; i++) {
		const struct import_metric *m = &r->metrics[i];

		if (m->unit[0] == '\0')
			continue;
		if ((found = storedb_metric_unit(r->st, m->key, unit,
		    sizeof(unit))) == -1)
			return -1;
		if (found && strcmp(unit, m->unit) != 0) {
			warnx("%s:%zu: metric '%s' in '%s': %s holds %s in "
			    "'%s'; nothing imported", r->o->file, m->line,
			    m->key, m->unit, r->dbpath, m->key, unit);
			return -1;
		}
	}
	for (size_t i = 0; i < r->nmetrics; i++)
		if (storedb_metric(r->st, r->metrics[i].key, r->metrics[i].unit,
		    &r->metrics[i].id) == -1)
			return -1;
	return 0;
}

/*
 * Refuse spans that the database already holds samples in, or that an
 * earlier import covers: the stamps would interleave, and a coarse range
 * would claim samples that are not coarse.
 */
static int
check_taken(struct import_run *r)
{
	char a[FMT_BUFLEN], b[FMT_BUFLEN], c[FMT_BUFLEN], d[FMT_BUFLEN];
	struct store_taken t;
	size_t line;

	for (size_t i = 0; i < r->nspans; i++) {
		const struct import_span *sp = &r->spans[i];

		if (storedb_span_taken(r->st, sp->device, sp->first_ns,
		    sp->last_ns, &t) == -1)
			return -1;
		if (t.samples > 0 &&
		    (line = import_run_line_of(r, sp->device, t.oldest_ns)) != 0) {
			warnx("%s:%zu: device %d at %s (ts_ns %" PRId64 ") is "
			    "already in %s; refusing to import it again",
			    r->o->file, line, sp->device,
			    fmt_time_ms(t.oldest_ns, a, sizeof(a)),
			    t.oldest_ns, r->dbpath);
			return -1;
		}
		if (t.samples > 0) {
			warnx("%s: device %d: %s already holds %" PRId64 " "
			    "samples within the imported span %s .. %s, the "
			    "first at %s; refusing to interleave them",
			    r->o->file, sp->device, r->dbpath, t.samples,
			    fmt_time_ms(sp->first_ns, a, sizeof(a)),
			    fmt_time_ms(sp->last_ns, b, sizeof(b)),
			    fmt_time_ms(t.oldest_ns, c, sizeof(c)));
			return -1;
		}
		if (t.imported) {
			warnx("%s: device %d: the imported span %s .. %s "
			    "overlaps an earlier import into %s (%s .. %s)",
			    r->o->file, sp->device,
			    fmt_time_ms(sp->first_ns, a, sizeof(a)),
			    fmt_time_ms(sp->last_ns, b, sizeof(b)), r->dbpath,
			    fmt_time_ms(t.import_first_ns, c, sizeof(c)),
			    fmt_time_ms(t.import_last_ns, d, sizeof(d)));
			return -1;
		}
	}
	return 0;
}

/* One imports row per device and run of rows that share coarse. */
static int
record_runs(struct import_run *r)
{
	struct store_import imp = {
		.path = r->abspath,
		.format = r->format == IMPORT_AIUSMI ? "aiusmi" : "csv",
		.imported_ns = now_realtime_ns(),
	};
	for (size_t i = 0; i < r->nruns; i++) {
		imp.device = r->runs[i].device;
		imp.first_ns = r->runs[i].first_ns;
		imp.last_ns = r->runs[i].last_ns;
		imp.coarse = r->runs[i].coarse;
		if (storedb_import_record(r->st, &imp) == -1)
			return -1;
	}
	return 0;
}

/*
 * The write transaction runs at no lower priority than the daemon: while
 * the import holds the database's write lock the daemon stores nothing,
 * and keeps only so many rows meanwhile (spyremond(8), the store's
 * buffer).  An import niced on a busy host, starved by the processes
 * beside it, held the lock for minutes (2.2 s of work took 170 s at nice
 * 19 beside two CPU-bound processes) and the daemon dropped rows.  So a
 * niced import takes normal priority back for the transaction where it
 * may (root may), and says so where it may not.  The nice it had, or
 * INT_MIN if it had none to give back, into *saved.
 */
static void
priority_for_lock(int *saved)
{
	int nice;

	*saved = INT_MIN;
	errno = 0;
	nice = getpriority(PRIO_PROCESS, 0);
	if (errno != 0 || nice <= 0)
		return;
	if (setpriority(PRIO_PROCESS, 0, 0) == 0) {
		*saved = nice;
		return;
	}
	warnx("this import runs at nice %d and may not raise it while it holds "
	    "the database's write lock: on a busy host it may hold the lock "
	    "long enough for spyremond to drop samples", nice);
}

static void
priority_restore(int saved)
{
	if (saved != INT_MIN)
		(void)setpriority(PRIO_PROCESS, 0, saved);
}

/* Everything that writes: the checks, the second pass, the records. */
static int
write_all(struct import_run *r)
{
	int saved, rc;

	if (add_metrics(r) == -1)
		return -1;
	priority_for_lock(&saved);
	if (storedb_tx_begin(r->st) == -1)
		rc = -1;
	else if (check_taken(r) == -1 || import_run_pass(r, 2) !=
	    CLIENT_EXIT_OK || record_runs(r) == -1) {
		storedb_tx_rollback(r->st);
		rc = -1;
	} else
		rc = storedb_tx_commit(r->st);
	priority_restore(saved);
	return rc;
}

static void
summary(const struct import_run *r)
{
	char a[FMT_BUFLEN], b[FMT_BUFLEN], iv[32];

	printf("imported %zu rows of device%s", r->nrows,
	    r->nspans > 1 ? "s" : "");
	for (size_t i = 0; i < r->nspans; i++)
		printf("%s %d", i == 0 ? "" : ",", r->spans[i].device);
	printf(" from %s into %s\n", r->o->file, r->dbpath);
	format_duration((uint64_t)r->interval_ms * NSEC_PER_MSEC, iv,
	    sizeof(iv));
	printf("  %s .. %s, ", fmt_time_ms(r->first_ns, a, sizeof(a)),
	    fmt_time_ms(r->last_ns, b, sizeof(b)));
	if (r->format == IMPORT_AIUSMI)
		printf("interval %s (%s)\n", iv, r->o->interval_ms != 0 ?
		    "--interval" : r->interval_inferred ? "inferred from the "
		    "stamps" : "assumed: too few rows to infer");
	else
		printf("interval as each row gives it\n");
	if (r->format == IMPORT_AIUSMI)
		printf("  coarse: aiu-smi's whole-second local times, read in "
		    "%s\n", r->zone);
	else if (r->ncoarse > 0)
		printf("  coarse: %zu of the rows (imported from an aiu-smi log "
		    "before)\n", r->ncoarse);
	else
		printf("  not coarse: stamps to the nanosecond\n");
	if (r->nrepeats > 0)
		printf("  %zu repeated rows (one sample exported for several "
		    "spans) imported once\n", r->nrepeats);
	for (size_t i = 0; i < r->nunmapped; i++)
		printf("  device %d: no bus ID (no #MetricFiles entry; give "
		    "--device-map)\n", r->unmapped[i]);
}

static int
import_cmd_run(struct client *cl, void *opts, int argc, char *argv[])
{
	struct import_opts *o = opts;
	struct import_run r;
	struct stat sb;
	bool existed;
	int rc;

	(void)argc;
	if ((rc = check_options(o, argv[0])) != CLIENT_EXIT_OK)
		return rc;
	import_run_init(&r, o);
	if ((r.dbpath = client_database(cl)) == NULL) {
		rc = CLIENT_EXIT_FAILED;
		goto out;
	}
	if ((rc = import_run_open(&r)) != CLIENT_EXIT_OK ||
	    (rc = import_run_pass(&r, 1)) != CLIENT_EXIT_OK ||
	    (rc = import_run_check(&r)) != CLIENT_EXIT_OK)
		goto out;
	existed = stat(r.dbpath, &sb) == 0;
	if (storedb_open(r.dbpath, IMPORT_FLUSH_ROWS, &r.st) == -1) {
		warnx("%s: nothing imported", o->file);
		if (!existed)
			remove_created(r.dbpath);
		rc = CLIENT_EXIT_DATABASE;
		goto out;
	}
	rc = write_all(&r) == 0 ? CLIENT_EXIT_OK : CLIENT_EXIT_FAILED;
	storedb_close(r.st);
	r.st = NULL;
	if (rc != CLIENT_EXIT_OK) {
		warnx("%s: nothing imported", o->file);
		if (!existed)
			remove_created(r.dbpath);
	} else
		summary(&r);
out:
	import_run_free(&r);
	return rc;
}

static void
import_done(void *opts)
{
	free(((struct import_opts *)opts)->map);
}

static const struct option import_longopts[] = {
	{ "tz", required_argument, NULL, OPT_TZ },
	{ "interval", required_argument, NULL, OPT_INTERVAL },
	{ "device-map", required_argument, NULL, OPT_DEVICE_MAP },
	{ NULL, 0, NULL, 0 },
};

const struct cmd_spec import_cmd = {
	.name = "import",
	.usage =
	    "usage: spyremon import [--tz ZONE] [--interval DURATION]\n"
	    "                       [--device-map ID=BUSID,...] [--db FILE] FILE.csv\n"
	    "\n"
	    "Loads an aiu-smi CSV log (aiu-smi -s -f FILE) or spyremon's csv export\n"
	    "into the database, all rows or, on any error, none.  Importing into a\n"
	    "separate --db file is recommended.\n"
	    "\n"
	    "      --tz ZONE                  the zone of aiu-smi's whole-second\n"
	    "                                 local stamps (default the local one)\n"
	    "      --interval DURATION        aiu-smi's delay (default inferred)\n"
	    "      --device-map ID=BUSID,...  the cards' bus IDs by device ID\n",
	.exits = CMD_EXITS_BASE | CMD_EXIT(CLIENT_EXIT_DATABASE),
	.longopts = import_longopts,
	.operands = 1,
	.opts_size = sizeof(struct import_opts),
	.option = import_option,
	.run = import_cmd_run,
	.done = import_done,
};
