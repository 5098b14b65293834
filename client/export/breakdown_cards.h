/*
 * breakdown_cards: the "across cards" part of export --breakdown (the
 * figures of ../analysis/bdcards.h, through bd_run_across): per step the
 * straggler and the fastest card, the spread of step time, mean busy %
 * and energy with the card at each end, and the class that makes the
 * difference; over the run, how often each card straggled and the mean
 * spreads.  Times are µs in json and csv (exact, as the rest of the
 * breakdown), ms in the table.  A trace of one card has none: the table
 * and csv have no across-cards rows, the json's across_cards is null.
 * The same writers give the figures over the cards of several ranks
 * (breakdown_ranks.h): given a bd_ranks, each card is named by its label
 * (bdranks.h) where it is otherwise named by its number.
 */
#ifndef SPYREMON_BREAKDOWN_CARDS_H
#define SPYREMON_BREAKDOWN_CARDS_H

#include <stdio.h>

#include <yajl/yajl_gen.h>

#include "bdranks.h"
#include "bdrun.h"

/* Into an open JSON map: "across_cards", an object, or null without a. */
void bd_cards_json(yajl_gen g, const struct bd_across *a);

/*
 * Into an open JSON map: the members of a's object (straggler_rule,
 * steps, run), its cards named by rk's labels unless rk is NULL.
 */
void bd_cards_json_members(yajl_gen g, const struct bd_across *a,
    const struct bd_ranks *rk);

/* The across-cards columns of the csv's header, each after a comma. */
void bd_cards_csv_head(FILE *fp);

/* Those columns' cells of a row of another section: all empty. */
void bd_cards_csv_none(FILE *fp);

/* Those columns' cells of step x's row (rk: as bd_cards_json_members). */
void bd_cards_csv_cells(FILE *fp, const struct bd_xstep *x,
    const struct bd_ranks *rk);

/* The table's "Across cards" block with its heading (none without a). */
void bd_cards_table(FILE *fp, const struct bd_across *a);

/* Its per-step table and the run's line, without a heading (rk: as above). */
void bd_cards_table_block(FILE *fp, const struct bd_across *a,
    const struct bd_ranks *rk);

#endif
