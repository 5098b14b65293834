/* direct: the cards' new-format metric files, read from a map; see direct.h. */
#include "direct.h"
#include "clockstep.h"
#include "direct_clock.h"

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "regfile.h"
#include "schema.h"
#include "timeparse.h"

#define SEC_MAX	MF_MAX_SECTIONS

struct dcard {
	struct direct_card_stats st;
	int64_t copied_ns;		/* realtime just after the copy */
	int64_t copied_off;		/* realtime minus monotonic then */
	uint64_t copied_mono;		/* monotonic then */
	int fd;
	const uint8_t *map;
	size_t len;			/* mapped = the file's size */
	dev_t dev;
	ino_t ino;
	struct timespec mtime;		/* at the last stat of the path */
	uint64_t checked_mono_ns;	/* last stat of the path */
	bool moved;			/* the last stat found it changed */
	uint64_t looked_mono_ns;	/* last copy of an old-format file */
	bool look_again;		/* that copy found it being updated */
	enum mf_order order;
	bool logged;			/* the state's reason was logged */
	uint8_t *img, *last;		/* this read's copy, the last sample's */
	bool have_last;
	uint64_t file_ms;		/* the file header's last update, last read */
	uint64_t good_ms;		/* the previous good stamp; 0 if none */
	int64_t good_off;		/* copied_off of the read that gave it */
	uint64_t good_mono;		/* copied_mono of that read */
	uint64_t span_ms;		/* the last row's interval */
	bool file_ms_moves;		/* the writer keeps it in step with the
					   sections: seen to move, or at or
					   after every section at a first read */
	struct mf_file f;		/* this read, decoded */
	size_t nsec;			/* sections of the last sample */
	uint32_t off[SEC_MAX], seq[SEC_MAX];
	uint64_t ms[SEC_MAX];
	uint8_t given[MF_TABLE_METRICS / 8];	/* table entries st.metrics names */
	int ids[MF_MAX_VALUES];
	struct store_value vals[MF_MAX_VALUES];
};

struct direct {
	const struct mf_table *table;
	struct direct_sink sink;
	int metric_id[MF_TABLE_METRICS];	/* store id per table entry; -2 unknown */
	struct dcard *cards[DIRECT_MAX_CARDS];
	struct ratelimit rl;
};

/*
 * A file cut short under the map (the workload truncating it in place)
 * raises SIGBUS on the next access past its new end.  The map is touched
 * only inside take_copy, with bus_armed set: the handler jumps back there,
 * and the card is mapped again.  A SIGBUS anywhere else gets the action
 * that was there before.
 */
static sigjmp_buf bus_jmp;
static volatile sig_atomic_t bus_armed;
static struct sigaction bus_old;

static void
on_sigbus(int sig, siginfo_t *si, void *ctx)
{
	(void)si;
	(void)ctx;
	if (bus_armed) {
		bus_armed = 0;
		siglongjmp(bus_jmp, 1);
	}
	sigaction(sig, &bus_old, NULL);	/* the fault repeats, unhandled */
}

/* Install on_sigbus (again, if something replaced it since). */
static void
catch_sigbus(void)
{
	struct sigaction sa, cur;

	if (sigaction(SIGBUS, NULL, &cur) == 0 &&
	    (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_sigbus)
		return;
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigaction(SIGBUS, &sa, &bus_old);
}

const char *
direct_state_name(enum direct_state s)
{
	switch (s) {
	case DIRECT_UNKNOWN:	return "unknown";
	case DIRECT_READING:	return "reading";
	case DIRECT_MISSING:	return "missing";
	case DIRECT_OLD_FORMAT:	return "old format";
	case DIRECT_VERSION:	return "unsupported version";
	case DIRECT_BAD:	return "bad file";
	case DIRECT_NOT_FILE:	return "not a file";
	}
	return "?";
}

struct direct *
direct_new(const struct mf_table *t, const struct direct_sink *sink)
{
	struct direct *d = calloc(1, sizeof(*d));

	if (d == NULL)
		return NULL;
	d->table = t;
	d->sink = *sink;
	for (size_t i = 0; i < MF_TABLE_METRICS; i++)
		d->metric_id[i] = -2;
	d->rl = (struct ratelimit)RATELIMIT_INIT(60 * NSEC_PER_SEC, 10);
	catch_sigbus();
	return d;
}

static void
unmap(struct dcard *c)
{
	if (c->map != NULL)
		munmap((void *)(uintptr_t)c->map, c->len);
	if (c->fd != -1)
		close(c->fd);
	c->map = NULL;
	c->fd = -1;
	c->len = 0;
	c->file_ms = 0;
	c->good_ms = 0;
	free(c->img);
	free(c->last);
	c->img = c->last = NULL;
	c->have_last = false;
}

static void
card_free(struct dcard *c)
{
	if (c == NULL)
		return;
	unmap(c);
	free(c);
}

void
direct_free(struct direct *d)
{
	if (d == NULL)
		return;
	for (size_t i = 0; i < DIRECT_MAX_CARDS; i++)
		card_free(d->cards[i]);
	free(d);
}

void
direct_add(struct direct *d, int device, const char *path)
{
	struct dcard *c;

	if (device < 0 || device >= DIRECT_MAX_CARDS)
		return;
	c = d->cards[device];
	if (c != NULL && strcmp(c->st.path, path) == 0)
		return;
	card_free(c);
	if ((c = d->cards[device] = calloc(1, sizeof(*c))) == NULL) {
		log_warnx("out of memory");
		return;
	}
	c->fd = -1;
	c->st.device = device;
	snprintf(c->st.path, sizeof(c->st.path), "%s", path);
}

/* Change state, logging the reason once per change. */
static bool
set_state(struct dcard *c, enum direct_state s, const char *why)
{
	bool changed = c->st.state != s;

	if (changed || strcmp(c->st.why, why) != 0)
		c->logged = false;
	c->st.state = s;
	snprintf(c->st.why, sizeof(c->st.why), "%s", why);
	if (!c->logged && s != DIRECT_READING && s != DIRECT_UNKNOWN) {
		if (s == DIRECT_MISSING)
			log_info("device %d: %s", c->st.device, why);
		else if (s == DIRECT_OLD_FORMAT)	/* a state, not a fault */
			log_notice("device %d: %s", c->st.device, why);
		else
			log_warnx("device %d: %s", c->st.device, why);
		c->logged = true;
	}
	return changed;
}

/* The path holds something that is not a regular file (mode's type). */
static bool
not_a_file(struct dcard *c, mode_t mode)
{
	char why[1024];

	unmap(c);
	snprintf(why, sizeof(why), "metric file %s is %s, not a regular file; "
	    "nothing read from it, this card stays on aiu-smi", c->st.path,
	    regfile_kind(mode));
	return set_state(c, DIRECT_NOT_FILE, why);
}

/*
 * Map the file at its path again if it is new, re-created or resized.
 * Anyone may put a FIFO or a device at the path (the default folder is
 * /tmp): it is never opened blocking nor read (regfile.h).
 */
static bool
check_file(struct dcard *c, uint64_t mono_ns)
{
	struct stat sb;
	char why[1024], what[256];
	mode_t kind;
	void *m;
	int fd;

	c->checked_mono_ns = mono_ns;
	c->moved = true;
	if (stat(c->st.path, &sb) == -1) {
		unmap(c);
		snprintf(why, sizeof(why), "metric file %s: %s", c->st.path,
		    strerror(errno));
		return set_state(c, DIRECT_MISSING, why);
	}
	if (!S_ISREG(sb.st_mode))
		return not_a_file(c, sb.st_mode);
	if (c->map != NULL && sb.st_ino == c->ino && sb.st_dev == c->dev &&
	    (size_t)sb.st_size == c->len) {
		c->moved = sb.st_mtim.tv_sec != c->mtime.tv_sec ||
		    sb.st_mtim.tv_nsec != c->mtime.tv_nsec;
		c->mtime = sb.st_mtim;
		return false;
	}
	if (c->map != NULL) {
		c->st.reopened++;
		log_info("device %d: metric file %s was re-created; reading the "
		    "new one", c->st.device, c->st.path);
	}
	unmap(c);
	/* what is open is what counts from here: the path may change again */
	if ((fd = regfile_open(c->st.path, false, &sb, &kind, what,
	    sizeof(what))) == -1) {
		if (kind != 0)
			return not_a_file(c, kind);
		snprintf(why, sizeof(why), "metric file %s: %s", c->st.path,
		    what);
		return set_state(c, DIRECT_MISSING, why);
	}
	c->mtime = sb.st_mtim;
	if (sb.st_size == 0) {
		close(fd);
		snprintf(why, sizeof(why), "metric file %s is empty: the writer "
		    "has not written it yet", c->st.path);
		return set_state(c, DIRECT_MISSING, why);
	}
	if (sb.st_size < MF_MIN_SIZE || sb.st_size > DIRECT_FILE_MAX) {
		close(fd);
		snprintf(why, sizeof(why), "metric file %s: %lld bytes, not a "
		    "new-format file of at most %d bytes", c->st.path,
		    (long long)sb.st_size, DIRECT_FILE_MAX);
		return set_state(c, DIRECT_BAD, why);
	}
	m = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_SHARED, fd, 0);
	c->img = malloc((size_t)sb.st_size);
	c->last = malloc((size_t)sb.st_size);
	if (m == MAP_FAILED || c->img == NULL || c->last == NULL) {
		snprintf(why, sizeof(why), "metric file %s: cannot map it: %s",
		    c->st.path, strerror(errno));
		if (m != MAP_FAILED)
			munmap(m, (size_t)sb.st_size);
		close(fd);
		unmap(c);
		return set_state(c, DIRECT_BAD, why);
	}
	c->fd = fd;
	c->map = m;
	c->len = (size_t)sb.st_size;
	c->ino = sb.st_ino;
	c->dev = sb.st_dev;
	c->order = MF_ORDER_NATIVE;
	c->st.swapped = false;
	c->have_last = false;
	return false;
}

/*
 * n bytes of the map from off into b, each read once: the writer may change
 * them any time.
 */
static void
map_copy(const struct dcard *c, size_t off, uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		b[i] = ((const volatile uint8_t *)c->map)[off + i];
}

static uint32_t
map_u32(const struct dcard *c, size_t off)
{
	uint8_t b[4];

	map_copy(c, off, b, sizeof(b));
	return mf_get_u32(b, c->order);
}

static uint64_t
map_u64(const struct dcard *c, size_t off)
{
	uint8_t b[8];

	map_copy(c, off, b, sizeof(b));
	return mf_get_u64(b, c->order);
}

static bool
map_updating(const struct dcard *c)
{
	return ((const volatile uint8_t *)c->map)[0] == '!';
}

/* Use the other byte order if only it makes the size field the file's. */
static void
pick_order(struct dcard *c)
{
	enum mf_order other = mf_get_u32((const uint8_t *)"\1\0\0\0",
	    MF_ORDER_NATIVE) == 1 ? MF_ORDER_BIG : MF_ORDER_LITTLE;

	if (mf_get_u32(c->img + 4, c->order) == c->len ||
	    mf_get_u32(c->img + 4, other) != c->len)
		return;
	c->order = other;
	c->st.swapped = true;
	log_notice("device %d: metric file %s is in %s byte order; read as such",
	    c->st.device, c->st.path, other == MF_ORDER_BIG ? "big-endian" :
	    "little-endian");
}

/* A decode that failed: the card's state and reason. */
static bool
bad_file(struct direct *d, struct dcard *c, enum mf_status s, const char *err)
{
	char why[1024];
	unsigned dropped;

	if (s == MF_OLD_FORMAT) {
		/* a state of the file, not a failed read: see read_card */
		snprintf(why, sizeof(why), "metric file %s is in the old format, "
		    "which only aiu-smi reads; this card stays on aiu-smi",
		    c->st.path);
		return set_state(c, DIRECT_OLD_FORMAT, why);
	}
	c->st.errors++;
	switch (s) {
	case MF_BAD_VERSION:
		snprintf(why, sizeof(why), "metric file %s: %s; this card stays "
		    "on aiu-smi", c->st.path, err);
		return set_state(c, DIRECT_VERSION, why);
	default:
		snprintf(why, sizeof(why), "metric file %s: %s: %s; nothing "
		    "stored from it", c->st.path, mf_status_str(s), err);
		if (c->st.state == DIRECT_BAD && strcmp(c->st.why, why) != 0 &&
		    ratelimit_pass(&d->rl, now_monotonic_ns(), &dropped))
			c->logged = false;
		return set_state(c, DIRECT_BAD, why);
	}
}

/*
 * Copy the file consistently into c->img and decode it into c->f.
 * 1: decoded; 0: nothing this tick (updating, torn); -1: a bad file.
 */
static int
copy_once(struct direct *d, struct dcard *c, bool *changed)
{
	char err[256];
	enum mf_status s;

	for (int attempt = 0; attempt <= DIRECT_RETRIES; attempt++) {
		uint32_t pre_seq[SEC_MAX];
		uint64_t pre_ms[SEC_MAX];
		/* the sections read before the copy: the last read's */
		size_t npre = c->have_last ? c->nsec : 0;
		bool moved = false;

		if (attempt > 0)
			c->st.retries++;
		for (size_t i = 0; i < npre; i++) {
			pre_seq[i] = map_u32(c, c->off[i] + MF_SEC_OFF_SEQ);
			pre_ms[i] = map_u64(c, c->off[i] + MF_SEC_OFF_UPDATED);
		}
		if (map_updating(c)) {
			c->st.updating++;
			return 0;
		}
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		memcpy(c->img, c->map, c->len);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		clockstep_read(&c->copied_ns, &c->copied_mono);
		c->copied_off = c->copied_ns - (int64_t)c->copied_mono;
		c->st.reads++;
		if (map_updating(c) || c->img[0] == '!') {
			c->st.updating++;
			return 0;
		}
		if (!c->st.swapped)
			pick_order(c);
		s = mf_decode(c->img, c->len, c->order, d->table, &c->f, err,
		    sizeof(err));
		if (s != MF_OK) {
			*changed |= bad_file(d, c, s, err);
			return -1;
		}
		/* before, during and after the copy: one update only */
		for (size_t i = 0; i < c->f.nsec && !moved; i++) {
			const struct mf_section *sec = &c->f.sec[i];

			moved = map_u32(c, sec->offset + MF_SEC_OFF_SEQ) != sec->seq ||
			    map_u64(c, sec->offset + MF_SEC_OFF_UPDATED) !=
			    sec->updated_ms;
			if (npre == c->f.nsec && c->off[i] == sec->offset)
				moved |= pre_seq[i] != sec->seq ||
				    pre_ms[i] != sec->updated_ms;
		}
		if (!moved)
			return 1;
	}
	c->st.torn++;
	return 0;
}

/* copy_once, with a file cut short under the map caught (see on_sigbus). */
static int
take_copy(struct direct *d, struct dcard *c, bool *changed)
{
	char why[1024];
	int r;

	if (sigsetjmp(bus_jmp, 0) != 0) {
		c->st.errors++;
		snprintf(why, sizeof(why), "metric file %s was cut short while "
		    "being read; nothing stored from that read", c->st.path);
		unmap(c);
		*changed |= set_state(c, DIRECT_BAD, why);
		return -1;
	}
	bus_armed = 1;
	r = copy_once(d, c, changed);
	bus_armed = 0;
	return r;
}

static bool
is_bytes(const struct mf_metric_type *mt)
{
	return mt->vtype == MF_VT_KIB || mt->vtype == MF_VT_MIB ||
	    mt->vtype == MF_VT_GIB;
}

/* The key metric type mt is stored under: amounts in bytes get "_bytes". */
static void
metric_key(const struct mf_metric_type *mt, char *key, size_t len)
{
	snprintf(key, len, "%s%s", mt->name, is_bytes(mt) ? "_bytes" : "");
}

static int
metric_id(struct direct *d, const struct mf_metric_type *mt)
{
	size_t k = (size_t)(mt - d->table->metrics);
	char key[MF_NAME_MAX + 8];
	const char *unit = "";
	bool bytes = is_bytes(mt);
	int id;

	if (k >= MF_TABLE_METRICS)
		return -1;
	if (d->metric_id[k] != -2)
		return d->metric_id[k];
	metric_key(mt, key, sizeof(key));
	if (bytes)
		unit = "B";
	else if (strcmp(mt->name, "tempr") == 0)
		unit = "C";
	if (d->sink.metric(d->sink.arg, key, unit, mt->summ == MF_SUM_MAX,
	    &id) == -1)
		return -1;	/* asked again next time */
	d->metric_id[k] = id;
	return id;
}

/*
 * Name in st.metrics the keys that the row of c->f carries (the values
 * present and stored), when that set differs from the last row's: for status, which
 * tells from it what the card's file gives (the best-source rule).
 */
static void
note_metrics(struct direct *d, struct dcard *c)
{
	const struct mf_file *f = &c->f;
	uint8_t given[sizeof(c->given)] = { 0 };
	char key[MF_NAME_MAX + 8];
	size_t used = 0;

	for (size_t i = 0; i < f->nval; i++) {
		size_t k = (size_t)(f->val[i].type - d->table->metrics);

		if (f->val[i].present && k < MF_TABLE_METRICS &&
		    d->metric_id[k] >= 0)
			given[k / 8] |= (uint8_t)(1U << (k % 8));
	}
	if (memcmp(given, c->given, sizeof(given)) == 0 &&
	    c->st.metrics[0] != '\0')
		return;
	memcpy(c->given, given, sizeof(given));
	c->st.metrics[0] = '\0';
	for (size_t k = 0; k < MF_TABLE_METRICS; k++) {
		if (!(given[k / 8] & (1U << (k % 8))))
			continue;
		metric_key(&d->table->metrics[k], key, sizeof(key));
		if (used + strlen(key) + 2 > sizeof(c->st.metrics))
			break;
		used += (size_t)snprintf(c->st.metrics + used,
		    sizeof(c->st.metrics) - used, "%s%s", used > 0 ? " " : "",
		    key);
	}
}


/* ms is the previous good stamp; with at_read, of this read's clock. */
static void
set_good(struct dcard *c, uint64_t ms, bool at_read)
{
	c->good_ms = ms;
	if (at_read) {
		c->good_off = c->copied_off;
		c->good_mono = c->copied_mono;
	}
}

/* a - b in ms, at least 1 */
static uint64_t
span_of(int64_t a, int64_t b)
{
	return a > b ? (uint64_t)(a - b) : 1;
}

/*
 * The host clock was stepped by step_ns between the previous good stamp's
 * read and this one: true (with the row's interval in *span) if stamp ms
 * is still the card's time: stamped before the step and read after it
 * (nearer the old clock than the new, and in step with the previous
 * stamp), or stamped by the new clock in step with the previous stamp
 * moved by the step, or at least agreeing with the new clock (the
 * previous stamp no longer compares: the checks restart from this one).
 */
static bool
stamp_across_step(struct dcard *c, uint64_t ms, int64_t step_ns,
    uint64_t *span)
{
	int64_t step_ms = step_ns / (int64_t)NSEC_PER_MSEC;
	int64_t moved = (int64_t)c->good_ms + step_ms;
	int64_t ns = (int64_t)(ms * NSEC_PER_MSEC);
	bool old = llabs(ns - (c->copied_ns - step_ns)) <
	    llabs(ns - c->copied_ns);

	(void)clockstep_check();	/* logged and counted there, once */
	if (old && direct_stamp_fault(ms, c->good_ms, c->copied_ns -
	    step_ns) == NULL) {
		*span = span_of((int64_t)ms, (int64_t)c->good_ms);
		set_good(c, ms, false);
		return true;
	}
	if (!old && moved > 0 && direct_stamp_fault(ms, (uint64_t)moved,
	    c->copied_ns) == NULL) {
		*span = span_of((int64_t)ms, moved);
		set_good(c, ms, true);
		return true;
	}
	if (direct_stamp_fault(ms, 0, c->copied_ns) == NULL) {
		*span = c->span_ms > 0 ? c->span_ms : 1;
		set_good(c, ms, true);
		return true;
	}
	return false;
}

/*
 * True if stamp ms may be the card's time, with the row's interval (the
 * writer's time since the previous good stamp) in *span; else count and
 * log why.  A stamp that agrees with the host clock becomes the previous
 * one either way (a stepped writer clock loses one row); a step of the
 * host clock itself loses none (stamp_across_step).
 */
static bool
check_stamp(struct direct *d, struct dcard *c, uint64_t ms, uint64_t *span)
{
	const char *fault;
	unsigned dropped;

	if (c->good_ms != 0 && clockstep_moved(c->good_off, c->good_mono,
	    c->copied_off, c->copied_mono) && stamp_across_step(c, ms,
	    c->copied_off - c->good_off, span)) {
		c->st.across_step++;
		return true;
	}
	fault = direct_stamp_fault(ms, c->good_ms, c->copied_ns);
	if (fault == NULL) {
		*span = c->good_ms != 0 ?
		    span_of((int64_t)ms, (int64_t)c->good_ms) : 1;
		set_good(c, ms, true);
		return true;
	}
	if (direct_stamp_fault(ms, 0, c->copied_ns) == NULL)
		set_good(c, ms, true);
	c->st.clock_dropped++;
	snprintf(c->st.clock_why, sizeof(c->st.clock_why), "stamp %" PRIu64
	    " ms %s; read at %" PRId64 " ms", ms, fault,
	    c->copied_ns / (int64_t)NSEC_PER_MSEC);
	if (ratelimit_pass(&d->rl, now_monotonic_ns(), &dropped))
		log_warnx("device %d: metric file %s: %s: sample not stored",
		    c->st.device, c->st.path, c->st.clock_why);
	return false;
}

/* Hand on c->f's values as one row stamped by section stamp. */
static void
emit_row(struct direct *d, struct dcard *c, const struct mf_section *stamp)
{
	const struct mf_file *f = &c->f;
	struct store_sample s;
	uint64_t span;
	size_t n = 0;

	/*
	 * The row covers the writer's time since the good sample before (the
	 * baseline at least): the file's own interval field has no documented
	 * unit, so it is only shown in status.
	 */
	c->st.interval = stamp->interval;
	if (!check_stamp(d, c, stamp->updated_ms, &span))
		return;
	c->span_ms = span;
	for (size_t i = 0; i < f->nval; i++) {
		int id = metric_id(d, f->val[i].type);

		if (id < 0)
			continue;
		c->ids[n] = id;
		c->vals[n] = (struct store_value){ f->val[i].mant,
		    f->val[i].scale, f->val[i].present };
		n++;
	}
	s = (struct store_sample){
		.ts_ns = (int64_t)(stamp->updated_ms * NSEC_PER_MSEC),
		.device = c->st.device,
		.interval_ms = (uint32_t)span,
		.src = SCHEMA_SRC_FILE,
		.have_seq = true,
		.seq = stamp->seq,
		.arrival_ns = c->copied_ns,
		.nvalues = n,
		.metric = c->ids,
		.values = c->vals,
	};
	note_metrics(d, c);
	c->st.rows++;
	c->st.newest_ts_ns = s.ts_ns;
	d->sink.row(d->sink.arg, &s);
}


/* A section of f is stamped after f's header. */
static bool
section_after(const struct mf_file *f)
{
	for (size_t i = 0; i < f->nsec; i++)
		if (f->sec[i].updated_ms > f->updated_ms)
			return true;
	return false;
}

/* Hand on the sample in c->img/c->f if it is new and whole. */
static void
take_sample(struct direct *d, struct dcard *c)
{
	const struct mf_file *f = &c->f;
	bool same_layout = c->have_last && c->nsec == f->nsec;
	bool any_new = false;
	const struct mf_section *stamp = NULL;
	uint32_t missed = 0;

	/*
	 * The header's last update is written after the sections': a section
	 * stamped later is an update still in progress, once the header is
	 * known to keep in step (seen to move, or, at a first read, stamped
	 * at or after every section: else a reader that starts late, inside
	 * a torn update, would take one section's new sample with another's
	 * old words until it had seen the header move).
	 */
	if ((c->file_ms != 0 && f->updated_ms != c->file_ms) ||
	    (!c->have_last && f->updated_ms != 0 && !section_after(f)))
		c->file_ms_moves = true;
	c->file_ms = f->updated_ms;
	if (c->file_ms_moves && section_after(f)) {
		c->st.torn++;
		return;
	}
	for (size_t i = 0; i < f->nsec; i++) {
		const struct mf_section *sec = &f->sec[i];
		bool old = same_layout && c->off[i] == sec->offset &&
		    c->seq[i] == sec->seq && c->ms[i] == sec->updated_ms;

		if (old && memcmp(c->img + sec->offset, c->last + sec->offset,
		    sec->size) != 0) {
			c->st.torn++;	/* new words under the old header */
			return;
		}
		if (old || sec->stype == NULL)
			continue;
		any_new = true;
		/* sections update together: count the largest jump once */
		if (same_layout && c->off[i] == sec->offset &&
		    sec->seq - c->seq[i] > 1 && sec->seq - c->seq[i] < 0x80000000U &&
		    sec->seq - c->seq[i] - 1 > missed)
			missed = sec->seq - c->seq[i] - 1;
		if (stamp == NULL || sec->updated_ms > stamp->updated_ms)
			stamp = sec;
	}
	if (!c->have_last) {
		/* the first read of a mapping: only the baseline */
		for (size_t i = 0; i < f->nsec; i++)
			if (f->sec[i].updated_ms > c->good_ms &&
			    !direct_baseline_off(f->sec[i].updated_ms, c->copied_ns))
				set_good(c, f->sec[i].updated_ms, true);
		stamp = NULL;
	} else if (!any_new || stamp == NULL) {
		c->st.duplicates++;
		return;
	}
	c->st.missed += missed;
	if (stamp != NULL)
		emit_row(d, c, stamp);

	memcpy(c->last, c->img, c->len);
	c->have_last = true;
	c->nsec = f->nsec;
	for (size_t i = 0; i < f->nsec; i++) {
		c->off[i] = f->sec[i].offset;
		c->seq[i] = f->sec[i].seq;
		c->ms[i] = f->sec[i].updated_ms;
	}
}

/*
 * An old-format file is looked at again only when the stat of the path
 * (at most every DIRECT_RESTAT_NS) finds it changed, when the last look
 * found it being updated, or after DIRECT_OLD_RECHECK_NS.
 */
static bool
old_format_skip(const struct dcard *c, uint64_t mono_ns)
{
	return c->st.state == DIRECT_OLD_FORMAT && c->map != NULL &&
	    !c->moved && !c->look_again &&
	    mono_ns - c->looked_mono_ns < DIRECT_OLD_RECHECK_NS;
}

static bool
read_card(struct direct *d, struct dcard *c, uint64_t mono_ns)
{
	bool changed = false, old = c->st.state == DIRECT_OLD_FORMAT;
	int r;

	if (old && c->map != NULL && !c->look_again &&
	    mono_ns - c->checked_mono_ns < DIRECT_RESTAT_NS)
		return false;
	if (c->map == NULL || c->st.state != DIRECT_READING ||
	    mono_ns - c->checked_mono_ns >= DIRECT_RESTAT_NS)
		changed |= check_file(c, mono_ns);
	if (c->map == NULL || old_format_skip(c, mono_ns))
		return changed;
	c->looked_mono_ns = mono_ns;
	r = take_copy(d, c, &changed);
	c->look_again = r == 0 && c->st.state == DIRECT_OLD_FORMAT;
	if (r == 1) {
		changed |= set_state(c, DIRECT_READING, "");
		take_sample(d, c);
	}
	return changed;
}

bool
direct_tick(struct direct *d, uint64_t mono_ns)
{
	bool changed = false;

	for (size_t i = 0; i < DIRECT_MAX_CARDS; i++)
		if (d->cards[i] != NULL)
			changed |= read_card(d, d->cards[i], mono_ns);
	return changed;
}

bool
direct_reading(const struct direct *d, int device)
{
	const struct direct_card_stats *st = direct_card(d, device);

	return st != NULL && st->state == DIRECT_READING;
}

bool
direct_covers_all(const struct direct *d)
{
	size_t n = 0;

	for (size_t i = 0; i < DIRECT_MAX_CARDS; i++) {
		if (d->cards[i] == NULL)
			continue;
		if (d->cards[i]->st.state != DIRECT_READING)
			return false;
		n++;
	}
	return n > 0;
}

const struct direct_card_stats *
direct_card(const struct direct *d, int device)
{
	if (d == NULL || device < 0 || device >= DIRECT_MAX_CARDS ||
	    d->cards[device] == NULL)
		return NULL;
	return &d->cards[device]->st;
}
