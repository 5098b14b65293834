/* metrics: aiu-smi's known columns.  Units marked unconfirmed in SPYRE.md are best guesses. */
#include "metrics.h"

#include <string.h>

const int64_t metric_pow10[METRIC_MAX_SCALE + 1] = {
	1LL, 10LL, 100LL, 1000LL, 10000LL, 100000LL, 1000000LL, 10000000LL,
	100000000LL, 1000000000LL, 10000000000LL, 100000000000LL,
	1000000000000LL, 10000000000000LL, 100000000000000LL,
	1000000000000000LL, 10000000000000000LL, 100000000000000000LL,
	1000000000000000000LL,
};

const struct metric_def metric_defs[] = {
	{ "hostcpu", "%", '*', 1, true, "host CPU use, summed over cores" },
	{ "hostmem", "%", '*', 1, true, "host memory use" },
	{ "pwr", "W", '*', 1, true, "card power" },
	{ "gtemp", "C", '*', 1, true, "card temperature" },
	{ "busy", "%", '*', 0, true, "card busy time" },
	{ "rdmem", "GiB/s", 'D', 3, true, "device memory read bandwidth" },
	{ "wrmem", "GiB/s", 'D', 3, true, "device memory write bandwidth" },
	{ "rxpci", "GiB/s", 'D', 3, true, "PCIe receive bandwidth" },
	{ "txpci", "GiB/s", 'D', 3, true, "PCIe transmit bandwidth" },
	{ "rdrdma", "GiB/s", 'D', 3, true, "RDMA read bandwidth" },
	{ "wrrdma", "GiB/s", 'D', 3, true, "RDMA write bandwidth" },
	{ "n_rdmem", "Mreq/s", 'R', 3, true, "device memory read requests" },
	{ "n_wrmem", "Mreq/s", 'R', 3, true, "device memory write requests" },
	{ "n_rxpci", "Mreq/s", 'R', 3, true, "PCIe receive requests" },
	{ "n_txpci", "Mreq/s", 'R', 3, true, "PCIe transmit requests" },
	{ "rsvmem", "MiB", 'M', 0, false,
	    "reserved device memory (not captured correctly on current builds)" },
	{ "actmem", "MiB", 'U', 0, true, "actual device memory in use" },
	{ "peakmem", "MiB", 'U', 0, true, "peak device memory in use" },
	{ "pt_act", "%", 'P', 1, false,
	    "PT-array utilisation estimated from power (not captured correctly on current builds)" },
};

const size_t metric_ndefs = sizeof(metric_defs) / sizeof(metric_defs[0]);

const struct metric_def *
metric_def_find(const char *key)
{
	for (size_t i = 0; i < metric_ndefs; i++)
		if (strcmp(metric_defs[i].key, key) == 0)
			return &metric_defs[i];
	return NULL;
}

bool
metric_group_selected(const char *groups, char g)
{
	if (g == '*')
		return true;
	return strchr(groups, 'A') != NULL || strchr(groups, g) != NULL;
}
