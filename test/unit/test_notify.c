/*
 * Notifications (reconcilers/notify.h): which changes of a plan's status are
 * notified (a table of recorded status -> new status), the body a webhook
 * receives for each (JSON, and Slack's text), the events filter, and
 * spec.notifications decoded strictly (a URL never quoted in an error: it
 * may carry a token).
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
#include "notify.h"
#include "plan.h"
#include "xalloc.h"

/* A pool: its phase recorded before and now, awaiting approval before and now. */
#define POOL(was, is, aw_was, aw) { "a", was, is, aw_was, aw, "all 4 nodes are owned by the DRA driver", 0, 0 }
/* A pool whose failed nodes went from f_was to f (status.pools[].nodes.failed). */
#define FAILING(was, is, f_was, f) { "a", was, is, false, false, "frozen by an SLO breach", f_was, f }

typedef struct {
	const char *what;
	bool frozen_was, frozen;
	const char *breach_was, *breach; /* status.breach.id before and now */
	notify_pool_t a, b;
	const char *want; /* "event:pool ..." in order; "" none */
} row_t;

/* Pool b at rest (a macro: a const object is no constant initializer in C17). */
#define QUIET { "b", "Legacy", "Legacy", false, false, "", 0, 0 }

static const row_t rows[] = {
	{ "nothing changed", false, false, NULL, NULL, POOL("Canary", "Canary", false, false), QUIET, "" },
	{ "first status: no phase recorded, even on DRA", false, false, NULL, NULL, POOL(NULL, "DRA", false, false),
	  QUIET, "" },
	{ "a pool reached DRA", false, false, NULL, NULL, POOL("Expanding", "DRA", false, false), QUIET, "poolDone:a" },
	{ "a pool already on DRA", false, false, NULL, NULL, POOL("DRA", "DRA", false, false), QUIET, "" },
	/* A failed node is a failedSteps breach: the plan freezes in the same reconcile, the pool shows Frozen. */
	{ "a node failed: breach, freeze, failure", false, true, NULL, "a-failedSteps-1700000000",
	  FAILING("Canary", "Frozen", 0, 1), QUIET, "breach:- freeze:- failure:a" },
	{ "a failed node stays failed", true, true, "a-failedSteps-1700000000", "a-failedSteps-1700000000",
	  FAILING("Frozen", "Frozen", 1, 1), QUIET, "" },
	{ "a second node failed", true, true, "a-failedSteps-1700000000", "a-failedSteps-1700000000",
	  FAILING("Frozen", "Frozen", 1, 2), QUIET, "failure:a" },
	{ "a failed node rolled back", true, true, "a-failedSteps-1700000000", "a-failedSteps-1700000000",
	  FAILING("RollingBack", "RollingBack", 1, 0), QUIET, "" },
	{ "first status: no phase recorded, a node already failed", false, false, NULL, NULL,
	  FAILING(NULL, "Failed", 0, 1), QUIET, "" },
	{ "canary waits for approval", false, false, NULL, NULL, POOL("Canary", "Canary", false, true), QUIET,
	  "awaitingApproval:a" },
	{ "still waiting", false, false, NULL, NULL, POOL("Canary", "Canary", true, true), QUIET, "" },
	{ "approved: the wait ends, nothing to say", false, false, NULL, NULL, POOL("Canary", "Expanding", true, false),
	  QUIET, "" },
	{ "a breach freezes the plan", false, true, NULL, "a-allocationLatencyP95-1700000000",
	  POOL("Canary", "Frozen", false, false), QUIET, "breach:- freeze:-" },
	{ "still frozen, breach recorded", true, true, "a-allocationLatencyP95-1700000000",
	  "a-allocationLatencyP95-1700000000", POOL("Frozen", "Frozen", false, false), QUIET, "" },
	{ "acknowledged: the freeze lifts, nothing to say", true, false, "a-allocationLatencyP95-1700000000",
	  "a-allocationLatencyP95-1700000000", POOL("Frozen", "Canary", false, false), QUIET, "" },
	{ "a second breach after an acknowledgement", false, true, "a-allocationLatencyP95-1700000000",
	  "a-readyLatencyP95-1700000600", POOL("Expanding", "Frozen", false, false), QUIET, "breach:- freeze:-" },
	{ "two pools at once, in plan order", false, false, NULL, NULL, POOL("Expanding", "DRA", false, false),
	  { "b", "Canary", "Failed", false, false, "1 node(s) failed their handover; expansion stopped", 0, 1 },
	  "poolDone:a failure:b" },
};

static void run_row(const row_t *r, notify_input_t *in, notify_pool_t pools[2], char *got, size_t len)
{
	pools[0] = r->a;
	pools[1] = r->b;
	*in = (notify_input_t){ .plan = "gpu", .now_ms = 1700000000123, .time = "2023-11-14T22:13:20Z",
				.frozen_was = r->frozen_was, .frozen = r->frozen, .breach_id_was = r->breach_was,
				.breach = { r->breach, "a", "allocationLatencyP95", "61579ms", "60000ms" },
				.pools = pools, .n_pools = 2 };
	notify_t out[NOTIFY_EVENTS + 3 * 2];
	size_t n = notify_decide(in, out);
	got[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		size_t used = strlen(got);
		snprintf(got + used, len - used, "%s%s:%s", i ? " " : "", notify_event_name(out[i].event),
			 out[i].pool < 0 ? "-" : pools[out[i].pool].name);
	}
}

static void test_what_is_notified(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		notify_input_t in;
		notify_pool_t pools[2];
		char got[256];
		run_row(&rows[i], &in, pools, got, sizeof(got));
		if (strcmp(got, rows[i].want) != 0)
			fail_msg("%s: got \"%s\", want \"%s\"", rows[i].what, got, rows[i].want);
	}
}

static const char *str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The body of each event, as the README documents it. */
static void test_payloads(void **state)
{
	(void)state;
	notify_input_t in;
	notify_pool_t pools[2];
	char got[256];
	run_row(&rows[12], &in, pools, got, sizeof(got)); /* the breach */
	notify_t breach = { NOTIFY_BREACH, -1 };
	cJSON *o = notify_payload(&in, &breach, NOTIFY_FORMAT_JSON);
	assert_string_equal(str(o, "kind"), "MigrationPlanNotification");
	assert_string_equal(str(o, "apiVersion"), "drashift.io/v1alpha1");
	assert_string_equal(str(o, "event"), "breach");
	assert_string_equal(str(o, "id"), "gpu/breach/a-allocationLatencyP95-1700000000/1700000000123");
	assert_string_equal(str(o, "time"), "2023-11-14T22:13:20Z");
	assert_string_equal(str(o, "plan"), "gpu");
	assert_string_equal(str(o, "pool"), "a");
	assert_string_equal(str(o, "message"), "pool a: allocationLatencyP95 measured 61579ms, over its limit 60000ms");
	const cJSON *b = cJSON_GetObjectItemCaseSensitive(o, "breach");
	assert_string_equal(str(b, "id"), "a-allocationLatencyP95-1700000000");
	assert_string_equal(str(b, "signal"), "allocationLatencyP95");
	assert_string_equal(str(b, "value"), "61579ms");
	assert_string_equal(str(b, "threshold"), "60000ms");
	assert_string_equal(str(o, "action"),
			    "find the cause, then kubectl drashift acknowledge gpu, or kubectl drashift rollback gpu a");
	assert_null(cJSON_GetObjectItemCaseSensitive(o, "text")); /* JSON: no Slack text */
	assert_null(cJSON_GetObjectItemCaseSensitive(o, "phase"));
	cJSON_Delete(o);

	notify_t freeze = { NOTIFY_FREEZE, -1 };
	o = notify_payload(&in, &freeze, NOTIFY_FORMAT_SLACK);
	assert_string_equal(str(o, "event"), "freeze");
	assert_string_equal(str(cJSON_GetObjectItemCaseSensitive(o, "breach"), "id"),
			    "a-allocationLatencyP95-1700000000");
	assert_string_equal(str(o, "text"),
			    "drashift: plan gpu is frozen: pool a's allocationLatencyP95 measured 61579ms over its limit "
			    "60000ms. Action: find the cause, then kubectl drashift acknowledge gpu, or kubectl drashift "
			    "rollback gpu a");
	cJSON_Delete(o);

	run_row(&rows[16], &in, pools, got, sizeof(got)); /* a done, b failed */
	notify_t done = { NOTIFY_POOL_DONE, 0 }, failed = { NOTIFY_FAILURE, 1 };
	o = notify_payload(&in, &done, NOTIFY_FORMAT_SLACK);
	assert_string_equal(str(o, "event"), "poolDone");
	assert_string_equal(str(o, "id"), "gpu/poolDone/a/1700000000123");
	assert_string_equal(str(o, "pool"), "a");
	assert_string_equal(str(o, "phase"), "DRA");
	assert_string_equal(str(o, "previousPhase"), "Expanding");
	assert_string_equal(str(o, "action"), "");
	assert_null(cJSON_GetObjectItemCaseSensitive(o, "breach"));
	assert_string_equal(str(o, "text"), "drashift: plan gpu: pool a is on DRA (all 4 nodes are owned by the DRA driver)");
	cJSON_Delete(o);
	o = notify_payload(&in, &failed, NOTIFY_FORMAT_JSON);
	assert_string_equal(str(o, "event"), "failure");
	assert_string_equal(str(o, "pool"), "b");
	assert_string_equal(str(o, "phase"), "Failed");
	assert_string_equal(str(o, "previousPhase"), "Canary");
	assert_string_equal(str(o, "message"), "1 node(s) failed their handover; the pool is Failed: 1 node(s) failed "
					       "their handover; expansion stopped");
	assert_string_equal(str(o, "action"), "read the failed nodes' drashift.io/failure annotation and Events, fix the "
					      "cause, or kubectl drashift rollback gpu b");
	cJSON_Delete(o);

	run_row(&rows[4], &in, pools, got, sizeof(got)); /* a node failed and the plan froze */
	notify_t frozen_failure = { NOTIFY_FAILURE, 0 };
	o = notify_payload(&in, &frozen_failure, NOTIFY_FORMAT_SLACK);
	assert_string_equal(str(o, "phase"), "Frozen");
	assert_string_equal(str(o, "message"),
			    "1 node(s) failed their handover; the pool is Frozen: frozen by an SLO breach");
	assert_string_equal(str(o, "text"), "drashift: plan gpu: pool a: 1 node(s) failed their handover; the pool is "
					    "Frozen: frozen by an SLO breach. Action: read the failed nodes' "
					    "drashift.io/failure annotation and Events, fix the cause, or kubectl drashift "
					    "rollback gpu a");
	assert_null(cJSON_GetObjectItemCaseSensitive(o, "breach")); /* the breach has its own notification */
	cJSON_Delete(o);

	run_row(&rows[9], &in, pools, got, sizeof(got)); /* awaiting approval */
	notify_t wait = { NOTIFY_AWAITING_APPROVAL, 0 };
	o = notify_payload(&in, &wait, NOTIFY_FORMAT_SLACK);
	assert_string_equal(str(o, "event"), "awaitingApproval");
	assert_string_equal(str(o, "phase"), "Canary");
	assert_string_equal(str(o, "action"), "kubectl drashift promote gpu a");
	assert_string_equal(str(o, "text"), "drashift: plan gpu: pool a waits for approval (canary baked, SLO gate "
					    "passed). Action: kubectl drashift promote gpu a");
	cJSON_Delete(o);
}

#define PLAN_HEAD                                                                                                  \
	"{'apiVersion':'drashift.io/v1alpha1','kind':'MigrationPlan','metadata':{'name':'gpu'},'spec':{"              \
	"'driver':'gpu.example.com','extendedResource':'example.com/gpu','deviceClassNames':['gpu.example.com'],"   \
	"'pools':[{'name':'a','nodeSelector':{'matchLabels':{'pool':'a'}}}]"

static int decode(const char *notifications, plan_t *p, char *err, size_t errlen)
{
	char *json = xasprintf(PLAN_HEAD ",'notifications':%s}}", notifications);
	cJSON *obj = fixture_quoted_json(json);
	free(json);
	int rc = plan_decode(obj, p, err, errlen);
	cJSON_Delete(obj);
	return rc;
}

/* spec.notifications decodes to the webhooks the controller sends to; the filter keeps what a webhook asked for. */
static void test_decode_and_filter(void **state)
{
	(void)state;
	plan_t p;
	char err[512];
	int rc = decode("{'webhooks':[{'name':'ops','url':'https://hooks.example.com/T0/B0/secret','format':'Slack',"
			"'events':['breach','poolDone'],'timeout':'5s'},{'name':'audit','url':'http://127.0.0.1:9/x'}]}",
			&p, err, sizeof(err));
	if (rc != 0)
		fail_msg("decode: %s", err);
	assert_int_equal(p.n_webhooks, 2);
	assert_string_equal(p.webhooks[0].name, "ops");
	assert_string_equal(p.webhooks[0].url, "https://hooks.example.com/T0/B0/secret");
	assert_int_equal(p.webhooks[0].format, NOTIFY_FORMAT_SLACK);
	assert_int_equal(p.webhooks[0].timeout_ms, 5000);
	assert_true(notify_wanted(p.webhooks[0].events, NOTIFY_BREACH));
	assert_true(notify_wanted(p.webhooks[0].events, NOTIFY_POOL_DONE));
	assert_false(notify_wanted(p.webhooks[0].events, NOTIFY_FREEZE));
	assert_false(notify_wanted(p.webhooks[0].events, NOTIFY_AWAITING_APPROVAL));
	assert_int_equal(p.webhooks[1].format, NOTIFY_FORMAT_JSON);
	assert_int_equal(p.webhooks[1].timeout_ms, 30000);
	for (int e = 0; e < NOTIFY_EVENTS; e++)
		assert_true(notify_wanted(p.webhooks[1].events, (notify_event_t)e));
	plan_free(&p);
}

typedef struct {
	const char *notifications;
	const char *want;
} bad_t;

static const bad_t bad[] = {
	{ "{'webhooks':[{'name':'ops'}]}", "spec.notifications.webhooks[0].url: missing" },
	{ "{'webhooks':[{'url':'https://x'}]}", "spec.notifications.webhooks[0].name: missing" },
	{ "{'webhooks':[{'name':'ops','url':'ftp://x/token-123'}]}",
	  "spec.notifications.webhooks[0].url: must be an http:// or https:// URL with a host, at most 2048 characters, "
	  "without spaces (not shown: it may carry a token)" },
	{ "{'webhooks':[{'name':'ops','url':'https:///token-123'}]}",
	  "spec.notifications.webhooks[0].url: must be an http:// or https:// URL with a host, at most 2048 characters, "
	  "without spaces (not shown: it may carry a token)" },
	{ "{'webhooks':[{'name':'ops','url':'https://x/a token-123'}]}",
	  "spec.notifications.webhooks[0].url: must be an http:// or https:// URL with a host, at most 2048 characters, "
	  "without spaces (not shown: it may carry a token)" },
	{ "{'webhooks':[{'name':'Ops','url':'https://x'}]}",
	  "spec.notifications.webhooks[0].name: must be a DNS label (lowercase letters, digits and '-', at most 63)" },
	{ "{'webhooks':[{'name':'ops','url':'https://x'},{'name':'ops','url':'https://y'}]}",
	  "spec.notifications.webhooks[1].name: duplicate webhook name" },
	{ "{'webhooks':[{'name':'ops','url':'https://x','format':'Teams'}]}",
	  "spec.notifications.webhooks[0].format: unsupported value \"Teams\": supported values: JSON, Slack" },
	{ "{'webhooks':[{'name':'ops','url':'https://x','events':['done']}]}",
	  "spec.notifications.webhooks[0].events[0]: must be breach, freeze, poolDone, failure or awaitingApproval "
	  "(\"done\")" },
	{ "{'webhooks':[{'name':'ops','url':'https://x','events':['breach','breach']}]}",
	  "spec.notifications.webhooks[0].events[1]: duplicate value \"breach\"" },
	{ "{'webhooks':[{'name':'ops','url':'https://x','timeout':'11m'}]}",
	  "spec.notifications.webhooks[0].timeout: must be at most 10m" },
	{ "{'webhooks':[{'name':'ops','url':'https://x','secret':'s'}]}",
	  "spec.notifications.webhooks[0].secret: unknown field (this drashift does not know it)" },
	{ "{'slack':[]}", "spec.notifications.slack: unknown field (this drashift does not know it)" },
	{ "{'webhooks':[{'name':'a','url':'https://x'},{'name':'b','url':'https://x'},{'name':'c','url':'https://x'},"
	  "{'name':'d','url':'https://x'},{'name':'e','url':'https://x'},{'name':'f','url':'https://x'},"
	  "{'name':'g','url':'https://x'},{'name':'h','url':'https://x'},{'name':'i','url':'https://x'}]}",
	  "spec.notifications.webhooks: more than 8 items" },
};

static void test_decode_refuses(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		plan_t p;
		char err[512];
		if (decode(bad[i].notifications, &p, err, sizeof(err)) == 0)
			fail_msg("%s: decoded", bad[i].notifications);
		if (strcmp(err, bad[i].want) != 0)
			fail_msg("%s:\n got  %s\n want %s", bad[i].notifications, err, bad[i].want);
		assert_null(strstr(err, "token-123"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_what_is_notified),
		cmocka_unit_test(test_payloads),
		cmocka_unit_test(test_decode_and_filter),
		cmocka_unit_test(test_decode_refuses),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
