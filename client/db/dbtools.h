/*
 * dbtools: the "spyremon db" commands, on a database file itself rather
 * than on what it holds: "db check" (dbcheck.c) says whether it is
 * intact, "db salvage" (salvage.c) copies what can still be read of a
 * damaged one into a new database, written by the store (store/).
 */
#ifndef SPYREMON_DBTOOLS_H
#define SPYREMON_DBTOOLS_H

struct cmd_spec;
extern const struct cmd_spec db_check_cmd, db_salvage_cmd;

#endif
