/*
 * report_md: report.md, in GitHub-flavoured Markdown (report.h).
 *
 * It follows the checklist of torch-spyre's performance methodology: each
 * item is filled from what spyremon knows (the window's metadata, the
 * trace, the samples), or left as a plain blank, marked TO FILL IN, for
 * what only a person knows.
 */
#include <err.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format.h"
#include "report.h"
#include "report_ops.h"
#include "report_why.h"
#include "serving.h"
#include "summarycmd.h"
#include "timeparse.h"
#include "version.h"

#define BLANK	"**TO FILL IN:**"
#define MD_MAX_STEPS	50	/* rows of the step table; steps.csv has all */

/* The metadata value of key, or NULL. */
static const char *
meta(const struct report *r, const char *key, char *buf, size_t len)
{
	return winsum_meta(&r->ws, key, buf, len);
}

/* "`value` (window metadata key)" or a blank naming how to record it. */
static void
item_meta(FILE *fp, const struct report *r, const char *label,
    const char *const *keys, const char *how)
{
	char buf[PROTO_META_VALUE_MAX + 1];
	bool any = false;

	for (size_t i = 0; keys[i] != NULL; i++)
		any = any || meta(r, keys[i], buf, sizeof(buf)) != NULL;
	fprintf(fp, "- [%c] **%s:** ", any ? 'x' : ' ', label);
	any = false;
	for (size_t i = 0; keys[i] != NULL; i++) {
		const char *v = meta(r, keys[i], buf, sizeof(buf));

		if (v == NULL)
			continue;
		fprintf(fp, "%s`%s` (%s)", any ? ", " : "", v, keys[i]);
		any = true;
	}
	if (!any)
		fprintf(fp, BLANK " not recorded with the window; %s", how);
	fprintf(fp, "\n");
}

static void
md_cards(FILE *fp, const struct report *r)
{
	struct db_card *c;
	size_t n;

	if (db_cards(r->db, &c, &n) == -1) {
		fprintf(fp, "- cards: not recorded\n");
		return;
	}
	for (size_t i = 0; i < n; i++)
		fprintf(fp, "- card %s: bus `%s`, NUMA node %d, link %s x%d\n",
		    c[i].devices != NULL ? c[i].devices : "?", c[i].bus_id,
		    c[i].numa_node, c[i].link_speed, c[i].link_width);
	db_cards_free(c, n);
}

/* The checklist's iteration count: the active steps of each trace. */
static void
md_iterations(FILE *fp, const struct report *r)
{
	fprintf(fp, "- [x] **Iteration count:** ");
	if (r->rs.nt > 1)
		fprintf(fp, "%zu ranks' traces: ", r->rs.nt);
	for (size_t i = 0; i < r->rs.nt; i++) {
		size_t first, n = runsteps_of(&r->rs, i, &first);
		const struct runstep *a = &r->rs.s[first], *b = &a[n - 1];
		int64_t lo = a->start_ns, hi = b->start_ns + b->dur_ns;
		char label[64];

		for (size_t k = 0; k < n; k++)
			if (a[k].start_ns + a[k].dur_ns > hi)
				hi = a[k].start_ns + a[k].dur_ns;
		runsteps_label(&r->rs, i, label, sizeof(label));
		if (r->rs.nt > 1)
			fprintf(fp, "%s%s (`%s`): ", i ? "; " : "", label,
			    r->rs.t[i].path);
		fprintf(fp, "%zu active steps%s (`%s` ... `%s`), %.3f s from "
		    "the first step's start to the last one's end", n,
		    r->rs.nt > 1 ? "" : " in the trace", a->name, b->name,
		    (double)(hi - lo) / 1e9);
	}
	fprintf(fp, ".\n");
}

/* A fence longer than any run of backquotes in text, for a code block. */
static void
md_fence(const char *text, char *fence, size_t len)
{
	size_t run = 0, longest = 0, n;

	for (const char *p = text; *p != '\0'; p++) {
		run = *p == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	n = longest < 3 ? 3 : longest + 1;
	if (n >= len)
		n = len - 1;
	memset(fence, '`', n);
	fence[n] = '\0';
}

/* text in a fenced code block of language lang, ending in a newline. */
static void
md_code(FILE *fp, const char *lang, const char *text, size_t len)
{
	char fence[64];

	md_fence(text, fence, sizeof(fence));
	fprintf(fp, "%s%s\n%s%s%s\n\n", fence, lang, text,
	    len > 0 && text[len - 1] != '\n' ? "\n" : "", fence);
}

static void
md_reproducer(FILE *fp, const struct report *r, const char *cmd)
{
	const struct runmeta *m = &r->run;

	if (runmeta_reproducer_ok(m))
		fprintf(fp, "- [x] **Minimal reproducer:** `reproducer.py`, "
		    "below: the script of the run as it was (`%s`, sha256 "
		    "`%s`)", m->reproducer.path, m->sha_file);
	else if (m->reproducer.text != NULL && m->sha_recorded[0] != '\0')
		fprintf(fp, "- [ ] **Minimal reproducer:** " BLANK " `%s` is "
		    "no longer the script of the run (sha256 `%s`, recorded "
		    "`%s`)", m->reproducer.path, m->sha_file, m->sha_recorded);
	else if (m->reproducer.path[0] != '\0')
		fprintf(fp, "- [ ] **Minimal reproducer:** " BLANK " %s",
		    m->reproducer.text == NULL ? m->reproducer.why :
		    "no sha256 was recorded with it");
	else
		fprintf(fp, "- [ ] **Minimal reproducer:** " BLANK " the "
		    "smallest script that shows it (`spyremon.profile()` "
		    "records it)");
	if (cmd != NULL)
		fprintf(fp, "; the profiled run was `%s`", cmd);
	fprintf(fp, ".\n");
}

/*
 * What was seen of metric m: the mean over the (first) trace's active
 * steps for the step figures, the window's energy of all cards.  false
 * with why if it is not known.
 */
static bool
md_seen(const struct report *r, enum expect_metric m, double *v,
    char *how, size_t len)
{
	size_t first, n, with = 0;
	double sum = 0;

	if (m == EXPECT_ENERGY_J) {
		*v = winsum_energy(&r->ws);
		snprintf(how, len, "the energy of all cards over the window");
		return true;
	}
	if (!r->has_trace) {
		snprintf(how, len, "%s needs the trace (`--trace`)",
		    expect_metric_name(m));
		return false;
	}
	n = runsteps_of(&r->rs, 0, &first);
	for (size_t k = 0; k < n; k++) {
		const struct runstep *s = &r->rs.s[first + k];

		if (m == EXPECT_STEP_MS) {
			sum += (double)s->dur_ns / 1e6;
			with++;
		} else if (s->has_energy) {
			sum += s->energy_j;
			with++;
		}
	}
	if (with == 0) {
		snprintf(how, len, "no active step has %s",
		    m == EXPECT_STEP_MS ? "a duration" : "an energy");
		return false;
	}
	*v = sum / (double)with;
	snprintf(how, len, "the mean over %zu active steps%s", with,
	    m == EXPECT_STEP_J ? ", every card's energy summed" : "");
	return true;
}

static void
md_expect_item(FILE *fp, const struct report *r)
{
	const struct runmeta *m = &r->run;
	char how[128];
	double v;

	if (!m->has_expect) {
		fprintf(fp, "- [ ] **Expected against seen:** " BLANK " what "
		    "you expected (`--expect 'step_ms<=120'`, or "
		    "`spyremon.profile(expect=...)`), and what you saw "
		    "instead.\n");
		return;
	}
	if (md_seen(r, m->expect.metric, &v, how, sizeof(how)))
		fprintf(fp, "- [x] **Expected against seen:** expected `%s` "
		    "(%s); seen %s = %.3f %s (%s): **%s**.\n", m->expect.text,
		    m->expect_from, expect_metric_name(m->expect.metric), v,
		    expect_metric_unit(m->expect.metric), how,
		    expect_met(&m->expect, v) ? "met" : "NOT met");
	else
		fprintf(fp, "- [ ] **Expected against seen:** expected `%s` "
		    "(%s); seen: " BLANK " %s.\n", m->expect.text,
		    m->expect_from, how);
}

/* The reproducer, the profiler's table and the expectation, in full. */
static void
md_run_sections(FILE *fp, const struct report *r)
{
	const struct runmeta *m = &r->run;
	char how[128];
	double v;

	fprintf(fp, "\n### Reproducer\n\n");
	if (runmeta_reproducer_ok(m))
		md_code(fp, "python", m->reproducer.text, m->reproducer.len);
	else
		fprintf(fp, "```python\n# TO FILL IN\n```\n\n");
	fprintf(fp, "### prof.key_averages().table(...)\n\n");
	if (m->table.text != NULL)
		md_code(fp, "", m->table.text, m->table.len);
	else
		fprintf(fp, "```\nTO FILL IN\n```\n\n");
	fprintf(fp, "### Expected against seen\n\n");
	if (!m->has_expect) {
		fprintf(fp, "- Expected: **TO FILL IN**\n- Seen: **TO FILL "
		    "IN**\n\n");
		return;
	}
	fprintf(fp, "- Expected: `%s` (%s)\n", m->expect.text, m->expect_from);
	if (md_seen(r, m->expect.metric, &v, how, sizeof(how)))
		fprintf(fp, "- Seen: %s = %.3f %s, %s: **%s**\n\n",
		    expect_metric_name(m->expect.metric), v,
		    expect_metric_unit(m->expect.metric), how,
		    expect_met(&m->expect, v) ? "met" : "NOT met");
	else
		fprintf(fp, "- Seen: **TO FILL IN** (%s)\n\n", how);
}

/* The previous metric: the baseline's, or what to pass for one. */
static void
md_previous(FILE *fp, const struct report *r)
{
	char workload[PROTO_META_VALUE_MAX + 1];
	bool has_workload = meta(r, "workload", workload,
	    sizeof(workload)) != NULL;

	if (r->has_base) {
		fprintf(fp, "- [x] **Previous metric:** window %" PRId64 " "
		    "'%s'%s%s%s, see *Against the baseline* below.\n",
		    r->cmp.base.w.id, r->cmp.base.w.tag, r->base_found ?
		    ", the newest recorded as the baseline of workload `" :
		    " (`--baseline`)", r->base_found ? workload : "",
		    r->base_found ? "`" : "");
		return;
	}
	fprintf(fp, "- [ ] **Previous metric (for a regression):** none: no "
	    "`--baseline` was given");
	if (has_workload)
		fprintf(fp, ", and no earlier window is recorded as the "
		    "baseline of workload `%s` (`spyremon.profile(..., "
		    "baseline=True)`, or `--meta baseline=true` with `--meta "
		    "workload=%s` on `mark begin`)", workload, workload);
	fprintf(fp, "; pass `--baseline TAG|ID` to compare with an earlier "
	    "window.\n");
}

static void
md_checklist(FILE *fp, const struct report *r)
{
	static const char *const k_torch[] = { "torch", NULL };
	static const char *const k_spyre[] = { "torch_spyre", "torch_spyre_sha",
	    NULL };
	static const char *const k_code[] = { "git_sha", "commit", NULL };
	char buf[PROTO_META_VALUE_MAX + 1];
	const char *cmd = meta(r, "command", buf, sizeof(buf));

	fprintf(fp, "## Methodology checklist\n\n"
	    "The items torch-spyre's performance methodology asks of a report. "
	    "Items left unchecked need you.\n\n");
	md_reproducer(fp, r, cmd);
	if (r->has_trace)
		md_iterations(fp, r);
	else
		fprintf(fp, "- [ ] **Iteration count:** " BLANK " no trace "
		    "given (`--trace spyre_trace.json` counts the active "
		    "steps).\n");
	item_meta(fp, r, "PyTorch version", k_torch, "give it with `--meta "
	    "torch=...` or use the Python helper, which records it");
	if (meta(r, "torch_spyre", buf, sizeof(buf)) != NULL &&
	    strcmp(buf, "none") == 0)
		fprintf(fp, "- [x] **torch-spyre version and commit SHA:** none: "
		    "torch-spyre was not installed in the profiled run's "
		    "Python (`torch_spyre` = `none`)\n");
	else
		item_meta(fp, r, "torch-spyre version and commit SHA", k_spyre,
		    "give it with `--meta torch_spyre_sha=...`");
	item_meta(fp, r, "Workload commit", k_code, "give it with `--meta "
	    "commit=...`");
	if (r->aiusmi_rows > 0) {
		fprintf(fp, "- [x] **aiu-smi output covering at least one full "
		    "active iteration:** `aiusmi.csv`, %" PRId64 " rows in "
		    "aiu-smi's own CSV over %s", r->aiusmi_rows,
		    r->has_trace ? "the active steps' span" : "the window");
		/* a card read directly: its two streams paired */
		if (r->aiusmi_file_rows > 0)
			fprintf(fp, ", one per card per interval (%" PRId64
			    " rows read from the cards' metric files, paired "
			    "with aiu-smi's)", r->aiusmi_file_rows);
		fprintf(fp, ".\n");
	} else
		fprintf(fp, "- [ ] **aiu-smi output covering at least one full "
		    "active iteration:** " BLANK " no samples are left in the "
		    "database for %s (retention deletes them after "
		    "`retention.windows_max_age`); the summary below was kept.\n",
		    r->has_trace ? "the active steps' span" : "the window");
	if (r->has_trace && r->rs.nt == 1)
		fprintf(fp, "- [x] **spyre_trace.json:** attach `%s` (the "
		    "trace the steps come from); `steps.csv` has the power and "
		    "energy of each step.\n", r->rs.t[0].path);
	else if (r->has_trace) {
		fprintf(fp, "- [x] **spyre_trace.json:** attach the %zu traces "
		    "the steps come from, one per rank:", r->rs.nt);
		for (size_t i = 0; i < r->rs.nt; i++) {
			char label[64];

			runsteps_label(&r->rs, i, label, sizeof(label));
			fprintf(fp, "%s %s `%s`", i ? "," : "", label,
			    r->rs.t[i].path);
		}
		fprintf(fp, "; `steps.csv` has the power and energy of each "
		    "step of each.\n");
	} else if (r->trace_why[0] != '\0')
		fprintf(fp, "- [ ] **spyre_trace.json:** " BLANK " %s; attach "
		    "the profiler's trace (and give it to `--trace`).\n",
		    r->trace_why);
	else
		fprintf(fp, "- [ ] **spyre_trace.json:** " BLANK " attach the "
		    "profiler's trace (and give it to `--trace`).\n");
	if (r->run.table.text != NULL)
		fprintf(fp, "- [x] **`prof.key_averages().table(...)` "
		    "summary:** below, and in `key_averages.txt` (`%s`).\n",
		    r->run.table.path);
	else if (r->run.table.path[0] != '\0')
		fprintf(fp, "- [ ] **`prof.key_averages().table(...)` "
		    "summary:** " BLANK " %s; paste it below.\n",
		    r->run.table.why);
	else
		fprintf(fp, "- [ ] **`prof.key_averages().table(...)` "
		    "summary:** " BLANK " paste it below (`spyremon.profile()` "
		    "records it).\n");
	md_expect_item(fp, r);
	md_previous(fp, r);
	md_run_sections(fp, r);
}

/*
 * The versions aiu-smi gave at its starts over the window (the daemon
 * asks "aiu-smi -v" at each start of it), or why none is known.
 */
static int
md_smi_version(FILE *fp, const struct report *r)
{
	struct db_smi_version *v;
	char t[FMT_BUFLEN];
	size_t n;
	bool recorded;
	int rc;

	if ((rc = db_smi_versions(r->db, r->ws.w.begin_ns, r->ws.end_ns, &v,
	    &n, &recorded)) != CLIENT_EXIT_OK)
		return rc;
	fprintf(fp, "- aiu-smi version: ");
	if (!recorded)
		fprintf(fp, BLANK " this database predates the daemon's "
		    "recording of `aiu-smi -v`; run it on the host\n");
	else if (n == 0)
		fprintf(fp, BLANK " the daemon had no answer from `aiu-smi -v` "
		    "by the window's end (see its log); run it on the host\n");
	for (size_t i = 0; i < n; i++) {
		format_time_utc(v[i].since_ns, t, sizeof(t));
		fprintf(fp, "%s`%s` (`aiu-smi -v`, %s %s)", i > 0 ? ", then " :
		    "", v[i].version, i > 0 ? "from" : "since", t);
	}
	if (n > 0)
		fprintf(fp, "\n");
	db_smi_versions_free(v, n);
	return CLIENT_EXIT_OK;
}

static int
md_environment(FILE *fp, const struct report *r)
{
	char buf[PROTO_META_VALUE_MAX + 1], host[256], t1[FMT_BUFLEN],
	    t2[FMT_BUFLEN], clk[WINSUM_CLOCK_LEN];
	const char *h = meta(r, "host", buf, sizeof(buf));
	int rc;

	format_time_utc(r->ws.w.begin_ns, t1, sizeof(t1));
	format_time_utc(r->ws.end_ns, t2, sizeof(t2));
	fprintf(fp, "## Environment\n\n");
	fprintf(fp, "- window: %" PRId64 " `%s`, %s to %s%s%s", r->ws.w.id,
	    r->ws.w.tag, t1, r->ws.w.open && !r->ws.orphan ? "now (open)" :
	    t2, r->ws.orphan ? " (its last sample; never ended: its daemon "
	    "is gone)" : "", r->ws.ended_by[0] ? ", ended by " : "");
	fprintf(fp, "%s\n", r->ws.ended_by);
	if (h != NULL)
		fprintf(fp, "- host: `%s` (window metadata)\n", h);
	else if (gethostname(host, sizeof(host)) == 0)
		fprintf(fp, "- host: not recorded with the window; this report "
		    "was made on `%.*s`\n", (int)sizeof(host) - 1, host);
	md_cards(fp, r);
	if ((rc = md_smi_version(fp, r)) != CLIENT_EXIT_OK)
		return rc;
	/* said here, so not again under the notes */
	winsum_clock(&r->ws, clk, sizeof(clk));
	fprintf(fp, "- host clock %s\n", clk);
	fprintf(fp, "- window metadata: `%s`\n", r->ws.w.meta);
	fprintf(fp, "- made by spyremon %s\n\n", SPYREMON_VERSION);
	return CLIENT_EXIT_OK;
}

static void
md_summary(FILE *fp, const struct report *r)
{
	static const char *const heads[SUMMARY_NCOLS] = {
		"card", "samples", "cover %", "gaps", "energy J", "net J",
		"idle W", "power mean W", "min W", "max W", "p95 W",
		"gtemp max C", "busy mean %", "actmem peak MiB",
	};
	char cells[SUMMARY_NCOLS][SUMMARY_CELL];

	fprintf(fp, "## Summary\n\n");
	if (r->ws.live)
		fprintf(fp, "_Computed now, not stored: %s._\n\n",
		    r->ws.why_live);
	for (int k = 0; k < SUMMARY_NCOLS; k++)
		fprintf(fp, "| %s ", heads[k]);
	fprintf(fp, "|\n");
	for (int k = 0; k < SUMMARY_NCOLS; k++)
		fprintf(fp, "|%s", k == 0 ? "---" : "---:");
	fprintf(fp, "|\n");
	for (size_t i = 0; i < r->ws.s.ncards; i++) {
		summary_card_cells(&r->ws, &r->ws.s.cards[i], cells);
		for (int k = 0; k < SUMMARY_NCOLS; k++)
			fprintf(fp, "| %s ", cells[k]);
		fprintf(fp, "|\n");
	}
	fprintf(fp, "\nAll cards: %.3f J.  ", winsum_energy(&r->ws));
	summary_write_idle(fp, &r->ws);
	fprintf(fp, "\nBandwidths (GiB/s, mean / max, bytes moved):\n\n");
	for (size_t i = 0; i < r->ws.s.ncards; i++) {
		const struct summary_card *c = &r->ws.s.cards[i];

		fprintf(fp, "- card %d:", c->device);
		for (int b = 0; b < SUMMARY_NBW; b++)
			if (c->bw[b].has)
				fprintf(fp, " %s %.3f / %.3f, %.0f B;",
				    summary_bw_keys[b], c->bw[b].mean,
				    c->bw[b].max, c->bw[b].bytes);
		fprintf(fp, "\n");
	}
	fprintf(fp, "\n");
}

/* The serving figures, when the window was begun with --vllm. */
static void
md_serving(FILE *fp, const struct report *r)
{
	struct serving sv;

	serving_compute(r->db, &r->ws, &sv);
	serving_write(fp, &sv, true);
}

/* The step table of trace i: at most MD_MAX_STEPS rows. */
static void
md_step_table(FILE *fp, const struct report *r, size_t i)
{
	size_t first, n = runsteps_of(&r->rs, i, &first);

	fprintf(fp, "| step | start s | time ms | energy J | power W |\n"
	    "|---|---:|---:|---:|---:|\n");
	for (size_t k = 0; k < n && k < MD_MAX_STEPS; k++) {
		const struct runstep *s = &r->rs.s[first + k];

		fprintf(fp, "| %s | %.3f | %.3f | ", s->name,
		    (double)(s->start_ns - r->ws.w.begin_ns) / 1e9,
		    (double)s->dur_ns / 1e6);
		if (s->has_energy)
			fprintf(fp, "%.3f | %.2f |\n", s->energy_j, s->power_w);
		else
			fprintf(fp, "- | - |\n");
	}
	fprintf(fp, "\n");
}

static void
md_steps(FILE *fp, const struct report *r)
{
	if (!r->has_trace)
		return;
	fprintf(fp, "## Steps\n\n");
	if (r->rs.nt > 1)
		fprintf(fp, "The active steps of each of the run's %zu ranks, "
		    "every card's energy summed over each step; the ranks' "
		    "steps overlap in time, so their energies do not add "
		    "up.\n\n", r->rs.nt);
	for (size_t i = 0; i < r->rs.nt; i++) {
		size_t first, n = runsteps_of(&r->rs, i, &first);
		char label[64];

		runsteps_label(&r->rs, i, label, sizeof(label));
		if (r->rs.nt > 1)
			fprintf(fp, "### %s: `%s`\n\n%zu active steps%s.\n\n",
			    label, r->rs.t[i].path, n, n > MD_MAX_STEPS ?
			    " (the first 50 here, all in `steps.csv`)" : "");
		else
			fprintf(fp, "%zu active steps of `%s`%s; every card's "
			    "energy summed.\n\n", n, r->rs.t[i].path,
			    n > MD_MAX_STEPS ? " (the first 50 here, all in "
			    "`steps.csv`)" : "");
		md_step_table(fp, r, i);
	}
}

static void
md_plots(FILE *fp, const struct report *r)
{
	static const struct {
		const char *name, *what;
	} desc[] = {
		{ "power", "Power (W) and busy (%) per card" },
		{ "temperature", "Card temperature (gtemp, C)" },
		{ "bandwidth", "Memory and PCIe bandwidths (GiB/s)" },
	};

	char label[64] = "";

	if (r->has_trace && r->rs.nt > 1)
		runsteps_label(&r->rs, 0, label, sizeof(label));
	fprintf(fp, "## Plots\n\nOne colour per card in every plot; the "
	    "profiler's steps%s%s%s shaded grey; the window's begin and end "
	    "dashed. SVG versions beside each PNG.\n\n", label[0] ? " (of " :
	    "", label, label[0] ? ", the first trace)" : "");
	for (size_t i = 0; i < r->nplots; i++)
		for (size_t k = 0; k < sizeof(desc) / sizeof(desc[0]); k++)
			if (strcmp(r->plots[i], desc[k].name) == 0)
				fprintf(fp, "![%s](%s.png)\n\n", desc[k].what,
				    desc[k].name);
}

static void
md_notes(FILE *fp, const struct report *r)
{
	fprintf(fp, "## Notes on the data\n\n");
	for (size_t i = 0; i < r->ws.nnotes; i++)
		if (i != r->ws.clock_note)
			fprintf(fp, "- %s\n", r->ws.notes[i]);
	fprintf(fp, "\n");
}

static void
md_baseline(FILE *fp, const struct report *r)
{
	const struct winsum *b = &r->cmp.base;
	char buf[PROTO_META_VALUE_MAX + 1], t[FMT_BUFLEN];
	double eb = winsum_energy(b), en = winsum_energy(&r->ws);

	if (!r->has_base)
		return;
	format_time_utc(b->w.begin_ns, t, sizeof(t));
	fprintf(fp, "## Against the baseline\n\n");
	fprintf(fp, "Previous metric: energy of all cards **%.3f J** in window "
	    "%" PRId64 " `%s` of %s", eb, b->w.id, b->w.tag, t);
	if (winsum_meta(b, "git_sha", buf, sizeof(buf)) != NULL ||
	    winsum_meta(b, "commit", buf, sizeof(buf)) != NULL)
		fprintf(fp, ", commit `%s`", buf);
	if (winsum_meta(b, "workload", buf, sizeof(buf)) != NULL)
		fprintf(fp, ", workload `%s`", buf);
	fprintf(fp, "; now **%.3f J**", en);
	if (eb > 0)
		fprintf(fp, " (%+.1f %%)", 100.0 * (en - eb) / eb);
	fprintf(fp, ".\n\n");
	compare_write_windows(fp, &r->cmp, true);
	fprintf(fp, "\n");
	compare_write_figures(fp, &r->cmp, true);
	fprintf(fp, "\nVerdicts: Welch's t-test at the 5 %% level and a "
	    "change of at least %g %%.\n\n", r->cmp.min_change);
}

int
report_write_md(struct report *r)
{
	char path[PATH_MAX + 32], t[FMT_BUFLEN];
	FILE *fp;
	int rc = CLIENT_EXIT_OK;

	snprintf(path, sizeof(path), "%s/report.md", r->tmp);
	if ((fp = fopen(path, "w")) == NULL) {
		warn("%s", path);
		return CLIENT_EXIT_FAILED;
	}
	format_time_utc(now_realtime_ns(), t, sizeof(t));
	fprintf(fp, "# Performance report: `%s`\n\n", r->ws.w.tag);
	fprintf(fp, "Window %" PRId64 " of spyremon's Spyre telemetry, "
	    "reported %s.\n\n", r->ws.w.id, t);
	md_checklist(fp, r);
	if ((rc = md_environment(fp, r)) != CLIENT_EXIT_OK) {
		fclose(fp);
		return rc;
	}
	md_summary(fp, r);
	md_serving(fp, r);
	md_steps(fp, r);
	report_ops_md(fp, r);
	report_why_md(fp, r);
	md_plots(fp, r);
	md_notes(fp, r);
	md_baseline(fp, r);
	if (fflush(fp) == EOF || ferror(fp)) {
		warn("%s", path);
		rc = CLIENT_EXIT_FAILED;
	}
	if (fclose(fp) == EOF && rc == CLIENT_EXIT_OK) {
		warn("%s", path);
		rc = CLIENT_EXIT_FAILED;
	}
	return rc;
}
