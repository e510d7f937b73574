/*
 * Packed projections (projection_pack_*): what the caches hold reads exactly
 * as the decoder's output, field for field, for real objects, for objects with
 * every optional field absent, and for the largest names and sets; it is one
 * block (every string and array inside it); and a store that replaces and deletes packed objects gives every byte back
 * (the valgrind and ASan runs of this suite check the last).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "kinds.h"
#include "projection.h"
#include "store.h"
#include "xalloc.h"

/* ---- comparing a packed projection with the decoded one ---- */

/* The block a packed projection lives in: every pointer must land inside it. */
typedef struct {
	const char *start;
	size_t size;
} block_t;

static block_t block_of(const void *packed)
{
	return (block_t){ .start = packed, .size = malloc_usable_size((void *)packed) };
}

static void assert_inside(const block_t *b, const void *p, size_t len)
{
	const char *c = p;
	if (c < b->start || c + len > b->start + b->size)
		fail_msg("%p (+%zu) outside the block %p (+%zu)", p, len, (const void *)b->start, b->size);
}

/* Equal strings, both NULL or both present; a present copy lies inside the block. */
static void assert_same_str(const block_t *b, const char *want, const char *got)
{
	if (want == NULL) {
		assert_null(got);
		return;
	}
	assert_non_null(got);
	assert_string_equal(got, want);
	assert_inside(b, got, strlen(got) + 1);
}

/* The pool used by the packing under test; NULL: every string is copied into the block. */
static strmap_t *pool;

/* A string packing shares: equal, and the pool's own copy (or in the block, without a pool). */
static void assert_same_shared(const block_t *b, const char *want, const char *got)
{
	if (pool == NULL || want == NULL) {
		assert_same_str(b, want, got);
		return;
	}
	assert_non_null(got);
	assert_string_equal(got, want);
	const char *key;
	size_t it = 0;
	while (strmap_next(pool, &it, &key, NULL))
		if (key == got)
			return;
	fail_msg("\"%s\" is not the pool's copy", got);
}

static void assert_same_strings(const block_t *b, char *const *want, char *const *got, size_t n, bool shared)
{
	if (n == 0) {
		assert_null(got);
		return;
	}
	assert_inside(b, got, n * sizeof(*got));
	for (size_t i = 0; i < n; i++) {
		if (shared)
			assert_same_shared(b, want[i], got[i]);
		else
			assert_same_str(b, want[i], got[i]);
	}
}

static void assert_same_quantities(const block_t *b, const projection_quantity_t *want,
				   const projection_quantity_t *got, size_t n)
{
	if (n == 0) {
		assert_null(got);
		return;
	}
	assert_inside(b, got, n * sizeof(*got));
	for (size_t i = 0; i < n; i++) {
		assert_same_shared(b, want[i].name, got[i].name);
		assert_int_equal(want[i].count, got[i].count);
	}
}

static void assert_same_labels(const block_t *b, const projection_label_t *want,
			       const projection_label_t *got, size_t n)
{
	if (n == 0) {
		assert_null(got);
		return;
	}
	assert_inside(b, got, n * sizeof(*got));
	for (size_t i = 0; i < n; i++) {
		assert_same_shared(b, want[i].key, got[i].key);
		assert_same_str(b, want[i].value, got[i].value);
	}
}

static void assert_same_meta(const block_t *b, const kube_object_meta_t *want, const kube_object_meta_t *got)
{
	assert_same_shared(b, want->namespace, got->namespace);
	assert_same_str(b, want->name, got->name);
	assert_same_str(b, want->uid, got->uid);
	assert_same_str(b, want->resource_version, got->resource_version);
	assert_int_equal(want->created, got->created);
	assert_int_equal(want->deleting, got->deleting);
	assert_int_equal(want->deleted, got->deleted);
}

/* Each check packs one object into an empty pool: freeing it must give every reference back. */
static void assert_pool_empty(void)
{
	if (pool != NULL)
		assert_int_equal(strmap_size(pool), 0);
}

/* Decode obj twice, pack one copy, compare it with the other, free both. */
static void check_pod(const cJSON *obj)
{
	char err[256];
	projection_pod_t want, tmp;
	assert_int_equal(projection_decode_pod(obj, &want, err, sizeof(err)), 0);
	assert_int_equal(projection_decode_pod(obj, &tmp, err, sizeof(err)), 0);
	projection_pod_t *got = projection_pack_pod(&tmp, pool);
	fixture_assert_zeroed(&tmp, sizeof(tmp));
	block_t b = block_of(got);
	assert_same_meta(&b, &want.meta, &got->meta);
	assert_same_shared(&b, want.node_name, got->node_name);
	assert_int_equal(want.phase, got->phase);
	assert_int_equal(want.scheduled, got->scheduled);
	assert_int_equal(want.ready, got->ready);
	assert_int_equal(want.preempts, got->preempts);
	assert_int_equal(want.ready_time, got->ready_time);
	assert_int_equal(want.unschedulable, got->unschedulable);
	assert_int_equal(want.scheduled_time, got->scheduled_time);
	assert_int_equal(want.n_claims, got->n_claims);
	assert_same_strings(&b, want.claims, got->claims, want.n_claims, false);
	assert_int_equal(want.n_dra_resources, got->n_dra_resources);
	assert_same_strings(&b, want.dra_resources, got->dra_resources, want.n_dra_resources, true);
	assert_int_equal(want.n_requests, got->n_requests);
	assert_same_quantities(&b, want.requests, got->requests, want.n_requests);
	projection_free_pod(&want);
	projection_free_packed_pod(got, pool);
	assert_pool_empty();
}

static void check_claim(const cJSON *obj)
{
	char err[256];
	projection_claim_t want, tmp;
	assert_int_equal(projection_decode_claim(obj, &want, err, sizeof(err)), 0);
	assert_int_equal(projection_decode_claim(obj, &tmp, err, sizeof(err)), 0);
	projection_claim_t *got = projection_pack_claim(&tmp, pool);
	fixture_assert_zeroed(&tmp, sizeof(tmp));
	block_t b = block_of(got);
	assert_same_meta(&b, &want.meta, &got->meta);
	assert_int_equal(want.n_device_classes, got->n_device_classes);
	assert_same_strings(&b, want.device_classes, got->device_classes, want.n_device_classes, true);
	assert_int_equal(want.allocated, got->allocated);
	assert_int_equal(want.n_results, got->n_results);
	if (want.n_results == 0)
		assert_null(got->results);
	else
		assert_inside(&b, got->results, want.n_results * sizeof(*got->results));
	for (size_t i = 0; i < want.n_results; i++) {
		assert_same_shared(&b, want.results[i].request, got->results[i].request);
		assert_same_shared(&b, want.results[i].driver, got->results[i].driver);
		assert_same_shared(&b, want.results[i].pool, got->results[i].pool);
		assert_same_shared(&b, want.results[i].device, got->results[i].device);
	}
	assert_same_shared(&b, want.node_name, got->node_name);
	assert_int_equal(want.n_reserved_for, got->n_reserved_for);
	if (want.n_reserved_for == 0)
		assert_null(got->reserved_for);
	else
		assert_inside(&b, got->reserved_for, want.n_reserved_for * sizeof(*got->reserved_for));
	for (size_t i = 0; i < want.n_reserved_for; i++) {
		assert_same_shared(&b, want.reserved_for[i].resource, got->reserved_for[i].resource);
		assert_same_str(&b, want.reserved_for[i].name, got->reserved_for[i].name);
		assert_same_str(&b, want.reserved_for[i].uid, got->reserved_for[i].uid);
	}
	assert_int_equal(want.device_conditions_false, got->device_conditions_false);
	assert_same_str(&b, want.owner_pod, got->owner_pod);
	assert_int_equal(want.delete_protected, got->delete_protected);
	assert_int_equal(want.extended, got->extended);
	projection_free_claim(&want);
	projection_free_packed_claim(got, pool);
	assert_pool_empty();
}

static void check_node(const cJSON *obj)
{
	char err[256];
	projection_node_t want, tmp;
	assert_int_equal(projection_decode_node(obj, &want, err, sizeof(err)), 0);
	assert_int_equal(projection_decode_node(obj, &tmp, err, sizeof(err)), 0);
	projection_node_t *got = projection_pack_node(&tmp, pool);
	fixture_assert_zeroed(&tmp, sizeof(tmp));
	block_t b = block_of(got);
	assert_same_meta(&b, &want.meta, &got->meta);
	assert_int_equal(want.n_labels, got->n_labels);
	assert_same_labels(&b, want.labels, got->labels, want.n_labels);
	assert_int_equal(want.n_annotations, got->n_annotations);
	assert_same_labels(&b, want.annotations, got->annotations, want.n_annotations);
	assert_int_equal(want.unschedulable, got->unschedulable);
	assert_int_equal(want.tainted, got->tainted);
	assert_int_equal(want.n_allocatable, got->n_allocatable);
	assert_same_quantities(&b, want.allocatable, got->allocatable, want.n_allocatable);
	assert_int_equal(want.n_capacity, got->n_capacity);
	assert_same_quantities(&b, want.capacity, got->capacity, want.n_capacity);
	assert_int_equal(want.ready, got->ready);
	projection_free_node(&want);
	projection_free_packed_node(got, pool);
	assert_pool_empty();
}

/* ---- the cases ---- */

/* Every case runs twice: strings copied into the block, and shared through a pool. */
static int with_pool(void **state)
{
	static strmap_t the_pool = STRMAP_INIT;
	(void)state;
	pool = &the_pool;
	return 0;
}

static int without_pool(void **state)
{
	(void)state;
	if (pool != NULL)
		strmap_clear(pool, NULL);
	pool = NULL;
	return 0;
}

static void test_fixtures_pack_field_for_field(void **state)
{
	(void)state;
	static const char *const pods[] = { "objects/pod_full.json", "objects/pod_gpu.json",
					    "objects/pod_claim_template.json" };
	for (size_t i = 0; i < sizeof(pods) / sizeof(pods[0]); i++) {
		cJSON *obj = fixture_json(pods[i]);
		check_pod(obj);
		cJSON_Delete(obj);
	}
	cJSON *obj = fixture_json("objects/claim.json");
	check_claim(obj);
	cJSON_Delete(obj);
	obj = fixture_json("objects/node.json");
	check_node(obj);
	cJSON_Delete(obj);
}

/* Only a name: every optional string NULL, every array empty, no namespace. */
static void test_absent_fields_pack_as_absent(void **state)
{
	(void)state;
	cJSON *obj = fixture_quoted_json("{'metadata':{'name':'p'}}");
	check_pod(obj);
	check_claim(obj);
	check_node(obj);
	cJSON_Delete(obj);
	/* Empty strings and empty containers the decoders read as absent. */
	obj = fixture_quoted_json("{'metadata':{'name':'p','namespace':'','uid':'','resourceVersion':'',"
				  "'labels':{},'annotations':{}},'spec':{'nodeName':'','resourceClaims':[],"
				  "'containers':[]},'status':{'conditions':[],'reservedFor':[]}}");
	check_pod(obj);
	check_claim(obj);
	check_node(obj);
	cJSON_Delete(obj);
}

/* The API's longest names (253 bytes, namespaces 63) and sets of a thousand. */
static void test_largest_objects_pack_in_full(void **state)
{
	(void)state;
	char name[254], ns[64], key[300];
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	memset(ns, 's', sizeof(ns) - 1);
	ns[sizeof(ns) - 1] = '\0';

	cJSON *obj = fixture_quoted_json("{'metadata':{'labels':{},'annotations':{}},'spec':{'resourceClaims':[],"
					 "'containers':[{'resources':{'requests':{}}}]},"
					 "'status':{'allocatable':{},'capacity':{},'reservedFor':[],"
					 "'conditions':[{'type':'PodScheduled','status':'False','reason':'Unschedulable',"
					 "'lastTransitionTime':'2025-03-14T08:46:53Z'}]}}");
	cJSON *md = cJSON_GetObjectItem(obj, "metadata");
	cJSON_AddStringToObject(md, "name", name);
	cJSON_AddStringToObject(md, "namespace", ns);
	cJSON_AddStringToObject(md, "uid", "83269132-694e-4497-9c4c-569d291a39ae");
	cJSON_AddStringToObject(md, "resourceVersion", "18446744073709551615");
	cJSON *spec = cJSON_GetObjectItem(obj, "spec");
	cJSON_AddStringToObject(spec, "nodeName", name);
	cJSON *status = cJSON_GetObjectItem(obj, "status");
	cJSON *requests = cJSON_GetObjectItem(
		cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(spec, "containers"), 0), "resources"),
		"requests");
	for (int i = 0; i < 1000; i++) {
		snprintf(key, sizeof(key), "example.com/%d-%.200s", i, name);
		cJSON *c = cJSON_CreateObject();
		cJSON_AddStringToObject(c, "resourceClaimName", key + strlen("example.com/"));
		cJSON_AddItemToArray(cJSON_GetObjectItem(spec, "resourceClaims"), c);
		cJSON_AddStringToObject(requests, key, "1");
		cJSON_AddStringToObject(cJSON_GetObjectItem(md, "labels"), key, name);
		snprintf(key, sizeof(key), "drashift.io/%d", i);
		cJSON_AddStringToObject(cJSON_GetObjectItem(md, "annotations"), key, name);
		snprintf(key, sizeof(key), "example.com/r%d", i);
		cJSON_AddStringToObject(cJSON_GetObjectItem(status, "allocatable"), key, "8");
		cJSON_AddStringToObject(cJSON_GetObjectItem(status, "capacity"), key, "8");
		cJSON *r = cJSON_CreateObject();
		cJSON_AddStringToObject(r, "resource", "pods");
		cJSON_AddStringToObject(r, "name", name);
		cJSON_AddStringToObject(r, "uid", "83269132-694e-4497-9c4c-569d291a39ae");
		cJSON_AddItemToArray(cJSON_GetObjectItem(status, "reservedFor"), r);
	}
	check_pod(obj);
	check_claim(obj);
	check_node(obj);
	cJSON_Delete(obj);
}

/* ---- a store of packed objects ---- */

static char *pod_event(const char *type, int i, int rv, const char *node)
{
	return xasprintf("{\"type\":\"%s\",\"object\":{\"metadata\":{\"namespace\":\"team-%d\",\"name\":\"p%d\","
			 "\"uid\":\"u-%d\",\"resourceVersion\":\"%d\"},\"spec\":{\"nodeName\":\"%s\","
			 "\"resourceClaims\":[{\"name\":\"g\",\"resourceClaimName\":\"claim-%d\"}]},"
			 "\"status\":{\"phase\":\"Running\"}}}",
			 type, i % 7, i, i, rv, node, i);
}

typedef struct {
	int changes;
} seen_t;

/*
 * on_change runs after the store holds the new state and before the old
 * projection is freed: both are readable, and the store already finds the
 * new one under the key the old one carried.
 */
static store_t *watched;

static void on_change(const void *old, const void *new, void *data)
{
	seen_t *seen = data;
	seen->changes++;
	if (old != NULL) {
		const projection_pod_t *o = old;
		assert_ptr_equal(store_get(watched, o->meta.namespace, o->meta.name), new);
	}
}

static void apply(store_t *s, char *line)
{
	char *rv;
	assert_int_equal(store_apply_event(s, line, strlen(line), &rv), STORE_APPLIED);
	free(rv);
	free(line);
}

static void test_store_replaces_and_deletes_packed_pods(void **state)
{
	(void)state;
	seen_t seen = { 0 };
	store_t s;
	store_init(&s, &kinds_pods, on_change, &seen);
	watched = &s;
	enum { N = 300 };
	for (int i = 0; i < N; i++)
		apply(&s, pod_event("ADDED", i, i, "gpu-1"));
	assert_int_equal(store_size(&s), N);
	/* Replace every pod twice: the index finds each by its own namespace and name, the old blocks go. */
	for (int round = 1; round <= 2; round++)
		for (int i = 0; i < N; i++)
			apply(&s, pod_event("MODIFIED", i, round * N + i, round == 1 ? "gpu-2" : "gpu-3"));
	assert_int_equal(store_size(&s), N);
	for (int i = 0; i < N; i++) {
		char ns[16], name[16];
		snprintf(ns, sizeof(ns), "team-%d", i % 7);
		snprintf(name, sizeof(name), "p%d", i);
		const projection_pod_t *p = store_get(&s, ns, name);
		assert_non_null(p);
		assert_string_equal(p->node_name, "gpu-3");
		assert_int_equal(p->n_claims, 1);
		char rv[16];
		snprintf(rv, sizeof(rv), "%d", 2 * N + i);
		assert_string_equal(p->meta.resource_version, rv);
	}
	/* Every pod costs its block plus its share of the table, nothing else. */
	size_t blocks = 0, it = 0;
	const void *proj;
	while (store_next(&s, &it, &proj)) {
		assert_int_equal(store_object_bytes(&s, proj), malloc_usable_size((void *)proj));
		blocks += malloc_usable_size((void *)proj);
	}
	assert_int_equal(store_bytes(&s), blocks + malloc_usable_size(s.slots) + strmap_bytes(&s.shared));
	/* Seven namespaces and the one node all pods are on now, each once; the old nodes are gone. */
	assert_int_equal(strmap_size(&s.shared), 8);
	/* Delete half by event and the rest by a LIST that holds none of them. */
	for (int i = 0; i < N / 2; i++)
		apply(&s, pod_event("DELETED", i, 3 * N + i, "gpu-3"));
	assert_int_equal(store_size(&s), N - N / 2);
	store_listing_t l = { STRMAP_INIT };
	cJSON *obj = fixture_quoted_json("{'metadata':{'namespace':'team-0','name':'fresh','resourceVersion':'1'}}");
	store_listing_add(&s, &l, obj);
	cJSON_Delete(obj);
	store_replace(&s, &l);
	assert_int_equal(store_size(&s), 1);
	assert_non_null(store_get(&s, "team-0", "fresh"));
	assert_int_equal(strmap_size(&s.shared), 1); /* "team-0" */
	assert_int_equal(seen.changes, N + 2 * N + N + 1);
	store_free(&s);
	watched = NULL;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fixtures_pack_field_for_field, without_pool, without_pool),
		cmocka_unit_test_setup_teardown(test_fixtures_pack_field_for_field, with_pool, without_pool),
		cmocka_unit_test_setup_teardown(test_absent_fields_pack_as_absent, without_pool, without_pool),
		cmocka_unit_test_setup_teardown(test_absent_fields_pack_as_absent, with_pool, without_pool),
		cmocka_unit_test_setup_teardown(test_largest_objects_pack_in_full, without_pool, without_pool),
		cmocka_unit_test_setup_teardown(test_largest_objects_pack_in_full, with_pool, without_pool),
		cmocka_unit_test(test_store_replaces_and_deletes_packed_pods),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
