/*
 * Tests of the ring of rows (rowring.h): pushing past the capacity drops
 * the oldest, growing keeps every row in order from position 0, shrinking
 * keeps the newest, widening fills new cells with the spec's byte and keeps
 * the old ones, copying moves a header and its cells, and an empty stride
 * still gives a row's cells an address.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rowring.h"

struct hdr {
	int64_t ts;
	int dev;
};

static const struct rowring_spec spec = {
	.row_bytes = sizeof(struct hdr),
	.cell_bytes = { sizeof(int64_t), 1 },
	.cell_fill = { 0, 0xee },
};

/* Push a row with header ts and cells ts * 10 + j, ts & 0x7f. */
static void
push(struct rowring *r, int64_t ts)
{
	size_t k;

	if (rowring_full(r))
		rowring_drop_oldest(r);
	k = rowring_push(r);
	((struct hdr *)rowring_row(r, k))->ts = ts;
	for (size_t j = 0; j < r->stride; j++) {
		((int64_t *)rowring_cells(r, 0, k))[j] = ts * 10 + (int64_t)j;
		((unsigned char *)rowring_cells(r, 1, k))[j] =
		    (unsigned char)(ts & 0x7f);
	}
}

static int64_t
ts_of(const struct rowring *r, size_t i)
{
	return ((const struct hdr *)rowring_row(r, rowring_at(r, i)))->ts;
}

static void
test_push_wraps(void **state)
{
	struct rowring r;

	(void)state;
	rowring_init(&r, &spec, 3);
	assert_int_equal(rowring_resize(&r, 4, 3), 0);
	for (int64_t t = 1; t <= 10; t++)
		push(&r, t);
	assert_int_equal(r.n, 4);
	for (size_t i = 0; i < 4; i++) {
		size_t k = rowring_at(&r, i);

		assert_int_equal(ts_of(&r, i), 7 + (int64_t)i);
		assert_int_equal(((int64_t *)rowring_cells(&r, 0, k))[2],
		    (7 + (int64_t)i) * 10 + 2);
	}
	rowring_free(&r);
	assert_int_equal(r.cap, 0);
}

static void
test_grow_and_widen(void **state)
{
	struct rowring r;

	(void)state;
	rowring_init(&r, &spec, 2);
	assert_int_equal(rowring_resize(&r, 3, 2), 0);
	for (int64_t t = 1; t <= 5; t++)	/* wraps: 3, 4, 5 from head 2 */
		push(&r, t);
	assert_int_equal(rowring_resize(&r, 8, 4), 0);
	assert_int_equal(r.head, 0);
	assert_int_equal(r.n, 3);
	for (size_t i = 0; i < 3; i++) {
		const int64_t *v = rowring_cells(&r, 0, i);
		const unsigned char *b = rowring_cells(&r, 1, i);

		assert_int_equal(ts_of(&r, i), 3 + (int64_t)i);
		assert_int_equal(v[0], (3 + (int64_t)i) * 10);
		assert_int_equal(v[1], (3 + (int64_t)i) * 10 + 1);
		assert_int_equal(v[2], 0);		/* new cells: the fill */
		assert_int_equal(b[1], 3 + i);
		assert_int_equal(b[3], 0xee);
	}
	rowring_free(&r);
}

static void
test_shrink_keeps_newest(void **state)
{
	struct rowring r;

	(void)state;
	rowring_init(&r, &spec, 1);
	assert_int_equal(rowring_resize(&r, 6, 1), 0);
	for (int64_t t = 1; t <= 6; t++)
		push(&r, t);
	assert_int_equal(rowring_resize(&r, 2, 1), 0);
	assert_int_equal(r.n, 2);
	assert_int_equal(ts_of(&r, 0), 5);
	assert_int_equal(ts_of(&r, 1), 6);
	assert_int_equal(rowring_resize(&r, 0, 1), 0);	/* no ring at all */
	assert_int_equal(r.n, 0);
	assert_null(r.rows);
	rowring_free(&r);
}

static void
test_copy_and_clear(void **state)
{
	struct rowring r;

	(void)state;
	rowring_init(&r, &spec, 2);
	assert_int_equal(rowring_resize(&r, 4, 2), 0);
	for (int64_t t = 1; t <= 3; t++)
		push(&r, t);
	rowring_copy(&r, rowring_at(&r, 0), rowring_at(&r, 2), 2);
	assert_int_equal(ts_of(&r, 0), 3);
	assert_int_equal(((int64_t *)rowring_cells(&r, 0, rowring_at(&r, 0)))[1],
	    31);
	rowring_clear(&r);
	assert_int_equal(r.n, 0);
	assert_int_equal(r.cap, 4);
	rowring_free(&r);
}

static void
test_zero_stride(void **state)
{
	struct rowring r;
	size_t k;

	(void)state;
	rowring_init(&r, &spec, 0);
	assert_int_equal(rowring_resize(&r, 2, 0), 0);
	k = rowring_push(&r);
	assert_non_null(rowring_cells(&r, 0, k));
	assert_non_null(rowring_cells(&r, 1, k));
	rowring_free(&r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_push_wraps),
		cmocka_unit_test(test_grow_and_widen),
		cmocka_unit_test(test_shrink_keeps_newest),
		cmocka_unit_test(test_copy_and_clear),
		cmocka_unit_test(test_zero_stride),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
