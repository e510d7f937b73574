/*
 * Exec credential plugins without an API server: what a plugin's stdout must
 * hold (a table of ExecCredentials and the error each gives), and running
 * real small /bin/sh plugins: args and env reach them, a failure carries its
 * stderr (bounded, on one line), a plugin that hangs is killed at the timeout,
 * a missing command names the install hint.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec_credential.h"
#include "kubeconfig.h"
#include "xalloc.h"

#define V1 "client.authentication.k8s.io/v1"

static void test_decode(void **state)
{
	(void)state;
	static const struct {
		const char *json;
		const char *token, *cert; /* expected on success */
		int64_t expiry_us;
		const char *want_err;     /* NULL: success */
	} cases[] = {
		{ "{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"t0k\"}}", "t0k", NULL, 0,
		  NULL },
		{ "{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"t\","
		  "\"expirationTimestamp\":\"2006-01-02T15:04:05Z\"}}",
		  "t", NULL, INT64_C(1136214245000000), NULL },
		{ "{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\",\"status\":{\"clientCertificateData\":\"C\","
		  "\"clientKeyData\":\"K\"}}",
		  NULL, "C", 0, NULL },
		{ "not json", NULL, NULL, 0, "stdout is not an ExecCredential JSON object" },
		{ "{\"apiVersion\":\"" V1 "\",\"kind\":\"Secret\",\"status\":{\"token\":\"t\"}}", NULL, NULL, 0,
		  "stdout: kind is not ExecCredential" },
		{ "{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\"kind\":\"ExecCredential\","
		  "\"status\":{\"token\":\"t\"}}",
		  NULL, NULL, 0,
		  "stdout: apiVersion is client.authentication.k8s.io/v1beta1, the kubeconfig asks for " V1 },
		{ "{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\"}", NULL, NULL, 0, "stdout: no status" },
		{ "{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"\"}}", NULL, NULL, 0,
		  "stdout: status has no token and no client certificate" },
		{ "{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\",\"status\":{\"clientKeyData\":\"K\"}}", NULL,
		  NULL, 0, "stdout: status has a client key without its certificate" },
		{ "{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"t\","
		  "\"expirationTimestamp\":\"tomorrow\"}}",
		  NULL, NULL, 0, "stdout: status.expirationTimestamp is not an RFC 3339 time" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char err[256] = "";
		exec_credential_t c;
		int rc = exec_credential_decode(cases[i].json, strlen(cases[i].json), V1, &c, err, sizeof(err));
		if (cases[i].want_err != NULL) {
			if (rc != -1 || strcmp(err, cases[i].want_err) != 0)
				fail_msg("case %zu: got %d \"%s\", want \"%s\"", i, rc, err, cases[i].want_err);
			continue;
		}
		if (rc != 0)
			fail_msg("case %zu: %s", i, err);
		if (cases[i].token)
			assert_string_equal(c.token, cases[i].token);
		else
			assert_null(c.token);
		if (cases[i].cert) {
			assert_string_equal(c.cert.data, cases[i].cert);
			assert_non_null(c.key.data);
		} else {
			assert_null(c.cert.data);
		}
		assert_int_equal(c.expiry_us, cases[i].expiry_us);
		exec_credential_free(&c);
	}
}

/* ---- running plugins ---- */

static char dir[64];

static int dir_setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/drashift-exec-XXXXXX");
	return mkdtemp(dir) != NULL ? 0 : -1;
}

static int dir_teardown(void **state)
{
	(void)state;
	char *cmd = xasprintf("rm -rf %s", dir);
	int rc = system(cmd);
	free(cmd);
	return rc;
}

/* A config whose plugin is the script body (run by /bin/sh), with args and env. */
static void with_plugin(kubeconfig_t *cfg, kubeconfig_exec_t *x, const char *body)
{
	char *path = xasprintf("%s/plugin.sh", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "#!/bin/sh\n%s\n", body);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, 0700), 0);
	memset(cfg, 0, sizeof(*cfg));
	memset(x, 0, sizeof(*x));
	x->api_version = V1;
	x->command = path;
	x->interactive_mode = "IfAvailable";
	cfg->server = "https://k.example.com:6443";
	cfg->exec = x;
}

static void test_run_passes_args_env_and_exec_info(void **state)
{
	(void)state;
	kubeconfig_t cfg;
	kubeconfig_exec_t x;
	with_plugin(&cfg, &x,
		    "case \"$KUBERNETES_EXEC_INFO\" in *'\"interactive\":false'*'\"server\":\"https://k.example.com:6443\"'*) ;;"
		    " *) echo \"info: $KUBERNETES_EXEC_INFO\" >&2; exit 1;; esac\n"
		    "printf '{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"%s-%s-%s\"}}' "
		    "\"$1\" \"$2\" \"$HOME\"");
	char *args[] = { "a b", "c", NULL };
	char *env[] = { "HOME=/plugin-home", NULL };
	x.args = args;
	x.nargs = 2;
	x.env = env;
	x.nenv = 1;
	x.provide_cluster_info = true;
	char err[512] = "";
	exec_credential_t c;
	if (exec_credential_run(&cfg, 5000, &c, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	/* No shell splits the arguments; the kubeconfig's env wins over drashift's. */
	assert_string_equal(c.token, "a b-c-/plugin-home");
	exec_credential_free(&c);
	free(x.command);
}

static void test_run_failure_carries_stderr_on_one_line(void **state)
{
	(void)state;
	kubeconfig_t cfg;
	kubeconfig_exec_t x;
	/* 5000 bytes of stderr: only the start is kept. */
	with_plugin(&cfg, &x, "printf 'no SSO session\\nrun aws sso login\\n' >&2; head -c 5000 /dev/zero | tr '\\0' x >&2; exit 255");
	char err[4096] = "";
	exec_credential_t c;
	assert_int_equal(exec_credential_run(&cfg, 5000, &c, err, sizeof(err)), -1);
	char *want = xasprintf("exec plugin %s: exit status 255: no SSO session run aws sso login x", x.command);
	assert_memory_equal(err, want, strlen(want));
	assert_null(strchr(err, '\n'));
	assert_true(strlen(err) < strlen(want) + 1024);
	free(want);
	free(x.command);

	with_plugin(&cfg, &x, "echo '{\"kind\":\"ExecCredential\"}'");
	assert_int_equal(exec_credential_run(&cfg, 5000, &c, err, sizeof(err)), -1);
	want = xasprintf("exec plugin %s: stdout: apiVersion is missing, the kubeconfig asks for " V1, x.command);
	assert_string_equal(err, want);
	free(want);
	free(x.command);
}

static void test_run_hung_plugin_is_killed(void **state)
{
	(void)state;
	kubeconfig_t cfg;
	kubeconfig_exec_t x;
	/* A child of the plugin keeps the pipes open: it is killed with it. */
	with_plugin(&cfg, &x, "echo waiting for a browser >&2; sleep 600 & sleep 600");
	char err[512] = "";
	exec_credential_t c;
	assert_int_equal(exec_credential_run(&cfg, 300, &c, err, sizeof(err)), -1);
	char *want = xasprintf("exec plugin %s: timed out: waiting for a browser", x.command);
	assert_string_equal(err, want);
	free(want);
	free(x.command);
}

static void test_run_missing_command_names_the_hint(void **state)
{
	(void)state;
	kubeconfig_t cfg = { .server = "https://k.example.com" };
	kubeconfig_exec_t x = { .api_version = V1, .command = "drashift-no-such-plugin", .interactive_mode = "Never",
				.install_hint = "install it from example.com" };
	cfg.exec = &x;
	char err[512] = "";
	exec_credential_t c;
	assert_int_equal(exec_credential_run(&cfg, 5000, &c, err, sizeof(err)), -1);
	assert_string_equal(err, "exec plugin drashift-no-such-plugin: cannot run: No such file or directory; "
				 "install it from example.com");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode),
		cmocka_unit_test_setup_teardown(test_run_passes_args_env_and_exec_info, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_run_failure_carries_stderr_on_one_line, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(test_run_hung_plugin_is_killed, dir_setup, dir_teardown),
		cmocka_unit_test(test_run_missing_command_names_the_hint),
	};
	return cmocka_run_group_tests_name("exec_credential", tests, NULL, NULL);
}
