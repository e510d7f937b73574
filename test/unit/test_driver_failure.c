/*
 * Driver failure classes (reconcilers/driver_failure.h): the kubelet's own
 * messages (kubelet v1.36: kuberuntime_manager.go wraps the DRA manager's
 * error in "Failed to prepare dynamic resources: %v", the manager in
 * "prepare dynamic resources: %w", the plugin manager says "DRA driver %s is
 * not registered"), classified; then each node's classes and its quarantine.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <cjson/cJSON.h>
#include <string.h>

#include "driver_failure.h"

#define DRIVER "gpu.example.com"
#define KUBELET "Failed to prepare dynamic resources: prepare dynamic resources: "

typedef struct {
	const char *name;
	const char *message;
	driver_report_t want;
} read_row_t;

static const read_row_t read_rows[] = {
	{ "a prepare that timed out is retryable",
	  KUBELET "NodePrepareResources: rpc error: code = DeadlineExceeded desc = context deadline exceeded",
	  DRIVER_REPORT_DEADLINE },
	{ "the driver's error for a claim is permanent",
	  KUBELET "NodePrepareResources failed for ResourceClaim train-0-gpu: no such device gpu-3",
	  DRIVER_REPORT_PREPARE_FAILED },
	{ "another gRPC code is permanent",
	  KUBELET "NodePrepareResources: rpc error: code = Internal desc = device busy", DRIVER_REPORT_PREPARE_FAILED },
	{ "DeadlineExceeded in the driver's own text is not the gRPC code",
	  KUBELET "NodePrepareResources failed for ResourceClaim c: DeadlineExceeded while probing", DRIVER_REPORT_PREPARE_FAILED },
	{ "the plan's driver not registered", KUBELET "DRA driver " DRIVER " is not registered",
	  DRIVER_REPORT_NOT_REGISTERED },
	{ "another driver not registered is not the plan's", KUBELET "DRA driver nic.example.com is not registered",
	  DRIVER_REPORT_OTHER },
	{ "a driver whose name extends the plan's is not the plan's", KUBELET "DRA driver " DRIVER "x is not registered",
	  DRIVER_REPORT_OTHER },
	{ "a pod refused a claim is no driver failure",
	  KUBELET "pod default/p (uid) is not allowed to use ResourceClaim c (uid)", DRIVER_REPORT_OTHER },
	{ "an API error fetching the claim is no driver failure",
	  KUBELET "fetch ResourceClaim c: resourceclaims.resource.k8s.io \"c\" not found", DRIVER_REPORT_OTHER },
	{ "no message", NULL, DRIVER_REPORT_OTHER },
};

static void test_read(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(read_rows) / sizeof(read_rows[0]); i++) {
		driver_report_t got = driver_failure_read(read_rows[i].message, DRIVER);
		if (got != read_rows[i].want)
			fail_msg("%s: got %d, want %d", read_rows[i].name, got, read_rows[i].want);
	}
}

typedef struct {
	const char *name;
	driver_failure_node_t in;
	bool retryable, permanent, cleanup;
	bool patch;           /* a quarantine patch is written */
	bool marks_cordon;    /* ... that cordons and records cordoned-by-drashift */
} decide_row_t;

#define NOW 1796158800000LL
#define NODE(...) { .node = "a-1", .dra_owned = true, .now_ms = NOW, __VA_ARGS__ }

static const decide_row_t decide_rows[] = {
	{ "nothing reported: no class, nothing written", NODE(0), false, false, false, false, false },
	{ "timeouts only: retryable, not quarantined", NODE(.deadline = 3), true, false, false, false, false },
	{ "a prepare failure quarantines a schedulable node, cordoned by drashift", NODE(.prepare_failed = 1), false, true,
	  false, true, true },
	{ "a node someone else cordoned is quarantined without claiming the cordon",
	  NODE(.prepare_failed = 1, .unschedulable = true), false, true, false, true, false },
	{ "not registered and its slices withdrawn: retryable (a restart, a rollout), not quarantined",
	  NODE(.not_registered = 2, .not_registered_since_ms = NOW - 600000), true, false, false, false, false },
	{ "not registered while its slices remain past the kubelet's 30 s wipe: stale, needs cleanup, no quarantine",
	  NODE(.not_registered = 2, .not_registered_since_ms = NOW - 30000, .slices_present = true), false, false, true,
	  false, false },
	{ "not registered, slices not wiped yet (29 s): retryable",
	  NODE(.not_registered = 2, .not_registered_since_ms = NOW - 29000, .slices_present = true), true, false, false,
	  false, false },
	{ "claims stuck with the delete-protection finalizer need cleanup", NODE(.stuck_claims = 1), false, false, true,
	  false, false },
	{ "already quarantined: nothing written again", NODE(.prepare_failed = 4, .quarantined = true), false, true,
	  false, false, false },
	{ "a node the driver does not own is not quarantined",
	  { .node = "a-1", .prepare_failed = 1, .dra_owned = false }, false, true, false, false, false },
	{ "every class at once", NODE(.deadline = 1, .prepare_failed = 1, .stuck_claims = 2), true, true, true, true, true },
};

static void test_decide(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(decide_rows) / sizeof(decide_rows[0]); i++) {
		const decide_row_t *row = &decide_rows[i];
		driver_failure_decision_t d;
		driver_failure_decide(&row->in, &d);
		if (d.in[DRIVER_FAILURE_RETRYABLE] != row->retryable || d.in[DRIVER_FAILURE_PERMANENT] != row->permanent ||
		    d.in[DRIVER_FAILURE_CLEANUP] != row->cleanup)
			fail_msg("%s: classes %d%d%d, want %d%d%d", row->name, d.in[0], d.in[1], d.in[2], row->retryable,
				 row->permanent, row->cleanup);
		bool any = row->retryable || row->permanent || row->cleanup;
		if ((d.message != NULL) != any)
			fail_msg("%s: message %s", row->name, d.message ? d.message : "(none)");
		if (any && strncmp(d.message, "a-1", 3) != 0)
			fail_msg("%s: the message does not name the node: %s", row->name, d.message);
		if ((d.patch != NULL) != row->patch)
			fail_msg("%s: patch %s", row->name, d.patch ? d.patch : "(none)");
		if (d.patch) {
			cJSON *p = cJSON_Parse(d.patch);
			assert_non_null(p);
			const cJSON *ann = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(p, "metadata"),
									    "annotations");
			assert_true(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(ann, DRIVER_FAILURE_ANN_QUARANTINE)));
			const cJSON *cordoned = cJSON_GetObjectItemCaseSensitive(ann, "drashift.io/cordoned-by-drashift");
			const cJSON *unsched = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(p, "spec"),
										"unschedulable");
			if (row->marks_cordon != (cJSON_IsString(cordoned) && cJSON_IsTrue(unsched)))
				fail_msg("%s: cordon %s", row->name, d.patch);
			/* Never an uncordon, a label or a step. */
			if (cJSON_IsFalse(unsched) || cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(p, "metadata"), "labels") ||
			    cJSON_GetObjectItemCaseSensitive(ann, "drashift.io/step") ||
			    (!row->marks_cordon && cordoned != NULL))
				fail_msg("%s: writes more than the quarantine: %s", row->name, d.patch);
			cJSON_Delete(p);
		}
		driver_failure_decision_free(&d);
	}
}

static void test_class_names(void **state)
{
	(void)state;
	assert_string_equal(driver_failure_class_name(DRIVER_FAILURE_RETRYABLE), "retryable");
	assert_string_equal(driver_failure_class_name(DRIVER_FAILURE_PERMANENT), "permanent");
	assert_string_equal(driver_failure_class_name(DRIVER_FAILURE_CLEANUP), "needsCleanup");
	assert_string_equal(driver_failure_class_name(DRIVER_FAILURE_CLASSES), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read),
		cmocka_unit_test(test_decide),
		cmocka_unit_test(test_class_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
