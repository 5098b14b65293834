/*
 * metricfile: the cards' binary metric files in the new format (magic
 * "AiuM", layout 1.0.x), as the Apache-2.0 reference reader spyremetrics
 * reads them (SPYRE.md, "Metric files in the new format").
 *
 * Pure code: decoding works on a byte buffer the caller has copied (from a
 * memory map, say), with no I/O, allocation or clock, so every file state
 * is unit-tested.  Integers are in the writer's native byte order; the
 * decoder takes the order as a parameter so that a big-endian file (as
 * s390x writes it) goes through the same code on any host.
 *
 * Values are returned exactly, in the file's base unit: KiB, MiB and GiB
 * amounts in bytes, fdec1 in tenths (scale 1), int as is.  A summary of
 * several words follows the metric table: first, last, sum, avg or max;
 * an average that is not a whole number keeps MF_AVG_DECIMALS decimals,
 * rounded half away from zero.  A value that overflows int64 is absent.
 *
 * The metric table comes built in (version 1.0.0.1) or from a
 * section_types.json in the reference reader's format (mf_table_load).
 *
 * The layout writer (mf_write_*) is here too, so that the simulator and the
 * tests write exactly what is read.
 */
#ifndef SPYREMON_METRICFILE_H
#define SPYREMON_METRICFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MF_HEADER_SIZE		32	/* file header */
#define MF_SECTION_HEADER_SIZE	32
#define MF_MIN_SIZE		32
#define MF_MAX_SECTIONS		32	/* more is refused as a bad layout */
#define MF_MAX_VALUES		128	/* decoded metrics per file; more are skipped */
#define MF_NAME_MAX		32
#define MF_AVG_DECIMALS		3

/* Offsets inside a section header, for the torn-read check. */
#define MF_SEC_OFF_SEQ		8
#define MF_SEC_OFF_UPDATED	16

enum mf_order {
	MF_ORDER_NATIVE,	/* the host's: what a local writer uses */
	MF_ORDER_LITTLE,
	MF_ORDER_BIG,
};

enum mf_status {
	MF_OK,
	MF_UPDATING,		/* first byte '!': read again later */
	MF_OLD_FORMAT,		/* first four bytes zero: only aiu-smi reads it */
	MF_BAD_MAGIC,		/* anything else: an error */
	MF_BAD_VERSION,		/* layout version outside 1.0.x */
	MF_TRUNCATED,		/* shorter than its header, or than its size field */
	MF_BAD_SIZE,		/* size under 32 or not a multiple of 8 */
	MF_BAD_LAYOUT,		/* tables that do not fit the file */
};

enum mf_vtype { MF_VT_INT, MF_VT_KIB, MF_VT_MIB, MF_VT_GIB, MF_VT_FDEC1,
	MF_VT_FLOAT };
enum mf_summ { MF_SUM_FIRST, MF_SUM_LAST, MF_SUM_SUM, MF_SUM_AVG,
	MF_SUM_MAX };

struct mf_section_type {
	uint32_t id;
	char name[MF_NAME_MAX];
};

struct mf_metric_type {
	uint32_t section;	/* section type ID it belongs to */
	uint32_t id;
	char name[MF_NAME_MAX];
	enum mf_vtype vtype;
	enum mf_summ summ;
};

#define MF_TABLE_SECTIONS	32
#define MF_TABLE_METRICS	128

struct mf_table {
	char version[MF_NAME_MAX];	/* "1.0.0.1" */
	size_t nsections;
	struct mf_section_type sections[MF_TABLE_SECTIONS];
	size_t nmetrics;
	struct mf_metric_type metrics[MF_TABLE_METRICS];
};

/* One decoded metric. */
struct mf_value {
	uint32_t section;		/* section type ID */
	const struct mf_metric_type *type;	/* into the table used */
	uint32_t nwords;
	bool present;			/* false: no words, or overflow */
	int64_t mant;			/* value = mant / 10^scale, base unit */
	int8_t scale;
};

struct mf_section {
	uint32_t type;
	uint32_t size;
	uint32_t seq;
	uint32_t nentries;
	uint64_t updated_ms;		/* the writer's last update, epoch ms */
	uint32_t interval;		/* unit undocumented; the generator writes 100 */
	uint32_t offset;		/* of the section header in the file */
	const struct mf_section_type *stype;	/* NULL if unknown */
	size_t first_value, nvalues;	/* its metrics in mf_file.val */
};

struct mf_file {
	uint32_t size;
	uint8_t version[4];		/* major, minor, revision, fix */
	uint32_t nsections;		/* as the header says */
	uint64_t updated_ms;
	size_t nsec;			/* sections walked (skipped ones too) */
	struct mf_section sec[MF_MAX_SECTIONS];
	size_t nval;
	struct mf_value val[MF_MAX_VALUES];
	unsigned skipped_sections;	/* unknown, mismatched or repeated */
	unsigned skipped_metrics;	/* unknown IDs, or past MF_MAX_VALUES */
};

/* The built-in metric table, version 1.0.0.1 of the reference. */
const struct mf_table *mf_table_builtin(void);

/*
 * Load a section_types.json (the reference's format) into *out.  0, or -1
 * with err naming the file and what is wrong (nothing of it is used).
 */
int mf_table_load(const char *path, struct mf_table *out, char *err,
    size_t errlen);

/*
 * The first existing file of the reference reader's search path:
 * $SECTION_TYPE_CONFIG_FILE, ~/.section_types.json,
 * ~/.local/etc/section_types.json,
 * /opt/ibm/spyre/runtime/etc/section_types.json.  home may be NULL.
 * Returns 0 with path filled, or -1 if none exists.
 */
int mf_table_find(const char *env_file, const char *home, char *path,
    size_t len);

const struct mf_metric_type *mf_table_metric(const struct mf_table *t,
    uint32_t section, uint32_t id);
const struct mf_metric_type *mf_table_metric_by_name(const struct mf_table *t,
    const char *name);
const struct mf_section_type *mf_table_section(const struct mf_table *t,
    uint32_t id);

/* The state the first four bytes give (MF_OK for "AiuM"); len < 4 is
 * MF_TRUNCATED. */
enum mf_status mf_probe(const uint8_t *buf, size_t len);

/*
 * Decode a whole file of len bytes in byte order order with table t.
 * MF_OK fills *out; any other status leaves in err a reason (without the
 * file name, which the caller adds) and *out holds what the header said
 * (version for MF_BAD_VERSION).  Unknown sections and metrics are skipped
 * by their lengths, as are a section whose header's type differs from the
 * table's and a repeated section type.
 */
enum mf_status mf_decode(const uint8_t *buf, size_t len, enum mf_order order,
    const struct mf_table *t, struct mf_file *out, char *err, size_t errlen);

/* A section's sequence number and update time, read at its offset. */
uint32_t mf_get_u32(const uint8_t *p, enum mf_order order);
uint64_t mf_get_u64(const uint8_t *p, enum mf_order order);
void mf_put_u32(uint8_t *p, uint32_t v, enum mf_order order);
void mf_put_u64(uint8_t *p, uint64_t v, enum mf_order order);

/* "updating", "old format", ... for logs and status. */
const char *mf_status_str(enum mf_status s);

/* The metric's value type and summarizer as the table names them. */
const char *mf_vtype_str(enum mf_vtype v);
const char *mf_summ_str(enum mf_summ s);

/* ---- writing (the simulator, the tests) ---- */

/* One metric to write: its ID and nwords raw words. */
struct mf_wmetric {
	uint32_t id;
	uint32_t nwords;
	const uint64_t *words;
};

struct mf_wsection {
	uint32_t type;
	uint32_t seq;
	uint64_t updated_ms;
	uint32_t interval;
	size_t nmetrics;
	const struct mf_wmetric *metrics;
};

/* Bytes a file of these sections takes. */
size_t mf_write_size(const struct mf_wsection *s, size_t n);

/*
 * Lay out a complete file in buf (len >= mf_write_size) with magic "AiuM",
 * version 1.0.0.1, and each section's offset in offsets[i] (may be NULL).
 * Returns the size written, or 0 if it does not fit.
 */
size_t mf_write(uint8_t *buf, size_t len, enum mf_order order,
    uint64_t updated_ms, const struct mf_wsection *s, size_t n,
    uint32_t *offsets);

#endif
