/*
 * schema: the names of the database's tables, views and columns, shared by
 * the daemon (which writes) and the client (which reads).  The schema
 * itself is created and migrated by store/migrate.c and documented in
 * spyremon-schema(5).
 */
#ifndef SPYREMON_SCHEMA_H
#define SPYREMON_SCHEMA_H

/* PRAGMA user_version of a database this build writes. */
#define SCHEMA_VERSION 12

#define SCHEMA_T_METRICS	"metrics"	/* the metric catalog */
#define SCHEMA_T_SAMPLES	"samples"	/* one row per card per interval */
#define SCHEMA_T_CARDS		"cards"		/* inventory from sysfs */
#define SCHEMA_T_DEVICE_MAP	"device_map"	/* aiu-smi ID -> metric file -> bus ID */
#define SCHEMA_T_WINDOWS	"windows"	/* tagged profiling windows */
#define SCHEMA_T_IMPORTS	"imports"	/* time ranges loaded by spyremon import */
#define SCHEMA_T_HOST		"host"		/* the host that created the database */
#define SCHEMA_T_COUNTERS	"counters"	/* the daemon's running totals */
#define SCHEMA_T_SUMMARY	"window_summary"	/* per window and card */
#define SCHEMA_T_SUMMARY_BW	"window_summary_bw"	/* per window, card, bandwidth */
#define SCHEMA_T_SMI_VERSIONS	"smi_versions"	/* aiu-smi -v's answer, from when */
#define SCHEMA_T_DAEMON		"daemon"		/* the spyremond that writes it */
#define SCHEMA_T_CLOCK_STEPS	"clock_steps"	/* steps of the host clock: its epochs */
#define SCHEMA_V_VALUES		"sample_values"	/* (ts_ns, device, metric, value) */
#define SCHEMA_I_FILE		"samples_file"	/* samples' rows with src: (ts_ns, interval_ms, src) */

/* Fixed columns of samples; every other column is a metric. */
#define SCHEMA_C_TS		"ts_ns"		/* arrival, CLOCK_REALTIME ns */
#define SCHEMA_C_DEVICE		"device"	/* aiu-smi device ID */
#define SCHEMA_C_INTERVAL	"interval_ms"	/* delay in force: row covers [ts-interval, ts] */
#define SCHEMA_C_SKEW		"smi_skew_s"	/* aiu-smi's Date+Time minus ts, in s */
#define SCHEMA_C_SRC		"src"		/* NULL: aiu-smi; 1: the card's metric file */
#define SCHEMA_C_SEQ		"seq"		/* src 1: the section's sequence number */
#define SCHEMA_C_ARRIVAL	"arrival_ns"	/* src 1: when it was read; ts is the writer's */
#define SCHEMA_C_EPOCH		"epoch"		/* the host clock's epoch ts was read in (12) */

/* Columns of windows that say whether an ended window is complete. */
#define SCHEMA_C_COMPLETE	"complete_ns"	/* every sample and the summary stored then */
#define SCHEMA_C_INCOMPLETE	"incomplete"	/* why it never will be */
/* Why a window ended as it did, where ended_by alone does not say. */
#define SCHEMA_C_END_NOTE	"end_note"
/* How long a window ran by the daemon's monotonic clock (schema 11). */
#define SCHEMA_C_RUN		"run_ns"
/* The host clock's epochs its begin and end were stamped in (schema 12). */
#define SCHEMA_C_BEGIN_EPOCH	"begin_epoch"
#define SCHEMA_C_END_EPOCH	"end_epoch"

/* Values of SCHEMA_C_SRC. */
#define SCHEMA_SRC_SMI		0	/* stored as NULL */
#define SCHEMA_SRC_FILE		1

/* Names in the counters table (device -1 unless per card). */
#define COUNTER_SAMPLES		"samples"	/* rows stored, ever */
#define COUNTER_CHILD_RESTARTS	"child_restarts"	/* aiu-smi restarted */
#define COUNTER_REJECTED_LINES	"rejected_lines"	/* lines not parsed */
#define COUNTER_DAMAGED		"damaged_databases"	/* kept aside */
#define COUNTER_ERRORS		"database_errors"	/* SQLite failures met */
#define COUNTER_ENERGY		"energy_joules"	/* per card: integral of pwr */

#endif
