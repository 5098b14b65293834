/*
 * Tests of what a report reads back of a run (client/report/runmeta.h)
 * and the digest it checks the reproducer with (client/sha256.h): SHA-256
 * against the test vectors of FIPS 180-4's examples (and sha256sum's
 * answer for a million 'a's, fed in uneven pieces), and the expectations
 * a user states, taken and refused.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "runmeta.h"
#include "sha256.h"

static void
digest_is(const char *msg, const char *want)
{
	struct sha256 s;
	char hex[SHA256_HEXLEN];

	sha256_init(&s);
	sha256_update(&s, msg, strlen(msg));
	sha256_hex(&s, hex);
	assert_string_equal(hex, want);
}

static void
test_sha256_vectors(void **state)
{
	(void)state;
	digest_is("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	digest_is("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	/* 56 bytes: the padding takes a second block */
	digest_is("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
	    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	digest_is("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
	    "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
	    "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

static void
test_sha256_pieces(void **state)
{
	struct sha256 s;
	char buf[1000], hex[SHA256_HEXLEN];
	size_t done = 0, piece = 1;

	(void)state;
	memset(buf, 'a', sizeof(buf));
	sha256_init(&s);
	while (done < 1000000) {
		size_t n = piece < 1000000 - done ? piece : 1000000 - done;

		sha256_update(&s, buf, n);
		done += n;
		piece = piece % 997 + 1;
	}
	sha256_hex(&s, hex);
	assert_string_equal(hex,
	    "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

static void
test_expect_taken(void **state)
{
	struct expect e;
	char err[256];

	(void)state;
	assert_int_equal(expect_parse(" step_ms <= 120 ", &e, err, sizeof(err)), 0);
	assert_int_equal(e.metric, EXPECT_STEP_MS);
	assert_int_equal(e.op, EXPECT_LE);
	assert_string_equal(e.text, "step_ms<=120");
	assert_true(expect_met(&e, 120));
	assert_false(expect_met(&e, 120.001));
	assert_int_equal(expect_parse("energy_j>1.5e3", &e, err, sizeof(err)), 0);
	assert_int_equal(e.metric, EXPECT_ENERGY_J);
	assert_int_equal(e.op, EXPECT_GT);
	assert_false(expect_met(&e, 1500));
	assert_true(expect_met(&e, 1500.5));
	assert_int_equal(expect_parse("step_j<2", &e, err, sizeof(err)), 0);
	assert_int_equal(e.op, EXPECT_LT);
	assert_string_equal(expect_metric_unit(e.metric), "J");
	assert_int_equal(expect_parse("step_ms>=0", &e, err, sizeof(err)), 0);
	assert_true(expect_met(&e, 0));
}

static void
refused(const char *s, const char *why)
{
	struct expect e;
	char err[256] = "";

	if (expect_parse(s, &e, err, sizeof(err)) != -1)
		fail_msg("'%s' was taken", s);
	if (strstr(err, why) == NULL)
		fail_msg("'%s': \"%s\" does not say \"%s\"", s, err, why);
}

static void
test_expect_refused(void **state)
{
	(void)state;
	refused("", "is not one of step_ms");
	refused("speed<3", "the metric 'speed' is not one of");
	refused("step_msx<3", "the metric 'step_msx'");
	refused("step_ms=3", "after step_ms comes one of <=, <, >=, >");
	refused("step_ms<", "'' is not a number");
	refused("step_ms<12ms", "'12ms' is not a number");
	refused("step_ms<nan", "is not a number");
	refused("step_ms<1e999", "is not a number");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sha256_vectors),
		cmocka_unit_test(test_sha256_pieces),
		cmocka_unit_test(test_expect_taken),
		cmocka_unit_test(test_expect_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
