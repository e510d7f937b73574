/*
 * A watch resumed from a resourceVersion the server has compacted away
 * recovers by listing again, and ends equal to a fresh LIST; a connection
 * that goes silent is noticed by the idle timeout.
 *
 * The operator reaches the API server through a TCP relay (socat) that the
 * test cuts, as a network partition would, while kubectl (direct) keeps
 * changing nodes and etcd compacts the history. The API server runs without
 * its watch cache and compacts every second, so the old resourceVersion is
 * really gone when the operator comes back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <unistd.h>

#include "reflector_common.h"

static fixture_t fx;
static char relay_kubeconfig[400];
static int relay_port;

static int relay_start(void)
{
	/* setsid: the relay and its per-connection children form one group to cut at once. */
	return testenv_sh(&fx.env,
			  "api=$(sed -n 's|.*server: https://127.0.0.1:||p' \"$KUBECONFIG\"); "
			  "setsid socat TCP-LISTEN:%d,bind=127.0.0.1,fork,reuseaddr TCP:127.0.0.1:$api "
			  "</dev/null >/dev/null 2>&1 & echo $! > '%s/relay.pid'; "
			  "for i in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/%d) 2>/dev/null && exit 0; sleep 0.1; done; exit 1",
			  relay_port, fx.env.dir, relay_port);
}

static int relay_cut(void)
{
	return testenv_sh(&fx.env, "kill -KILL -- -$(cat '%s/relay.pid')", fx.env.dir);
}

static int setup(void **state)
{
	(void)state;
	testenv_up(&fx.env, "reflector-relist", "--watch-cache=false --etcd-compaction-interval=1s");
	relay_port = 20000 + (int)(getpid() % 10000);
	snprintf(relay_kubeconfig, sizeof(relay_kubeconfig), "%s/relay.kubeconfig", fx.env.dir);
	if (testenv_sh(&fx.env, "sed 's|server: https://127.0.0.1:[0-9]*|server: https://127.0.0.1:%d|' \"$KUBECONFIG\" > '%s'",
		       relay_port, relay_kubeconfig) != 0)
		return -1;
	if (relay_start() != 0)
		return -1;
	return testenv_sh(&fx.env, "for i in $(seq 1 10); do printf -- '---\\napiVersion: v1\\nkind: Node\\n"
				   "metadata:\\n  name: node-%%02d\\n' $i; done | kubectl create -f - >/dev/null");
}

static int teardown(void **state)
{
	(void)state;
	relay_cut();
	testenv_down(&fx.env);
	return 0;
}

static void test_compacted_resource_version_relists(void **state)
{
	(void)state;
	reflector_options_t opt = { .backoff_min_ms = 200, .backoff_max_ms = 1000 };
	fixture_start(&fx, relay_kubeconfig, &opt);
	assert_true(testenv_run_until(&fx.loop, fixture_synced, &fx, 30000));
	assert_true(fixture_converges(&fx, 10000));
	assert_int_equal(reflector_stats(fx.nodes)->relists, 0);

	/* Partition: the operator's connection dies; the cluster goes on without it. */
	assert_int_equal(relay_cut(), 0);
	assert_int_equal(testenv_sh(&fx.env, "kubectl delete node node-01 node-02 >/dev/null && "
					     "for i in $(seq 1 20); do kubectl label node node-03 round=$i --overwrite >/dev/null; done"),
			 0);
	/* Let the loop see the cut and back off, while etcd compacts (every second, history of one interval). */
	uv_sleep(3000);
	uv_run(&fx.loop, UV_RUN_NOWAIT);
	assert_int_equal(testenv_sh(&fx.env, "kubectl label node node-04 after=compaction >/dev/null"), 0);
	uv_sleep(2500);

	assert_int_equal(relay_start(), 0);
	assert_true(fixture_converges(&fx, 60000));
	assert_null(store_get(reflector_store(fx.nodes), NULL, "node-01"));
	assert_true(reflector_stats(fx.nodes)->relists >= 1);
	fixture_stop(&fx);
}

static bool watch_restarted(void *data)
{
	const uint64_t *before = data;
	return reflector_stats(fx.nodes)->watch_restarts > *before;
}

/*
 * A connection that dies silently (a frozen relay: no RST, no FIN) is noticed
 * by the client-side idle timeout, not after the kernel's TCP timeouts.
 */
static void test_silent_connection_is_noticed(void **state)
{
	(void)state;
	reflector_options_t opt = { .idle_timeout_ms = 2000, .backoff_min_ms = 200, .backoff_max_ms = 1000 };
	fixture_start(&fx, relay_kubeconfig, &opt);
	assert_true(testenv_run_until(&fx.loop, fixture_synced, &fx, 30000));
	uint64_t before = reflector_stats(fx.nodes)->watch_restarts;

	assert_int_equal(testenv_sh(&fx.env, "kill -STOP -- -$(cat '%s/relay.pid')", fx.env.dir), 0);
	assert_int_equal(testenv_sh(&fx.env, "kubectl label node node-05 frozen=during >/dev/null"), 0);
	/* Well before any TCP timeout, the watch is abandoned and retried. */
	bool noticed = testenv_run_until(&fx.loop, watch_restarted, &before, 8000);
	assert_int_equal(testenv_sh(&fx.env, "kill -CONT -- -$(cat '%s/relay.pid')", fx.env.dir), 0);
	assert_true(noticed);
	assert_true(fixture_converges(&fx, 60000));
	fixture_stop(&fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compacted_resource_version_relists),
		cmocka_unit_test(test_silent_connection_is_noticed),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
