/*
 * RFC 3339 times as the API writes them (metav1.Time, MicroTime): the one
 * parser and formatter every module uses (rfc3339.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "rfc3339.h"

static void test_formats_like_the_api(void **state)
{
	(void)state;
	char buf[RFC3339_LEN];
	assert_int_equal(rfc3339_format(0, 6, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "1970-01-01T00:00:00.000000Z");
	/* Go's reference time, 2006-01-02T15:04:05Z = 1136214245, plus 7 µs. */
	assert_int_equal(rfc3339_format((int64_t)1136214245 * 1000000 + 7, 6, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "2006-01-02T15:04:05.000007Z");
	/* The last microsecond of a leap day. */
	assert_int_equal(rfc3339_format((int64_t)1709251199 * 1000000 + 999999, 6, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "2024-02-29T23:59:59.999999Z");
	assert_int_equal(rfc3339_format(-1, 6, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "1969-12-31T23:59:59.999999Z");
	/* Too small a buffer is refused, not truncated. */
	char small[10];
	assert_int_equal(rfc3339_format(0, 6, small, sizeof(small)), -1);
}

static void test_round_trip(void **state)
{
	(void)state;
	const int64_t samples[] = {
		0, 1, 999999, (int64_t)951782400 * 1000000 /* 2000-02-29 */,
		(int64_t)1136214245 * 1000000 + 123456, (int64_t)4102444799 * 1000000 + 500000 /* 2099-12-31 */,
		(int64_t)253402300799 * 1000000 + 999999 /* 9999-12-31T23:59:59.999999 */,
	};
	for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
		char buf[RFC3339_LEN];
		int64_t back = -42;
		assert_int_equal(rfc3339_format(samples[i], 6, buf, sizeof(buf)), 0);
		assert_int_equal(strlen(buf), RFC3339_LEN - 1);
		assert_int_equal(rfc3339_parse(buf, &back), 0);
		assert_int_equal(back, samples[i]);
	}
}

static void test_parse_accepts_rfc3339_and_rejects_junk(void **state)
{
	(void)state;
	int64_t t;
	assert_int_equal(rfc3339_parse("2006-01-02T15:04:05Z", &t), 0);
	assert_int_equal(t, (int64_t)1136214245 * 1000000);
	assert_int_equal(rfc3339_parse("2006-01-02T15:04:05.5Z", &t), 0);
	assert_int_equal(t, (int64_t)1136214245 * 1000000 + 500000);
	assert_int_equal(rfc3339_parse("2006-01-02T15:04:05.123456789Z", &t), 0);
	assert_int_equal(t, (int64_t)1136214245 * 1000000 + 123456);
	/* Any number of fraction digits, as Go reads them; beyond microseconds they are dropped. */
	assert_int_equal(rfc3339_parse("2006-01-02T15:04:05.1234567890123Z", &t), 0);
	assert_int_equal(t, (int64_t)1136214245 * 1000000 + 123456);
	assert_int_equal(rfc3339_parse("2006-01-02t15:04:05z", &t), 0);
	assert_int_equal(t, (int64_t)1136214245 * 1000000);
	assert_int_equal(rfc3339_parse("2006-01-02T08:04:05.000000-07:00", &t), 0);
	assert_int_equal(t, (int64_t)1136214245 * 1000000);

	const char *bad[] = {
		"", "2006-01-02", "2006-01-02T15:04:05", "2006-13-02T15:04:05Z", "2006-02-29T15:04:05Z",
		"2006-01-02T24:00:00Z", "2006-01-02T15:04:05.Z",
		"2006-01-02T15:04:05Zjunk", "2006-1-02T15:04:05Z", "2006-01-02 15:04:05Z", "x006-01-02T15:04:05Z",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (rfc3339_parse(bad[i], &t) != -1)
			fail_msg("accepted \"%s\"", bad[i]);
	assert_int_equal(rfc3339_parse(NULL, &t), -1);
}

static void test_formats_seconds_and_milliseconds(void **state)
{
	(void)state;
	char buf[RFC3339_LEN];
	int64_t t = (int64_t)1136214245 * 1000000 + 123456;
	assert_int_equal(rfc3339_format(t, 0, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "2006-01-02T15:04:05Z");
	assert_int_equal(rfc3339_format(t, 3, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "2006-01-02T15:04:05.123Z");
	/* Before the epoch the fraction still counts forward from the second. */
	assert_int_equal(rfc3339_format(-1000, 3, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "1969-12-31T23:59:59.999Z");
	assert_int_equal(rfc3339_format(t, 7, buf, sizeof(buf)), -1);
	/* Exactly the room "...05Z" needs, and one byte less. */
	assert_int_equal(rfc3339_format(t, 0, buf, 21), 0);
	assert_int_equal(rfc3339_format(t, 0, buf, 20), -1);
	/* Year 10000 does not fit four digits. */
	assert_int_equal(rfc3339_format((int64_t)253402300800 * 1000000, 0, buf, sizeof(buf)), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_formats_like_the_api),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_parse_accepts_rfc3339_and_rejects_junk),
		cmocka_unit_test(test_formats_seconds_and_milliseconds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
