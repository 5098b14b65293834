/* metricfile: decode (and write) new-format metric files; see metricfile.h. */
#include "metricfile.h"

#include <float.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const struct mf_table builtin = {
	.version = "1.0.0.1",
	.nsections = 3,
	.sections = {
		{ 0x01, "host_metrics" },
		{ 0x10, "runtime" },
		{ 0x20, "perf_counter" },
	},
	.nmetrics = 16,
	.metrics = {
		{ 0x01, 0x01, "hostcpu",  MF_VT_INT,   MF_SUM_AVG },
		{ 0x01, 0x02, "hostmem",  MF_VT_INT,   MF_SUM_AVG },
		{ 0x01, 0x03, "hstrxnet", MF_VT_KIB,   MF_SUM_SUM },
		{ 0x01, 0x04, "hsttxnet", MF_VT_KIB,   MF_SUM_SUM },
		{ 0x01, 0x05, "hstrdblk", MF_VT_KIB,   MF_SUM_SUM },
		{ 0x01, 0x06, "hstwrblk", MF_VT_KIB,   MF_SUM_SUM },
		{ 0x20, 0x10, "pwr",      MF_VT_FDEC1, MF_SUM_FIRST },
		{ 0x20, 0x11, "tempr",    MF_VT_FDEC1, MF_SUM_MAX },
		{ 0x20, 0x12, "rdmem",    MF_VT_KIB,   MF_SUM_SUM },
		{ 0x20, 0x13, "wrmem",    MF_VT_KIB,   MF_SUM_SUM },
		{ 0x20, 0x14, "rxpci",    MF_VT_KIB,   MF_SUM_SUM },
		{ 0x20, 0x15, "txpci",    MF_VT_KIB,   MF_SUM_SUM },
		{ 0x20, 0x16, "rdrdma",   MF_VT_KIB,   MF_SUM_SUM },
		{ 0x20, 0x17, "wrrdma",   MF_VT_KIB,   MF_SUM_SUM },
		{ 0x10, 0x81, "avgmem",   MF_VT_MIB,   MF_SUM_AVG },
		{ 0x10, 0x82, "peakmem",  MF_VT_MIB,   MF_SUM_MAX },
	},
};

const struct mf_table *
mf_table_builtin(void)
{
	return &builtin;
}

const struct mf_section_type *
mf_table_section(const struct mf_table *t, uint32_t id)
{
	for (size_t i = 0; i < t->nsections; i++)
		if (t->sections[i].id == id)
			return &t->sections[i];
	return NULL;
}

const struct mf_metric_type *
mf_table_metric(const struct mf_table *t, uint32_t section, uint32_t id)
{
	for (size_t i = 0; i < t->nmetrics; i++)
		if (t->metrics[i].section == section && t->metrics[i].id == id)
			return &t->metrics[i];
	return NULL;
}

const struct mf_metric_type *
mf_table_metric_by_name(const struct mf_table *t, const char *name)
{
	for (size_t i = 0; i < t->nmetrics; i++)
		if (strcmp(t->metrics[i].name, name) == 0)
			return &t->metrics[i];
	return NULL;
}

int
mf_table_find(const char *env_file, const char *home, char *path, size_t len)
{
	char cand[4][512];
	size_t n = 0;

	if (env_file != NULL && env_file[0] != '\0')
		snprintf(cand[n++], sizeof(cand[0]), "%s", env_file);
	if (home != NULL && home[0] != '\0') {
		snprintf(cand[n++], sizeof(cand[0]), "%s/.section_types.json",
		    home);
		snprintf(cand[n++], sizeof(cand[0]),
		    "%s/.local/etc/section_types.json", home);
	}
	snprintf(cand[n++], sizeof(cand[0]),
	    "/opt/ibm/spyre/runtime/etc/section_types.json");
	for (size_t i = 0; i < n; i++)
		if (access(cand[i], R_OK) == 0) {
			snprintf(path, len, "%s", cand[i]);
			return 0;
		}
	return -1;
}

/* ---- byte order ---- */

static bool
host_big(void)
{
	const uint16_t one = 1;

	return *(const uint8_t *)&one == 0;
}

static bool
is_big(enum mf_order order)
{
	return order == MF_ORDER_BIG || (order == MF_ORDER_NATIVE && host_big());
}

uint32_t
mf_get_u32(const uint8_t *p, enum mf_order order)
{
	if (is_big(order))
		return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
		    (uint32_t)p[2] << 8 | p[3];
	return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[1] << 8 | p[0];
}

uint64_t
mf_get_u64(const uint8_t *p, enum mf_order order)
{
	if (is_big(order))
		return (uint64_t)mf_get_u32(p, order) << 32 |
		    mf_get_u32(p + 4, order);
	return (uint64_t)mf_get_u32(p + 4, order) << 32 |
	    mf_get_u32(p, order);
}

void
mf_put_u32(uint8_t *p, uint32_t v, enum mf_order order)
{
	for (int i = 0; i < 4; i++) {
		int shift = is_big(order) ? 24 - 8 * i : 8 * i;
		p[i] = (uint8_t)(v >> shift);
	}
}

void
mf_put_u64(uint8_t *p, uint64_t v, enum mf_order order)
{
	if (is_big(order)) {
		mf_put_u32(p, (uint32_t)(v >> 32), order);
		mf_put_u32(p + 4, (uint32_t)v, order);
	} else {
		mf_put_u32(p, (uint32_t)v, order);
		mf_put_u32(p + 4, (uint32_t)(v >> 32), order);
	}
}

/* ---- names ---- */

const char *
mf_status_str(enum mf_status s)
{
	switch (s) {
	case MF_OK:		return "ok";
	case MF_UPDATING:	return "being updated";
	case MF_OLD_FORMAT:	return "old format";
	case MF_BAD_MAGIC:	return "bad magic";
	case MF_BAD_VERSION:	return "unsupported layout version";
	case MF_TRUNCATED:	return "truncated";
	case MF_BAD_SIZE:	return "bad size";
	case MF_BAD_LAYOUT:	return "bad layout";
	}
	return "?";
}

static const char *const vtype_names[] = {
	[MF_VT_INT] = "int", [MF_VT_KIB] = "KiB", [MF_VT_MIB] = "MiB",
	[MF_VT_GIB] = "GiB", [MF_VT_FDEC1] = "fdec1", [MF_VT_FLOAT] = "float",
};
static const char *const summ_names[] = {
	[MF_SUM_FIRST] = "first", [MF_SUM_LAST] = "last", [MF_SUM_SUM] = "sum",
	[MF_SUM_AVG] = "avg", [MF_SUM_MAX] = "max",
};

const char *
mf_vtype_str(enum mf_vtype v)
{
	return (unsigned)v < sizeof(vtype_names) / sizeof(vtype_names[0]) ?
	    vtype_names[v] : "?";
}

const char *
mf_summ_str(enum mf_summ s)
{
	return (unsigned)s < sizeof(summ_names) / sizeof(summ_names[0]) ?
	    summ_names[s] : "?";
}

/* ---- decoding ---- */

static enum mf_status fail(char *, size_t, enum mf_status, const char *, ...)
	__attribute__((format(printf, 4, 5)));

static enum mf_status
fail(char *err, size_t errlen, enum mf_status st, const char *fmt, ...)
{
	va_list ap;

	if (errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return st;
}

enum mf_status
mf_probe(const uint8_t *buf, size_t len)
{
	if (len < 4)
		return MF_TRUNCATED;
	if (buf[0] == '!')
		return MF_UPDATING;
	if (buf[0] == 0 && buf[1] == 0 && buf[2] == 0 && buf[3] == 0)
		return MF_OLD_FORMAT;
	if (memcmp(buf, "AiuM", 4) == 0)
		return MF_OK;
	return MF_BAD_MAGIC;
}

/* Bytes per unit of a value type, 0 for those not scaled to bytes. */
static uint64_t
unit_bytes(enum mf_vtype v)
{
	switch (v) {
	case MF_VT_KIB:	return 1024;
	case MF_VT_MIB:	return 1024 * 1024;
	case MF_VT_GIB:	return 1024 * 1024 * 1024;
	default:	return 1;
	}
}

/* acc * mul + add, or false on uint64 overflow. */
static bool
muladd(uint64_t *acc, uint64_t mul, uint64_t add)
{
	return !__builtin_mul_overflow(*acc, mul, acc) &&
	    !__builtin_add_overflow(*acc, add, acc);
}

/* fp64 words, summarized, with 6 decimals. */
static void
summarize_float(const uint8_t *w, uint32_t n, enum mf_order order,
    enum mf_summ summ, struct mf_value *v)
{
	double d = 0, best = -DBL_MAX, f;
	uint64_t x;

	for (uint32_t i = 0; i < n; i++) {
		x = mf_get_u64(w + 8 * i, order);
		memcpy(&f, &x, sizeof(f));
		if ((i == 0 && summ == MF_SUM_FIRST) ||
		    (i == n - 1 && summ == MF_SUM_LAST))
			d = f;
		if (summ == MF_SUM_SUM || summ == MF_SUM_AVG)
			d += f;
		if (f > best)
			best = f;
	}
	if (summ == MF_SUM_MAX)
		d = best;
	if (summ == MF_SUM_AVG)
		d /= n;
	d *= 1e6;
	if (!__builtin_isfinite(d) || d >= 9.2e18 || d <= -9.2e18)
		return;
	v->mant = (int64_t)(d < 0 ? d - 0.5 : d + 0.5);
	v->scale = 6;
	v->present = true;
}

/*
 * Summarize n raw words of a metric into v, in the base unit (bytes for
 * KiB, MiB, GiB).  Any uint64 overflow, or a result past INT64_MAX, leaves
 * the value absent rather than wrong.
 */
static void
summarize(const uint8_t *w, uint32_t n, enum mf_order order,
    const struct mf_metric_type *mt, struct mf_value *v)
{
	uint64_t acc = 0, x, mul = unit_bytes(mt->vtype);
	int8_t scale = mt->vtype == MF_VT_FDEC1 ? 1 : 0;

	v->present = false;
	v->mant = 0;
	v->scale = scale;
	if (n == 0)
		return;
	if (mt->vtype == MF_VT_FLOAT) {
		summarize_float(w, n, order, mt->summ, v);
		return;
	}
	switch (mt->summ) {
	case MF_SUM_FIRST:
		acc = mf_get_u64(w, order);
		break;
	case MF_SUM_LAST:
		acc = mf_get_u64(w + 8 * (n - 1), order);
		break;
	case MF_SUM_MAX:
		for (uint32_t i = 0; i < n; i++)
			if ((x = mf_get_u64(w + 8 * i, order)) > acc)
				acc = x;
		break;
	case MF_SUM_SUM:
	case MF_SUM_AVG:
		for (uint32_t i = 0; i < n; i++)
			if (__builtin_add_overflow(acc, mf_get_u64(w + 8 * i,
			    order), &acc))
				return;
		break;
	}
	if (!muladd(&acc, mul, 0))
		return;
	if (mt->summ == MF_SUM_AVG && acc % n != 0) {
		/* keep MF_AVG_DECIMALS decimals, rounded half up */
		if (!muladd(&acc, 1000, n / 2))
			return;
		acc /= n;
		scale = (int8_t)(scale + MF_AVG_DECIMALS);
	} else if (mt->summ == MF_SUM_AVG)
		acc /= n;
	if (acc > (uint64_t)INT64_MAX)
		return;
	v->mant = (int64_t)acc;
	v->scale = scale;
	v->present = true;
}

/*
 * Walk one section's metric table and data words (the section lies in
 * buf[off, off + size), already bounds-checked).
 */
static enum mf_status
walk_metrics(const uint8_t *buf, enum mf_order order, const struct mf_table *t,
    struct mf_section *sec, struct mf_file *out, char *err, size_t errlen)
{
	uint64_t table_end = (uint64_t)MF_SECTION_HEADER_SIZE +
	    8ULL * sec->nentries;
	uint64_t words = table_end;
	const uint8_t *s = buf + sec->offset;

	if (table_end > sec->size)
		return fail(err, errlen, MF_BAD_LAYOUT, "section 0x%x at offset "
		    "%u: %u data entries do not fit its %u bytes", sec->type,
		    sec->offset, sec->nentries, sec->size);
	sec->first_value = out->nval;
	for (uint32_t i = 0; i < sec->nentries; i++) {
		const uint8_t *e = s + MF_SECTION_HEADER_SIZE + 8 * i;
		uint32_t id = mf_get_u32(e, order);
		uint32_t nw = mf_get_u32(e + 4, order);
		const struct mf_metric_type *mt;

		if (words + 8ULL * nw > sec->size)
			return fail(err, errlen, MF_BAD_LAYOUT, "section 0x%x at "
			    "offset %u: metric 0x%x's %u words run past its "
			    "%u bytes", sec->type, sec->offset, id, nw,
			    sec->size);
		mt = mf_table_metric(t, sec->type, id);
		if (mt == NULL || out->nval >= MF_MAX_VALUES)
			out->skipped_metrics++;
		else {
			struct mf_value *v = &out->val[out->nval++];
			v->section = sec->type;
			v->type = mt;
			v->nwords = nw;
			summarize(s + words, nw, order, mt, v);
		}
		words += 8ULL * nw;
	}
	sec->nvalues = out->nval - sec->first_value;
	return MF_OK;
}

enum mf_status
mf_decode(const uint8_t *buf, size_t len, enum mf_order order,
    const struct mf_table *t, struct mf_file *out, char *err, size_t errlen)
{
	enum mf_status st;
	uint64_t off;

	memset(out, 0, offsetof(struct mf_file, sec));
	out->nval = 0;
	out->skipped_sections = out->skipped_metrics = 0;
	if (errlen > 0)
		err[0] = '\0';
	if ((st = mf_probe(buf, len)) != MF_OK) {
		if (st == MF_TRUNCATED)
			return fail(err, errlen, st, "%zu bytes, under the "
			    "%d-byte header", len, MF_HEADER_SIZE);
		if (st == MF_BAD_MAGIC)
			return fail(err, errlen, st, "magic %02x %02x %02x %02x "
			    "is not \"AiuM\"", buf[0], buf[1], buf[2], buf[3]);
		return fail(err, errlen, st, "%s", mf_status_str(st));
	}
	if (len < MF_HEADER_SIZE)
		return fail(err, errlen, MF_TRUNCATED, "%zu bytes, under the "
		    "%d-byte header", len, MF_HEADER_SIZE);
	out->size = mf_get_u32(buf + 4, order);
	memcpy(out->version, buf + 8, 4);
	out->nsections = mf_get_u32(buf + 12, order);
	out->updated_ms = mf_get_u64(buf + 16, order);
	if (out->version[0] != 1 || out->version[1] != 0)
		return fail(err, errlen, MF_BAD_VERSION, "layout version "
		    "%u.%u.%u.%u, this reader knows 1.0.x", out->version[0],
		    out->version[1], out->version[2], out->version[3]);
	if (out->size < MF_MIN_SIZE || out->size % 8 != 0)
		return fail(err, errlen, MF_BAD_SIZE, "size field %u is %s",
		    out->size, out->size < MF_MIN_SIZE ? "under 32" :
		    "not a multiple of 8");
	if (len < out->size)
		return fail(err, errlen, MF_TRUNCATED, "%zu bytes, its header "
		    "says %u", len, out->size);
	if (len % 8 != 0)
		return fail(err, errlen, MF_BAD_SIZE, "%zu bytes is not a "
		    "multiple of 8", len);
	if (out->nsections > MF_MAX_SECTIONS ||
	    MF_HEADER_SIZE + 8ULL * out->nsections > out->size)
		return fail(err, errlen, MF_BAD_LAYOUT, "%u sections do not "
		    "fit %s", out->nsections, out->nsections > MF_MAX_SECTIONS ?
		    "this reader" : "the file");

	off = MF_HEADER_SIZE + 8ULL * out->nsections;
	for (uint32_t i = 0; i < out->nsections; i++) {
		const uint8_t *te = buf + MF_HEADER_SIZE + 8 * i;
		struct mf_section *sec = &out->sec[out->nsec++];
		bool repeated = false;
		const uint8_t *h;

		memset(sec, 0, sizeof(*sec));
		sec->type = mf_get_u32(te, order);
		sec->size = mf_get_u32(te + 4, order);
		sec->offset = (uint32_t)off;
		if (sec->size < MF_SECTION_HEADER_SIZE || sec->size % 8 != 0 ||
		    off + sec->size > out->size)
			return fail(err, errlen, MF_BAD_LAYOUT, "section %u "
			    "(type 0x%x) at offset %llu: size %u does not fit "
			    "the file's %u bytes", i, sec->type,
			    (unsigned long long)off, sec->size, out->size);
		h = buf + off;
		off += sec->size;
		for (size_t j = 0; j + 1 < out->nsec; j++)
			if (out->sec[j].stype != NULL &&
			    out->sec[j].type == sec->type)
				repeated = true;
		sec->seq = mf_get_u32(h + MF_SEC_OFF_SEQ, order);
		sec->nentries = mf_get_u32(h + 12, order);
		sec->updated_ms = mf_get_u64(h + MF_SEC_OFF_UPDATED, order);
		sec->interval = mf_get_u32(h + 24, order);
		if (mf_get_u32(h, order) != sec->type || repeated ||
		    (sec->stype = mf_table_section(t, sec->type)) == NULL) {
			sec->stype = NULL;
			out->skipped_sections++;
			continue;
		}
		if ((st = walk_metrics(buf, order, t, sec, out, err, errlen)) !=
		    MF_OK)
			return st;
	}
	return MF_OK;
}

/* ---- writing ---- */

static size_t
section_size(const struct mf_wsection *s)
{
	size_t n = MF_SECTION_HEADER_SIZE + 8 * s->nmetrics;

	for (size_t i = 0; i < s->nmetrics; i++)
		n += 8 * (size_t)s->metrics[i].nwords;
	return n;
}

size_t
mf_write_size(const struct mf_wsection *s, size_t n)
{
	size_t total = MF_HEADER_SIZE + 8 * n;

	for (size_t i = 0; i < n; i++)
		total += section_size(&s[i]);
	return total;
}

size_t
mf_write(uint8_t *buf, size_t len, enum mf_order order, uint64_t updated_ms,
    const struct mf_wsection *s, size_t n, uint32_t *offsets)
{
	size_t total = mf_write_size(s, n), off;
	static const uint8_t version[4] = { 1, 0, 0, 1 };

	if (total > len || total > UINT32_MAX)
		return 0;
	memset(buf, 0, total);
	memcpy(buf, "AiuM", 4);
	mf_put_u32(buf + 4, (uint32_t)total, order);
	memcpy(buf + 8, version, 4);
	mf_put_u32(buf + 12, (uint32_t)n, order);
	mf_put_u64(buf + 16, updated_ms, order);
	off = MF_HEADER_SIZE + 8 * n;
	for (size_t i = 0; i < n; i++) {
		size_t sz = section_size(&s[i]), w;
		uint8_t *h = buf + off;

		mf_put_u32(buf + MF_HEADER_SIZE + 8 * i, s[i].type, order);
		mf_put_u32(buf + MF_HEADER_SIZE + 8 * i + 4, (uint32_t)sz, order);
		if (offsets != NULL)
			offsets[i] = (uint32_t)off;
		mf_put_u32(h, s[i].type, order);
		mf_put_u32(h + 4, (uint32_t)sz, order);
		mf_put_u32(h + MF_SEC_OFF_SEQ, s[i].seq, order);
		mf_put_u32(h + 12, (uint32_t)s[i].nmetrics, order);
		mf_put_u64(h + MF_SEC_OFF_UPDATED, s[i].updated_ms, order);
		mf_put_u32(h + 24, s[i].interval, order);
		w = MF_SECTION_HEADER_SIZE + 8 * s[i].nmetrics;
		for (size_t m = 0; m < s[i].nmetrics; m++) {
			const struct mf_wmetric *mt = &s[i].metrics[m];
			mf_put_u32(h + MF_SECTION_HEADER_SIZE + 8 * m, mt->id,
			    order);
			mf_put_u32(h + MF_SECTION_HEADER_SIZE + 8 * m + 4,
			    mt->nwords, order);
			for (uint32_t k = 0; k < mt->nwords; k++, w += 8)
				mf_put_u64(h + w, mt->words[k], order);
		}
		off += sz;
	}
	return total;
}
