/*
 * Tests of a PCIe link's capacity (pcielink.h) from the strings sysfs
 * writes in current_link_speed, Gen1 to Gen5, and of the ones that give
 * none: unknown, absent, another rate, no width.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include "pcielink.h"

/* The capacity of speed x width, which must be known. */
static double
cap(const char *speed, int width)
{
	double g = -1;

	assert_true(pcie_link_gbps(speed, width, &g));
	return g;
}

static void
test_generations(void **state)
{
	(void)state;
	/* 8b/10b: 2.5 GT/s carries 0.25 GB/s a lane, 5 GT/s 0.5 */
	assert_true(cap("2.5 GT/s PCIe", 1) == 0.25);
	assert_true(cap("5.0 GT/s PCIe", 4) == 2.0);
	/* 128b/130b: 8 GT/s x16 is 8 * 16 * 128 / 130 / 8 GB/s */
	assert_float_equal(cap("8.0 GT/s PCIe", 16), 15.753846153846, 1e-9);
	assert_float_equal(cap("16.0 GT/s PCIe", 16), 31.507692307692, 1e-9);
	assert_float_equal(cap("16.0 GT/s PCIe", 8), 15.753846153846, 1e-9);
	assert_float_equal(cap("32.0 GT/s PCIe", 16), 63.015384615385, 1e-9);
	assert_float_equal(cap("8.0 GT/s PCIe", 4), 3.938461538462, 1e-9);
	/* older kernels: no decimal, no "PCIe" */
	assert_true(cap("2.5 GT/s", 2) == 0.5);
	assert_true(cap("5 GT/s", 1) == 0.5);
	assert_float_equal(cap("16 GT/s", 16), 31.507692307692, 1e-9);
}

static void
test_unknown(void **state)
{
	double g = 42;

	(void)state;
	assert_false(pcie_link_gbps(NULL, 16, &g));
	assert_false(pcie_link_gbps("", 16, &g));
	assert_false(pcie_link_gbps("Unknown", 16, &g));
	assert_false(pcie_link_gbps("Unknown speed", 16, &g));
	assert_false(pcie_link_gbps("16.0 GT/s PCIe", 0, &g));
	assert_false(pcie_link_gbps("16.0 GT/s PCIe", -1, &g));
	/* Gen6's flit mode is another encoding: not modelled */
	assert_false(pcie_link_gbps("64.0 GT/s PCIe", 16, &g));
	assert_false(pcie_link_gbps("2.7 GT/s PCIe", 1, &g));
	assert_false(pcie_link_gbps("16.0 Gb/s", 16, &g));
	assert_false(pcie_link_gbps("16.0", 16, &g));
	assert_true(g == 42);
}

static void
test_pct(void **state)
{
	(void)state;
	/* 1 GiB/s of a 1.073741824 GB/s link is all of it */
	assert_float_equal(pcie_link_pct(1, 1.073741824), 100, 1e-9);
	assert_float_equal(pcie_link_pct(0.5, 1.073741824), 50, 1e-9);
	assert_float_equal(pcie_link_pct(0, 31.5), 0, 0);
	assert_float_equal(pcie_link_pct(1, 0), 0, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_generations),
		cmocka_unit_test(test_unknown),
		cmocka_unit_test(test_pct),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
