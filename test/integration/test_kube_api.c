/*
 * Every verb the operator uses, against the real API server: what it
 * changes, and what the caller learns when the server says no.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube_api.h"
#include "testenv.h"
#include "xalloc.h"

static testenv_t env;
static uv_loop_t loop;
static kube_http_t *http;

static void result_wait(testenv_result_t *r)
{
	assert_true(testenv_result_wait(&loop, r, 60000));
}

/* A field of the JSON body by a dotted path, as a string ("" when absent). */
static const char *body_field(testenv_result_t *r, const char *dotted, char *buf, size_t len)
{
	cJSON *root = cJSON_Parse(r->body);
	const cJSON *cur = root;
	char *copy = xstrdup(dotted), *save = NULL;
	for (char *part = strtok_r(copy, ".", &save); part && cur; part = strtok_r(NULL, ".", &save))
		cur = cJSON_GetObjectItemCaseSensitive(cur, part);
	snprintf(buf, len, "%s", cJSON_IsString(cur) ? cur->valuestring : "");
	free(copy);
	cJSON_Delete(root);
	return buf;
}

static int setup(void **state)
{
	(void)state;
	testenv_up(&env, "kube-api", NULL);
	http = testenv_client_open(&loop, env.kubeconfig);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	int open = testenv_client_close(&loop, http);
	testenv_down(&env);
	return open;
}

static void test_create_get_patch_apply_delete(void **state)
{
	(void)state;
	char buf[128];
	testenv_result_t r = { 0 };
	char *coll = kube_path("v1", "configmaps", "default", NULL, NULL);
	char *path = kube_path("v1", "configmaps", "default", "probe", NULL);

	assert_int_equal(kube_create(http, coll, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"probe\"},\"data\":{\"a\":\"1\"}}", testenv_on_result, &r), 0);
	result_wait(&r);
	assert_int_equal(r.status, 201);
	testenv_result_free(&r);

	assert_int_equal(kube_merge_patch(http, path, "{\"data\":{\"b\":\"2\"}}", testenv_on_result, &r), 0);
	result_wait(&r);
	assert_int_equal(r.status, 200);
	assert_string_equal(body_field(&r, "data.b", buf, sizeof(buf)), "2");
	testenv_result_free(&r);

	/* A JSON patch whose test fails changes nothing and says why. */
	assert_int_equal(kube_json_patch(http, path, "[{\"op\":\"test\",\"path\":\"/data/a\",\"value\":\"9\"},{\"op\":\"replace\",\"path\":\"/data/a\",\"value\":\"x\"}]", testenv_on_result, &r), 0);
	result_wait(&r);
	assert_int_equal(r.status, 422);
	assert_string_equal(r.reason, "Invalid");
	testenv_result_free(&r);
	assert_int_equal(kube_get(http, path, testenv_on_result, &r), 0);
	result_wait(&r);
	assert_string_equal(body_field(&r, "data.a", buf, sizeof(buf)), "1");
	testenv_result_free(&r);
	assert_int_equal(kube_json_patch(http, path, "[{\"op\":\"test\",\"path\":\"/data/a\",\"value\":\"1\"},{\"op\":\"replace\",\"path\":\"/data/a\",\"value\":\"x\"}]", testenv_on_result, &r), 0);
	result_wait(&r);
	assert_int_equal(r.status, 200);
	assert_string_equal(body_field(&r, "data.a", buf, sizeof(buf)), "x");
	testenv_result_free(&r);

	/* Server-side apply records drashift as the manager of the field it set. */
	assert_int_equal(kube_apply(http, path, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"probe\"},\"data\":{\"c\":\"3\"}}", true, testenv_on_result, &r), 0);
	result_wait(&r);
	assert_int_equal(r.status, 200);
	assert_string_equal(body_field(&r, "data.c", buf, sizeof(buf)), "3");
	assert_non_null(strstr(r.body, "\"manager\":\"" KUBE_FIELD_MANAGER "\""));
	testenv_result_free(&r);

	assert_int_equal(kube_delete(http, path, testenv_on_result, &r), 0);
	result_wait(&r);
	assert_int_equal(r.status, 200);
	testenv_result_free(&r);

	/* The API's Status message and reason reach the caller. */
	assert_int_equal(kube_get(http, path, testenv_on_result, &r), 0);
	result_wait(&r);
	assert_int_equal(r.status, 404);
	assert_string_equal(r.reason, "NotFound");
	assert_string_equal(r.error, "configmaps \"probe\" not found");
	testenv_result_free(&r);
	free(coll);
	free(path);
}

static void test_status_subresource(void **state)
{
	(void)state;
	char buf[64];
	testenv_result_t r = { 0 };
	assert_int_equal(testenv_sh(&env, "printf 'apiVersion: v1\\nkind: Node\\nmetadata:\\n  name: gpu-1\\n' | kubectl create -f - >/dev/null"), 0);
	char *path = kube_path("v1", "nodes", NULL, "gpu-1", "status");
	assert_int_equal(kube_merge_patch(http, path, "{\"status\":{\"capacity\":{\"example.com/gpu\":\"8\"}}}", testenv_on_result, &r), 0);
	result_wait(&r);
	assert_int_equal(r.status, 200);
	testenv_result_free(&r);
	char *out;
	testenv_sh_output(&env, &out, "kubectl get node gpu-1 -o jsonpath='{.status.capacity.example\\.com/gpu}'");
	assert_string_equal(out, "8");
	free(out);
	(void)buf;
	free(path);
}

typedef struct {
	int calls;
} conflict_t;

/*
 * The first time it runs, another writer changes the same node between our
 * read and our write, as a second controller or a person with kubectl would.
 */
static int add_label_with_interference(cJSON *obj, void *data)
{
	conflict_t *c = data;
	if (c->calls++ == 0 && testenv_sh(&env, "kubectl label node gpu-1 other-writer=yes >/dev/null") != 0)
		return -1;
	cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	cJSON *labels = cJSON_GetObjectItemCaseSensitive(md, "labels");
	if (labels == NULL)
		labels = cJSON_AddObjectToObject(md, "labels");
	cJSON_DeleteItemFromObjectCaseSensitive(labels, "drashift.io/pool");
	cJSON_AddStringToObject(labels, "drashift.io/pool", "a");
	return 0;
}

typedef struct {
	testenv_result_t r;
	conflict_t c;
} update_t;

static void on_update(const kube_http_response_t *resp, void *data)
{
	testenv_on_result(resp, &((update_t *)data)->r);
}

static int mutate_adapter(cJSON *obj, void *data)
{
	return add_label_with_interference(obj, &((update_t *)data)->c);
}

static void test_conflicting_writer_is_handled(void **state)
{
	(void)state;
	update_t u = { 0 };
	char *path = kube_path("v1", "nodes", NULL, "gpu-1", NULL);
	assert_int_equal(kube_update(http, path, mutate_adapter, on_update, &u), 0);
	result_wait(&u.r);
	assert_int_equal(u.r.status, 200);
	assert_int_equal(u.c.calls, 2); /* read, conflict, read again, write */
	char *out;
	testenv_sh_output(&env, &out, "kubectl get node gpu-1 -o jsonpath='{.metadata.labels.other-writer}/{.metadata.labels.drashift\\.io/pool}'");
	assert_string_equal(out, "yes/a");
	free(out);
	testenv_result_free(&u.r);
	free(path);
}

static void test_eviction_respects_disruption_budget(void **state)
{
	(void)state;
	testenv_result_t r = { 0 };
	assert_int_equal(testenv_sh(&env,
		"kubectl -n default create -f - >/dev/null <<'EOF'\n"
		"apiVersion: v1\nkind: Pod\nmetadata: {name: guarded, labels: {app: guarded}}\n"
		"spec: {nodeName: gpu-1, automountServiceAccountToken: false, containers: [{name: c, image: registry.invalid/x}]}\n"
		"---\napiVersion: v1\nkind: Pod\nmetadata: {name: free}\n"
		"spec: {automountServiceAccountToken: false, containers: [{name: c, image: registry.invalid/x}]}\n"
		"---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: guarded}\n"
		"spec: {minAvailable: 1, selector: {matchLabels: {app: guarded}}}\n"
		"EOF"), 0);
	/*
	 * Pending pods may be evicted whatever the budget says, so the guarded
	 * pod runs (as kubelet would report it); the disruption controller must
	 * then count it healthy before the budget can refuse.
	 */
	assert_int_equal(testenv_sh(&env, "kubectl -n default patch pod guarded --subresource=status --type=merge -p "
					  "'{\"status\":{\"phase\":\"Running\",\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}' >/dev/null"), 0);
	assert_int_equal(testenv_sh(&env, "for i in $(seq 60); do [ \"$(kubectl -n default get pdb guarded -o jsonpath='{.status.currentHealthy}')\" = 1 ] && exit 0; sleep 0.5; done; exit 1"), 0);

	assert_int_equal(kube_evict(http, "default", "guarded", testenv_on_result, &r), 0);
	result_wait(&r);
	assert_int_equal(r.status, 429);
	assert_non_null(strstr(r.error, "disruption budget"));
	testenv_result_free(&r);

	assert_int_equal(kube_evict(http, "default", "free", testenv_on_result, &r), 0);
	result_wait(&r);
	assert_int_equal(r.status, 201);
	testenv_result_free(&r);
	assert_int_equal(testenv_sh(&env, "kubectl -n default get pod guarded >/dev/null 2>&1"), 0);
}

typedef struct {
	int attempts;
	uint64_t at[8];
} attempts_t;

static void count_attempt(const char *method, long status, double seconds, void *data)
{
	(void)method;
	(void)seconds;
	attempts_t *a = data;
	if (status == 429 && a->attempts < 8)
		a->at[a->attempts++] = uv_now(&loop);
}

/*
 * 429 is retried after the server's Retry-After, not after the client's own
 * short backoff. A budget whose status is older than its spec makes the
 * Eviction API answer 429 with Retry-After: 10; with the controller-manager
 * stopped, that answer stays the same, so a request with a 15 s deadline
 * makes exactly two attempts, 10 s apart, then reports the 429.
 */
static void test_retry_after_is_honoured(void **state)
{
	(void)state;
	assert_int_equal(testenv_component(&env, "stop", "kube-controller-manager"), 0);
	assert_int_equal(testenv_sh(&env, "kubectl -n default patch pdb guarded --type=merge -p '{\"spec\":{\"minAvailable\":2}}' >/dev/null"), 0);
	attempts_t a = { 0 };
	kube_http_set_observer(http, count_attempt, &a);
	char *path = kube_path("v1", "pods", "default", "guarded", "eviction");
	const char *body = "{\"apiVersion\":\"policy/v1\",\"kind\":\"Eviction\",\"metadata\":{\"name\":\"guarded\",\"namespace\":\"default\"}}";
	kube_http_req_t req = { .method = "POST", .path = path, .content_type = "application/json", .body = body,
				.body_len = strlen(body), .timeout_ms = 15000, .retry = 1 };
	testenv_result_t r = { 0 };
	assert_int_equal(kube_http_request(http, &req, testenv_on_result, &r, NULL), 0);
	result_wait(&r);
	kube_http_set_observer(http, NULL, NULL);
	assert_int_equal(testenv_component(&env, "start", "kube-controller-manager"), 0);
	assert_int_equal(r.status, 429);
	assert_int_equal(a.attempts, 2);
	print_message("429 retried after %llu ms (Retry-After: 10)\n", (unsigned long long)(a.at[1] - a.at[0]));
	assert_true(a.at[1] - a.at[0] >= 9500);
	testenv_result_free(&r);
	free(path);
}

static size_t streamed_bytes;

static int count_streamed(const char *bytes, size_t len, void *data)
{
	(void)bytes;
	(void)data;
	streamed_bytes += len;
	return 0;
}

/*
 * Requests share one HTTP/2 connection; a watch streams over a connection of
 * its own, HTTP/1.1, so that thousands of initial events do not queue every
 * other watch and request behind one connection's flow control.
 */
static void test_watch_streams_on_its_own_connection(void **state)
{
	(void)state;
	testenv_result_t get = { 0 }, watch = { 0 };
	kube_http_req_t req = { .method = "GET", .path = "/api/v1/namespaces/default/configmaps" };
	assert_int_equal(kube_http_request(http, &req, testenv_on_result, &get, NULL), 0);
	result_wait(&get);
	assert_int_equal(get.status, 200);
	assert_int_equal(get.http_major, 2);

	/* Without a resourceVersion the watch starts with the objects there are (default, kube-system at least). */
	streamed_bytes = 0;
	kube_http_req_t stream = { .method = "GET", .path = "/api/v1/namespaces?watch=1&timeoutSeconds=1",
				   .on_data = count_streamed };
	assert_int_equal(kube_http_request(http, &stream, testenv_on_result, &watch, NULL), 0);
	result_wait(&watch);
	assert_int_equal(watch.status, 200);
	assert_int_equal(watch.http_major, 1);
	assert_true(streamed_bytes > 0);
	print_message("request over HTTP/%d, watch over HTTP/%d (%zu bytes streamed)\n", get.http_major,
		      watch.http_major, streamed_bytes);
	testenv_result_free(&get);
	testenv_result_free(&watch);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_get_patch_apply_delete),
		cmocka_unit_test(test_status_subresource),
		cmocka_unit_test(test_conflicting_writer_is_handled),
		cmocka_unit_test(test_eviction_respects_disruption_budget),
		cmocka_unit_test(test_retry_after_is_honoured),
		cmocka_unit_test(test_watch_streams_on_its_own_connection),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
