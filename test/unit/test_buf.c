/*
 * The growable buffer (buf.h): bytes grow up to the cap set at creation, and
 * the append that would pass it is refused, as are all after it, so a
 * response or exposition is never silently cut short.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "buf.h"

static void test_appends_grow_and_stay_terminated(void **state)
{
	(void)state;
	buf_t b;
	buf_init(&b, 1 << 20);
	assert_int_equal(buf_append(&b, "", 0), 0);
	assert_string_equal(b.data, "");
	char chunk[1000];
	memset(chunk, 'x', sizeof(chunk));
	for (int i = 0; i < 10; i++) /* past the first allocation */
		assert_int_equal(buf_append(&b, chunk, sizeof(chunk)), 0);
	assert_int_equal(buf_puts(&b, "end"), 0);
	assert_int_equal(b.len, 10003);
	assert_int_equal(strlen(b.data), 10003);
	assert_string_equal(b.data + 10000, "end");
	buf_free(&b);
	assert_null(b.data);
}

static void test_cap_refuses_and_stays_refused_until_cleared(void **state)
{
	(void)state;
	buf_t b;
	buf_init(&b, 8);
	assert_int_equal(buf_puts(&b, "12345"), 0);
	assert_int_equal(buf_puts(&b, "678"), 0); /* exactly the cap */
	assert_int_equal(buf_puts(&b, "9"), -1);
	assert_true(b.full);
	assert_string_equal(b.data, "12345678");
	assert_int_equal(buf_append(&b, "", 0), -1); /* sticky: nothing more goes in */
	buf_clear(&b);
	assert_false(b.full);
	assert_int_equal(b.len, 0);
	assert_string_equal(b.data, "");
	assert_int_equal(buf_puts(&b, "again"), 0);
	assert_string_equal(b.data, "again");
	buf_free(&b);
}

static void test_first_append_over_the_cap_leaves_no_data(void **state)
{
	(void)state;
	buf_t b;
	buf_init(&b, 2);
	assert_int_equal(buf_puts(&b, "abc"), -1);
	assert_null(b.data);
	assert_int_equal(b.len, 0);
	buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_appends_grow_and_stay_terminated),
		cmocka_unit_test(test_cap_refuses_and_stays_refused_until_cleared),
		cmocka_unit_test(test_first_append_over_the_cap_leaves_no_data),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
