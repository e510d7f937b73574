/*
 * kubeconfig loading: what a user pointing drashift at a cluster relies on.
 *
 * Fixtures live in FIXTURES (an absolute path set by the build). Every error
 * test checks the exact message, because "which file, which field" is the
 * whole point of the message. Every test resets the environment variables
 * kubeconfig_load() looks at, so the order of tests does not matter.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kubeconfig.h"
#include "xalloc.h"

#define F(name) FIXTURES "/" name
#define SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

#define assert_contains(hay, needle)                                                      \
	do {                                                                               \
		if (strstr((hay), (needle)) == NULL)                                       \
			fail_msg("\"%s\" does not contain \"%s\"", (hay), (needle));       \
	} while (0)

static char *saved_home;
static char saved_cwd[PATH_MAX];

static int group_setup(void **state)
{
	(void)state;
	const char *home = getenv("HOME");
	saved_home = home != NULL ? xstrdup(home) : NULL;
	if (getcwd(saved_cwd, sizeof(saved_cwd)) == NULL)
		return -1;
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	free(saved_home);
	return 0;
}

static int env_setup(void **state)
{
	(void)state;
	unsetenv("KUBECONFIG");
	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBERNETES_SERVICE_PORT");
	return 0;
}

static int env_teardown(void **state)
{
	(void)state;
	unsetenv("KUBECONFIG");
	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBERNETES_SERVICE_PORT");
	if (saved_home != NULL)
		setenv("HOME", saved_home, 1);
	else
		unsetenv("HOME");
	return chdir(saved_cwd);
}

static void assert_zeroed(const kubeconfig_t *cfg)
{
	kubeconfig_t zero;
	memset(&zero, 0, sizeof(zero));
	assert_memory_equal(cfg, &zero, sizeof(zero));
}

/* Loads a list that must fail; checks out is left zeroed and returns the message. */
static const char *load_files_fail(const char *list, const char *context)
{
	static char err[1024];
	kubeconfig_t cfg;
	memset(&cfg, 0xa5, sizeof(cfg)); /* garbage in: must come back zeroed */
	err[0] = '\0';
	assert_int_equal(kubeconfig_load_files(list, context, &cfg, err, sizeof(err)), -1);
	assert_zeroed(&cfg);
	assert_true(strlen(err) > 0);
	assert_null(strchr(err, '\n'));
	return err;
}

static void load_files_ok(const char *list, const char *context, kubeconfig_t *cfg)
{
	char err[1024] = "";
	int rc = kubeconfig_load_files(list, context, cfg, err, sizeof(err));
	if (rc != 0)
		fail_msg("kubeconfig_load_files(%s) failed: %s", list, err);
}

/* ---- successful loads ---- */

static void test_basic_token(void **state)
{
	(void)state;
	kubeconfig_t cfg;
	load_files_ok(F("basic.yaml"), NULL, &cfg);
	assert_string_equal(cfg.source, F("basic.yaml"));
	assert_string_equal(cfg.context, "dev");
	/* Trailing slashes are stripped so paths can be appended. */
	assert_string_equal(cfg.server, "https://api.dev.example.com:6443");
	assert_string_equal(cfg.tls_server_name, "kubernetes.default");
	assert_false(cfg.insecure_skip_tls_verify);
	assert_string_equal(cfg.token, "dev-token-123");
	assert_null(cfg.token_file);
	assert_null(cfg.ca_file);
	assert_null(cfg.ca.data);
	assert_int_equal(cfg.ca.len, 0);
	assert_null(cfg.client_cert_file);
	assert_null(cfg.client_cert.data);
	assert_null(cfg.client_key_file);
	assert_null(cfg.client_key.data);
	kubeconfig_free(&cfg);
	assert_zeroed(&cfg);
}

static void test_explicit_context_overrides_current(void **state)
{
	(void)state;
	kubeconfig_t cfg;
	load_files_ok(F("basic.yaml"), "prod", &cfg);
	assert_string_equal(cfg.context, "prod");
	assert_string_equal(cfg.server, "http://10.0.0.1:8080");
	assert_string_equal(cfg.token, "prod-token-456");
	assert_null(cfg.tls_server_name);
	kubeconfig_free(&cfg);

	/* An empty context means "use current-context", like an empty --context. */
	load_files_ok(F("basic.yaml"), "", &cfg);
	assert_string_equal(cfg.context, "dev");
	kubeconfig_free(&cfg);
}

static void test_inline_data_decoded_exactly(void **state)
{
	(void)state;
	static const char ca[] = "-----BEGIN CERTIFICATE-----\n"
				 "MIIBdrashiftTESTca0123456789\n"
				 "-----END CERTIFICATE-----\n";
	static const char cert[] = "-----BEGIN CERTIFICATE-----\n"
				   "client-cert-bytes\n"
				   "-----END CERTIFICATE-----\n";
	static const unsigned char key[] = { 0x00, 0xff, 0x10, 0x80, 0x7f, 0x0a, 0x00, 0x01 };
	kubeconfig_t cfg;

	load_files_ok(F("inline-data.yaml"), NULL, &cfg);
	assert_string_equal(cfg.server, "https://192.0.2.10:6443");
	assert_null(cfg.ca_file);
	assert_int_equal(cfg.ca.len, sizeof(ca) - 1);
	assert_memory_equal(cfg.ca.data, ca, sizeof(ca) - 1);
	assert_int_equal(cfg.ca.data[cfg.ca.len], '\0');
	assert_int_equal(cfg.client_cert.len, sizeof(cert) - 1);
	assert_memory_equal(cfg.client_cert.data, cert, sizeof(cert) - 1);
	assert_int_equal(cfg.client_cert.data[cfg.client_cert.len], '\0');
	/* Binary with NUL bytes inside: len counts them, the extra NUL is not counted. */
	assert_int_equal(cfg.client_key.len, sizeof(key));
	assert_memory_equal(cfg.client_key.data, key, sizeof(key));
	assert_int_equal(cfg.client_key.data[cfg.client_key.len], '\0');
	assert_null(cfg.client_cert_file);
	assert_null(cfg.client_key_file);
	assert_null(cfg.token);
	kubeconfig_free(&cfg);
}

static void test_relative_paths_resolve_against_kubeconfig_folder(void **state)
{
	(void)state;
	kubeconfig_t cfg;
	load_files_ok(F("nested/relative.yaml"), NULL, &cfg);
	assert_string_equal(cfg.ca_file, F("nested/ca.crt"));
	assert_string_equal(cfg.client_cert_file, F("certs/client.crt"));
	assert_string_equal(cfg.client_key_file, F("nested/keys/client.key"));
	assert_string_equal(cfg.token_file, F("nested/token"));
	kubeconfig_free(&cfg);
}

/*
 * The kubeconfig path itself relative to the working directory: the fields
 * still resolve against the kubeconfig's folder, and come out absolute.
 */
static void test_relative_kubeconfig_path(void **state)
{
	(void)state;
	char cwd[PATH_MAX];
	char want[PATH_MAX + 64];
	kubeconfig_t cfg;

	assert_int_equal(chdir(F("merge")), 0);
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	load_files_ok("../nested/relative.yaml", NULL, &cfg);
	assert_string_equal(cfg.source, "../nested/relative.yaml");
	/* cwd is FIXTURES/merge; the CA sits in FIXTURES/nested. */
	char *slash = strrchr(cwd, '/');
	assert_non_null(slash);
	*slash = '\0';
	snprintf(want, sizeof(want), "%s/nested/ca.crt", cwd);
	assert_string_equal(cfg.ca_file, want);
	snprintf(want, sizeof(want), "%s/certs/client.crt", cwd);
	assert_string_equal(cfg.client_cert_file, want);
	kubeconfig_free(&cfg);
}

static void test_home_and_absolute_paths(void **state)
{
	(void)state;
	kubeconfig_t cfg;
	setenv("HOME", "/home/tester", 1);
	load_files_ok(F("nested/relative.yaml"), "abs", &cfg);
	assert_string_equal(cfg.client_cert_file, "/etc/drashift/client.crt");
	assert_string_equal(cfg.client_key_file, "/home/tester/keys/client.key");
	assert_string_equal(cfg.token_file, "/home/tester/token");
	kubeconfig_free(&cfg);
}

static void test_token_file(void **state)
{
	(void)state;
	kubeconfig_t cfg;
	load_files_ok(F("merge/second.yaml"), NULL, &cfg);
	assert_string_equal(cfg.context, "second");
	assert_null(cfg.token);
	assert_string_equal(cfg.token_file, F("merge/token"));
	kubeconfig_free(&cfg);
}

static void test_insecure_skip_tls_verify(void **state)
{
	(void)state;
	kubeconfig_t cfg;
	load_files_ok(F("insecure.yaml"), NULL, &cfg);
	assert_true(cfg.insecure_skip_tls_verify);
	assert_string_equal(cfg.server, "https://lab.example.com:6443");
	/* A context without a user is anonymous, as in kubectl. */
	assert_null(cfg.token);
	assert_null(cfg.token_file);
	assert_null(cfg.client_cert.data);
	kubeconfig_free(&cfg);
}

/* ---- merged lists ---- */

#define MERGE_LIST                                                                           \
	F("merge-first.yaml") ":" F("does-not-exist.yaml") "::" F("merge/second.yaml") ":" \
		F("merge-third.yaml") ":"

static void test_merge_current_context_from_first_file_that_sets_it(void **state)
{
	(void)state;
	kubeconfig_t cfg;
	load_files_ok(MERGE_LIST, NULL, &cfg);
	/* merge-first sets "", so merge/second's "second" wins over merge-third's. */
	assert_string_equal(cfg.context, "second");
	assert_string_equal(cfg.source, F("merge/second.yaml"));
	/* Cluster "shared" comes from merge-first, the first file to define it. */
	assert_string_equal(cfg.server, "https://first.example.com");
	/* The user is from merge/second, so its tokenFile resolves there. */
	assert_string_equal(cfg.token_file, F("merge/token"));
	kubeconfig_free(&cfg);
}

static void test_merge_first_definition_wins(void **state)
{
	(void)state;
	kubeconfig_t cfg;
	load_files_ok(MERGE_LIST, "first", &cfg);
	assert_string_equal(cfg.source, F("merge-first.yaml"));
	assert_string_equal(cfg.server, "https://first.example.com");
	assert_string_equal(cfg.token, "first-token");
	assert_null(cfg.token_file);
	kubeconfig_free(&cfg);

	load_files_ok(MERGE_LIST, "third", &cfg);
	assert_string_equal(cfg.source, F("merge-third.yaml"));
	assert_string_equal(cfg.server, "https://third.example.com");
	kubeconfig_free(&cfg);

	/* Reversed order: now merge/second defines "shared" and "first" first. */
	load_files_ok(F("merge/second.yaml") ":" F("merge-first.yaml"), "first", &cfg);
	assert_string_equal(cfg.source, F("merge/second.yaml"));
	assert_string_equal(cfg.server, "https://second-only.example.com");
	assert_null(cfg.token);
	assert_string_equal(cfg.token_file, F("merge/token"));
	kubeconfig_free(&cfg);
}

static void test_merge_with_empty_file(void **state)
{
	(void)state;
	kubeconfig_t cfg;
	load_files_ok(F("empty.yaml") ":" F("basic.yaml"), NULL, &cfg);
	assert_string_equal(cfg.source, F("basic.yaml"));
	assert_string_equal(cfg.context, "dev");
	kubeconfig_free(&cfg);
}

/* ---- errors ---- */

/*
 * Every load that must fail, with the exact message: which file, which field.
 * Each row loads the list with the context (NULL: the current context).
 */
static void test_errors(void **state)
{
	(void)state;
	static const struct {
		const char *list, *context, *want;
	} cases[] = {
		{ F("does-not-exist.yaml"), NULL,
		  "kubeconfig " F("does-not-exist.yaml") ": No such file or directory" },
		{ F("a.yaml") "::" F("b.yaml"), NULL,
		  "kubeconfig " F("a.yaml") ":" F("b.yaml") ": none of the listed files exists" },
		{ "::", NULL,
		  "kubeconfig: the path list \"::\" names no file" },
		{ F("malformed.yaml"), NULL,
		  "kubeconfig " F("malformed.yaml") ": line 3: mapping values are not allowed in this context" },
		{ F("basic.yaml") ":" F("malformed.yaml"), NULL,
		  "kubeconfig " F("malformed.yaml") ": line 3: mapping values are not allowed in this context" },
		{ F("basic.yaml"), "staging",
		  "kubeconfig " F("basic.yaml") ": context \"staging\" not found" },
		{ F("no-current-context.yaml"), NULL,
		  "kubeconfig " F("no-current-context.yaml") ": current-context is empty and no context was given" },
		{ F("bad-refs.yaml"), NULL,
		  "kubeconfig " F("bad-refs.yaml") ": contexts[\"dev\"].context.cluster: cluster \"nope\" not found" },
		{ F("bad-refs.yaml"), "clusterless",
		  "kubeconfig " F("bad-refs.yaml") ": contexts[\"clusterless\"].context.cluster: missing" },
		{ F("bad-refs.yaml"), "ghost",
		  "kubeconfig " F("bad-refs.yaml") ": contexts[\"ghost\"].context.user: user \"ghost\" not found" },
		{ F("bad-clusters.yaml"), "no-server",
		  "kubeconfig " F("bad-clusters.yaml") ": clusters[\"c\"].cluster.server: missing" },
		{ F("bad-clusters.yaml"), "ftp",
		  "kubeconfig " F("bad-clusters.yaml") ": clusters[\"ftp\"].cluster.server: \"ftp://files.example.com\" is "
		  "not an https:// or http:// URL" },
		{ F("bad-clusters.yaml"), "bad-base64",
		  "kubeconfig " F("bad-clusters.yaml") ": clusters[\"bad-base64\"].cluster.certificate-authority-data: "
		  "invalid base64" },
		{ F("bad-users.yaml"), "bad-key",
		  "kubeconfig " F("bad-users.yaml") ": users[\"bad-key\"].user.client-key-data: invalid base64" },
		{ F("bad-clusters.yaml"), "two-cas",
		  "kubeconfig " F("bad-clusters.yaml") ": clusters[\"two-cas\"].cluster.certificate-authority-data: "
		  "conflicts "
		  "with certificate-authority; set only one" },
		{ F("bad-clusters.yaml"), "insecure-with-ca",
		  "kubeconfig " F("bad-clusters.yaml") ": clusters[\"insecure-with-ca\"].cluster.insecure-skip-tls-verify: "
		  "cannot be combined with a certificate authority" },
		{ F("bad-clusters.yaml"), "not-bool",
		  "kubeconfig " F("bad-clusters.yaml") ": clusters[\"not-bool\"].cluster.insecure-skip-tls-verify: "
		  "\"maybe\" is not a boolean" },
		{ F("bad-users.yaml"), "keyless",
		  "kubeconfig " F("bad-users.yaml") ": users[\"keyless\"].user.client-key: missing; a client certificate "
		  "needs its key" },
		{ F("duplicate.yaml"), NULL,
		  "kubeconfig " F("duplicate.yaml") ": clusters[\"c\"]: name defined twice" },
		{ F("not-a-list.yaml"), NULL,
		  "kubeconfig " F("not-a-list.yaml") ": clusters: expected a list" },
		{ F("exec.yaml"), "always",
		  "kubeconfig " F("exec.yaml") ": users[\"always\"].user.exec.interactiveMode: Always needs a terminal and drashift runs without one; use Never or IfAvailable" },
		{ F("exec.yaml"), "no-mode",
		  "kubeconfig " F("exec.yaml") ": users[\"no-mode\"].user.exec.interactiveMode: missing; use Never or IfAvailable" },
		{ F("exec.yaml"), "bad-mode",
		  "kubeconfig " F("exec.yaml") ": users[\"bad-mode\"].user.exec.interactiveMode: \"Sometimes\" is not Never, IfAvailable or Always" },
		{ F("exec.yaml"), "old-version",
		  "kubeconfig " F("exec.yaml") ": users[\"old-version\"].user.exec.apiVersion: \"client.authentication.k8s.io/v1alpha1\" is not client.authentication.k8s.io/v1 or /v1beta1" },
		{ F("exec.yaml"), "no-version",
		  "kubeconfig " F("exec.yaml") ": users[\"no-version\"].user.exec.apiVersion: missing" },
		{ F("exec.yaml"), "no-command",
		  "kubeconfig " F("exec.yaml") ": users[\"no-command\"].user.exec.command: missing" },
		{ F("exec.yaml"), "env-no-name",
		  "kubeconfig " F("exec.yaml") ": users[\"env-no-name\"].user.exec.env[0].name: missing" },
		{ F("exec.yaml"), "args-not-list",
		  "kubeconfig " F("exec.yaml") ": users[\"args-not-list\"].user.exec.args: expected a list of strings" },
		{ F("exec.yaml"), "with-token",
		  "kubeconfig " F("exec.yaml") ": users[\"with-token\"].user.exec: cannot be combined with token, tokenFile or a client certificate; set only one" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *err = load_files_fail(cases[i].list, cases[i].context);
		if (strcmp(err, cases[i].want) != 0)
			fail_msg("case %zu (%s, context %s):\n got  \"%s\"\n want \"%s\"", i, cases[i].list,
				 cases[i].context ? cases[i].context : "(current)", err, cases[i].want);
	}
}

/* The exec plugin of the managed clouds: what runs, with what, and how. */
static void test_exec_plugin(void **state)
{
	(void)state;
	kubeconfig_t cfg;
	load_files_ok(F("exec.yaml"), NULL, &cfg);
	assert_non_null(cfg.exec);
	assert_string_equal(cfg.exec->api_version, "client.authentication.k8s.io/v1");
	/* A command with a '/' resolves against the kubeconfig's folder, as in kubectl. */
	assert_string_equal(cfg.exec->command, F("bin/get-token"));
	assert_int_equal(cfg.exec->nargs, 4);
	assert_string_equal(cfg.exec->args[0], "eks");
	assert_string_equal(cfg.exec->args[3], "prod");
	assert_int_equal(cfg.exec->nenv, 2);
	assert_string_equal(cfg.exec->env[0], "AWS_PROFILE=prod");
	assert_string_equal(cfg.exec->env[1], "EMPTY=");
	assert_string_equal(cfg.exec->interactive_mode, "Never");
	assert_false(cfg.exec->provide_cluster_info);
	assert_null(cfg.exec->install_hint);
	assert_null(cfg.token);
	kubeconfig_exec_t *copy = kubeconfig_exec_dup(cfg.exec);
	assert_string_equal(copy->args[2], "--cluster-name");
	assert_string_equal(copy->env[0], "AWS_PROFILE=prod");
	kubeconfig_exec_free(copy);
	kubeconfig_free(&cfg);

	/* v1beta1 defaults interactiveMode to IfAvailable; a bare command is looked up in PATH. */
	load_files_ok(F("exec.yaml"), "gke", &cfg);
	assert_string_equal(cfg.exec->api_version, "client.authentication.k8s.io/v1beta1");
	assert_string_equal(cfg.exec->command, "gke-gcloud-auth-plugin");
	assert_string_equal(cfg.exec->interactive_mode, "IfAvailable");
	assert_true(cfg.exec->provide_cluster_info);
	assert_int_equal(cfg.exec->nargs, 0);
	assert_string_equal(cfg.exec->install_hint, "install it with gcloud components install gke-gcloud-auth-plugin");
	kubeconfig_free(&cfg);
}

static void test_error_exec_auth_unsupported(void **state)
{
	(void)state;
	const char *err = load_files_fail(F("bad-users.yaml"), "exec");
	assert_contains(err, "kubeconfig " F("bad-users.yaml")
			     ": users[\"u\"].user.exec.interactiveMode: missing");
	err = load_files_fail(F("bad-users.yaml"), "oidc");
	assert_contains(err, "kubeconfig " F("bad-users.yaml")
			     ": users[\"oidc\"].user.auth-provider: auth providers are not "
			     "supported");

	/* Another user's exec plugin does not stop the chosen context from working. */
	kubeconfig_t cfg;
	load_files_ok(F("bad-users.yaml"), NULL, &cfg);
	assert_string_equal(cfg.context, "ok");
	assert_string_equal(cfg.token, "ok-token");
	kubeconfig_free(&cfg);
}

static void test_error_truncated_to_errlen(void **state)
{
	(void)state;
	char err[16];
	kubeconfig_t cfg;
	memset(err, 'x', sizeof(err));
	assert_int_equal(kubeconfig_load_files(F("basic.yaml"), "staging", &cfg, err, sizeof(err)),
			 -1);
	assert_int_equal(strlen(err), sizeof(err) - 1);
	assert_memory_equal(err, "kubeconfig /", 12);
	assert_zeroed(&cfg);
	/* No buffer at all is allowed too. */
	assert_int_equal(kubeconfig_load_files(F("basic.yaml"), "staging", &cfg, NULL, 0), -1);
}

/* ---- large and hostile files ---- */

/* A temporary file holding what gen writes; returns its path (free it, unlink it). */
static char *write_temp(void (*gen)(FILE *f, void *arg), void *arg)
{
	char *path = xstrdup("/tmp/drashift-kubeconfig-XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	assert_non_null(f);
	gen(f, arg);
	assert_int_equal(fclose(f), 0);
	return path;
}

static void gen_many_clusters(FILE *f, void *arg)
{
	int n = *(int *)arg;
	fputs("apiVersion: v1\nkind: Config\ncurrent-context: last\nclusters:\n", f);
	for (int i = 0; i < n; i++)
		fprintf(f, "- name: c%d\n  cluster:\n    server: https://10.0.%d.%d:6443\n", i, i / 256 % 256, i % 256);
	fprintf(f, "contexts:\n- name: last\n  context:\n    cluster: c%d\n", n - 1);
}

/* A fleet's worth of clusters in one file loads, and the last one is found by name. */
static void test_forty_thousand_clusters_load(void **state)
{
	(void)state;
	int n = 40000;
	char *path = write_temp(gen_many_clusters, &n);
	kubeconfig_t cfg;
	load_files_ok(path, NULL, &cfg);
	assert_string_equal(cfg.server, "https://10.0.156.63:6443");
	kubeconfig_free(&cfg);
	unlink(path);
	free(path);
}

static void gen_repeated(FILE *f, void *arg)
{
	const char *const *parts = arg; /* prefix, unit, count */
	fputs(parts[0], f);
	for (long i = strtol(parts[2], NULL, 10); i > 0; i--)
		fputs(parts[1], f);
}

/* Nesting and anchors that would make the parser quadratic are refused up front, by name. */
static void test_deep_nesting_and_anchors_refused(void **state)
{
	(void)state;
	static const struct {
		const char *parts[3];
		const char *want; /* after "kubeconfig PATH: " */
	} cases[] = {
		{ { "", "[", "100000" }, "line 1: nested more than 64 deep" },
		{ { "", "{a: ", "100000" }, "line 1: nested more than 64 deep" },
		{ { "clusters:\n", "- ", "1000" }, "line 2: nested more than 64 deep" },
		{ { "x:\n", "- &a x\n", "100000" }, "line 66: more than 64 anchors; a kubeconfig needs none" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *path = write_temp(gen_repeated, (void *)cases[i].parts);
		char want[512];
		snprintf(want, sizeof(want), "kubeconfig %s: %s", path, cases[i].want);
		const char *err = load_files_fail(path, NULL);
		if (strcmp(err, want) != 0)
			fail_msg("case %zu:\n got  \"%s\"\n want \"%s\"", i, err, want);
		unlink(path);
		free(path);
	}
	/* Nesting up to the limit is fine (the file is then refused for what it is, not for its depth). */
	static const char *const ok[3] = { "", "[", "63" };
	char *path = write_temp(gen_repeated, (void *)ok);
	const char *err = load_files_fail(path, NULL);
	assert_null(strstr(err, "nested"));
	unlink(path);
	free(path);
}

/* ---- in-cluster ---- */

typedef struct {
	char dir[64];
	char token[128];
	char ca[128];
} sa_fixture_t;

static void write_file(const char *path, const char *content)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_true(fputs(content, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

static int sa_setup(void **state)
{
	env_setup(state);
	sa_fixture_t *sa = xcalloc(1, sizeof(*sa));
	snprintf(sa->dir, sizeof(sa->dir), "/tmp/drashift-sa-XXXXXX");
	if (mkdtemp(sa->dir) == NULL) {
		free(sa);
		return -1;
	}
	snprintf(sa->token, sizeof(sa->token), "%s/token", sa->dir);
	snprintf(sa->ca, sizeof(sa->ca), "%s/ca.crt", sa->dir);
	write_file(sa->token, "eyJhbGciOiJSUzI1NiJ9.test\n");
	write_file(sa->ca, "-----BEGIN CERTIFICATE-----\nTEST\n-----END CERTIFICATE-----\n");
	*state = sa;
	return 0;
}

static int sa_teardown(void **state)
{
	sa_fixture_t *sa = *state;
	unlink(sa->token);
	unlink(sa->ca);
	int rc = rmdir(sa->dir);
	free(sa);
	env_teardown(state);
	return rc;
}

static void test_in_cluster(void **state)
{
	sa_fixture_t *sa = *state;
	char err[512] = "";
	kubeconfig_t cfg;

	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	assert_int_equal(kubeconfig_load_in_cluster(sa->dir, &cfg, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_string_equal(cfg.source, "in-cluster");
	assert_null(cfg.context);
	assert_string_equal(cfg.server, "https://10.96.0.1:443");
	assert_string_equal(cfg.token_file, sa->token);
	assert_string_equal(cfg.ca_file, sa->ca);
	assert_null(cfg.token);
	assert_null(cfg.ca.data);
	assert_false(cfg.insecure_skip_tls_verify);
	kubeconfig_free(&cfg);
	assert_zeroed(&cfg);
}

static void test_in_cluster_ipv6_host_bracketed(void **state)
{
	sa_fixture_t *sa = *state;
	char err[512] = "";
	kubeconfig_t cfg;

	setenv("KUBERNETES_SERVICE_HOST", "fd00:10:96::1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "6443", 1);
	assert_int_equal(kubeconfig_load_in_cluster(sa->dir, &cfg, err, sizeof(err)), 0);
	assert_string_equal(cfg.server, "https://[fd00:10:96::1]:6443");
	kubeconfig_free(&cfg);
}

static void test_in_cluster_missing_token(void **state)
{
	sa_fixture_t *sa = *state;
	char err[512] = "";
	char want[512];
	kubeconfig_t cfg;

	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	assert_int_equal(unlink(sa->token), 0);
	assert_int_equal(kubeconfig_load_in_cluster(sa->dir, &cfg, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "kubeconfig in-cluster: %s: No such file or directory",
		 sa->token);
	assert_string_equal(err, want);
	assert_zeroed(&cfg);
}

static void test_in_cluster_missing_ca(void **state)
{
	sa_fixture_t *sa = *state;
	char err[512] = "";
	char want[512];
	kubeconfig_t cfg;

	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	assert_int_equal(unlink(sa->ca), 0);
	assert_int_equal(kubeconfig_load_in_cluster(sa->dir, &cfg, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "kubeconfig in-cluster: %s: No such file or directory",
		 sa->ca);
	assert_string_equal(err, want);
	assert_zeroed(&cfg);
}

static void test_in_cluster_bad_env(void **state)
{
	sa_fixture_t *sa = *state;
	char err[512] = "";
	kubeconfig_t cfg;

	assert_int_equal(kubeconfig_load_in_cluster(sa->dir, &cfg, err, sizeof(err)), -1);
	assert_string_equal(err, "kubeconfig in-cluster: KUBERNETES_SERVICE_HOST and "
				 "KUBERNETES_SERVICE_PORT must be set");
	assert_zeroed(&cfg);

	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "https", 1);
	assert_int_equal(kubeconfig_load_in_cluster(sa->dir, &cfg, err, sizeof(err)), -1);
	assert_string_equal(err, "kubeconfig in-cluster: KUBERNETES_SERVICE_PORT: \"https\" is "
				 "not a port");
	assert_zeroed(&cfg);
}

/* ---- kubeconfig_load precedence ---- */

static void test_load_explicit_path_beats_kubeconfig(void **state)
{
	(void)state;
	char err[512] = "";
	kubeconfig_t cfg;

	setenv("KUBECONFIG", F("insecure.yaml"), 1);
	assert_int_equal(kubeconfig_load(F("basic.yaml"), NULL, &cfg, err, sizeof(err)), 0);
	assert_string_equal(cfg.source, F("basic.yaml"));
	assert_string_equal(cfg.server, "https://api.dev.example.com:6443");
	kubeconfig_free(&cfg);

	/* A missing explicit file is an error; it does not fall back to $KUBECONFIG. */
	assert_int_equal(kubeconfig_load(F("nope.yaml"), NULL, &cfg, err, sizeof(err)), -1);
	assert_string_equal(err, "kubeconfig " F("nope.yaml") ": No such file or directory");
	assert_zeroed(&cfg);
}

static void test_load_kubeconfig_list_beats_in_cluster(void **state)
{
	(void)state;
	char err[512] = "";
	kubeconfig_t cfg;

	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	setenv("KUBECONFIG", F("does-not-exist.yaml") ":" F("insecure.yaml"), 1);
	assert_int_equal(kubeconfig_load(NULL, NULL, &cfg, err, sizeof(err)), 0);
	assert_string_equal(cfg.source, F("insecure.yaml"));
	assert_string_equal(cfg.server, "https://lab.example.com:6443");
	kubeconfig_free(&cfg);

	/* The context argument applies to $KUBECONFIG too. */
	setenv("KUBECONFIG", F("basic.yaml"), 1);
	assert_int_equal(kubeconfig_load(NULL, "prod", &cfg, err, sizeof(err)), 0);
	assert_string_equal(cfg.server, "http://10.0.0.1:8080");
	kubeconfig_free(&cfg);
}

/*
 * With the service env set and no KUBECONFIG, the in-cluster files are used
 * even though ~/.kube/config exists. Outside a pod they are missing, which
 * shows in the error; inside one the load succeeds as "in-cluster".
 */
static void test_load_in_cluster_beats_home(void **state)
{
	(void)state;
	char err[512] = "";
	kubeconfig_t cfg;

	setenv("HOME", F("home"), 1);
	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	if (kubeconfig_load(NULL, NULL, &cfg, err, sizeof(err)) == 0) {
		assert_string_equal(cfg.source, "in-cluster");
		assert_string_equal(cfg.server, "https://10.96.0.1:443");
		kubeconfig_free(&cfg);
	} else {
		assert_string_equal(err, "kubeconfig in-cluster: " SA_DIR
					 "/token: No such file or directory");
		assert_zeroed(&cfg);
	}
}

static void test_load_home_fallback(void **state)
{
	(void)state;
	char err[512] = "";
	kubeconfig_t cfg;

	setenv("HOME", F("home"), 1);
	setenv("KUBECONFIG", "", 1); /* empty counts as unset */
	assert_int_equal(kubeconfig_load("", NULL, &cfg, err, sizeof(err)), 0);
	assert_string_equal(cfg.source, F("home/.kube/config"));
	assert_string_equal(cfg.server, "https://home.example.com");
	kubeconfig_free(&cfg);
}

static void test_load_nothing_found(void **state)
{
	(void)state;
	static const char want[] =
		"no kubeconfig: pass --kubeconfig, set KUBECONFIG, or run in a cluster";
	char err[512] = "";
	kubeconfig_t cfg;

	setenv("HOME", F("nested"), 1); /* exists, but has no .kube/config */
	assert_int_equal(kubeconfig_load(NULL, NULL, &cfg, err, sizeof(err)), -1);
	assert_string_equal(err, want);
	assert_zeroed(&cfg);

	unsetenv("HOME");
	err[0] = '\0';
	assert_int_equal(kubeconfig_load(NULL, NULL, &cfg, err, sizeof(err)), -1);
	assert_string_equal(err, want);
}

static void test_free_is_safe_on_zeroed_and_twice(void **state)
{
	(void)state;
	kubeconfig_t cfg;
	memset(&cfg, 0, sizeof(cfg));
	kubeconfig_free(&cfg);
	assert_zeroed(&cfg);
	load_files_ok(F("inline-data.yaml"), NULL, &cfg);
	kubeconfig_free(&cfg);
	kubeconfig_free(&cfg);
	assert_zeroed(&cfg);
	kubeconfig_free(NULL);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, env_setup, env_teardown)
#define T_SA(fn) cmocka_unit_test_setup_teardown(fn, sa_setup, sa_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_basic_token),
		T(test_explicit_context_overrides_current),
		T(test_inline_data_decoded_exactly),
		T(test_relative_paths_resolve_against_kubeconfig_folder),
		T(test_relative_kubeconfig_path),
		T(test_home_and_absolute_paths),
		T(test_token_file),
		T(test_insecure_skip_tls_verify),
		T(test_merge_current_context_from_first_file_that_sets_it),
		T(test_merge_first_definition_wins),
		T(test_merge_with_empty_file),
		T(test_errors),
		T(test_exec_plugin),
		T(test_error_exec_auth_unsupported),
		T(test_error_truncated_to_errlen),
		T(test_forty_thousand_clusters_load),
		T(test_deep_nesting_and_anchors_refused),
		T_SA(test_in_cluster),
		T_SA(test_in_cluster_ipv6_host_bracketed),
		T_SA(test_in_cluster_missing_token),
		T_SA(test_in_cluster_missing_ca),
		T_SA(test_in_cluster_bad_env),
		T(test_load_explicit_path_beats_kubeconfig),
		T(test_load_kubeconfig_list_beats_in_cluster),
		T(test_load_in_cluster_beats_home),
		T(test_load_home_fallback),
		T(test_load_nothing_found),
		T(test_free_is_safe_on_zeroed_and_twice),
	};
	return cmocka_run_group_tests_name("kubeconfig", tests, group_setup, group_teardown);
}
