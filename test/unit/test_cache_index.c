/*
 * Pods by node: the index the "driver outlives its users" check reads. It
 * must follow moves, deletions and relists exactly, or a node looks empty
 * while a pod still holds its devices.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "xalloc.h"

static cache_index_t pods_by_node;

static void follow(const void *old, const void *new, void *data)
{
	(void)data;
	cache_index_update(&pods_by_node, old ? cache_pod_node(old) : NULL, new ? cache_pod_node(new) : NULL,
			   old, new);
}

static void pod(store_t *s, const char *type, const char *name, const char *rv, const char *node)
{
	char *node_field = node ? xasprintf(",\"spec\":{\"nodeName\":\"%s\"}", node) : xstrdup("");
	char *line = xasprintf("{\"type\":\"%s\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":"
			       "{\"namespace\":\"t\",\"name\":\"%s\",\"resourceVersion\":\"%s\"}%s}}",
			       type, name, rv, node_field);
	char *new_rv;
	assert_int_equal(store_apply_event(s, line, strlen(line), &new_rv), STORE_APPLIED);
	free(new_rv);
	free(line);
	free(node_field);
}

static size_t on_node(const char *node)
{
	const strmap_t *g = cache_index_get(&pods_by_node, node);
	return g ? strmap_size(g) : 0;
}

static void test_pods_by_node_follow_every_change(void **state)
{
	(void)state;
	store_t s;
	store_init(&s, &store_kind_pods, follow, NULL);
	pod(&s, "ADDED", "pending", "1", NULL); /* unbound: on no node */
	pod(&s, "ADDED", "a", "2", "gpu-1");
	pod(&s, "ADDED", "b", "3", "gpu-1");
	assert_int_equal(on_node("gpu-1"), 2);
	pod(&s, "MODIFIED", "pending", "4", "gpu-2"); /* bound by the scheduler */
	assert_int_equal(on_node("gpu-2"), 1);
	const strmap_t *g = cache_index_get(&pods_by_node, "gpu-2");
	const projection_pod_t *p = strmap_get(g, "t/pending");
	assert_non_null(p);
	assert_string_equal(p->meta.resource_version, "4"); /* the index points at the current projection */
	pod(&s, "DELETED", "a", "5", "gpu-1");
	assert_int_equal(on_node("gpu-1"), 1);
	pod(&s, "DELETED", "b", "6", "gpu-1");
	assert_int_equal(on_node("gpu-1"), 0);
	assert_null(cache_index_get(&pods_by_node, "gpu-1")); /* empty groups go away */

	/* A relist that no longer has the pod removes it from its node. */
	store_listing_t l = { STRMAP_INIT };
	store_replace(&s, &l);
	assert_int_equal(on_node("gpu-2"), 0);
	store_free(&s);
	cache_index_free(&pods_by_node);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pods_by_node_follow_every_change),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
