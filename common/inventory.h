/*
 * inventory: the Spyre cards this host has, read from
 * <sysfs_root>/bus/pci/devices/ (vendor 0x1014, device 0x06a7 PF or 0x06a8 VF).
 * Tests point sysfs_root at a fake tree.
 */
#ifndef SPYREMON_INVENTORY_H
#define SPYREMON_INVENTORY_H

#include <stdbool.h>
#include <stddef.h>

#define INV_BUSID_MAX 32

struct card {
	char bus_id[INV_BUSID_MAX];	/* "0000:13:00.0" */
	bool vf;			/* device 0x06a8 */
	int numa_node;			/* -1 when unknown */
	char driver[64];		/* basename of the driver link, "" if unbound */
	char link_speed[32];		/* current_link_speed, e.g. "16.0 GT/s PCIe" */
	int link_width;			/* current_link_width, 0 when unknown */
};

/*
 * Scan sysfs_root for Spyre functions, sorted by bus ID.  On success *out is
 * a malloc'd array the caller frees (NULL when *n is 0) and 0 is returned.
 * Returns -1 with errno set if the devices directory cannot be read;
 * unreadable attributes of one card leave that field unknown instead.
 */
int inventory_scan(const char *sysfs_root, struct card **out, size_t *n);

/* Expand %BUSID in pattern with bus_id into buf; -1 if it does not fit. */
int inventory_metric_path(const char *pattern, const char *bus_id, char *buf,
    size_t len);

/*
 * The bus ID a metric file path names under pattern (the inverse of
 * inventory_metric_path); -1 if path does not match the pattern.
 */
int inventory_busid_from_path(const char *pattern, const char *path, char *buf,
    size_t len);

#endif
