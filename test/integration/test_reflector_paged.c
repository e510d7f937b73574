/*
 * The node cache against an API server that does not stream the initial
 * state (the WatchList feature gate off, as on Kubernetes 1.33): the
 * reflector's watch-list is refused with 422, and it LISTs in pages from then
 * on, watches from the list's resourceVersion, and never asks for a stream
 * again, not even after the API server restarts.
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
	return fixture_up_with_nodes(&fx, "reflector_paged", "--feature-gates=WatchList=false");
}

static int teardown(void **state)
{
	(void)state;
	testenv_down(&fx.env);
	return 0;
}

static void test_refused_stream_lists_in_pages(void **state)
{
	(void)state;
	reflector_options_t opt = { .page_size = 25 };
	fixture_start(&fx, fx.env.kubeconfig, &opt);
	assert_true(testenv_run_until(&fx.loop, fixture_synced, &fx, 30000));
	/* The refused watch-list, then 60 nodes in pages of 25: three LISTs. */
	assert_int_equal(fx.refused, 1);
	assert_int_equal(fx.gets, 4);
	assert_int_equal(store_size(reflector_store(fx.nodes)), 60);
	assert_int_equal(reflector_stats(fx.nodes)->lists, 1);
	assert_true(fixture_converges(&fx, 10000));
	assert_int_equal(testenv_sh(&fx.env, "kubectl label node node-07 seen=watched >/dev/null"), 0);
	assert_true(fixture_converges(&fx, 10000));
	assert_int_equal(reflector_state(fx.nodes), REFLECTOR_WATCHING);
}

static void test_restart_never_asks_for_a_stream_again(void **state)
{
	(void)state;
	unsigned gets = fx.gets;
	/* The API server restarted: the watch resumes, or the state is listed again, never streamed. */
	assert_int_equal(testenv_component(&fx.env, "restart", "kube-apiserver"), 0);
	assert_int_equal(testenv_sh(&fx.env, "kubectl delete node node-02 >/dev/null"), 0);
	assert_true(fixture_converges(&fx, 60000));
	assert_true(fx.gets > gets);
	assert_int_equal(fx.refused, 1);
	fixture_stop(&fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refused_stream_lists_in_pages),
		cmocka_unit_test(test_restart_never_asks_for_a_stream_again),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
