/*
 * The cache's decode path without a network: watch lines and LIST pages go
 * in, the store and the change callbacks show what a controller would see.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kinds.h"
#include "store.h"
#include "xalloc.h"

typedef struct {
	int adds, updates, deletes;
} changes_t;

static void count_change(const void *old, const void *new, void *data)
{
	changes_t *c = data;
	if (old == NULL)
		c->adds++;
	else if (new == NULL)
		c->deletes++;
	else
		c->updates++;
}

static char *pod_event(const char *type, const char *ns, const char *name, const char *rv, const char *node)
{
	return xasprintf("{\"type\":\"%s\",\"object\":{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":"
			 "{\"namespace\":\"%s\",\"name\":\"%s\",\"uid\":\"u-%s\",\"resourceVersion\":\"%s\"},"
			 "\"spec\":{\"nodeName\":\"%s\"},\"status\":{\"phase\":\"Running\"}}}",
			 type, ns, name, name, rv, node);
}

static store_apply_t apply(store_t *s, const char *line, char **rv)
{
	return store_apply_event(s, line, strlen(line), rv);
}

static void test_watch_events_follow_the_cluster(void **state)
{
	(void)state;
	changes_t c = { 0 };
	store_t s;
	store_init(&s, &kinds_pods, count_change, &c);
	char *rv, *line;

	line = pod_event("ADDED", "team-a", "p1", "10", "gpu-1");
	assert_int_equal(apply(&s, line, &rv), STORE_APPLIED);
	assert_string_equal(rv, "10");
	free(rv);
	free(line);
	line = pod_event("MODIFIED", "team-a", "p1", "11", "gpu-2");
	assert_int_equal(apply(&s, line, &rv), STORE_APPLIED);
	free(rv);
	free(line);
	const projection_pod_t *p = store_get(&s, "team-a", "p1");
	assert_non_null(p);
	assert_string_equal(p->node_name, "gpu-2");
	assert_string_equal(p->meta.resource_version, "11");

	line = pod_event("DELETED", "team-a", "p1", "12", "gpu-2");
	assert_int_equal(apply(&s, line, &rv), STORE_APPLIED);
	free(rv);
	free(line);
	assert_null(store_get(&s, "team-a", "p1"));
	assert_int_equal(c.adds, 1);
	assert_int_equal(c.updates, 1);
	assert_int_equal(c.deletes, 1);
	assert_int_equal(s.events, 3);
	store_free(&s);
}

static void test_bookmark_moves_rv_and_410_asks_for_relist(void **state)
{
	(void)state;
	store_t s;
	store_init(&s, &kinds_pods, NULL, NULL);
	char *rv;
	assert_int_equal(apply(&s, "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\","
				   "\"metadata\":{\"resourceVersion\":\"777\"}}}", &rv),
			 STORE_APPLIED);
	assert_string_equal(rv, "777");
	free(rv);
	/* Not the end of a watch-list's initial events: only a bookmark annotated so ends them. */
	store_listing_t l = { 0 };
	bool end = true;
	const char *plain = "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"778\"}}}";
	assert_int_equal(store_listing_apply_event(&s, &l, plain, strlen(plain), &rv, &end), STORE_APPLIED);
	assert_false(end);
	assert_null(rv);
	assert_int_equal(apply(&s, "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\","
				   "\"status\":\"Failure\",\"message\":\"too old resource version\","
				   "\"reason\":\"Expired\",\"code\":410}}", &rv),
			 STORE_RELIST);
	assert_null(rv);
	assert_int_equal(apply(&s, "{\"type\":\"ADDED\",\"object\":", &rv), STORE_RELIST);
	assert_int_equal(s.decode_errors, 1);
	store_free(&s);
}

/*
 * A watch that streams the initial state (watch-list): its objects make a
 * listing, not changes to the store, until the bookmark that ends them; the
 * store then becomes the listing as after a LIST, and the watch stands at
 * that bookmark's resourceVersion, not at any object's.
 */
static void test_streamed_initial_state_replaces_like_a_list(void **state)
{
	(void)state;
	changes_t c = { 0 };
	store_t s;
	store_init(&s, &kinds_pods, count_change, &c);
	char *rv, *line;
	const char *held[][3] = { { "p1", "10", "gpu-1" }, { "p2", "11", "gpu-1" } };
	for (size_t i = 0; i < 2; i++) {
		line = pod_event("ADDED", "team-a", held[i][0], held[i][1], held[i][2]);
		apply(&s, line, &rv);
		free(rv);
		free(line);
	}
	c = (changes_t){ 0 };

	store_listing_t l = { 0 };
	bool end;
	const char *streamed[][4] = {
		{ "ADDED", "p1", "10", "gpu-1" },   /* unchanged */
		{ "ADDED", "p3", "30", "gpu-2" },   /* new; p2 is not streamed: deleted meanwhile */
		{ "ADDED", "p4", "31", "gpu-2" },
		{ "DELETED", "p4", "32", "gpu-2" }, /* the server never does this mid-stream; it still counts */
	};
	for (size_t i = 0; i < 4; i++) {
		line = pod_event(streamed[i][0], "team-a", streamed[i][1], streamed[i][2], streamed[i][3]);
		assert_int_equal(store_listing_apply_event(&s, &l, line, strlen(line), &rv, &end), STORE_APPLIED);
		assert_false(end);
		assert_null(rv);
		free(line);
	}
	/* Nothing changed in the store yet. */
	assert_int_equal(c.adds + c.updates + c.deletes, 0);
	assert_non_null(store_get(&s, "team-a", "p2"));
	assert_null(store_get(&s, "team-a", "p3"));

	const char *bookmark = "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"resourceVersion\":\"40\","
			       "\"annotations\":{\"k8s.io/initial-events-end\":\"true\"}}}}";
	assert_int_equal(store_listing_apply_event(&s, &l, bookmark, strlen(bookmark), &rv, &end), STORE_APPLIED);
	assert_true(end);
	assert_string_equal(rv, "40");
	free(rv);
	store_replace(&s, &l);
	assert_int_equal(c.adds, 1);    /* p3 */
	assert_int_equal(c.deletes, 1); /* p2 */
	assert_int_equal(c.updates, 0); /* p1 kept its resourceVersion */
	assert_null(store_get(&s, "team-a", "p4"));
	assert_int_equal(store_size(&s), 2);
	assert_int_equal(s.events, 2); /* the two watch events before; the initial state is listed */

	/* An ERROR in the stream asks for the state anew, as in a watch. */
	const char *error = "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":500,\"message\":\"boom\"}}";
	assert_int_equal(store_listing_apply_event(&s, &l, error, strlen(error), &rv, &end), STORE_RELIST);
	store_listing_discard(&s, &l);
	store_free(&s);
}

/*
 * An object the decoder refuses must not make the cache forget it: a pod
 * that still holds a device would vanish, and a driver could be removed
 * under it (docs/invariants.md, invariant 3: if it cannot be read, assume it is held).
 */
static void test_undecodable_object_keeps_cached_state(void **state)
{
	(void)state;
	changes_t c = { 0 };
	store_t s;
	store_init(&s, &kinds_pods, count_change, &c);
	char *rv, *line = pod_event("ADDED", "team-a", "p1", "10", "gpu-1");
	apply(&s, line, &rv);
	free(rv);
	free(line);

	const char *bad = "{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":"
			  "{\"namespace\":\"team-a\",\"name\":\"p1\",\"resourceVersion\":\"11\"},"
			  "\"spec\":{\"nodeName\":42}}}";
	assert_int_equal(apply(&s, bad, &rv), STORE_APPLIED);
	free(rv);
	const projection_pod_t *p = store_get(&s, "team-a", "p1");
	assert_non_null(p);
	assert_string_equal(p->node_name, "gpu-1");
	assert_int_equal(s.decode_errors, 1);

	/* The same in a LIST: the bad item keeps its cached version. */
	store_listing_t l = { STRMAP_INIT };
	cJSON *item = cJSON_Parse("{\"metadata\":{\"namespace\":\"team-a\",\"name\":\"p1\",\"resourceVersion\":\"12\"},"
				  "\"spec\":{\"nodeName\":[]}}");
	store_listing_add(&s, &l, item);
	cJSON_Delete(item);
	store_replace(&s, &l);
	p = store_get(&s, "team-a", "p1");
	assert_non_null(p);
	assert_string_equal(p->meta.resource_version, "10");
	assert_int_equal(c.deletes, 0);
	store_free(&s);
}

static void test_replace_reports_only_differences(void **state)
{
	(void)state;
	changes_t c = { 0 };
	store_t s;
	store_init(&s, &kinds_pods, count_change, &c);
	char *rv, *line;
	const char *names[] = { "keep", "change", "gone" };
	for (int i = 0; i < 3; i++) {
		line = pod_event("ADDED", "ns", names[i], "5", "n1");
		apply(&s, line, &rv);
		free(rv);
		free(line);
	}
	c = (changes_t){ 0 };
	store_listing_t l = { STRMAP_INIT };
	const char *items[] = {
		"{\"metadata\":{\"namespace\":\"ns\",\"name\":\"keep\",\"resourceVersion\":\"5\"}}",
		"{\"metadata\":{\"namespace\":\"ns\",\"name\":\"change\",\"resourceVersion\":\"9\"}}",
		"{\"metadata\":{\"namespace\":\"ns\",\"name\":\"new\",\"resourceVersion\":\"9\"}}",
	};
	for (int i = 0; i < 3; i++) {
		cJSON *item = cJSON_Parse(items[i]);
		store_listing_add(&s, &l, item);
		cJSON_Delete(item);
	}
	store_replace(&s, &l);
	assert_int_equal(store_size(&s), 3);
	assert_null(store_get(&s, "ns", "gone"));
	assert_int_equal(c.adds, 1);
	assert_int_equal(c.updates, 1);
	assert_int_equal(c.deletes, 1);
	assert_true(store_bytes(&s) > 0);
	store_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_watch_events_follow_the_cluster),
		cmocka_unit_test(test_bookmark_moves_rv_and_410_asks_for_relist),
		cmocka_unit_test(test_streamed_initial_state_replaces_like_a_list),
		cmocka_unit_test(test_undecodable_object_keeps_cached_state),
		cmocka_unit_test(test_replace_reports_only_differences),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
