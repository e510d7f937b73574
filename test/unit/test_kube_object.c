/*
 * Watch-event and list decoders (controller/kube/kube_object.h): real watch
 * lines and list pages decode to their type, resourceVersion, continue token
 * and objects; malformed or cut-off ones are refused with the field named and
 * the output zeroed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "kube_object.h"
#include "projection.h"

/* ---- watch events ---- */

static void test_event_bookmark(void **state)
{
	(void)state;
	size_t len;
	char *line = fixture_read("objects/event_bookmark.json", &len);
	kube_object_event_t ev;
	char err[256];
	assert_int_equal(kube_object_decode_event(line, len, &ev, err, sizeof(err)), 0);
	assert_int_equal(ev.type, KUBE_OBJECT_EVENT_BOOKMARK);
	assert_string_equal(ev.resource_version, "52977");
	assert_true(ev.initial_events_end); /* the fixture ends a watch-list's initial events */
	assert_true(cJSON_IsObject(ev.object));
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(ev.object, "kind")), "Pod");
	assert_int_equal(ev.error_code, 0);
	kube_object_event_free(&ev);
	fixture_assert_zeroed(&ev, sizeof(ev));
	free(line);
}

static void test_event_error_410(void **state)
{
	(void)state;
	size_t len;
	char *line = fixture_read("objects/event_error_410.json", &len);
	kube_object_event_t ev;
	char err[256];
	assert_int_equal(kube_object_decode_event(line, len, &ev, err, sizeof(err)), 0);
	assert_int_equal(ev.type, KUBE_OBJECT_EVENT_ERROR);
	assert_int_equal(ev.error_code, 410);
	assert_string_equal(ev.error_reason, "Expired");
	assert_string_equal(ev.error_message, "too old resource version: 48000 (52977)");
	assert_null(ev.resource_version);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(ev.object, "kind")), "Status");
	kube_object_event_free(&ev);
	free(line);
}

static void test_event_modified_pod(void **state)
{
	(void)state;
	size_t len;
	char *line = fixture_read("objects/event_modified_pod.json", &len);
	kube_object_event_t ev;
	projection_pod_t p;
	char err[256];
	/* Not NUL-terminated, as the framer delivers lines inside a chunk. */
	char *exact = malloc(len);
	assert_non_null(exact);
	memcpy(exact, line, len);
	assert_int_equal(kube_object_decode_event(exact, len, &ev, err, sizeof(err)), 0);
	assert_int_equal(ev.type, KUBE_OBJECT_EVENT_MODIFIED);
	assert_string_equal(ev.resource_version, "48213");
	assert_int_equal(projection_decode_pod(ev.object, &p, err, sizeof(err)), 0);
	assert_string_equal(p.meta.name, "train-1-0-x7k2p");
	int64_t gpus;
	assert_true(projection_quantity_find(p.requests, p.n_requests, "example.com/gpu", &gpus));
	assert_int_equal(gpus, 2);
	projection_free_pod(&p);
	kube_object_event_free(&ev);
	free(exact);
	free(line);
}

static void test_event_malformed(void **state)
{
	(void)state;
	static const struct {
		const char *line;
		const char *err;
	} cases[] = {
		{"", "(top level): empty event"},
		{"{\"type\":\"ADDED\",\"object\":{", "(top level): event is not valid JSON (at byte 25 of 26)"},
		{"[1,2]", "(top level): event is not a JSON object"},
		{"\"ADDED\"", "(top level): event is not a JSON object"},
		{"{\"object\":{}}", "type: missing"},
		{"{\"type\":1,\"object\":{}}", "type: not a string"},
		{"{\"type\":\"ADDED\"}", "object: missing"},
		{"{\"type\":\"ADDED\",\"object\":null}", "object: missing"},
		{"{\"type\":\"ADDED\",\"object\":[]}", "object: not an object"},
		{"{\"type\":\"UPSERT\",\"object\":{}}", "type: unknown event type \"UPSERT\""},
		{"{\"type\":\"A\\nB\",\"object\":{}}", "type: unknown event type \"A\\x0aB\""},
		{"{\"type\":\"BOOKMARK\",\"object\":{}}", "object.metadata: missing"},
		{"{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{}}}",
		 "object.metadata.resourceVersion: missing"},
		{"{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":5}}}",
		 "object.metadata.resourceVersion: not a string"},
		{"{\"type\":\"ADDED\",\"object\":{\"metadata\":[]}}", "object.metadata: not an object"},
		{"{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"5\",\"annotations\":[]}}}",
		 "object.metadata.annotations: not an object"},
		{"{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"5\","
		 "\"annotations\":{\"k8s.io/initial-events-end\":true}}}}",
		 "object.metadata.annotations.k8s.io/initial-events-end: not a string"},
		{"{\"type\":\"ERROR\",\"object\":{\"code\":\"410\"}}", "object.code: not a number"},
		{"{\"type\":\"ERROR\",\"object\":{\"code\":4100}}", "object.code: out of range (4100)"},
		{"{\"type\":\"ERROR\",\"object\":{\"code\":410,\"message\":{}}}",
		 "object.message: not a string"},
		{"{\"type\":\"ADDED\",\"object\":{}} {}",
		 "(top level): unexpected bytes after the JSON event (at byte 29)"},
	};
	char err[256];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		kube_object_event_t ev;
		memset(&ev, 0x5a, sizeof(ev));
		int rc = kube_object_decode_event(cases[i].line, strlen(cases[i].line), &ev, err,
						 sizeof(err));
		if (rc != -1 || strcmp(err, cases[i].err) != 0)
			fail_msg("case %zu: rc %d err \"%s\", want \"%s\"", i, rc, err, cases[i].err);
		fixture_assert_zeroed(&ev, sizeof(ev));
	}
	/* A DELETED event with a trailing "\r" or spaces is fine. */
	kube_object_event_t ev;
	const char *ok = "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"x\"}}} \r";
	assert_int_equal(kube_object_decode_event(ok, strlen(ok), &ev, err, sizeof(err)), 0);
	assert_int_equal(ev.type, KUBE_OBJECT_EVENT_DELETED);
	assert_null(ev.resource_version);
	kube_object_event_free(&ev);
}

/* Every prefix of a real event is refused: a cut-off line never passes for an event. */
static void test_event_truncated_everywhere(void **state)
{
	(void)state;
	size_t len;
	char *line = fixture_read("objects/event_modified_pod.json", &len);
	char err[256];
	for (size_t cut = 0; cut < len; cut++) {
		kube_object_event_t ev;
		char *prefix = malloc(cut + 1);
		assert_non_null(prefix);
		memcpy(prefix, line, cut);
		assert_int_equal(kube_object_decode_event(prefix, cut, &ev, err, sizeof(err)), -1);
		assert_true(strncmp(err, "(top level): ", 13) == 0);
		fixture_assert_zeroed(&ev, sizeof(ev));
		free(prefix);
	}
	free(line);
}

/* ---- list pages ---- */

static void test_list_page_with_continue(void **state)
{
	(void)state;
	size_t len;
	char *body = fixture_read("objects/list_pods_page1.json", &len);
	kube_object_list_t l;
	char err[256];
	assert_int_equal(kube_object_decode_list(body, len, &l, err, sizeof(err)), 0);
	assert_string_equal(l.resource_version, "52977");
	assert_string_equal(l.continue_token,
			    "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6NTI5NzcsInN0YXJ0IjoibWwtdGVhbS90cmFpbi0x"
			    "LTAteDdrMnBcdTAwMDAifQ");
	assert_int_equal(cJSON_GetArraySize(l.items), 2);
	const char *names[] = {"train-1-0-x7k2p", "inference-0"};
	int i = 0;
	const cJSON *item;
	cJSON_ArrayForEach(item, l.items)
	{
		projection_pod_t p;
		assert_int_equal(projection_decode_pod(item, &p, err, sizeof(err)), 0);
		assert_string_equal(p.meta.name, names[i++]);
		projection_free_pod(&p);
	}
	kube_object_list_free(&l);
	fixture_assert_zeroed(&l, sizeof(l));
	free(body);
}

static void test_list_last_page(void **state)
{
	(void)state;
	size_t len;
	char *body = fixture_read("objects/list_pods_last.json", &len);
	kube_object_list_t l;
	char err[256];
	assert_int_equal(kube_object_decode_list(body, len, &l, err, sizeof(err)), 0);
	assert_null(l.continue_token);
	assert_int_equal(cJSON_GetArraySize(l.items), 1);
	kube_object_list_free(&l);
	free(body);

	/* An empty continue and a null items array: the last, empty page. */
	const char *empty = "{\"kind\":\"ResourceSliceList\",\"apiVersion\":\"resource.k8s.io/v1\","
			    "\"metadata\":{\"resourceVersion\":\"9\",\"continue\":\"\"},\"items\":null}";
	assert_int_equal(kube_object_decode_list(empty, strlen(empty), &l, err, sizeof(err)), 0);
	assert_null(l.continue_token);
	assert_string_equal(l.resource_version, "9");
	assert_true(cJSON_IsArray(l.items));
	assert_int_equal(cJSON_GetArraySize(l.items), 0);
	kube_object_list_free(&l);
}

static void test_list_malformed(void **state)
{
	(void)state;
	static const struct {
		const char *body;
		const char *err;
	} cases[] = {
		{"{\"items\":[],\"metadata\":{\"resourceVersion\":\"1\"}", "(top level): list is not valid JSON (at byte 45 of 46)"},
		{"[]", "(top level): list is not a JSON object"},
		{"{\"items\":{},\"metadata\":{\"resourceVersion\":\"1\"}}", "items: not an array"},
		{"{\"items\":[]}", "metadata: missing"},
		{"{\"items\":[],\"metadata\":{}}", "metadata.resourceVersion: missing"},
		{"{\"items\":[],\"metadata\":{\"resourceVersion\":\"1\",\"continue\":5}}",
		 "metadata.continue: not a string"},
		{"{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
		 "\"message\":\"nodes is forbidden\",\"reason\":\"Forbidden\",\"code\":403}",
		 "kind: a Status, not a list: \"nodes is forbidden\""},
	};
	char err[256];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		kube_object_list_t l;
		memset(&l, 0x5a, sizeof(l));
		int rc = kube_object_decode_list(cases[i].body, strlen(cases[i].body), &l, err,
						sizeof(err));
		if (rc != -1 || strcmp(err, cases[i].err) != 0)
			fail_msg("case %zu: rc %d err \"%s\", want \"%s\"", i, rc, err, cases[i].err);
		fixture_assert_zeroed(&l, sizeof(l));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_event_bookmark),
		cmocka_unit_test(test_event_error_410),
		cmocka_unit_test(test_event_modified_pod),
		cmocka_unit_test(test_event_malformed),
		cmocka_unit_test(test_event_truncated_everywhere),
		cmocka_unit_test(test_list_page_with_continue),
		cmocka_unit_test(test_list_last_page),
		cmocka_unit_test(test_list_malformed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
