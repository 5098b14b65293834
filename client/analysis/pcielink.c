/*
 * pcielink: a PCIe link's capacity from sysfs' speed and width
 * (pcielink.h).
 */
#include <stdlib.h>
#include <string.h>

#include "pcielink.h"

/* The rates a link trains at, with their line encoding. */
static const struct {
	double	 gts;
	int	 payload, line;		/* bits of data in bits on the wire */
} rates[] = {
	{ 2.5, 8, 10 }, { 5.0, 8, 10 },
	{ 8.0, 128, 130 }, { 16.0, 128, 130 }, { 32.0, 128, 130 },
};

bool
pcie_link_gbps(const char *speed, int width, double *gbps)
{
	const char *p;
	char *end;
	double gts;

	if (speed == NULL || width < 1)
		return false;
	gts = strtod(speed, &end);
	if (end == speed)
		return false;
	for (p = end; *p == ' '; p++)
		;
	if (strncmp(p, "GT/s", 4) != 0)
		return false;
	/* each rate is a double exactly: 2.5, 5, 8, 16, 32 */
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++)
		if (gts == rates[i].gts) {
			*gbps = gts * width * rates[i].payload / rates[i].line /
			    8;
			return true;
		}
	return false;
}

double
pcie_link_pct(double gibps, double gbps)
{
	return gbps > 0 ? 100.0 * gibps * 1073741824.0 / (gbps * 1e9) : 0;
}
