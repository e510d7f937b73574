/*
 * The cache's indexes. Pods by node, and claims and slices by node+driver:
 * what the "driver outlives its users" check and the slice readiness check
 * read. They must follow moves, deletions and relists exactly, or a node
 * looks empty while a pod or claim still holds its devices, or a driver looks
 * ready on a node from another driver's slices.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "kinds.h"
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
	store_init(&s, &kinds_pods, follow, NULL);
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

/* ---- claims and slices by node+driver ---- */

#define GPU "gpu.example.com"
#define NET "net.example.com"
#define N_GROUPS 4

/* The groups every step checks, and what the tables expect in each (in this order). */
static const char *const group_node[N_GROUPS] = { "n1", "n1", "n2", "n2" };
static const char *const group_driver[N_GROUPS] = { GPU, NET, GPU, NET };

/* One watch event, and the members of every group after it: sorted names, comma-joined. */
typedef struct {
	const char *type;
	const char *name;
	const char *rv;
	const char *node; /* claim: allocated on it (NULL: not allocated); slice: spec.nodeName */
	const char *drivers[3]; /* claim: the drivers of its results; slice: [0] is spec.driver */
	const char *want[N_GROUPS];
} index_step_t;

static void follow_claims(const void *old, const void *new, void *data)
{
	cache_follow(data, CACHE_CLAIMS, old, new);
}

static void follow_slices(const void *old, const void *new, void *data)
{
	cache_follow(data, CACHE_SLICES, old, new);
}

static void apply_line(store_t *s, char *line)
{
	char *new_rv;
	assert_int_equal(store_apply_event(s, line, strlen(line), &new_rv), STORE_APPLIED);
	free(new_rv);
	free(line);
}

static char *json_append(char *s, const char *more)
{
	char *r = xasprintf("%s%s", s, more);
	free(s);
	return r;
}

static void claim_event(store_t *s, const index_step_t *st)
{
	char *status = xstrdup("");
	if (st->node) {
		char *results = xstrdup("");
		for (int i = 0; i < 3 && st->drivers[i]; i++) {
			char *r = xasprintf("%s{\"request\":\"r\",\"driver\":\"%s\",\"pool\":\"p\",\"device\":\"d%d\"}",
					    i ? "," : "", st->drivers[i], i);
			results = json_append(results, r);
			free(r);
		}
		free(status);
		status = xasprintf(",\"status\":{\"allocation\":{\"devices\":{\"results\":[%s]},\"nodeSelector\":"
				   "{\"nodeSelectorTerms\":[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":"
				   "\"In\",\"values\":[\"%s\"]}]}]}}}",
				   results, st->node);
		free(results);
	}
	apply_line(s, xasprintf("{\"type\":\"%s\",\"object\":{\"kind\":\"ResourceClaim\",\"apiVersion\":"
				"\"resource.k8s.io/v1\",\"metadata\":{\"namespace\":\"t\",\"name\":\"%s\","
				"\"resourceVersion\":\"%s\"}%s}}",
				st->type, st->name, st->rv, status));
	free(status);
}

static void slice_event(store_t *s, const index_step_t *st)
{
	char *node = st->node ? xasprintf("\"nodeName\":\"%s\",", st->node) : xstrdup("");
	apply_line(s, xasprintf("{\"type\":\"%s\",\"object\":{\"kind\":\"ResourceSlice\",\"apiVersion\":"
				"\"resource.k8s.io/v1\",\"metadata\":{\"name\":\"%s\",\"resourceVersion\":\"%s\"},"
				"\"spec\":{\"driver\":\"%s\",%s\"pool\":{\"name\":\"p\",\"generation\":1,"
				"\"resourceSliceCount\":1},\"devices\":[{\"name\":\"d0\"}]}}}",
				st->type, st->name, st->rv, st->drivers[0], node));
	free(node);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * The names in one group, sorted and comma-joined; every member must be the
 * projection the store holds now (the index never points at a freed one).
 */
static char *group_members(const cache_index_t *idx, const store_t *s, const char *ns, size_t g)
{
	char *key = cache_node_driver_key(group_node[g], group_driver[g]);
	const strmap_t *group = cache_index_get(idx, key);
	free(key);
	size_t n = group ? strmap_size(group) : 0, k = 0, it = 0;
	const char **names = xcalloc(n + 1, sizeof(char *));
	void *v;
	while (group && strmap_next(group, &it, NULL, &v)) {
		const kube_object_meta_t *m = v;
		assert_ptr_equal(v, store_get(s, ns, m->name));
		names[k++] = m->name;
	}
	qsort(names, n, sizeof(char *), name_cmp);
	char *joined = xstrdup("");
	for (size_t i = 0; i < n; i++) {
		char *next = xasprintf("%s%s%s", joined, i ? "," : "", names[i]);
		free(joined);
		joined = next;
	}
	free(names);
	return joined;
}

static void run_steps(const index_step_t *steps, size_t n_steps, cache_kind_t kind)
{
	cache_t c = { 0 };
	cache_index_t *idx = kind == CACHE_CLAIMS ? &c.claims_by_node_driver : &c.slices_by_node_driver;
	const char *ns = kind == CACHE_CLAIMS ? "t" : NULL;
	store_t s;
	store_init(&s, kind == CACHE_CLAIMS ? &kinds_claims : &kinds_slices,
		   kind == CACHE_CLAIMS ? follow_claims : follow_slices, &c);
	for (size_t i = 0; i < n_steps; i++) {
		if (kind == CACHE_CLAIMS)
			claim_event(&s, &steps[i]);
		else
			slice_event(&s, &steps[i]);
		for (size_t g = 0; g < N_GROUPS; g++) {
			char *got = group_members(idx, &s, ns, g);
			if (strcmp(got, steps[i].want[g]) != 0)
				fail_msg("step %zu (%s %s): group %s/%s holds \"%s\", want \"%s\"", i, steps[i].type,
					 steps[i].name, group_node[g], group_driver[g], got, steps[i].want[g]);
			free(got);
		}
	}
	/* A relist that no longer has anything empties every group, and no empty group is left behind. */
	store_listing_t l = { STRMAP_INIT };
	store_replace(&s, &l);
	assert_int_equal(strmap_size(&idx->groups), 0);
	store_free(&s);
	cache_index_free(idx);
}

/*
 * A claim sits under every driver its allocation results name on its node,
 * once per driver however many devices; it leaves a group when its results
 * drop the driver, when the allocation is cleared, or when it is reallocated
 * on another node.
 */
static void test_claims_by_node_driver_follow_allocations(void **state)
{
	(void)state;
	static const index_step_t steps[] = {
		/* type      name  rv   node  drivers           n1/gpu    n1/net  n2/gpu    n2/net */
		{ "ADDED", "c1", "1", "n1", { GPU, NET }, { "c1", "c1", "", "" } },
		{ "ADDED", "c2", "2", "n1", { GPU, GPU }, { "c1,c2", "c1", "", "" } },
		{ "ADDED", "pending", "3", NULL, { 0 }, { "c1,c2", "c1", "", "" } },
		{ "MODIFIED", "c1", "4", "n1", { GPU }, { "c1,c2", "", "", "" } },
		{ "MODIFIED", "c1", "5", NULL, { 0 }, { "c2", "", "", "" } },
		{ "MODIFIED", "c2", "6", "n2", { NET, GPU }, { "", "", "c2", "c2" } },
		{ "MODIFIED", "c1", "7", "n2", { GPU }, { "", "", "c1,c2", "c2" } },
		{ "MODIFIED", "c2", "8", "n2", { NET, GPU }, { "", "", "c1,c2", "c2" } }, /* now the new projection */
		{ "DELETED", "c2", "9", "n2", { NET, GPU }, { "", "", "c1", "" } },
	};
	run_steps(steps, sizeof(steps) / sizeof(steps[0]), CACHE_CLAIMS);
}

/* A slice sits under its node and driver, and moves when either changes. */
static void test_slices_by_node_driver_follow_moves(void **state)
{
	(void)state;
	static const index_step_t steps[] = {
		/* type      name  rv   node  driver    n1/gpu   n1/net   n2/gpu  n2/net */
		{ "ADDED", "s1", "1", "n1", { GPU }, { "s1", "", "", "" } },
		{ "ADDED", "s2", "2", "n1", { NET }, { "s1", "s2", "", "" } },
		{ "ADDED", "shared", "3", NULL, { GPU }, { "s1", "s2", "", "" } }, /* not node-local */
		{ "MODIFIED", "s1", "4", "n1", { NET }, { "", "s1,s2", "", "" } },
		{ "MODIFIED", "s2", "5", "n2", { NET }, { "", "s1", "", "s2" } },
		{ "MODIFIED", "s2", "6", "n2", { GPU }, { "", "s1", "s2", "" } },
		{ "MODIFIED", "s1", "7", NULL, { NET }, { "", "", "s2", "" } },
		{ "DELETED", "s2", "8", "n2", { GPU }, { "", "", "", "" } },
	};
	run_steps(steps, sizeof(steps) / sizeof(steps[0]), CACHE_SLICES);
}

/* Keys of different pairs never meet, however the names split. */
static void test_node_driver_keys_are_unambiguous(void **state)
{
	(void)state;
	char *a = cache_node_driver_key("gpu.node", "example.com");
	char *b = cache_node_driver_key("gpu", "node.example.com");
	assert_string_not_equal(a, b);
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pods_by_node_follow_every_change),
		cmocka_unit_test(test_claims_by_node_driver_follow_allocations),
		cmocka_unit_test(test_slices_by_node_driver_follow_moves),
		cmocka_unit_test(test_node_driver_keys_are_unambiguous),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
