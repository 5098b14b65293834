/*
 * cardmodel: plausible Spyre telemetry from a seed.
 *
 * Each card has constants drawn once (idle and peak power, memory
 * bandwidth, model size, cycle phases) and a state advanced once per
 * interval: utilisation jumps with the workload, power follows it within
 * a fraction of a second, temperature follows power with a time constant
 * of 15 s, and traffic scales with utilisation.  Every random draw comes
 * from a per-card splitmix64 stream, so a card's values depend only on the
 * seed, its index and the busy flags and interval lengths it was given.
 */
#include "sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TEMP_AMBIENT	25.0	/* C at 0 W */
#define TEMP_PER_WATT	0.6	/* C per W at equilibrium: 37..70 C */
#define TEMP_TAU	15.0	/* s */
#define PWR_TAU		0.4	/* s */
#define HOSTMEM_TAU	5.0	/* s */
#define WORKSET_TAU	2.0	/* s */
#define MEM_REQ_BYTES	64.0	/* device memory request size */
#define PCI_REQ_BYTES	256.0	/* PCIe request size */

struct card {
	uint64_t rng;
	/* constants */
	double idle_pwr, peak_pwr;	/* W */
	double bw_peak;			/* GiB/s of memory reads at 100% busy */
	double base_mem;		/* MiB held by the loaded model */
	double workset_peak;		/* MiB of activations at 100% busy */
	uint64_t idle_ns, period_ns, phase_ns;	/* WORKLOAD_CYCLE */
	bool rdma;
	/* state */
	double util;			/* % busy */
	double pwr, temp, workset, peakmem;
	double v[SM_COUNT];
};

struct sim_model {
	double idle_power;		/* for pt_act */
	uint64_t host_rng;
	double hostcpu, hostmem;
	int ncards;
	struct card cards[];
};

static const char *const metric_keys[SM_COUNT] = {
	[SM_HOSTCPU] = "hostcpu", [SM_HOSTMEM] = "hostmem", [SM_PWR] = "pwr",
	[SM_GTEMP] = "gtemp", [SM_BUSY] = "busy", [SM_RDMEM] = "rdmem",
	[SM_WRMEM] = "wrmem", [SM_RXPCI] = "rxpci", [SM_TXPCI] = "txpci",
	[SM_RDRDMA] = "rdrdma", [SM_WRRDMA] = "wrrdma",
	[SM_N_RDMEM] = "n_rdmem", [SM_N_WRMEM] = "n_wrmem",
	[SM_N_RXPCI] = "n_rxpci", [SM_N_TXPCI] = "n_txpci",
	[SM_RSVMEM] = "rsvmem", [SM_ACTMEM] = "actmem",
	[SM_PEAKMEM] = "peakmem", [SM_PT_ACT] = "pt_act",
	[SM_RSVSEG0] = "rsvseg0", [SM_RSVSEG1] = "rsvseg1",
	[SM_RSVSEG2] = "rsvseg2", [SM_RSVSEG3] = "rsvseg3",
	[SM_HBMTEMP] = "hbmtemp",
};

enum sim_metric
sim_metric_by_key(const char *key)
{
	for (int i = 0; i < SM_COUNT; i++)
		if (strcmp(metric_keys[i], key) == 0)
			return (enum sim_metric)i;
	return SM_UNKNOWN;
}

bool
sim_card_lacks_rdma(int card)
{
	return card % 4 == 3;
}

static uint64_t
rng_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [lo, hi). */
static double
rng_range(uint64_t *state, double lo, double hi)
{
	return lo + (hi - lo) * (double)(rng_next(state) >> 11) * 0x1.0p-53;
}

static double
clamp(double v, double lo, double hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/*
 * The fraction of the way a first-order filter of time constant tau moves
 * in dt: the implicit Euler step, stable for any dt and free of libm.
 */
static double
approach(double dt, double tau)
{
	return dt / (tau + dt);
}

static void
card_init(struct card *c, int index, uint64_t seed)
{
	memset(c, 0, sizeof(*c));
	c->rng = seed ^ ((uint64_t)(index + 1) * 0xd1b54a32d192ed03ULL);
	rng_next(&c->rng);
	c->idle_pwr = rng_range(&c->rng, 20.5, 27.5);
	c->peak_pwr = rng_range(&c->rng, 62.0, 74.5);
	c->bw_peak = rng_range(&c->rng, 18.0, 26.0);
	c->base_mem = (double)(int)rng_range(&c->rng, 2048.0, 8192.0);
	c->workset_peak = rng_range(&c->rng, 4000.0, 24000.0);
	c->idle_ns = (uint64_t)(rng_range(&c->rng, 3.0, 8.0) * 1e9);
	c->period_ns = c->idle_ns + (uint64_t)(rng_range(&c->rng, 4.0, 10.0) * 1e9);
	c->phase_ns = rng_next(&c->rng) % c->period_ns;
	c->rdma = !sim_card_lacks_rdma(index);
	c->pwr = c->idle_pwr;
	c->temp = TEMP_AMBIENT + TEMP_PER_WATT * c->idle_pwr;
	c->peakmem = c->base_mem;
}

struct sim_model *
sim_model_new(const struct sim_options *opts)
{
	struct sim_model *m;

	m = calloc(1, sizeof(*m) + (size_t)opts->ncards * sizeof(m->cards[0]));
	if (m == NULL)
		return NULL;
	m->idle_power = opts->idle_power;
	m->ncards = opts->ncards;
	m->host_rng = opts->seed ^ 0x5851f42d4c957f2dULL;
	m->hostmem = 3.5;
	for (int i = 0; i < m->ncards; i++)
		card_init(&m->cards[i], i, opts->seed);
	return m;
}

void
sim_model_free(struct sim_model *m)
{
	free(m);
}

bool
sim_model_cycle_busy(const struct sim_model *m, int card, uint64_t t_ns)
{
	const struct card *c = &m->cards[card];

	return (t_ns + c->phase_ns) % c->period_ns >= c->idle_ns;
}

static void
card_step_power(struct card *c, bool busy, double dt)
{
	double target;

	if (busy)
		c->util = c->util == 0 ? rng_range(&c->rng, 80.0, 100.0) :
		    clamp(c->util + rng_range(&c->rng, -6.0, 6.0), 60.0, 100.0);
	else
		c->util = 0;
	target = c->idle_pwr + (c->peak_pwr - c->idle_pwr) * c->util / 100.0 +
	    rng_range(&c->rng, -0.4, 0.4);
	c->pwr = clamp(c->pwr + (target - c->pwr) * approach(dt, PWR_TAU),
	    SIM_PWR_MIN, SIM_PWR_MAX);
	target = TEMP_AMBIENT + TEMP_PER_WATT * c->pwr;
	c->temp += (target - c->temp) * approach(dt, TEMP_TAU) +
	    rng_range(&c->rng, -0.05, 0.05);
}

static void
card_step_traffic(struct card *c, bool busy)
{
	double f = c->util / 100.0, *v = c->v;
	double mem_req = 1073741824.0 / MEM_REQ_BYTES / 1e6;
	double pci_req = 1073741824.0 / PCI_REQ_BYTES / 1e6;

	v[SM_RDMEM] = v[SM_WRMEM] = v[SM_RXPCI] = v[SM_TXPCI] = 0;
	v[SM_RDRDMA] = v[SM_WRRDMA] = 0;
	if (busy) {
		v[SM_RDMEM] = f * c->bw_peak * rng_range(&c->rng, 0.9, 1.05);
		v[SM_WRMEM] = v[SM_RDMEM] * rng_range(&c->rng, 0.003, 0.02);
		if (rng_range(&c->rng, 0, 1) < 0.1)	/* an occasional flush */
			v[SM_WRMEM] += f * rng_range(&c->rng, 0.5, 3.0);
		v[SM_RXPCI] = f * rng_range(&c->rng, 0.1, 2.0);
		v[SM_TXPCI] = f * rng_range(&c->rng, 0.02, 0.6);
		v[SM_RDRDMA] = f * rng_range(&c->rng, 0.0, 1.2);
		v[SM_WRRDMA] = f * rng_range(&c->rng, 0.0, 1.2);
	}
	if (!c->rdma)
		v[SM_RDRDMA] = v[SM_WRRDMA] = NAN;
	v[SM_N_RDMEM] = v[SM_RDMEM] * mem_req * rng_range(&c->rng, 0.97, 1.03);
	v[SM_N_WRMEM] = v[SM_WRMEM] * mem_req * rng_range(&c->rng, 0.97, 1.03);
	v[SM_N_RXPCI] = v[SM_RXPCI] * pci_req * rng_range(&c->rng, 0.97, 1.03);
	v[SM_N_TXPCI] = v[SM_TXPCI] * pci_req * rng_range(&c->rng, 0.97, 1.03);
}

static void
card_step_memory(struct card *c, bool busy, double dt)
{
	double *v = c->v;

	if (busy)
		c->workset += (c->workset_peak * c->util / 100.0 - c->workset) *
		    approach(dt, WORKSET_TAU) + rng_range(&c->rng, -50.0, 50.0);
	else
		c->workset *= 1.0 - approach(dt, WORKSET_TAU / 2);
	c->workset = clamp(c->workset, 0, c->workset_peak);
	v[SM_ACTMEM] = c->base_mem + c->workset;
	if (v[SM_ACTMEM] > c->peakmem)
		c->peakmem = v[SM_ACTMEM];
	v[SM_PEAKMEM] = c->peakmem;
	v[SM_RSVMEM] = 0;	/* what current builds print */
	v[SM_RSVSEG0] = 256;	/* runtime and firmware */
	v[SM_RSVSEG1] = c->base_mem;
	v[SM_RSVSEG2] = c->workset;
	v[SM_RSVSEG3] = busy ? 512 : 0;	/* scratch */
}

static void
card_step(struct card *c, bool busy, double dt, double idle_power)
{
	double *v = c->v;

	card_step_power(c, busy, dt);
	card_step_traffic(c, busy);
	card_step_memory(c, busy, dt);
	v[SM_PWR] = c->pwr;
	v[SM_GTEMP] = c->temp;
	v[SM_BUSY] = c->util;
	v[SM_PT_ACT] = clamp((c->pwr - idle_power) / (SIM_PWR_MAX - idle_power)
	    * 100.0, 0, 100);
	v[SM_HBMTEMP] = c->temp + 3.0 + 4.0 * c->util / 100.0;
}

/* A runtime without its senlib config: the card reads all zeros. */
static void
card_zero(struct card *c)
{
	for (int i = 0; i < SM_COUNT; i++)
		c->v[i] = 0;
	if (!c->rdma)
		c->v[SM_RDRDMA] = c->v[SM_WRRDMA] = NAN;
}

void
sim_model_step(struct sim_model *m, const enum sim_card_state *state,
    double dt)
{
	double load = 0, target;

	for (int i = 0; i < m->ncards; i++) {
		struct card *c = &m->cards[i];

		if (state[i] == CARD_ZERO) {
			card_zero(c);
			continue;
		}
		card_step(c, state[i] == CARD_BUSY, dt, m->idle_power);
		load += c->util / 100.0;
	}
	/* Each busy card keeps about 1.4 host cores busy feeding it. */
	m->hostcpu = clamp(3.0 + 140.0 * load +
	    rng_range(&m->host_rng, -1.5, 1.5), 0.5, 100.0 * 1024);
	target = clamp(3.5 + 1.2 * load, 0, 95.0);
	m->hostmem = clamp(m->hostmem + (target - m->hostmem) *
	    approach(dt, HOSTMEM_TAU) + rng_range(&m->host_rng, -0.02, 0.02),
	    0.1, 99.0);
}

void
sim_model_set_power(struct sim_model *m, int card, double watts)
{
	struct card *c = &m->cards[card];

	c->pwr = watts;
	c->v[SM_PWR] = watts;
	c->v[SM_PT_ACT] = clamp((watts - m->idle_power) /
	    (SIM_PWR_MAX - m->idle_power) * 100.0, 0, 100);
}

double
sim_model_idle_power(const struct sim_model *m, int card)
{
	return m->cards[card].idle_pwr;
}

double
sim_model_value(const struct sim_model *m, int card, enum sim_metric metric)
{
	if (metric == SM_HOSTCPU)
		return m->hostcpu;
	if (metric == SM_HOSTMEM)
		return m->hostmem;
	if (metric >= SM_COUNT || card < 0 || card >= m->ncards)
		return NAN;
	return m->cards[card].v[metric];
}
