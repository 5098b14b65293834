/* Tests of inventory: a fake sysfs tree, and metric file names. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "inventory.h"

/* ---- a fake sysfs ---- */

static void
make_dir(const char *root, const char *rel)
{
	char path[PATH_MAX], *p;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (p = path + strlen(root) + 1; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		if (mkdir(path, 0755) == -1 && errno != EEXIST)
			fail_msg("mkdir %s: %s", path, strerror(errno));
		*p = '/';
	}
	if (mkdir(path, 0755) == -1 && errno != EEXIST)
		fail_msg("mkdir %s: %s", path, strerror(errno));
}

static void
write_file(const char *root, const char *dir, const char *name,
    const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/%s", root, dir, name);
	if ((f = fopen(path, "w")) == NULL)
		fail_msg("fopen %s: %s", path, strerror(errno));
	fputs(text, f);
	fclose(f);
}

static void
make_link(const char *root, const char *target, const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	if (symlink(target, path) == -1)
		fail_msg("symlink %s: %s", path, strerror(errno));
}

#define DEVS	"bus/pci/devices"

/*
 * Add a PCI function: as a directory under devices/ (plain), or, as real
 * sysfs has it, under devices/pci0000:00/ with a symlink in bus/pci/devices.
 */
static void
add_device(const char *root, const char *busid, bool linked,
    const char *vendor, const char *device)
{
	char dir[PATH_MAX], target[PATH_MAX];

	if (linked) {
		snprintf(dir, sizeof(dir), "devices/pci0000:00/%s", busid);
		snprintf(target, sizeof(target),
		    "../../../devices/pci0000:00/%s", busid);
		make_dir(root, dir);
		make_dir(root, DEVS);
		snprintf(dir, sizeof(dir), "%s/%s", DEVS, busid);
		make_link(root, target, dir);
	} else {
		snprintf(dir, sizeof(dir), "%s/%s", DEVS, busid);
		make_dir(root, dir);
	}
	if (vendor != NULL)
		write_file(root, dir, "vendor", vendor);
	if (device != NULL)
		write_file(root, dir, "device", device);
}

static void
add_attr(const char *root, const char *busid, const char *name,
    const char *text)
{
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s/%s", DEVS, busid);
	write_file(root, dir, name, text);
}

static void
bind_driver(const char *root, const char *busid, const char *driver)
{
	char dir[PATH_MAX], target[PATH_MAX], link[PATH_MAX];

	snprintf(dir, sizeof(dir), "bus/pci/drivers/%s", driver);
	make_dir(root, dir);
	/* the kernel's link is relative; only its last component matters */
	snprintf(target, sizeof(target), "../../../../bus/pci/drivers/%s",
	    driver);
	snprintf(link, sizeof(link), "%s/%s/driver", DEVS, busid);
	make_link(root, target, link);
}

static int
remove_entry(const char *path, const struct stat *sb, int flag,
    struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int
setup(void **state)
{
	char *root = strdup("/tmp/spyremon-inv-XXXXXX");

	if (root == NULL || mkdtemp(root) == NULL)
		return -1;
	*state = root;
	return 0;
}

static int
teardown(void **state)
{
	char *root = *state;
	int rc = nftw(root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);

	free(root);
	return rc;
}

/* ---- scanning ---- */

static void
test_scan_cards(void **state)
{
	const char *root = *state;
	struct card *cards = NULL;
	size_t n = 0;

	/* a PF, real-sysfs style, bound to its driver */
	add_device(root, "0000:13:00.0", true, "0x1014\n", "0x06a7\n");
	add_attr(root, "0000:13:00.0", "numa_node", "0\n");
	add_attr(root, "0000:13:00.0", "current_link_speed", "16.0 GT/s PCIe\n");
	add_attr(root, "0000:13:00.0", "current_link_width", "16\n");
	bind_driver(root, "0000:13:00.0", "aiu");
	/* a VF bound to vfio-pci, as a plain directory */
	add_device(root, "0000:12:00.1", false, "0x1014\n", "0x06a8\n");
	add_attr(root, "0000:12:00.1", "numa_node", "1\n");
	add_attr(root, "0000:12:00.1", "current_link_speed", "Unknown\n");
	add_attr(root, "0000:12:00.1", "current_link_width", "0\n");
	bind_driver(root, "0000:12:00.1", "vfio-pci");
	/* a PF without numa_node, link attributes or driver */
	add_device(root, "0000:a0:00.0", true, "0x1014\n", "0x06a7\n");
	/* a PF whose numa_node says unknown */
	add_device(root, "0001:00:00.0", false, "0x1014", "0x06a7");
	add_attr(root, "0001:00:00.0", "numa_node", "-1\n");
	/* not Spyre: another vendor with the same device ID, another IBM device */
	add_device(root, "0000:00:1f.0", true, "0x8086\n", "0x06a7\n");
	bind_driver(root, "0000:00:1f.0", "lpc_ich");
	add_device(root, "0000:14:00.0", false, "0x1014\n", "0x04ed\n");
	/* not readable as a device: no vendor, garbage vendor */
	add_device(root, "0000:15:00.0", false, NULL, "0x06a7\n");
	add_device(root, "0000:16:00.0", false, "IBM\n", "0x06a7\n");

	assert_int_equal(inventory_scan(root, &cards, &n), 0);
	assert_int_equal(n, 4);
	assert_non_null(cards);

	assert_string_equal(cards[0].bus_id, "0000:12:00.1");
	assert_true(cards[0].vf);
	assert_int_equal(cards[0].numa_node, 1);
	assert_string_equal(cards[0].driver, "vfio-pci");
	assert_string_equal(cards[0].link_speed, "Unknown");
	assert_int_equal(cards[0].link_width, 0);

	assert_string_equal(cards[1].bus_id, "0000:13:00.0");
	assert_false(cards[1].vf);
	assert_int_equal(cards[1].numa_node, 0);
	assert_string_equal(cards[1].driver, "aiu");
	assert_string_equal(cards[1].link_speed, "16.0 GT/s PCIe");
	assert_int_equal(cards[1].link_width, 16);

	assert_string_equal(cards[2].bus_id, "0000:a0:00.0");
	assert_false(cards[2].vf);
	assert_int_equal(cards[2].numa_node, -1);
	assert_string_equal(cards[2].driver, "");
	assert_string_equal(cards[2].link_speed, "");
	assert_int_equal(cards[2].link_width, 0);

	assert_string_equal(cards[3].bus_id, "0001:00:00.0");
	assert_int_equal(cards[3].numa_node, -1);
	free(cards);
}

static void
test_scan_empty(void **state)
{
	const char *root = *state;
	static struct card dummy;
	struct card *cards = &dummy;
	size_t n = 99;

	make_dir(root, DEVS);
	assert_int_equal(inventory_scan(root, &cards, &n), 0);
	assert_int_equal(n, 0);
	assert_null(cards);

	/* only other devices: still none */
	add_device(root, "0000:00:00.0", false, "0x8086\n", "0x1237\n");
	n = 99;
	assert_int_equal(inventory_scan(root, &cards, &n), 0);
	assert_int_equal(n, 0);
	assert_null(cards);
}

static void
test_scan_missing_root(void **state)
{
	const char *root = *state;
	char path[PATH_MAX];
	struct card *cards = NULL;
	size_t n = 0;

	snprintf(path, sizeof(path), "%s/nonexistent", root);
	errno = 0;
	assert_int_equal(inventory_scan(path, &cards, &n), -1);
	assert_int_equal(errno, ENOENT);
	/* a root without bus/pci/devices is just as missing */
	errno = 0;
	assert_int_equal(inventory_scan(root, &cards, &n), -1);
	assert_int_equal(errno, ENOENT);
}

/* Many cards: the array grows and comes back sorted. */
static void
test_scan_many_sorted(void **state)
{
	const char *root = *state;
	struct card *cards = NULL;
	size_t n = 0;
	char busid[INV_BUSID_MAX];

	for (int i = 40; i > 0; i--) {
		snprintf(busid, sizeof(busid), "0000:%02x:00.0", i * 3 % 41);
		add_device(root, busid, i % 2 == 0, "0x1014\n",
		    i % 3 == 0 ? "0x06a8\n" : "0x06a7\n");
	}
	assert_int_equal(inventory_scan(root, &cards, &n), 0);
	assert_int_equal(n, 40);
	for (size_t i = 0; i < n; i++) {
		/* i*3 % 41 for i = 1..40 is a permutation of 1..40 */
		snprintf(busid, sizeof(busid), "0000:%02zx:00.0", i + 1);
		assert_string_equal(cards[i].bus_id, busid);
	}
	free(cards);
}

/* ---- metric file names ---- */

static void
test_metric_path(void **state)
{
	char buf[64];

	(void)state;
	assert_int_equal(inventory_metric_path("/tmp/metrics.%BUSID",
	    "0000:13:00.0", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/tmp/metrics.0000:13:00.0");
	assert_int_equal(inventory_metric_path("/m/%BUSID/%BUSID.bin",
	    "0000:13:00.0", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/m/0000:13:00.0/0000:13:00.0.bin");
	assert_int_equal(inventory_metric_path("%BUSID", "x", buf,
	    sizeof(buf)), 0);
	assert_string_equal(buf, "x");
	assert_int_equal(inventory_metric_path("/tmp/fixed", "x", buf,
	    sizeof(buf)), 0);
	assert_string_equal(buf, "/tmp/fixed");
	assert_int_equal(inventory_metric_path("", "x", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	/* a lone % or a partial token is literal */
	assert_int_equal(inventory_metric_path("/a%BUS/%%BUSID", "x", buf,
	    sizeof(buf)), 0);
	assert_string_equal(buf, "/a%BUS/%x");
}

static void
test_metric_path_fit(void **state)
{
	char buf[32];

	(void)state;
	/* "/t/0000:13:00.0" is 15 bytes: it needs 16 */
	assert_int_equal(inventory_metric_path("/t/%BUSID", "0000:13:00.0",
	    buf, 16), 0);
	assert_string_equal(buf, "/t/0000:13:00.0");
	assert_int_equal(inventory_metric_path("/t/%BUSID", "0000:13:00.0",
	    buf, 15), -1);
	assert_int_equal(inventory_metric_path("/t/%BUSID.b", "0000:13:00.0",
	    buf, 17), -1);
	assert_int_equal(inventory_metric_path("/t/%BUSID.b", "0000:13:00.0",
	    buf, 18), 0);
	assert_string_equal(buf, "/t/0000:13:00.0.b");
	assert_int_equal(inventory_metric_path("/tmp/", "x", buf, 5), -1);
	assert_int_equal(inventory_metric_path("", "x", buf, 0), -1);
}

static void
test_busid_from_path(void **state)
{
	char buf[INV_BUSID_MAX];

	(void)state;
	assert_int_equal(inventory_busid_from_path("/tmp/metrics.%BUSID",
	    "/tmp/metrics.0000:13:00.0", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "0000:13:00.0");
	assert_int_equal(inventory_busid_from_path("/run/%BUSID.bin",
	    "/run/0000:13:00.0.bin", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "0000:13:00.0");
	assert_int_equal(inventory_busid_from_path("%BUSID", "abc", buf,
	    sizeof(buf)), 0);
	assert_string_equal(buf, "abc");

	/* not matching the pattern */
	assert_int_equal(inventory_busid_from_path("/tmp/metrics.%BUSID",
	    "/var/metrics.0000:13:00.0", buf, sizeof(buf)), -1);
	assert_int_equal(inventory_busid_from_path("/run/%BUSID.bin",
	    "/run/0000:13:00.0.dat", buf, sizeof(buf)), -1);
	assert_int_equal(inventory_busid_from_path("/tmp/metrics.%BUSID",
	    "/tmp/metrics.", buf, sizeof(buf)), -1);
	assert_int_equal(inventory_busid_from_path("/x%BUSIDx", "/xx", buf,
	    sizeof(buf)), -1);
	assert_int_equal(inventory_busid_from_path("/tmp/metrics.%BUSID",
	    "/tmp/metrics.a/b", buf, sizeof(buf)), -1);
	/* patterns without exactly one %BUSID have no inverse */
	assert_int_equal(inventory_busid_from_path("/tmp/fixed", "/tmp/fixed",
	    buf, sizeof(buf)), -1);
	assert_int_equal(inventory_busid_from_path("/%BUSID/%BUSID", "/a/a",
	    buf, sizeof(buf)), -1);
	assert_int_equal(inventory_busid_from_path("/%BUSID/%BUSID",
	    "/a/%BUSID", buf, sizeof(buf)), -1);
}

static void
test_busid_length(void **state)
{
	char buf[INV_BUSID_MAX], path[128], path2[128], small[8];
	const char *id31 = "0123456789012345678901234567890";

	(void)state;
	assert_int_equal(strlen(id31), INV_BUSID_MAX - 1);
	snprintf(path, sizeof(path), "/m.%s", id31);
	assert_int_equal(inventory_busid_from_path("/m.%BUSID", path, buf,
	    sizeof(buf)), 0);
	assert_string_equal(buf, id31);
	snprintf(path, sizeof(path), "/m.%sX", id31);
	assert_int_equal(inventory_busid_from_path("/m.%BUSID", path, buf,
	    sizeof(buf)), -1);
	/* however big the caller's buffer */
	assert_int_equal(inventory_busid_from_path("/m.%BUSID", path, path2,
	    sizeof(path2)), -1);
	/* the caller's buffer bounds it too */
	assert_int_equal(inventory_busid_from_path("/m.%BUSID",
	    "/m.0000:13:00.0", small, sizeof(small)), -1);
	assert_int_equal(inventory_busid_from_path("/m.%BUSID", "/m.1234567",
	    small, sizeof(small)), 0);
	assert_string_equal(small, "1234567");
}

static void
test_round_trip(void **state)
{
	static const char *const patterns[] = { "/tmp/metrics.%BUSID",
	    "/run/spyre/%BUSID/metrics", "%BUSID.m" };
	char path[128], back[INV_BUSID_MAX];

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(inventory_metric_path(patterns[i],
		    "0000:13:00.0", path, sizeof(path)), 0);
		assert_int_equal(inventory_busid_from_path(patterns[i], path,
		    back, sizeof(back)), 0);
		assert_string_equal(back, "0000:13:00.0");
	}
}

#define TEST_FIXTURE(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		TEST_FIXTURE(test_scan_cards),
		TEST_FIXTURE(test_scan_empty),
		TEST_FIXTURE(test_scan_missing_root),
		TEST_FIXTURE(test_scan_many_sorted),
		cmocka_unit_test(test_metric_path),
		cmocka_unit_test(test_metric_path_fit),
		cmocka_unit_test(test_busid_from_path),
		cmocka_unit_test(test_busid_length),
		cmocka_unit_test(test_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
