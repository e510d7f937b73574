/* The store behind every cache: what goes in comes out, through any churn. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strmap.h"

static void test_put_get_replace_remove(void **state)
{
	(void)state;
	strmap_t m = STRMAP_INIT;
	int a = 1, b = 2;
	assert_null(strmap_get(&m, "ns/pod"));
	assert_null(strmap_put(&m, "ns/pod", &a));
	assert_ptr_equal(strmap_get(&m, "ns/pod"), &a);
	assert_ptr_equal(strmap_put(&m, "ns/pod", &b), &a);
	assert_int_equal(strmap_size(&m), 1);
	assert_ptr_equal(strmap_remove(&m, "ns/pod"), &b);
	assert_null(strmap_remove(&m, "ns/pod"));
	assert_null(strmap_get(&m, "ns/pod"));
	assert_int_equal(strmap_size(&m), 0);
	strmap_clear(&m, NULL);
}

/*
 * Random churn against a plain array as the reference: deletion shifts
 * entries back, so every lookup after a removal in a long probe run is the
 * case that breaks a wrong implementation.
 */
static void test_churn_matches_reference(void **state)
{
	(void)state;
	enum { KEYS = 3000, OPS = 200000 };
	static int present[KEYS];
	static intptr_t values[KEYS];
	memset(present, 0, sizeof(present));
	strmap_t m = STRMAP_INIT;
	srand(7);
	size_t expected = 0;
	for (int op = 0; op < OPS; op++) {
		int k = rand() % KEYS;
		char key[32];
		snprintf(key, sizeof(key), "team-%d/pod-%d", k % 17, k);
		if (rand() % 3 == 0) {
			void *v = strmap_remove(&m, key);
			if (present[k]) {
				assert_int_equal((intptr_t)v, values[k]);
				present[k] = 0;
				expected--;
			} else {
				assert_null(v);
			}
		} else {
			values[k] = op + 1;
			void *old = strmap_put(&m, key, (void *)values[k]);
			if (!present[k])
				expected++;
			else
				assert_non_null(old);
			present[k] = 1;
		}
		assert_int_equal(strmap_size(&m), expected);
	}
	for (int k = 0; k < KEYS; k++) {
		char key[32];
		snprintf(key, sizeof(key), "team-%d/pod-%d", k % 17, k);
		void *v = strmap_get(&m, key);
		if (present[k])
			assert_int_equal((intptr_t)v, values[k]);
		else
			assert_null(v);
	}
	size_t it = 0, seen = 0;
	const char *key;
	while (strmap_next(&m, &it, &key, NULL))
		seen++;
	assert_int_equal(seen, expected);
	strmap_clear(&m, NULL);
}

static void free_counted(void *v)
{
	(*(int *)v)++;
}

static void test_clear_frees_every_value(void **state)
{
	(void)state;
	strmap_t m = STRMAP_INIT;
	int freed = 0;
	char key[16];
	for (int i = 0; i < 100; i++) {
		snprintf(key, sizeof(key), "n%d", i);
		strmap_put(&m, key, &freed);
	}
	strmap_clear(&m, free_counted);
	assert_int_equal(freed, 100);
	assert_int_equal(strmap_size(&m), 0);
}

/*
 * A pool of shared strings: one copy per distinct string, handed out to every
 * user, freed with the last reference (ASan and valgrind see a stale copy).
 */
static void test_intern_counts_references(void **state)
{
	(void)state;
	strmap_t pool = STRMAP_INIT;
	char name[16];
	const char *first[50];
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 50; i++) {
			snprintf(name, sizeof(name), "ns-%d", i);
			const char *s = strmap_intern(&pool, name);
			assert_string_equal(s, name);
			assert_ptr_not_equal(s, name);
			if (round == 0)
				first[i] = s;
			else
				assert_ptr_equal(s, first[i]); /* the same copy for every user */
			assert_ptr_equal(strmap_interned(&pool, name), s); /* found by its text, as the copy */
		}
	}
	assert_null(strmap_interned(&pool, "never-interned"));
	assert_int_equal(strmap_size(&pool), 50);
	/* Two references of three go: every copy stays. */
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < 50; i++)
			strmap_unintern(&pool, first[i]);
	assert_int_equal(strmap_size(&pool), 50);
	/* The last one goes, given as the pool's own copy for half of them. */
	for (int i = 0; i < 50; i++) {
		snprintf(name, sizeof(name), "ns-%d", i);
		strmap_unintern(&pool, i % 2 ? first[i] : name);
	}
	assert_int_equal(strmap_size(&pool), 0);
	assert_null(strmap_interned(&pool, "ns-1"));
	strmap_unintern(&pool, "never-interned"); /* nothing to give back: no effect */
	assert_int_equal(strmap_size(&pool), 0);
	strmap_clear(&pool, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_put_get_replace_remove),
		cmocka_unit_test(test_churn_matches_reference),
		cmocka_unit_test(test_clear_frees_every_value),
		cmocka_unit_test(test_intern_counts_references),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
