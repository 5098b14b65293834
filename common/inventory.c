/*
 * inventory: Spyre functions found under <sysfs_root>/bus/pci/devices.
 *
 * Every attribute is read relative to the devices directory with the *at()
 * calls, which follow the per-device symlinks of real sysfs and work as
 * well on the plain directories of a test tree.
 */
#include "inventory.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PCI_VENDOR_IBM		0x1014
#define PCI_DEVICE_SPYRE_PF	0x06a7
#define PCI_DEVICE_SPYRE_VF	0x06a8

#define ATTR_MAX		128	/* longest attribute value read */

/*
 * Read <dev>/<attr> into buf (NUL-terminated, trailing whitespace removed);
 * -1 if it cannot be read or is empty.
 */
static int
read_attr(int dirfd, const char *dev, const char *attr, char *buf,
    size_t len)
{
	char path[INV_BUSID_MAX + 64];
	ssize_t n;
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dev, attr) >=
	    sizeof(path))
		return -1;
	if ((fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	do
		n = read(fd, buf, len - 1);
	while (n == -1 && errno == EINTR);
	close(fd);
	if (n <= 0)
		return -1;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' ' ||
	    buf[n - 1] == '\t'))
		n--;
	buf[n] = '\0';
	return n > 0 ? 0 : -1;
}

/* A numeric attribute in base; -1 if it is absent or not a number. */
static int
read_long(int dirfd, const char *dev, const char *attr, int base, long *out)
{
	char buf[ATTR_MAX], *end;
	long v;

	if (read_attr(dirfd, dev, attr, buf, sizeof(buf)) == -1)
		return -1;
	errno = 0;
	v = strtol(buf, &end, base);
	if (errno != 0 || end == buf || *end != '\0')
		return -1;
	*out = v;
	return 0;
}

static void
read_driver(int dirfd, const char *dev, char *buf, size_t len)
{
	char path[INV_BUSID_MAX + 16], target[PATH_MAX];
	const char *base;
	ssize_t n;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "%s/driver", dev);
	if ((n = readlinkat(dirfd, path, target, sizeof(target) - 1)) <= 0)
		return;
	target[n] = '\0';
	base = strrchr(target, '/');
	base = base != NULL ? base + 1 : target;
	if (strlen(base) < len)
		memcpy(buf, base, strlen(base) + 1);
}

/*
 * Fill card from device dev if it is a Spyre function; 0 if it is, -1 if
 * it is some other device or its IDs cannot be read.
 */
static int
read_card(int dirfd, const char *dev, struct card *card)
{
	long vendor, device, v;
	char speed[ATTR_MAX];

	if (read_long(dirfd, dev, "vendor", 16, &vendor) == -1 ||
	    read_long(dirfd, dev, "device", 16, &device) == -1)
		return -1;
	if (vendor != PCI_VENDOR_IBM || (device != PCI_DEVICE_SPYRE_PF &&
	    device != PCI_DEVICE_SPYRE_VF))
		return -1;
	memset(card, 0, sizeof(*card));
	memcpy(card->bus_id, dev, strlen(dev) + 1);
	card->vf = device == PCI_DEVICE_SPYRE_VF;
	card->numa_node = -1;
	if (read_long(dirfd, dev, "numa_node", 10, &v) == 0 && v >= -1 &&
	    v <= INT_MAX)
		card->numa_node = (int)v;
	read_driver(dirfd, dev, card->driver, sizeof(card->driver));
	if (read_attr(dirfd, dev, "current_link_speed", speed,
	    sizeof(speed)) == 0 && strlen(speed) < sizeof(card->link_speed))
		memcpy(card->link_speed, speed, strlen(speed) + 1);
	if (read_long(dirfd, dev, "current_link_width", 10, &v) == 0 &&
	    v > 0 && v <= INT_MAX)
		card->link_width = (int)v;
	return 0;
}

static int
compare_bus_id(const void *a, const void *b)
{
	const struct card *ca = a, *cb = b;

	return strcmp(ca->bus_id, cb->bus_id);
}

/* Append one slot to *cards, growing it as needed; NULL if out of memory. */
static struct card *
next_slot(struct card **cards, size_t *n, size_t *cap)
{
	if (*n == *cap) {
		size_t ncap = *cap != 0 ? *cap * 2 : 8;
		struct card *p = reallocarray(*cards, ncap, sizeof(*p));

		if (p == NULL)
			return NULL;
		*cards = p;
		*cap = ncap;
	}
	return &(*cards)[*n];
}

int
inventory_scan(const char *sysfs_root, struct card **out, size_t *n)
{
	struct card *cards = NULL, *slot;
	size_t ncards = 0, cap = 0;
	struct dirent *de;
	char path[PATH_MAX];
	DIR *dir;
	int saved;

	if ((size_t)snprintf(path, sizeof(path), "%s/bus/pci/devices",
	    sysfs_root) >= sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((dir = opendir(path)) == NULL)
		return -1;
	for (;;) {
		errno = 0;
		if ((de = readdir(dir)) == NULL)
			break;
		if (de->d_name[0] == '.' || strlen(de->d_name) >= INV_BUSID_MAX)
			continue;
		if ((slot = next_slot(&cards, &ncards, &cap)) == NULL)
			goto fail;
		if (read_card(dirfd(dir), de->d_name, slot) == 0)
			ncards++;
	}
	if (errno != 0)
		goto fail;
	closedir(dir);
	if (ncards == 0) {
		free(cards);
		cards = NULL;
	} else
		qsort(cards, ncards, sizeof(*cards), compare_bus_id);
	*out = cards;
	*n = ncards;
	return 0;
fail:
	saved = errno;
	closedir(dir);
	free(cards);
	errno = saved;
	return -1;
}

int
inventory_metric_path(const char *pattern, const char *bus_id, char *buf,
    size_t len)
{
	static const char token[] = "%BUSID";
	const size_t toklen = sizeof(token) - 1, idlen = strlen(bus_id);
	const char *s = pattern, *t;
	size_t used = 0;

	if (len == 0)
		return -1;
	buf[0] = '\0';
	for (;;) {
		size_t lit;

		t = strstr(s, token);
		lit = t != NULL ? (size_t)(t - s) : strlen(s);
		if (lit >= len - used)
			goto toolong;
		memcpy(buf + used, s, lit);
		used += lit;
		if (t == NULL)
			break;
		if (idlen >= len - used)
			goto toolong;
		memcpy(buf + used, bus_id, idlen);
		used += idlen;
		s = t + toklen;
	}
	buf[used] = '\0';
	return 0;
toolong:
	buf[0] = '\0';
	return -1;
}

int
inventory_busid_from_path(const char *pattern, const char *path, char *buf,
    size_t len)
{
	static const char token[] = "%BUSID";
	const size_t toklen = sizeof(token) - 1;
	const char *t = strstr(pattern, token);
	size_t plen = strlen(path), prefix, suffix, idlen;

	if (t == NULL || strstr(t + toklen, token) != NULL)
		return -1;
	prefix = (size_t)(t - pattern);
	suffix = strlen(t + toklen);
	if (plen <= prefix + suffix)
		return -1;
	idlen = plen - prefix - suffix;
	if (idlen >= INV_BUSID_MAX || idlen >= len ||
	    memcmp(path, pattern, prefix) != 0 ||
	    memcmp(path + prefix + idlen, t + toklen, suffix) != 0 ||
	    memchr(path + prefix, '/', idlen) != NULL)
		return -1;
	memcpy(buf, path + prefix, idlen);
	buf[idlen] = '\0';
	return 0;
}
