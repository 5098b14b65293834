/*
 * aiu-smi-sim: a stand-in for IBM's aiu-smi that prints what SPYRE.md says
 * aiu-smi prints, with deterministic values and optional faults, so that
 * spyremond can be tested and shown without a Spyre card.
 *
 * simopts.c  parses the command line and AIUSMI_OPTS into struct sim_options.
 * cardmodel.c computes the values of every card and of the host, interval by
 *            interval, from the seed alone.
 * layout.c   chooses the columns and formats headers and rows.
 * aiu-smi-sim.c  keeps the schedule, writes the lines and injects faults.
 * metricwriter.c writes each card's new-format metric file from the model.
 * powersched.c  the per-card power a --power-schedule file sets.
 */
#ifndef SPYREMON_SIM_H
#define SPYREMON_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SIM_VERSION	"1.0.0"
#define SIM_CARDS_MAX	64
#define SIM_COLS_MAX	48
#define SIM_LINE_MAX	8192	/* longest header or row the simulator formats */

/* Power model bounds, in W. */
#define SIM_PWR_MIN	20.0
#define SIM_PWR_MAX	75.0

enum sim_workload {
	WORKLOAD_IDLE,		/* every card idle */
	WORKLOAD_BUSY,		/* every card busy */
	WORKLOAD_CYCLE,		/* per-card idle and busy phases, from the seed */
	WORKLOAD_FILE,		/* busy while workload_path exists */
	WORKLOAD_ZERO,		/* runtime not configured: card values all 0 */
};

/* What --write-metric-files writes into each card's file. */
enum sim_mformat {
	MFORMAT_STUB,		/* a text record: only its mtime moves */
	MFORMAT_NEW,		/* the new format (AiuM), host byte order */
	MFORMAT_NEW_LE,		/* the new format, little-endian */
	MFORMAT_NEW_BE,		/* the new format, big-endian (as s390x) */
};

struct sim_options {
	/* aiu-smi's own options */
	bool csv;
	char groups[16];		/* upper-case letters of D R M U P S A */
	uint64_t delay_ns;
	bool selected[SIM_CARDS_MAX];	/* device IDs to print */
	const char *ids_arg;		/* -i as given; checked against ncards */
	const char *filename;		/* -f, or NULL for stdout */
	bool mem_details;
	double idle_power;		/* W, for the pt_act estimate */
	const char *llm_type;
	const char *pattern;		/* metric file pattern with %BUSID */

	/* the simulator's own */
	int ncards;
	uint64_t seed;
	enum sim_workload workload;
	const char *workload_path;
	bool write_metric_files;
	enum sim_mformat mformat;	/* what --write-metric-files writes */
	bool old_cards[SIM_CARDS_MAX];	/* --old-format-cards */
	uint64_t file_interval_ns;	/* 0: the delay */
	uint64_t tear_every;		/* every Nth update of a file is torn */
	bool recreate_set;
	uint64_t recreate_after;	/* card 0's file re-created after N updates */
	const char *file_log;
	const char *power_schedule;	/* --power-schedule FILE */
	const char *power_log;		/* --power-log FILE */
	bool start_set;
	int64_t start_ns;		/* --start: the first row's time, epoch ns */

	/* faults: counts of complete data rows over all cards; 0 = off */
	bool exit_after_set;
	uint64_t exit_after;
	bool hang_after_set;
	uint64_t hang_after;
	uint64_t garbage_every;
	bool header_change_set;
	uint64_t header_change_after;
	uint64_t missing_column_every;	/* counts row lines, complete or not */
	uint64_t overlong_every;	/* counts row lines, complete or not */
	uint64_t stderr_every;
	bool split_rows;
	const char *stamp_log;

	/* storage the strings above may point into */
	char *env_words;
	char **argv;
};

/*
 * Fill opts from AIUSMI_OPTS and argv (argv wins).  Prints the version or
 * usage and exits 0 for -v and --help; prints a message and exits 2 on bad
 * input.  Strings in opts point into argv or into storage kept for the life
 * of the process.
 */
void sim_options_parse(struct sim_options *opts, int argc, char **argv);

/* Release what sim_options_parse allocated; opts' strings become invalid. */
void sim_options_free(struct sim_options *opts);

/* The bus ID of card i, e.g. "0000:13:00.0". */
void sim_bus_id(int card, char *buf, size_t len);

/* The metric file of card i under pattern (every %BUSID replaced). */
void sim_metric_path(const char *pattern, int card, char *buf, size_t len);

/* ---- values ---- */

enum sim_metric {
	SM_HOSTCPU, SM_HOSTMEM, SM_PWR, SM_GTEMP, SM_BUSY,
	SM_RDMEM, SM_WRMEM, SM_RXPCI, SM_TXPCI, SM_RDRDMA, SM_WRRDMA,
	SM_N_RDMEM, SM_N_WRMEM, SM_N_RXPCI, SM_N_TXPCI,
	SM_RSVMEM, SM_ACTMEM, SM_PEAKMEM, SM_PT_ACT,
	SM_RSVSEG0, SM_RSVSEG1, SM_RSVSEG2, SM_RSVSEG3,
	SM_HBMTEMP,
	SM_UNKNOWN,		/* a column the model has no value for: "-" */
	SM_COUNT = SM_UNKNOWN
};

/* The metric a header key names, or SM_UNKNOWN. */
enum sim_metric sim_metric_by_key(const char *key);

/* True if card has no RDMA (its rdrdma and wrrdma print "-"). */
bool sim_card_lacks_rdma(int card);

/* What a card does during one interval. */
enum sim_card_state {
	CARD_IDLE,
	CARD_BUSY,
	CARD_ZERO,	/* runtime not writing its metric file: reads all 0 */
};

struct sim_model;

/* A model of ncards cards and their host, from seed; NULL on no memory. */
struct sim_model *sim_model_new(const struct sim_options *opts);
void sim_model_free(struct sim_model *m);

/*
 * Advance every card by one interval of dt seconds, card i in state[i].
 * Values depend only on the seed and the sequence of calls, never on the
 * clock.
 */
void sim_model_step(struct sim_model *m, const enum sim_card_state *state,
    double dt);

/* The workload phase of card at simulated time t_ns (WORKLOAD_CYCLE). */
bool sim_model_cycle_busy(const struct sim_model *m, int card, uint64_t t_ns);

/*
 * Set card's power after the last step to watts (a schedule's mean over
 * the step), and pt_act with it.
 */
void sim_model_set_power(struct sim_model *m, int card, double watts);

/* Card's idle power, in W: a constant of the seed. */
double sim_model_idle_power(const struct sim_model *m, int card);

/* Card's value of metric after the last step; NaN if missing. */
double sim_model_value(const struct sim_model *m, int card, enum sim_metric metric);

/* ---- columns and lines ---- */

struct sim_column {
	const char *key;
	const char *unit;
	int decimals;
	int width;		/* text table width */
	enum sim_metric metric;
};

struct sim_layout {
	bool csv;
	int ncols;		/* metric columns, after ID, Date and Time */
	struct sim_column cols[SIM_COLS_MAX];
};

/*
 * Columns for groups.  changed: the alternative set printed by
 * --header-change-after (group D dropped, hbmtemp added).
 */
void sim_layout_init(struct sim_layout *l, bool csv, const char *groups,
    bool changed);

/* The header line, with "\n"; returns its length. */
size_t sim_layout_header(const struct sim_layout *l, char *buf, size_t len);

/*
 * The row of card, with "\n"; returns its length.  date is YYYYMMDD and
 * time HH:MM:SS.  drop_last leaves out the last cell.
 */
size_t sim_layout_row(const struct sim_layout *l, const struct sim_model *m,
    int card, const char *date, const char *time, bool drop_last,
    char *buf, size_t len);

/* ---- new-format metric files (metricwriter.c) ---- */

struct sim_mfile {
	int fd;			/* -1: not written (card reads zero) */
	uint8_t *map;		/* shared map of the whole file, once sized */
	size_t size;
	unsigned long long ino, dev;
	int order;		/* enum mf_order */
	bool old_format;	/* first four bytes zero */
	uint32_t seq;		/* of every section, bumped per update */
	uint32_t interval_ms;
	uint32_t offsets[3];	/* of the sections */
	uint64_t updates;
};

/* Create path anew (a new inode) for f; -1 (logged) on failure. */
int sim_mfile_create(struct sim_mfile *f, const char *path);

/*
 * Write card's values after the model's last step of dt seconds, torn or
 * by the '!' protocol.  *stamp_ns receives the sections' last-update time
 * (whole ms) and *pwr_tenths the pwr word.  0, or -1 if not written.
 */
int sim_mfile_update(struct sim_mfile *f, const struct sim_model *m, int card,
    double dt, bool torn, int64_t *stamp_ns, uint32_t *pwr_tenths);

void sim_mfile_close(struct sim_mfile *f);

/* ---- a schedule of power (powersched.c) ---- */

struct sim_powersched;

/*
 * The schedule in path: lines "card start_ns end_ns watts" (epoch ns,
 * [start, end)), '#' comments and blank lines.  Exits 2 naming the file
 * and line on bad input.
 */
struct sim_powersched *sim_powersched_load(const char *path, int ncards);
void sim_powersched_free(struct sim_powersched *ps);

/* True if the schedule has a span of card: it follows the schedule. */
bool sim_powersched_has(const struct sim_powersched *ps, int card);

/* Card's power outside its spans, in W. */
void sim_powersched_set_idle(struct sim_powersched *ps, int card, double watts);

/* Card's energy over [lo_ns, hi_ns), in J, exactly. */
double sim_powersched_energy(const struct sim_powersched *ps, int card,
    int64_t lo_ns, int64_t hi_ns);

/* Card's mean power over [lo_ns, hi_ns), in W (its power at lo if empty). */
double sim_powersched_mean(const struct sim_powersched *ps, int card,
    int64_t lo_ns, int64_t hi_ns);

#endif
