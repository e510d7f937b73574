/*
 * Events against a real API server: one event shows up as an events.k8s.io/v1
 * Event about its object; a thousand identical warnings become one Event whose
 * series counts them, in two API writes; distinct events beyond the burst are
 * dropped and counted; an Event deleted under a series is created again; a
 * write the API refuses is counted without blocking anything; and the real
 * `kubectl describe` lists the Events in the order they happened.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "events.h"
#include "kube_http.h"
#include "testenv.h"
#include "xalloc.h"

static testenv_t env;

typedef struct {
	uv_loop_t loop;
	kube_http_t *http;
	events_recorder_t *rec;
	unsigned posts, patches; /* write attempts seen by the client's observer */
	int closed;
	char uid[64];
	events_object_ref_t node;
} fixture_t;

static void fixture_observe(const char *method, long status, double seconds, void *data)
{
	(void)status;
	(void)seconds;
	fixture_t *f = data;
	if (strcmp(method, "POST") == 0)
		f->posts++;
	else if (strcmp(method, "PATCH") == 0)
		f->patches++;
}

/* A client and a recorder flushing every 100 ms, for events about node (its uid read from the API). */
static fixture_t *fixture_start(const char *node)
{
	fixture_t *f = xcalloc(1, sizeof(*f));
	f->http = testenv_client_open(&f->loop, env.kubeconfig);
	kube_http_set_observer(f->http, fixture_observe, f);
	f->rec = events_recorder_new(&f->loop, f->http, "drashift.io/controller", "drashift-test-0");
	events_recorder_set_flush_interval(f->rec, 100);

	char *uid;
	assert_int_equal(testenv_sh_output(&env, &uid, "kubectl get node %s -o jsonpath='{.metadata.uid}'", node), 0);
	assert_true(strlen(uid) > 0 && strlen(uid) < sizeof(f->uid));
	snprintf(f->uid, sizeof(f->uid), "%s", uid);
	free(uid);
	f->node = (events_object_ref_t){ .api_version = "v1", .kind = "Node", .name = node, .uid = f->uid };
	return f;
}

static void fixture_on_closed(void *data)
{
	fixture_t *f = data;
	f->closed++;
	kube_http_close(f->http);
}

/* Close the recorder, then the client, and prove nothing is left on the loop. */
static void fixture_stop(fixture_t *f)
{
	events_recorder_close(f->rec, fixture_on_closed, f);
	uv_run(&f->loop, UV_RUN_DEFAULT);
	assert_int_equal(f->closed, 1);
	assert_int_equal(uv_loop_close(&f->loop), 0);
	free(f);
}

static bool fixture_idle(void *data)
{
	return events_recorder_idle(((fixture_t *)data)->rec);
}

/* Run the loop until every write is done and no series update waits. */
static void fixture_settle(fixture_t *f)
{
	assert_true(testenv_run_until(&f->loop, fixture_idle, f, 30000));
}

/* The events.k8s.io/v1 Events in "default", as kubectl reads them. */
static cJSON *list_events(void)
{
	char *out;
	assert_int_equal(testenv_sh_output(&env, &out, "kubectl get events.v1.events.k8s.io -n default -o json"), 0);
	cJSON *list = cJSON_Parse(out);
	free(out);
	assert_non_null(list);
	return list;
}

static const char *json_string(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsString(v) ? v->valuestring : "";
}

/* How many Events regard node (with reason, unless NULL); *match gets the last one. */
static int count_events(const cJSON *list, const char *node, const char *reason, const cJSON **match)
{
	int n = 0;
	const cJSON *item;
	cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(list, "items"))
	{
		const cJSON *reg = cJSON_GetObjectItemCaseSensitive(item, "regarding");
		if (strcmp(json_string(reg, "kind"), "Node") != 0 || strcmp(json_string(reg, "name"), node) != 0)
			continue;
		if (reason && strcmp(json_string(item, "reason"), reason) != 0)
			continue;
		n++;
		if (match)
			*match = item;
	}
	return n;
}

static int setup(void **state)
{
	(void)state;
	testenv_up(&env, "events", NULL);
	return testenv_sh(&env, "for n in gpu-1 gpu-2 gpu-3; do printf 'apiVersion: v1\\nkind: Node\\n"
				"metadata:\\n  name: %%s\\n' $n | kubectl create -f - >/dev/null || exit 1; done");
}

static int teardown(void **state)
{
	(void)state;
	testenv_down(&env);
	return 0;
}

static void test_one_event_reaches_the_api(void **state)
{
	(void)state;
	fixture_t *f = fixture_start("gpu-1");
	assert_int_equal(events_emit(f->rec, &f->node, "Normal", "HandoverStarted", "Migrate",
				     "node %s hands over from the device plugin to %s", "gpu-1", "gpu.example.com"),
			 0);
	fixture_settle(f);
	assert_int_equal(events_recorder_stats(f->rec)->created, 1);
	assert_int_equal(events_recorder_stats(f->rec)->failed, 0);

	cJSON *list = list_events();
	const cJSON *ev = NULL;
	assert_int_equal(count_events(list, "gpu-1", "HandoverStarted", &ev), 1);
	assert_string_equal(json_string(ev, "type"), "Normal");
	assert_string_equal(json_string(ev, "action"), "Migrate");
	assert_string_equal(json_string(ev, "note"), "node gpu-1 hands over from the device plugin to gpu.example.com");
	assert_string_equal(json_string(ev, "reportingController"), "drashift.io/controller");
	assert_string_equal(json_string(ev, "reportingInstance"), "drashift-test-0");
	const cJSON *reg = cJSON_GetObjectItemCaseSensitive(ev, "regarding");
	assert_string_equal(json_string(reg, "uid"), f->uid);
	assert_string_equal(json_string(reg, "apiVersion"), "v1");
	const cJSON *md = cJSON_GetObjectItemCaseSensitive(ev, "metadata");
	assert_string_equal(json_string(md, "namespace"), "default");
	assert_true(strncmp(json_string(md, "name"), "gpu-1.", 6) == 0);
	assert_int_equal(strlen(json_string(md, "name")), strlen("gpu-1.") + 16);
	assert_true(strlen(json_string(ev, "eventTime")) > 0);
	assert_null(cJSON_GetObjectItemCaseSensitive(ev, "series"));
	cJSON_Delete(list);
	fixture_stop(f);
}

static void test_identical_warnings_become_one_counted_event(void **state)
{
	(void)state;
	fixture_t *f = fixture_start("gpu-1");
	for (int i = 0; i < 1000; i++)
		assert_int_equal(events_emit(f->rec, &f->node, "Warning", "PluginStillAdvertising", "Migrate",
					     "allocatable[%s] is %d after the plugin was turned off", "nvidia.com/gpu", 8),
				 0);
	fixture_settle(f);
	const events_stats_t *st = events_recorder_stats(f->rec);
	assert_int_equal(st->created, 1);
	assert_int_equal(st->counted, 999);
	assert_int_equal(events_dropped(f->rec), 0);
	/* A thousand occurrences cost the API two writes: the create and one series update. */
	assert_int_equal(f->posts, 1);
	assert_int_equal(f->patches, 1);

	cJSON *list = list_events();
	const cJSON *ev = NULL;
	assert_int_equal(count_events(list, "gpu-1", "PluginStillAdvertising", &ev), 1);
	assert_string_equal(json_string(ev, "type"), "Warning");
	const cJSON *series = cJSON_GetObjectItemCaseSensitive(ev, "series");
	assert_non_null(series);
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(series, "count")->valueint, 1000);
	assert_true(strlen(json_string(series, "lastObservedTime")) > 0);
	cJSON_Delete(list);
	fixture_stop(f);
}

static void test_distinct_events_beyond_the_burst_are_dropped(void **state)
{
	(void)state;
	fixture_t *f = fixture_start("gpu-2");
	int recorded = 0, dropped = 0;
	for (int i = 0; i < 40; i++) {
		char reason[32];
		snprintf(reason, sizeof(reason), "StepFailed%02d", i);
		int rc = events_emit(f->rec, &f->node, "Warning", reason, "Migrate", "step %d failed", i);
		if (rc == 0)
			recorded++;
		else if (rc == UV_EAGAIN)
			dropped++;
	}
	/* Burst 25, one more token only after 5 minutes. */
	assert_int_equal(recorded, 25);
	assert_int_equal(dropped, 15);
	assert_int_equal(events_dropped(f->rec), 15);
	fixture_settle(f);
	assert_int_equal(events_recorder_stats(f->rec)->created, 25);
	assert_int_equal(f->posts, 25);

	cJSON *list = list_events();
	assert_int_equal(count_events(list, "gpu-2", NULL, NULL), 25);
	assert_int_equal(count_events(list, "gpu-2", "StepFailed24", NULL), 1);
	assert_int_equal(count_events(list, "gpu-2", "StepFailed25", NULL), 0);
	cJSON_Delete(list);
	fixture_stop(f);
}

static bool fixture_saw_failure(void *data)
{
	fixture_t *f = data;
	return events_recorder_stats(f->rec)->failed > 0 && events_recorder_idle(f->rec);
}

static void test_deleted_event_is_created_again(void **state)
{
	(void)state;
	fixture_t *f = fixture_start("gpu-3");
	for (int i = 0; i < 2; i++)
		assert_int_equal(events_emit(f->rec, &f->node, "Warning", "DriverSlow", "Migrate", "slices late"), 0);
	fixture_settle(f);
	cJSON *list = list_events();
	const cJSON *ev = NULL;
	assert_int_equal(count_events(list, "gpu-3", "DriverSlow", &ev), 1);
	char *first = xstrdup(json_string(cJSON_GetObjectItemCaseSensitive(ev, "metadata"), "name"));
	cJSON_Delete(list);

	/* The Event goes (TTL or a person): the next series update finds nothing... */
	assert_int_equal(testenv_sh(&env, "kubectl delete events.v1.events.k8s.io -n default %s >/dev/null", first), 0);
	assert_int_equal(events_emit(f->rec, &f->node, "Warning", "DriverSlow", "Migrate", "slices late"), 0);
	assert_true(testenv_run_until(&f->loop, fixture_saw_failure, f, 30000));
	assert_int_equal(events_recorder_stats(f->rec)->failed, 1);

	/* ...and the next occurrence creates a new Event. */
	assert_int_equal(events_emit(f->rec, &f->node, "Warning", "DriverSlow", "Migrate", "slices late"), 0);
	fixture_settle(f);
	assert_int_equal(events_recorder_stats(f->rec)->created, 2);
	list = list_events();
	ev = NULL;
	assert_int_equal(count_events(list, "gpu-3", "DriverSlow", &ev), 1);
	assert_string_not_equal(json_string(cJSON_GetObjectItemCaseSensitive(ev, "metadata"), "name"), first);
	assert_null(cJSON_GetObjectItemCaseSensitive(ev, "series"));
	cJSON_Delete(list);
	free(first);
	fixture_stop(f);
}

static void test_refused_write_is_counted_and_blocks_nothing(void **state)
{
	(void)state;
	fixture_t *f = fixture_start("gpu-3");
	/* An object in a namespace that does not exist: the API refuses its Event. */
	events_object_ref_t pod = { .api_version = "v1", .kind = "Pod", .namespace = "nowhere", .name = "p", .uid = "x" };
	assert_int_equal(events_emit(f->rec, &pod, "Warning", "EvictionBlocked", "Evict", "budget"), 0);
	assert_true(testenv_run_until(&f->loop, fixture_saw_failure, f, 30000));
	assert_int_equal(events_recorder_stats(f->rec)->failed, 1);
	assert_int_equal(events_recorder_stats(f->rec)->created, 0);
	/* The failed series is forgotten: the next occurrence tries again rather than counting into nothing. */
	assert_int_equal(events_emit(f->rec, &pod, "Warning", "EvictionBlocked", "Evict", "budget"), 0);
	fixture_settle(f);
	assert_int_equal(events_recorder_stats(f->rec)->failed, 2);
	/* Other objects are unaffected. */
	assert_int_equal(events_emit(f->rec, &f->node, "Normal", "StillFine", "Migrate", "ok"), 0);
	fixture_settle(f);
	assert_int_equal(events_recorder_stats(f->rec)->created, 1);
	fixture_stop(f);
}

/* The Reason column of the Events table of `kubectl describe node NODE`, top to bottom, space-separated. */
static char *describe_reasons(const char *node)
{
	char *out;
	assert_int_equal(testenv_sh_output(&env, &out,
					   "kubectl describe node %s | awk '/^Events:/ { on = 1; next } "
					   "on && NF >= 2 && $1 != \"Type\" && $1 !~ /^-/ { printf \"%%s \", $2 }'",
					   node),
			 0);
	return out;
}

/*
 * kubectl describe sorts Events on the core/v1 lastTimestamp: five Events a
 * second apart come out in the order they happened, and one that happens
 * again moves to the bottom with its count.
 */
static void test_describe_lists_events_in_time_order(void **state)
{
	(void)state;
	assert_int_equal(testenv_sh(&env, "printf 'apiVersion: v1\\nkind: Node\\nmetadata:\\n  name: gpu-order\\n' | "
					  "kubectl create -f - >/dev/null"),
			 0);
	fixture_t *f = fixture_start("gpu-order");
	static const char *const reasons[] = { "StepOne", "StepTwo", "StepThree", "StepFour", "StepFive" };
	for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++) {
		if (i > 0)
			sleep(1); /* lastTimestamp has whole seconds */
		assert_int_equal(events_emit(f->rec, &f->node, "Normal", reasons[i], "Migrate", "step %zu", i + 1), 0);
		fixture_settle(f);
	}
	char *got = describe_reasons("gpu-order");
	assert_string_equal(got, "StepOne StepTwo StepThree StepFour StepFive ");
	free(got);

	sleep(1);
	assert_int_equal(events_emit(f->rec, &f->node, "Normal", "StepOne", "Migrate", "step 1"), 0);
	fixture_settle(f);
	got = describe_reasons("gpu-order");
	assert_string_equal(got, "StepTwo StepThree StepFour StepFive StepOne ");
	free(got);
	char *line;
	assert_int_equal(testenv_sh_output(&env, &line, "kubectl describe node gpu-order | grep StepOne"), 0);
	if (strstr(line, "(x2 over") == NULL)
		fail_msg("the repeated Event shows no count: %s", line);
	free(line);
	fixture_stop(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_event_reaches_the_api),
		cmocka_unit_test(test_identical_warnings_become_one_counted_event),
		cmocka_unit_test(test_distinct_events_beyond_the_burst_are_dropped),
		cmocka_unit_test(test_deleted_event_is_created_again),
		cmocka_unit_test(test_refused_write_is_counted_and_blocks_nothing),
		cmocka_unit_test(test_describe_lists_events_in_time_order),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
