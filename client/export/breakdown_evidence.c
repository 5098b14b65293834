/*
 * breakdown_evidence: the counters as evidence in export --breakdown
 * (breakdown_evidence.h).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <yajl/yajl_gen.h>

#include "breakdown_evidence.h"
#include "format.h"
#include "jsonw.h"
#include "pcielink.h"
#include "table.h"

#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

static double
pct(int64_t part, int64_t whole)
{
	return whole > 0 ? 100.0 * (double)part / (double)whole : 0;
}

/* The bandwidths' json and csv names, in steps.h's order (--steps'). */
static const char *const bw_keys[STEPS_NBW] = {
	"mem_bw_rd_GiBps", "mem_bw_wr_GiBps", "pci_bw_rx_GiBps",
	"pci_bw_tx_GiBps",
};

/*
 * The counters of a card over a span beside what the trace says of it:
 * its link, PCIe against the link, power against the card's budget,
 * whether they contradict the trace (bd_contradicts, why: its rule).
 */
struct evidence {
	const struct steps_mean *m;	/* NULL: no sample */
	const struct bd_link *link;	/* NULL: no database */
	bool	 has_rx_pct, has_tx_pct;
	double	 rx_pct, tx_pct;	/* of the link's capacity */
	bool	 has_power_pct;
	double	 power_pct;		/* of BD_CARD_POWER_W */
	bool	 contradicts;
	char	 why[256];
};

static void
evidence_of(const struct bd_run *r, int64_t card, const struct bd_window *w,
    const struct steps_mean *m, struct evidence *e)
{
	struct bd_evidence ev;

	memset(e, 0, sizeof(*e));
	e->m = m;
	e->link = bd_run_link(r, card);
	bd_run_evidence(r, m, card, &ev);
	e->has_rx_pct = ev.has_link && m != NULL && m->has_bw[STEPS_RXPCI];
	e->has_tx_pct = ev.has_link && m != NULL && m->has_bw[STEPS_TXPCI];
	if (e->has_rx_pct)
		e->rx_pct = pcie_link_pct(ev.rx_gibps, ev.link_gbps);
	if (e->has_tx_pct)
		e->tx_pct = pcie_link_pct(ev.tx_gibps, ev.link_gbps);
	e->has_power_pct = m != NULL && m->has_pwr;
	if (e->has_power_pct)
		e->power_pct = 100 * m->pwr_w / BD_CARD_POWER_W;
	e->contradicts = bd_contradicts(&w->tm, &ev, e->why, sizeof(e->why));
}

void
bd_evidence_json(yajl_gen g, const struct bd_run *r, int64_t card,
    const struct bd_window *w, const struct steps_mean *m)
{
	struct evidence ev, *e = &ev;
	const struct bd_link *l;
	int64_t span = w->tm.span;

	evidence_of(r, card, w, m, e);
	l = e->link;
	jsonw_str(g, "counters");
	yajl_gen_map_open(g);
	jsonw_put_uint(g, "samples", m != NULL ? m->samples : 0);
	jsonw_put_double_or_null(g, "busy_pct", m != NULL && m->has_busy,
	    m != NULL ? m->busy_pct : 0);
	jsonw_put_double_or_null(g, "power_W", m != NULL && m->has_pwr,
	    m != NULL ? m->pwr_w : 0);
	jsonw_put_double_or_null(g, "covered_pct", m != NULL && span > 0,
	    m != NULL ? pct(m->covered_ns, span) : 0);
	for (int b = 0; b < STEPS_NBW; b++)
		jsonw_put_double_or_null(g, bw_keys[b], m != NULL &&
		    m->has_bw[b], m != NULL ? m->bw_gibps[b] : 0);
	jsonw_put_str_or_null(g, "pci_link_speed", l != NULL &&
	    l->speed[0] != '\0' ? l->speed : NULL);
	jsonw_put_int_or_null(g, "pci_link_width", l != NULL && l->width > 0,
	    l != NULL ? l->width : 0);
	jsonw_put_double_or_null(g, "pci_link_GBps", l != NULL && l->has_gbps,
	    l != NULL ? l->gbps : 0);
	jsonw_put_double_or_null(g, "pci_rx_pct_of_link", e->has_rx_pct,
	    e->rx_pct);
	jsonw_put_double_or_null(g, "pci_tx_pct_of_link", e->has_tx_pct,
	    e->tx_pct);
	jsonw_put_double_or_null(g, "power_pct_of_75W", e->has_power_pct,
	    e->power_pct);
	jsonw_put_double_or_null(g, "gtemp_mean_C", m != NULL && m->has_gtemp,
	    m != NULL ? m->gtemp_c : 0);
	jsonw_put_bool(g, "contradicts", e->contradicts);
	jsonw_put_str_or_null(g, "contradiction", e->contradicts ? e->why :
	    NULL);
	yajl_gen_map_close(g);
}

/* The csv's columns after the bandwidths: head_rest's. */
#define CSV_REST_NCOLS	9
static const char head_rest[] = ",pci_link_speed,pci_link_width,"
    "pci_link_GBps,pci_rx_pct_of_link,pci_tx_pct_of_link,power_pct_of_75W,"
    "gtemp_mean_C,contradicts,contradiction";
#define CSV_EVIDENCE_NCOLS	(STEPS_NBW + CSV_REST_NCOLS)

void
bd_evidence_csv_head(FILE *fp)
{
	for (int b = 0; b < STEPS_NBW; b++)
		fprintf(fp, ",%s", bw_keys[b]);
	fputs(head_rest, fp);
}

void
bd_evidence_csv_none(FILE *fp)
{
	for (int i = 0; i < CSV_EVIDENCE_NCOLS; i++)
		fputc(',', fp);
}

/* A number's cell: ",v", or "," when unknown. */
static void
csv_num(FILE *fp, bool has, double v)
{
	fputc(',', fp);
	if (has)
		fprintf(fp, "%.9g", v);
}

void
bd_evidence_csv_cells(FILE *fp, const struct bd_run *r, int64_t card,
    const struct bd_window *w, const struct steps_mean *m)
{
	struct evidence ev, *e = &ev;
	const struct bd_link *l;

	evidence_of(r, card, w, m, e);
	l = e->link;
	for (int b = 0; b < STEPS_NBW; b++)
		csv_num(fp, m != NULL && m->has_bw[b], m != NULL ?
		    m->bw_gibps[b] : 0);
	fputc(',', fp);
	if (l != NULL)
		fmt_csv_cell(fp, l->speed);
	fputc(',', fp);
	if (l != NULL && l->width > 0)
		fprintf(fp, "%d", l->width);
	csv_num(fp, l != NULL && l->has_gbps, l != NULL ? l->gbps : 0);
	csv_num(fp, e->has_rx_pct, e->rx_pct);
	csv_num(fp, e->has_tx_pct, e->tx_pct);
	csv_num(fp, e->has_power_pct, e->power_pct);
	csv_num(fp, m != NULL && m->has_gtemp, m != NULL ? m->gtemp_c : 0);
	fprintf(fp, ",%d,", e->contradicts);
	if (e->contradicts)
		fmt_csv_cell(fp, e->why);
}

/* The evidence's table, for a person. */
static const struct table_col evidence_cols[] = {
	{ "CARD", NULL, TABLE_RIGHT }, { "STEP", NULL, TABLE_LEFT },
	{ "RDMEM", "GiB/s", TABLE_RIGHT }, { "WRMEM", "GiB/s", TABLE_RIGHT },
	{ "RXPCI", "GiB/s", TABLE_RIGHT }, { "TXPCI", "GiB/s", TABLE_RIGHT },
	{ "RX", "% link", TABLE_RIGHT }, { "TX", "% link", TABLE_RIGHT },
	{ "POWER", "% 75 W", TABLE_RIGHT }, { "TEMP", "C", TABLE_RIGHT },
	{ "COUNTERS", NULL, TABLE_LEFT },
};

/* A number's cell with decimals digits, or "" when unknown. */
static void
cell_num(struct table *tb, bool has, double v, int decimals)
{
	char buf[32];

	table_fixed(buf, sizeof(buf), v, decimals);
	table_cell(tb, has ? buf : "");
}

/*
 * A row of the evidence's table; a contradiction is added to list (n so
 * far, at most max kept).
 */
static void
table_evidence(struct table *tb, const struct bd_run *r, int64_t card,
    const struct bd_window *w, const struct steps_mean *m,
    char (*list)[320], size_t *n, size_t max)
{
	struct evidence e;
	bool link;

	evidence_of(r, card, w, m, &e);
	link = e.link != NULL && e.link->has_gbps;
	table_row(tb);
	table_cellf(tb, "%" PRId64, card);
	table_cell(tb, w->name);
	for (int b = 0; b < STEPS_NBW; b++)
		cell_num(tb, m != NULL && m->has_bw[b], m != NULL ?
		    m->bw_gibps[b] : 0, 3);
	if (link || m == NULL) {
		cell_num(tb, e.has_rx_pct, e.rx_pct, 2);
		cell_num(tb, e.has_tx_pct, e.tx_pct, 2);
	} else {
		table_cell(tb, "unknown");
		table_cell(tb, "unknown");
	}
	cell_num(tb, e.has_power_pct, e.power_pct, 0);
	cell_num(tb, m != NULL && m->has_gtemp, m != NULL ? m->gtemp_c : 0, 1);
	table_cell(tb, m == NULL ? "no samples" : e.contradicts ?
	    "contradicts" : "agrees");
	if (!e.contradicts)
		return;
	if (*n < max)
		snprintf(list[*n], sizeof(list[0]), "%s, card %" PRId64 ": %s",
		    w->name, card, e.why);
	(*n)++;
}

void
bd_evidence_table(FILE *out, const struct bd_run *cn, size_t nsteps)
{
	const struct bd_result *res = &cn->res;
	struct table *tb = table_new(evidence_cols, NELEM(evidence_cols));
	char list[8][320];
	size_t n = 0;

	for (size_t i = 0; i < res->ncards; i++) {
		int64_t card = res->cards[i].card;

		for (size_t s = 0; s < nsteps; s++)
			table_evidence(tb, cn, card, &res->cards[i].steps[s],
			    bd_run_counters(cn, s, card), list, &n, 8);
		table_evidence(tb, cn, card, &res->cards[i].total,
		    bd_run_counters(cn, nsteps + i, card), list, &n, 8);
	}
	fprintf(out, "\nThe counters as evidence (time-weighted means as "
	    "--steps sums them; PCIe against the link, power against the "
	    "card's %d W):\n", BD_CARD_POWER_W);
	table_write(tb, out, 0);
	table_free(tb);
	fprintf(out, "PCIe links, per direction:");
	for (size_t i = 0; i < cn->nlinks; i++) {
		const struct bd_link *l = &cn->links[i];

		fprintf(out, "%s card %" PRId64 " ", i ? ";" : "", l->card);
		if (l->has_gbps)
			fprintf(out, "%s x%d, %.3f GB/s", l->speed, l->width,
			    l->gbps);
		else
			fprintf(out, "link unknown");
	}
	fprintf(out, "\n");
	if (n == 0)
		return;
	fprintf(out, "The counters contradict the trace in %zu span%s:\n", n,
	    n == 1 ? "" : "s");
	for (size_t i = 0; i < n && i < 8; i++)
		fprintf(out, "  %s\n", list[i]);
	if (n > 8)
		fprintf(out, "  and %zu more\n", n - 8);
}

