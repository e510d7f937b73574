/*
 * The Prometheus registry: exact exposition text for every kind of metric,
 * escaping, ordering, number formatting, the hash table under growth and
 * removal, misuse aborting, and promtool's own parser (missing promtool is a
 * failure: Debian package prometheus, which tools/test installs).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "metrics.h"
#include "xalloc.h"

static void assert_render(metrics_registry_t *r, const char *expected)
{
	size_t len = 0;
	char *text = metrics_render(r, &len);
	assert_non_null(text);
	assert_string_equal(text, expected);
	assert_int_equal(len, strlen(expected));
	free(text);
}

static void test_empty_registry_renders_nothing(void **state)
{
	(void)state;
	metrics_registry_t *r = metrics_registry_new();
	assert_render(r, "");
	metrics_registry_free(r);
}

static void test_counter_with_labels(void **state)
{
	(void)state;
	metrics_registry_t *r = metrics_registry_new();
	metrics_counter_t *c = metrics_counter_new(r, "drashift_kube_requests_total",
		"Requests sent to the API server.", "verb", "code", NULL);
	metrics_counter_t *plain = metrics_counter_new(r, "drashift_reconciles_total", "Reconciles run.", NULL);
	metrics_counter_inc(c, "GET", "200", NULL);
	metrics_counter_inc(c, "GET", "200", NULL);
	metrics_counter_add(c, 0.5, "PATCH", "409", NULL);
	metrics_counter_inc(c, "GET", "404", NULL);
	assert_render(r,
		"# HELP drashift_kube_requests_total Requests sent to the API server.\n"
		"# TYPE drashift_kube_requests_total counter\n"
		"drashift_kube_requests_total{verb=\"GET\",code=\"200\"} 2\n"
		"drashift_kube_requests_total{verb=\"GET\",code=\"404\"} 1\n"
		"drashift_kube_requests_total{verb=\"PATCH\",code=\"409\"} 0.5\n"
		"# HELP drashift_reconciles_total Reconciles run.\n"
		"# TYPE drashift_reconciles_total counter\n"
		"drashift_reconciles_total 0\n");
	metrics_counter_add(plain, 3, NULL);
	assert_true(metrics_counter_value(plain, NULL) == 3);
	assert_true(metrics_counter_value(c, "GET", "200", NULL) == 2);
	assert_true(metrics_counter_value(c, "PUT", "200", NULL) == 0);
	metrics_registry_free(r);
}

static double queue_depth(void *data)
{
	return (double)*(const int *)data;
}

static void test_gauges_and_callback_gauges(void **state)
{
	(void)state;
	metrics_registry_t *r = metrics_registry_new();
	metrics_gauge_t *leader = metrics_gauge_new(r, "drashift_leader", "1 when this replica leads.", NULL);
	metrics_gauge_t *cache = metrics_gauge_new(r, "drashift_cache_objects", "Objects in the informer cache.",
		"kind", NULL);
	metrics_gauge_t *depth = metrics_gauge_new(r, "drashift_workqueue_depth", "Keys waiting in the work queue.",
		NULL);
	int pods = 7, nodes = 3, queued = 0;
	metrics_gauge_set_fn(cache, queue_depth, &pods, "pods", NULL);
	metrics_gauge_set_fn(cache, queue_depth, &nodes, "nodes", NULL);
	metrics_gauge_set_fn(depth, queue_depth, &queued, NULL);
	metrics_gauge_set(leader, 1, NULL);
	metrics_gauge_add(leader, -1.25, NULL);
	queued = 42; /* read at render time, not at registration */
	assert_render(r,
		"# HELP drashift_cache_objects Objects in the informer cache.\n"
		"# TYPE drashift_cache_objects gauge\n"
		"drashift_cache_objects{kind=\"nodes\"} 3\n"
		"drashift_cache_objects{kind=\"pods\"} 7\n"
		"# HELP drashift_leader 1 when this replica leads.\n"
		"# TYPE drashift_leader gauge\n"
		"drashift_leader -0.25\n"
		"# HELP drashift_workqueue_depth Keys waiting in the work queue.\n"
		"# TYPE drashift_workqueue_depth gauge\n"
		"drashift_workqueue_depth 42\n");
	assert_true(metrics_gauge_value(depth, NULL) == 42);

	/* Set is ignored while a function gives the value; clearing it brings the stored value back. */
	metrics_gauge_set(cache, 100, "pods", NULL);
	assert_true(metrics_gauge_value(cache, "pods", NULL) == 7);
	metrics_gauge_set_fn(cache, NULL, NULL, "pods", NULL);
	assert_true(metrics_gauge_value(cache, "pods", NULL) == 100);
	metrics_registry_free(r);
}

static void test_histogram_buckets_are_cumulative(void **state)
{
	(void)state;
	metrics_registry_t *r = metrics_registry_new();
	const double buckets[] = { 0.1, 1, 10 };
	metrics_histogram_t *h = metrics_histogram_new(r, "drashift_reconcile_duration_seconds",
		"Time spent in one reconcile.", buckets, 3, "controller", NULL);
	metrics_histogram_observe(h, 0.05, "plan", NULL);
	metrics_histogram_observe(h, 0.1, "plan", NULL);  /* on a bound: counted in le="0.1" */
	metrics_histogram_observe(h, 0.5, "plan", NULL);
	metrics_histogram_observe(h, 5, "plan", NULL);
	metrics_histogram_observe(h, 100, "plan", NULL); /* only in +Inf */
	metrics_histogram_observe(h, 2, "node", NULL);
	assert_render(r,
		"# HELP drashift_reconcile_duration_seconds Time spent in one reconcile.\n"
		"# TYPE drashift_reconcile_duration_seconds histogram\n"
		"drashift_reconcile_duration_seconds_bucket{controller=\"node\",le=\"0.1\"} 0\n"
		"drashift_reconcile_duration_seconds_bucket{controller=\"node\",le=\"1\"} 0\n"
		"drashift_reconcile_duration_seconds_bucket{controller=\"node\",le=\"10\"} 1\n"
		"drashift_reconcile_duration_seconds_bucket{controller=\"node\",le=\"+Inf\"} 1\n"
		"drashift_reconcile_duration_seconds_sum{controller=\"node\"} 2\n"
		"drashift_reconcile_duration_seconds_count{controller=\"node\"} 1\n"
		"drashift_reconcile_duration_seconds_bucket{controller=\"plan\",le=\"0.1\"} 2\n"
		"drashift_reconcile_duration_seconds_bucket{controller=\"plan\",le=\"1\"} 3\n"
		"drashift_reconcile_duration_seconds_bucket{controller=\"plan\",le=\"10\"} 4\n"
		"drashift_reconcile_duration_seconds_bucket{controller=\"plan\",le=\"+Inf\"} 5\n"
		"drashift_reconcile_duration_seconds_sum{controller=\"plan\"} 105.65\n"
		"drashift_reconcile_duration_seconds_count{controller=\"plan\"} 5\n");
	assert_int_equal(metrics_histogram_count(h, "plan", NULL), 5);
	assert_true(metrics_histogram_sum(h, "node", NULL) == 2);
	assert_int_equal(metrics_histogram_count(h, "none", NULL), 0);
	metrics_registry_free(r);
}

static void test_histogram_default_buckets_without_labels(void **state)
{
	(void)state;
	metrics_registry_t *r = metrics_registry_new();
	const double with_inf[] = { 1, INFINITY }; /* a trailing +Inf is not doubled */
	metrics_histogram_t *h = metrics_histogram_new(r, "b_seconds", "Default buckets.", NULL, 0, NULL);
	metrics_histogram_new(r, "a_seconds", "Explicit +Inf.", with_inf, 2, NULL);
	metrics_histogram_observe(h, 0.003, NULL);
	metrics_histogram_observe(h, 45, NULL);
	assert_render(r,
		"# HELP a_seconds Explicit +Inf.\n"
		"# TYPE a_seconds histogram\n"
		"a_seconds_bucket{le=\"1\"} 0\n"
		"a_seconds_bucket{le=\"+Inf\"} 0\n"
		"a_seconds_sum 0\n"
		"a_seconds_count 0\n"
		"# HELP b_seconds Default buckets.\n"
		"# TYPE b_seconds histogram\n"
		"b_seconds_bucket{le=\"0.005\"} 1\n"
		"b_seconds_bucket{le=\"0.01\"} 1\n"
		"b_seconds_bucket{le=\"0.025\"} 1\n"
		"b_seconds_bucket{le=\"0.05\"} 1\n"
		"b_seconds_bucket{le=\"0.1\"} 1\n"
		"b_seconds_bucket{le=\"0.25\"} 1\n"
		"b_seconds_bucket{le=\"0.5\"} 1\n"
		"b_seconds_bucket{le=\"1\"} 1\n"
		"b_seconds_bucket{le=\"2.5\"} 1\n"
		"b_seconds_bucket{le=\"5\"} 1\n"
		"b_seconds_bucket{le=\"10\"} 1\n"
		"b_seconds_bucket{le=\"30\"} 1\n"
		"b_seconds_bucket{le=\"60\"} 2\n"
		"b_seconds_bucket{le=\"+Inf\"} 2\n"
		"b_seconds_sum 45.003\n"
		"b_seconds_count 2\n");
	metrics_registry_free(r);
}

static void test_escaping(void **state)
{
	(void)state;
	metrics_registry_t *r = metrics_registry_new();
	metrics_gauge_t *g = metrics_gauge_new(r, "escaped", "Back\\slash, \"quotes\" and a\nnewline.", "v", NULL);
	metrics_gauge_set(g, 1, "a\\b\"c\nd", NULL);
	metrics_gauge_set(g, 2, "", NULL);
	assert_render(r,
		"# HELP escaped Back\\\\slash, \"quotes\" and a\\nnewline.\n"
		"# TYPE escaped gauge\n"
		"escaped{v=\"\"} 2\n"
		"escaped{v=\"a\\\\b\\\"c\\nd\"} 1\n");
	metrics_registry_free(r);
}

static void test_families_and_children_sorted(void **state)
{
	(void)state;
	metrics_registry_t *r = metrics_registry_new();
	metrics_gauge_t *z = metrics_gauge_new(r, "zz", "Last.", "a", "b", NULL);
	metrics_counter_t *m = metrics_counter_new(r, "mm", "Middle.", NULL);
	metrics_gauge_t *a = metrics_gauge_new(r, "a:b", "First (colons are allowed in metric names).", NULL);
	metrics_gauge_set(z, 1, "y", "2", NULL);
	metrics_gauge_set(z, 2, "x", "3", NULL);
	metrics_gauge_set(z, 3, "y", "10", NULL); /* bytewise: "10" < "2" */
	metrics_gauge_set(z, 4, "x", "1", NULL);
	metrics_gauge_set(z, 5, "Y", "9", NULL); /* uppercase before lowercase */
	metrics_counter_inc(m, NULL);
	metrics_gauge_set(a, 0.1, NULL);
	assert_render(r,
		"# HELP a:b First (colons are allowed in metric names).\n"
		"# TYPE a:b gauge\n"
		"a:b 0.1\n"
		"# HELP mm Middle.\n"
		"# TYPE mm counter\n"
		"mm 1\n"
		"# HELP zz Last.\n"
		"# TYPE zz gauge\n"
		"zz{a=\"Y\",b=\"9\"} 5\n"
		"zz{a=\"x\",b=\"1\"} 4\n"
		"zz{a=\"x\",b=\"3\"} 2\n"
		"zz{a=\"y\",b=\"10\"} 3\n"
		"zz{a=\"y\",b=\"2\"} 1\n");
	metrics_registry_free(r);
}

static void test_labelled_family_without_children_is_omitted(void **state)
{
	(void)state;
	metrics_registry_t *r = metrics_registry_new();
	metrics_counter_t *c = metrics_counter_new(r, "errors_total", "Errors.", "kind", NULL);
	assert_render(r, "");
	metrics_counter_inc(c, "timeout", NULL);
	assert_int_equal(metrics_counter_remove(c, "timeout", NULL), 0);
	assert_int_equal(metrics_counter_remove(c, "timeout", NULL), -1);
	assert_render(r, "");
	metrics_registry_free(r);
}

static void check_format(double v, const char *expected)
{
	char out[40];
	size_t n = metrics_format_value(v, out, sizeof(out));
	assert_string_equal(out, expected);
	assert_int_equal(n, strlen(expected));
}

static void test_value_formatting(void **state)
{
	(void)state;
	check_format(0, "0");
	check_format(-0.0, "0");
	check_format(1, "1");
	check_format(-3, "-3");
	check_format(2.5, "2.5");
	check_format(0.1, "0.1");
	check_format(1.0 / 3, "0.3333333333333333");
	check_format(0.1 + 0.2, "0.30000000000000004");
	check_format(1e-7, "1e-07");
	check_format(1e20, "100000000000000000000");
	check_format(123456789012345678.0, "123456789012345680");
	check_format(9007199254740993.0, "9007199254740992");
	check_format(1e21, "1e+21");
	check_format(-1e300, "-1e+300");
	check_format(5e-324, "4.94065645841247e-324");
	check_format(INFINITY, "+Inf");
	check_format(-INFINITY, "-Inf");
	check_format(NAN, "NaN");

	/* Whatever the value, it reads back exactly. */
	uint64_t x = 0x9e3779b97f4a7c15u;
	for (int i = 0; i < 20000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		double v;
		memcpy(&v, &x, sizeof(v));
		if (isnan(v))
			continue;
		char out[40];
		metrics_format_value(v, out, sizeof(out));
		assert_true(strtod(out, NULL) == v);
		assert_null(strchr(out, ' '));
	}
}

/*
 * A thousand children force the per-family table to grow several times;
 * removing every other one exercises backward-shift deletion, after which
 * every survivor must still be found and the rest gone.
 */
static void test_many_children_grow_and_remove(void **state)
{
	(void)state;
	metrics_registry_t *r = metrics_registry_new();
	metrics_counter_t *c = metrics_counter_new(r, "objects_total", "Objects.", "ns", "name", NULL);
	char ns[16], name[16];
	for (int i = 0; i < 1000; i++) {
		snprintf(ns, sizeof(ns), "ns%d", i % 7);
		snprintf(name, sizeof(name), "obj%04d", i);
		metrics_counter_add(c, (double)i, ns, name, NULL);
	}
	for (int i = 0; i < 1000; i += 2) {
		snprintf(ns, sizeof(ns), "ns%d", i % 7);
		snprintf(name, sizeof(name), "obj%04d", i);
		assert_int_equal(metrics_counter_remove(c, ns, name, NULL), 0);
	}
	for (int i = 0; i < 1000; i++) {
		snprintf(ns, sizeof(ns), "ns%d", i % 7);
		snprintf(name, sizeof(name), "obj%04d", i);
		assert_true(metrics_counter_value(c, ns, name, NULL) == (i % 2 ? (double)i : 0));
	}
	size_t len;
	char *text = metrics_render(r, &len);
	assert_non_null(text);
	/* 500 sample lines after the two comment lines, in strictly increasing order. */
	int lines = 0;
	const char *prev = NULL;
	size_t prev_len = 0;
	for (char *line = strstr(text, "objects_total{"); line != NULL; line = strstr(line + 1, "\nobjects_total{")) {
		if (*line == '\n')
			line++;
		size_t n = (size_t)(strchr(line, '}') - line);
		if (prev != NULL) {
			int cmp = memcmp(prev, line, prev_len < n ? prev_len : n);
			assert_true(cmp < 0 || (cmp == 0 && prev_len < n));
		}
		prev = line;
		prev_len = n;
		lines++;
	}
	assert_int_equal(lines, 500);
	free(text);
	metrics_registry_free(r);
}

/* Runs fn in a child process and expects it to abort (a programming error). */
static void expect_abort(void (*fn)(metrics_registry_t *r))
{
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);
		if (devnull >= 0)
			dup2(devnull, STDERR_FILENO);
		metrics_registry_t *r = metrics_registry_new();
		fn(r);
		_exit(0); /* did not abort */
	}
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGABRT);
}

static void bad_metric_name(metrics_registry_t *r) { metrics_counter_new(r, "1st", "Help.", NULL); }
static void bad_metric_char(metrics_registry_t *r) { metrics_counter_new(r, "a-b", "Help.", NULL); }
static void bad_label_colon(metrics_registry_t *r) { metrics_counter_new(r, "a", "Help.", "x:y", NULL); }
static void bad_label_reserved(metrics_registry_t *r) { metrics_counter_new(r, "a", "Help.", "__x", NULL); }
static void bad_label_repeated(metrics_registry_t *r) { metrics_counter_new(r, "a", "Help.", "x", "x", NULL); }
static void bad_empty_help(metrics_registry_t *r) { metrics_gauge_new(r, "a", "", NULL); }
static void bad_duplicate(metrics_registry_t *r)
{
	metrics_counter_new(r, "a", "Help.", NULL);
	metrics_gauge_new(r, "a", "Help.", NULL);
}
static void bad_series_clash(metrics_registry_t *r)
{
	metrics_histogram_new(r, "lat", "Help.", NULL, 0, NULL);
	metrics_counter_new(r, "lat_count", "Help.", NULL);
}
static void bad_histogram_le(metrics_registry_t *r) { metrics_histogram_new(r, "h", "Help.", NULL, 0, "le", NULL); }
static void bad_buckets_order(metrics_registry_t *r)
{
	const double b[] = { 1, 1 };
	metrics_histogram_new(r, "h", "Help.", b, 2, NULL);
}
static void bad_bucket_nan(metrics_registry_t *r)
{
	const double b[] = { NAN, 1 };
	metrics_histogram_new(r, "h", "Help.", b, 2, NULL);
}
static void bad_too_few_values(metrics_registry_t *r)
{
	metrics_counter_inc(metrics_counter_new(r, "a", "Help.", "x", "y", NULL), "1", NULL);
}
static void bad_too_many_values(metrics_registry_t *r)
{
	metrics_counter_inc(metrics_counter_new(r, "a", "Help.", "x", NULL), "1", "2", NULL);
}
static void bad_negative_add(metrics_registry_t *r)
{
	metrics_counter_add(metrics_counter_new(r, "a", "Help.", NULL), -1, NULL);
}
static void bad_remove_unlabelled(metrics_registry_t *r)
{
	metrics_gauge_remove(metrics_gauge_new(r, "a", "Help.", NULL), NULL);
}
static void good_registration(metrics_registry_t *r)
{
	metrics_counter_new(r, "_ok:name_1", "Help.", "_label", "L2", NULL);
	metrics_registry_free(r);
}

static void test_misuse_aborts(void **state)
{
	(void)state;
	expect_abort(bad_metric_name);
	expect_abort(bad_metric_char);
	expect_abort(bad_label_colon);
	expect_abort(bad_label_reserved);
	expect_abort(bad_label_repeated);
	expect_abort(bad_empty_help);
	expect_abort(bad_duplicate);
	expect_abort(bad_series_clash);
	expect_abort(bad_histogram_le);
	expect_abort(bad_buckets_order);
	expect_abort(bad_bucket_nan);
	expect_abort(bad_too_few_values);
	expect_abort(bad_too_many_values);
	expect_abort(bad_negative_add);
	expect_abort(bad_remove_unlabelled);

	/*
	 * And the harness tells an abort from another end: valid registrations
	 * run through, and the child then ends by SIGTERM (not _exit, so that
	 * valgrind's leak check of the forked child cannot change its status).
	 */
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		good_registration(metrics_registry_new());
		raise(SIGTERM);
		_exit(0);
	}
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGTERM);
}

static char *find_on_path(const char *prog)
{
	const char *path = getenv("PATH");
	if (path == NULL)
		return NULL;
	while (*path != '\0') {
		size_t n = strcspn(path, ":");
		char *candidate = xasprintf("%.*s/%s", (int)n, path, prog);
		if (n > 0 && access(candidate, X_OK) == 0)
			return candidate;
		free(candidate);
		path += n;
		if (*path == ':')
			path++;
	}
	return NULL;
}

static double always_three(void *data)
{
	(void)data;
	return 3;
}

/* Prometheus's own parser and linter accept what we render. */
static void test_promtool_accepts_exposition(void **state)
{
	(void)state;
	char *promtool = find_on_path("promtool");
	if (promtool == NULL)
		fail_msg("promtool is missing (Debian package prometheus; tools/test installs it)");
	metrics_registry_t *r = metrics_registry_new();
	metrics_counter_t *c = metrics_counter_new(r, "drashift_kube_requests_total",
		"Requests sent to the API server.", "verb", "code", NULL);
	metrics_gauge_t *g = metrics_gauge_new(r, "drashift_cache_objects", "Objects in the cache.", "kind", NULL);
	metrics_histogram_t *h = metrics_histogram_new(r, "drashift_reconcile_duration_seconds",
		"Time spent in one reconcile.", NULL, 0, "controller", NULL);
	metrics_counter_add(c, 12345678901.0, "GET", "200", NULL);
	metrics_counter_inc(c, "PATCH", "409", NULL);
	metrics_gauge_set_fn(g, always_three, NULL, "pods", NULL);
	metrics_gauge_set(g, -0.1, "weird \"kind\"\\\nname", NULL);
	metrics_gauge_set(g, INFINITY, "inf", NULL);
	metrics_gauge_set(g, NAN, "nan", NULL);
	for (int i = 0; i < 100; i++)
		metrics_histogram_observe(h, i * 0.37, i % 2 ? "plan" : "node", NULL);
	metrics_gauge_new(r, "drashift_build_info", "Build information.\nSecond \\ line.", NULL);

	char path[] = "/tmp/test_metrics_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	size_t len;
	char *text = metrics_render(r, &len);
	assert_non_null(text);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	close(fd);
	free(text);
	metrics_registry_free(r);

	char *cmd = xasprintf("'%s' check metrics < '%s' >&2", promtool, path);
	int rc = system(cmd);
	unlink(path);
	free(cmd);
	free(promtool);
	assert_true(WIFEXITED(rc));
	assert_int_equal(WEXITSTATUS(rc), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_registry_renders_nothing),
		cmocka_unit_test(test_counter_with_labels),
		cmocka_unit_test(test_gauges_and_callback_gauges),
		cmocka_unit_test(test_histogram_buckets_are_cumulative),
		cmocka_unit_test(test_histogram_default_buckets_without_labels),
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_families_and_children_sorted),
		cmocka_unit_test(test_labelled_family_without_children_is_omitted),
		cmocka_unit_test(test_value_formatting),
		cmocka_unit_test(test_many_children_grow_and_remove),
		cmocka_unit_test(test_misuse_aborts),
		cmocka_unit_test(test_promtool_accepts_exposition),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
