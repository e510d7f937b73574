/*
 * A kubeconfig whose user is an exec credential plugin, against a real API
 * server: a shell-script plugin prints an ExecCredential holding a
 * ServiceAccount token (`kubectl create token`). drashift's client runs it
 * once and caches the token, runs it again when the token expires and when the
 * API answers 401, reports a failing plugin with its stderr, and
 * `drashift-controller --check` connects with such a kubeconfig.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include "kube_http.h"
#include "kubeconfig.h"
#include "testenv.h"
#include "xalloc.h"

static testenv_t env;
static char plugin_dir[512];  /* the plugin's state: runs, token, bad-next, fail, info.N */
static char kubeconfig[600];  /* the cluster of env, the user an exec plugin */

/*
 * The plugin: counts its runs, keeps what KUBERNETES_EXEC_INFO said, prints
 * the token (or a refused one once after bad-next is created, or always while
 * bad-always exists, or fails when fail exists) with an expiry TTL seconds ahead (TTL comes from the kubeconfig's env).
 */
static const char plugin[] =
	"#!/bin/sh\n"
	"dir=$1\n"
	"n=$(( $(cat \"$dir/runs\" 2>/dev/null || echo 0) + 1 ))\n"
	"echo $n > \"$dir/runs\"\n"
	"printf '%s\\n' \"$KUBERNETES_EXEC_INFO\" > \"$dir/info.$n\"\n"
	"if [ -e \"$dir/fail\" ]; then echo \"token service unreachable: connection refused\" >&2; exit 3; fi\n"
	"token=$(cat \"$dir/token\")\n"
	"if [ -e \"$dir/bad-next\" ]; then rm \"$dir/bad-next\"; token=not-a-valid-token; fi\n"
	"if [ -e \"$dir/bad-always\" ]; then token=not-a-valid-token; fi\n"
	"exp=$(date -u -d \"+$TTL seconds\" +%Y-%m-%dT%H:%M:%SZ)\n"
	"printf '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
	"\"status\":{\"token\":\"%s\",\"expirationTimestamp\":\"%s\"}}\\n' \"$token\" \"$exp\"\n";

static void plugin_file(char *out, size_t len, const char *name)
{
	snprintf(out, len, "%s/%s", plugin_dir, name);
}

static int plugin_runs(void)
{
	char path[600];
	plugin_file(path, sizeof(path), "runs");
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return 0;
	int n = 0;
	if (fscanf(f, "%d", &n) != 1)
		n = -1;
	fclose(f);
	return n;
}

static void plugin_touch(const char *name)
{
	char path[600];
	plugin_file(path, sizeof(path), name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
}

static void plugin_reset(void)
{
	char path[600];
	static const char *const names[] = { "runs", "bad-next", "bad-always", "fail" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		plugin_file(path, sizeof(path), names[i]);
		unlink(path);
	}
}

/* Write a kubeconfig for env's cluster whose user runs the plugin with TTL seconds of validity. */
static void write_kubeconfig(int ttl, bool cluster_info)
{
	assert_int_equal(testenv_sh(&env,
				    "kubectl config view --raw --minify --flatten > %s && "
				    "kubectl --kubeconfig %s config set-credentials exec-user "
				    "--exec-api-version=client.authentication.k8s.io/v1 --exec-command=%s/plugin.sh "
				    "--exec-arg=%s --exec-env=TTL=%d --exec-interactive-mode=Never "
				    "--exec-provide-cluster-info=%s >/dev/null && "
				    "kubectl --kubeconfig %s config set-context --current --user=exec-user >/dev/null",
				    kubeconfig, kubeconfig, plugin_dir, plugin_dir, ttl, cluster_info ? "true" : "false",
				    kubeconfig),
			 0);
}

static int setup(void **state)
{
	(void)state;
	testenv_up(&env, "exec-credential", NULL);
	snprintf(plugin_dir, sizeof(plugin_dir), "%s/plugin", env.dir);
	snprintf(kubeconfig, sizeof(kubeconfig), "%s/exec-kubeconfig", env.dir);
	if (mkdir(plugin_dir, 0700) != 0)
		return -1;
	char path[600];
	plugin_file(path, sizeof(path), "plugin.sh");
	FILE *f = fopen(path, "w");
	if (f == NULL || fputs(plugin, f) < 0 || fclose(f) != 0 || chmod(path, 0700) != 0)
		return -1;
	/* A ServiceAccount allowed to list pods, and a token of it for the plugin to hand out. */
	return testenv_sh(&env,
			  "kubectl create serviceaccount exec-user -n default >/dev/null && "
			  "kubectl create clusterrole exec-user --verb=get,list --resource=pods >/dev/null && "
			  "kubectl create clusterrolebinding exec-user --clusterrole=exec-user "
			  "--serviceaccount=default:exec-user >/dev/null && "
			  "kubectl create token exec-user -n default --duration=1h > %s/token",
			  plugin_dir);
}

static int teardown(void **state)
{
	(void)state;
	testenv_down(&env);
	return 0;
}

static kube_http_t *client_open(uv_loop_t *loop)
{
	return testenv_client_open(loop, kubeconfig);
}

/* GET the pods of "default" (the ServiceAccount may list them): the answer's status. */
static long list_pods(uv_loop_t *loop, kube_http_t *http)
{
	testenv_result_t r = { 0 };
	kube_http_req_t req = { .method = "GET", .path = "/api/v1/namespaces/default/pods?limit=1" };
	assert_int_equal(kube_http_request(http, &req, testenv_on_result, &r, NULL), 0);
	assert_true(testenv_result_wait(loop, &r, 30000));
	long status = r.status;
	testenv_result_free(&r);
	return status;
}

static void test_token_is_cached_until_it_expires(void **state)
{
	(void)state;
	plugin_reset();
	write_kubeconfig(4, false);
	uv_loop_t loop;
	kube_http_t *http = client_open(&loop);
	assert_int_equal(plugin_runs(), 1);
	for (int i = 0; i < 3; i++)
		assert_int_equal(list_pods(&loop, http), 200);
	assert_int_equal(plugin_runs(), 1); /* cached */
	sleep(5);                           /* past expirationTimestamp */
	assert_int_equal(list_pods(&loop, http), 200);
	assert_int_equal(plugin_runs(), 2);
	assert_int_equal(list_pods(&loop, http), 200);
	assert_int_equal(plugin_runs(), 2);
	assert_int_equal(testenv_client_close(&loop, http), 0);
}

static void test_401_runs_the_plugin_again_once(void **state)
{
	(void)state;
	plugin_reset();
	write_kubeconfig(3600, false);
	plugin_touch("bad-next"); /* the first credential is refused */
	uv_loop_t loop;
	kube_http_t *http = client_open(&loop);
	assert_int_equal(plugin_runs(), 1);
	assert_int_equal(list_pods(&loop, http), 200);
	assert_int_equal(plugin_runs(), 2);
	assert_int_equal(list_pods(&loop, http), 200);
	assert_int_equal(plugin_runs(), 2);
	assert_int_equal(testenv_client_close(&loop, http), 0);
}

static void test_refused_token_gives_401_after_one_rerun(void **state)
{
	(void)state;
	plugin_reset();
	write_kubeconfig(3600, false);
	plugin_touch("bad-always");
	uv_loop_t loop;
	kube_http_t *http = client_open(&loop);
	assert_int_equal(list_pods(&loop, http), 401);
	assert_int_equal(plugin_runs(), 2); /* the start, and one re-run for the request */
	assert_int_equal(testenv_client_close(&loop, http), 0);
}

static void test_failing_plugin_is_reported_with_its_stderr(void **state)
{
	(void)state;
	plugin_reset();
	write_kubeconfig(3600, false);
	plugin_touch("fail");
	char err[1024] = "";
	kubeconfig_t cfg;
	assert_int_equal(kubeconfig_load_files(kubeconfig, NULL, &cfg, err, sizeof(err)), 0);
	uv_loop_t loop;
	uv_loop_init(&loop);
	kube_http_t *http = NULL;
	assert_int_equal(kube_http_init(&loop, &cfg, &http, err, sizeof(err)), -1);
	kubeconfig_free(&cfg);
	assert_int_equal(uv_loop_close(&loop), 0);
	char want[1024];
	snprintf(want, sizeof(want),
		 "exec plugin %s/plugin.sh: exit status 3: token service unreachable: connection refused", plugin_dir);
	assert_string_equal(err, want);
}

static void test_cluster_info_is_given_when_asked(void **state)
{
	(void)state;
	plugin_reset();
	write_kubeconfig(3600, true);
	uv_loop_t loop;
	kube_http_t *http = client_open(&loop);
	assert_int_equal(testenv_client_close(&loop, http), 0);
	char *info;
	assert_int_equal(testenv_sh_output(&env, &info, "cat %s/info.1", plugin_dir), 0);
	char *server;
	assert_int_equal(testenv_sh_output(&env, &server, "kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}'"), 0);
	char want[512];
	snprintf(want, sizeof(want), "\"server\":\"%s\"", server);
	if (strstr(info, want) == NULL || strstr(info, "\"certificate-authority-data\":\"") == NULL ||
	    strstr(info, "\"apiVersion\":\"client.authentication.k8s.io/v1\"") == NULL ||
	    strstr(info, "\"interactive\":false") == NULL)
		fail_msg("KUBERNETES_EXEC_INFO: %s", info);
	free(server);
	free(info);
}

static void test_controller_check_passes(void **state)
{
	(void)state;
	plugin_reset();
	write_kubeconfig(3600, false);
	const char *controller = getenv("DRASHIFT_CONTROLLER");
	assert_non_null(controller);
	assert_int_equal(testenv_sh(&env, "%s --kubeconfig %s --check --timeout 30s", controller, kubeconfig), 0);
	assert_int_equal(plugin_runs(), 1);
	/* The same with a plugin that fails: the check fails and says why. */
	plugin_touch("fail");
	char *out;
	assert_true(testenv_sh_output(&env, &out, "%s --kubeconfig %s --check --timeout 30s 2>&1", controller,
				      kubeconfig) != 0);
	if (strstr(out, "token service unreachable") == NULL)
		fail_msg("--check output: %s", out);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_token_is_cached_until_it_expires),
		cmocka_unit_test(test_401_runs_the_plugin_again_once),
		cmocka_unit_test(test_refused_token_gives_401_after_one_rerun),
		cmocka_unit_test(test_failing_plugin_is_reported_with_its_stderr),
		cmocka_unit_test(test_cluster_info_is_given_when_asked),
		cmocka_unit_test(test_controller_check_passes),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
