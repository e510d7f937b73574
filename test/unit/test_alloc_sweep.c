/*
 * Allocation-failure sweep ("torture" testing, as curl does): decode every
 * fixture while the N-th allocation made by the JSON parser fails, for every
 * N until a run passes without a failure. Each run must end in a clean
 * success or a clean error, with every parser allocation given back.
 *
 * Scope: the parser's allocations (cJSON, through its hooks) are the ones a
 * decoder must survive. drashift's own allocations go through xmalloc, which
 * aborts by design (STYLE.md: the pod restarts) and is not swept; leaks of
 * those show under ASan and valgrind, which run this suite too.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "kinds.h"
#include "projection.h"
#include "store.h"
#include "xalloc.h"

static long alloc_count, alloc_fail_at, alloc_live;

static void *sweep_malloc(size_t size)
{
	if (++alloc_count == alloc_fail_at)
		return NULL;
	void *p = malloc(size);
	if (p)
		alloc_live++;
	return p;
}

static void sweep_free(void *p)
{
	if (p)
		alloc_live--;
	free(p);
}

/* Decode one document with every decoder that could apply; returns how many succeeded. */
static int decode_all(const char *buf, size_t len)
{
	char err[256];
	int ok = 0;
	kube_object_event_t ev;
	if (kube_object_decode_event(buf, len, &ev, err, sizeof(err)) == 0) {
		ok++;
		kube_object_event_free(&ev);
	}
	kube_object_list_t list;
	if (kube_object_decode_list(buf, len, &list, err, sizeof(err)) == 0) {
		ok++;
		kube_object_list_free(&list);
	}
	cJSON *obj = cJSON_ParseWithLength(buf, len);
	if (obj != NULL) {
		const store_kind_t *kinds[] = { &kinds_nodes, &kinds_pods, &kinds_claims,
						&kinds_slices, &kinds_device_classes, &kinds_prepare_failures };
		for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
			void *proj = xcalloc(1, kinds[k]->size);
			if (kinds[k]->decode(obj, proj, err, sizeof(err)) == 0) {
				ok++;
				kinds[k]->release(proj);
			}
			free(proj);
		}
		cJSON_Delete(obj);
	}
	return ok;
}

static void test_every_parser_allocation_may_fail(void **state)
{
	(void)state;
	cJSON_Hooks hooks = { .malloc_fn = sweep_malloc, .free_fn = sweep_free };
	cJSON_InitHooks(&hooks);
	DIR *d = opendir(FIXTURES "/objects");
	assert_non_null(d);
	struct dirent *e;
	int files = 0;
	long runs = 0;
	while ((e = readdir(d)) != NULL) {
		if (strstr(e->d_name, ".json") == NULL)
			continue;
		char name[512];
		snprintf(name, sizeof(name), "objects/%s", e->d_name);
		size_t len;
		char *buf = fixture_read(name, &len);

		alloc_fail_at = 0;
		alloc_count = 0;
		int expected = decode_all(buf, len);
		long needed = alloc_count;
		assert_true(expected > 0);
		assert_int_equal(alloc_live, 0);

		for (alloc_fail_at = 1; alloc_fail_at <= needed; alloc_fail_at++) {
			alloc_count = 0;
			int ok = decode_all(buf, len);
			assert_true(ok <= expected);
			if (alloc_live != 0)
				fail_msg("%s: %ld parser allocations leaked when allocation %ld failed", e->d_name,
					 alloc_live, alloc_fail_at);
			runs++;
		}
		free(buf);
		files++;
	}
	closedir(d);
	cJSON_InitHooks(NULL);
	assert_true(files >= 10);
	print_message("swept %d fixtures, %ld failing runs\n", files, runs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_parser_allocation_may_fail),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
