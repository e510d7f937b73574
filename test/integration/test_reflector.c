/*
 * The node cache against a real API server: a LIST larger than a page comes in
 * pages, and a watch that loses its API server (killed and restarted) comes
 * back to a cache equal to a fresh LIST.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "reflector_common.h"

static fixture_t fx;

static int setup(void **state)
{
	(void)state;
	testenv_up(&fx.env, "reflector", NULL);
	int rc = testenv_sh(&fx.env, "for i in $(seq 1 60); do printf -- '---\\napiVersion: v1\\nkind: Node\\n"
				     "metadata:\\n  name: node-%%02d\\n  labels: {pool: a}\\n' $i; done | kubectl create -f - >/dev/null");
	return rc;
}

static int teardown(void **state)
{
	(void)state;
	testenv_down(&fx.env);
	return 0;
}

static void test_list_comes_in_pages_and_matches(void **state)
{
	(void)state;
	reflector_options_t opt = { .page_size = 25 };
	fixture_start(&fx, fx.env.kubeconfig, &opt);
	assert_true(testenv_run_until(&fx.loop, fixture_synced, &fx, 30000));
	/* 60 nodes, 25 a page: three LIST requests before the cache is synced. */
	assert_int_equal(fx.gets, 3);
	assert_int_equal(store_size(reflector_store(fx.nodes)), 60);
	assert_int_equal(reflector_stats(fx.nodes)->lists, 1);
	const projection_node_t *n = store_get(reflector_store(fx.nodes), NULL, "node-42");
	assert_non_null(n);
	assert_string_equal(n->labels[0].key, "pool");
	assert_true(fixture_converges(&fx, 10000));
}

static void test_watch_survives_apiserver_restart(void **state)
{
	(void)state;
	/* Changes seen live first. */
	assert_int_equal(testenv_sh(&fx.env, "kubectl label node node-01 seen=live >/dev/null"), 0);
	assert_true(fixture_converges(&fx, 20000));

	assert_int_equal(testenv_component(&fx.env, "restart", "kube-apiserver"), 0);
	assert_int_equal(testenv_sh(&fx.env, "kubectl delete node node-02 node-03 >/dev/null && "
					     "kubectl label node node-04 seen=after-restart >/dev/null && "
					     "printf 'apiVersion: v1\\nkind: Node\\nmetadata:\\n  name: node-new\\n' | kubectl create -f - >/dev/null"),
			 0);
	assert_true(fixture_converges(&fx, 60000));
	assert_null(store_get(reflector_store(fx.nodes), NULL, "node-02"));
	assert_non_null(store_get(reflector_store(fx.nodes), NULL, "node-new"));
	assert_true(reflector_stats(fx.nodes)->watch_restarts >= 1);
	assert_int_equal(reflector_state(fx.nodes), REFLECTOR_WATCHING);
	fixture_stop(&fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_list_comes_in_pages_and_matches),
		cmocka_unit_test(test_watch_survives_apiserver_restart),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
