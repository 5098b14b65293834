/*
 * pcielink: what a card's PCIe link can carry, from the speed and width
 * that sysfs gives (current_link_speed, current_link_width, kept by the
 * daemon in the cards table), so that the PCIe counters can be weighed
 * against it.  Pure, unit-tested (tests/unit/test_pcielink.c).
 */
#ifndef SPYREMON_PCIELINK_H
#define SPYREMON_PCIELINK_H

#include <stdbool.h>

/*
 * The capacity of a link per direction in GB/s (10^9 bytes a second):
 * GT/s x width x encoding / 8, the encoding 8b/10b at 2.5 and 5 GT/s
 * (Gen1, Gen2) and 128b/130b at 8, 16 and 32 GT/s (Gen3 to Gen5).  speed
 * is sysfs' text, "16.0 GT/s PCIe" (or an older kernel's "16 GT/s");
 * false, *gbps untouched, for NULL, "", "Unknown", another rate (Gen6's
 * flit mode is not modelled) or a width under 1.
 */
bool pcie_link_gbps(const char *speed, int width, double *gbps);

/* A bandwidth in GiB/s (aiu-smi's unit) as % of a capacity in GB/s. */
double pcie_link_pct(double gibps, double gbps);

#endif
