/*
 * The node cache against a real API server: the whole state streams in the
 * one watch that then follows it (watch-list), and a watch that loses its API
 * server (killed and restarted) comes back to a cache equal to a fresh LIST.
 * test_reflector_paged.c: a server that does not stream.
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
	return fixture_up_with_nodes(&fx, "reflector", NULL);
}

static int teardown(void **state)
{
	(void)state;
	testenv_down(&fx.env);
	return 0;
}

static void test_initial_state_streams_in_the_watch(void **state)
{
	(void)state;
	reflector_options_t opt = { .page_size = 25 };
	fixture_start(&fx, fx.env.kubeconfig, &opt);
	assert_true(testenv_run_until(&fx.loop, fixture_synced, &fx, 30000));
	/*
	 * 60 nodes, and pages of 25 unused: the cache synced with no request
	 * finished (the observer sees a request when it ends), so from the
	 * one watch, still open.
	 */
	assert_int_equal(fx.gets, 0);
	assert_int_equal(fx.refused, 0);
	assert_int_equal(store_size(reflector_store(fx.nodes)), 60);
	assert_int_equal(reflector_stats(fx.nodes)->lists, 1);
	assert_int_equal(reflector_state(fx.nodes), REFLECTOR_WATCHING);
	/* The initial state is listed, not counted as watch events. */
	assert_int_equal(reflector_store(fx.nodes)->events, 0);
	const projection_node_t *n = store_get(reflector_store(fx.nodes), NULL, "node-42");
	assert_non_null(n);
	assert_string_equal(n->labels[0].key, "pool");
	assert_true(fixture_converges(&fx, 10000));
	/* The same stream follows changes. */
	assert_int_equal(testenv_sh(&fx.env, "kubectl label node node-07 seen=streamed >/dev/null"), 0);
	assert_true(fixture_converges(&fx, 10000));
	assert_int_equal(fx.gets, 0);
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
		cmocka_unit_test(test_initial_state_streams_in_the_watch),
		cmocka_unit_test(test_watch_survives_apiserver_restart),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
