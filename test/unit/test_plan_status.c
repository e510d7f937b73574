/*
 * The plan's status as a whole, as tables: the freeze and its
 * acknowledgement, when a new breach is recorded, the plan's phase, and its
 * conditions.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_status.h"

#define NOW 1764441600000LL

static plan_pool_t pools[] = { { .name = "a" }, { .name = "b" } };
static char *classes[] = { "gpu.example.com" };
static plan_t plan = { .name = "gpu", .pools = pools, .n_pools = 2, .device_classes = classes, .n_device_classes = 1 };

static void test_freeze_and_acknowledgement(void **state)
{
	(void)state;
	static const struct {
		const char *recorded, *acknowledged;
		int64_t acknowledged_ms;
		bool want_ack, want_frozen;
		int64_t want_since;
	} rows[] = {
		{ NULL, NULL, 0, false, false, 0 },			    /* nothing recorded */
		{ NULL, "a-x-1", 0, false, false, 0 },		    /* an acknowledgement of nothing lifts nothing */
		{ "a-x-1", NULL, 0, false, true, 0 },		    /* recorded, not acknowledged: frozen */
		{ "a-x-1", "a-x-0", 0, false, true, 0 },	    /* an older breach's id lifts nothing */
		{ "a-x-1", "a-x-1", 0, true, false, NOW },	    /* acknowledged now: judged from now */
		{ "a-x-1", "a-x-1", NOW - 5000, true, false, NOW - 5000 }, /* from the recorded acknowledgement */
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		plan_t p = plan;
		p.acknowledged_breach = (char *)rows[i].acknowledged;
		plan_breach_t rec = { .id = rows[i].recorded, .acknowledged_ms = rows[i].acknowledged_ms };
		plan_freeze_t f;
		plan_status_freeze(&p, &rec, NOW, &f);
		if (f.acknowledged != rows[i].want_ack || f.frozen != rows[i].want_frozen || f.judge_since_ms != rows[i].want_since)
			fail_msg("row %zu: acknowledged %d frozen %d since %lld", i, f.acknowledged, f.frozen,
				 (long long)f.judge_since_ms);
	}
}

/*
 * The freeze parameter is written with a new breach before the status is:
 * a frozen parameter of this plan whose breach the status lacks is recorded
 * into the status (adopted), and the parameter never replaces a breach that
 * still freezes the plan or lifts anything. Each row runs through
 * plan_status_freeze first, as the controller does.
 */
static void test_parameter_breach_adopted_only_when_the_status_lacks_it(void **state)
{
	(void)state;
	static const struct {
		const char *recorded, *acknowledged; /* status.breach.id, spec.acknowledgedBreach */
		bool frozen;                         /* the parameter's data.frozen */
		const char *param_id, *owner;        /* its breachId and owning plan's uid */
		bool want;
	} rows[] = {
		{ NULL, NULL, true, "a-x-2", "uid-1", true },		 /* the status write never landed */
		{ NULL, "a-x-2", true, "a-x-2", "uid-1", true },	 /* acknowledged from the denial first: still recorded */
		{ "a-x-1", "a-x-1", true, "a-x-2", "uid-1", true },	 /* a second breach after an acknowledged one */
		{ "a-x-2", NULL, true, "a-x-2", "uid-1", false },	 /* recorded already */
		{ "a-x-2", "a-x-2", true, "a-x-2", "uid-1", false },	 /* acknowledged: the lift follows, no adoption */
		{ "a-x-1", NULL, true, "a-x-2", "uid-1", false },	 /* the status's breach still freezes: it stands */
		{ NULL, NULL, false, "a-x-2", "uid-1", false },		 /* lifted: nothing to record */
		{ NULL, NULL, true, "", "uid-1", false },		 /* frozen without an id: nothing to acknowledge */
		{ NULL, NULL, true, NULL, "uid-1", false },
		{ NULL, NULL, true, "a-x-2", "uid-0", false },		 /* a deleted plan's by the same name */
		{ NULL, NULL, true, "a-x-2", NULL, false },		 /* owned by no plan (made by hand) */
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		plan_t p = plan;
		p.acknowledged_breach = (char *)rows[i].acknowledged;
		plan_breach_t rec = { .id = rows[i].recorded };
		plan_freeze_t f;
		plan_status_freeze(&p, &rec, NOW, &f);
		plan_parameter_t param = { .frozen = rows[i].frozen, .owner_uid = rows[i].owner,
					   .breach = { .id = rows[i].param_id } };
		if (plan_status_adopts_breach("uid-1", &f, &rec, &param) != rows[i].want)
			fail_msg("row %zu: adopts %d, want %d", i, !rows[i].want, rows[i].want);
	}
	plan_breach_t none = { 0 };
	plan_freeze_t f = { 0 };
	assert_false(plan_status_adopts_breach("uid-1", &f, &none, NULL));
	plan_parameter_t param = { .frozen = true, .owner_uid = "uid-1", .breach = { .id = "a-x-2" } };
	assert_false(plan_status_adopts_breach(NULL, &f, &none, &param));
}

static void test_new_breach_only_when_not_frozen(void **state)
{
	(void)state;
	slo_result_t lat = { .name = "readyLatencyP95", .value = 6046.4, .threshold = 3000, .unit = "ms" };
	slo_result_t drift = { .name = "capacityDrift", .value = 1, .threshold = 0, .unit = "" };
	static const struct {
		slo_verdict_t a, b;
		bool frozen;
		bool b_moving; /* pool b recorded in Canary or Expanding, pool a not */
		bool want;
		size_t want_pool;
		const char *want_id, *want_value;
	} rows[] = {
		{ SLO_PASS, SLO_PASS, false, false, false, 0, NULL, NULL },
		{ SLO_INCONCLUSIVE, SLO_UNJUDGED, false, false, false, 0, NULL, NULL }, /* too few samples is no breach */
		{ SLO_PASS, SLO_BREACH, false, false, true, 1, "b-capacityDrift-1764441600", "1" },
		{ SLO_BREACH, SLO_BREACH, false, false, true, 0, "a-readyLatencyP95-1764441600", "6046ms" }, /* plan order */
		{ SLO_BREACH, SLO_BREACH, true, false, false, 0, NULL, NULL }, /* frozen: the first breach stands */
		/* a breach both gates share (a cluster-wide query): the pool being migrated is blamed */
		{ SLO_BREACH, SLO_BREACH, false, true, true, 1, "b-capacityDrift-1764441600", "1" },
		{ SLO_BREACH, SLO_PASS, false, true, true, 0, "a-readyLatencyP95-1764441600", "6046ms" },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		plan_pool_gate_t gates[2] = { { rows[i].a, rows[i].a == SLO_BREACH ? &lat : NULL, false },
					      { rows[i].b, rows[i].b == SLO_BREACH ? &drift : NULL, rows[i].b_moving } };
		plan_freeze_t f = { .frozen = rows[i].frozen };
		plan_new_breach_t nb;
		plan_status_new_breach(&plan, &f, gates, NOW, &nb);
		assert_int_equal(nb.found, rows[i].want);
		if (rows[i].want) {
			assert_int_equal(nb.pool, rows[i].want_pool);
			assert_string_equal(nb.id, rows[i].want_id);
			assert_string_equal(nb.value, rows[i].want_value);
		}
		plan_new_breach_free(&nb);
	}
}

static void test_phase(void **state)
{
	(void)state;
	static const struct {
		pool_phase_t a, b;
		bool frozen, paused;
		const char *want;
	} rows[] = {
		{ POOL_LEGACY, POOL_LEGACY, false, false, "Legacy" },
		{ POOL_CANARY, POOL_LEGACY, false, false, "Canary" },
		{ POOL_DRA, POOL_EXPANDING, false, false, "Expanding" },
		{ POOL_DRA, POOL_LEGACY, false, false, "Expanding" }, /* between pools */
		{ POOL_DRA, POOL_DRA, false, false, "DRA" },
		{ POOL_DRA, POOL_DRA, false, true, "Paused" },
		{ POOL_DRA, POOL_ROLLING_BACK, false, true, "RollingBack" },
		{ POOL_FAILED, POOL_ROLLING_BACK, false, false, "Failed" },
		{ POOL_FAILED, POOL_CANARY, true, false, "Frozen" }, /* frozen says it first */
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		pool_phase_t ph[2] = { rows[i].a, rows[i].b };
		const char *got = plan_status_phase(ph, 2, rows[i].frozen, rows[i].paused);
		if (strcmp(got, rows[i].want) != 0)
			fail_msg("row %zu: phase %s, want %s", i, got, rows[i].want);
	}
}

static void check_condition(const plan_condition_t *c, const char *type, bool status, const char *reason, const char *message)
{
	assert_string_equal(c->type, type);
	assert_int_equal(c->status, status);
	assert_string_equal(c->reason, reason);
	if (message && strstr(c->message, message) == NULL)
		fail_msg("%s: message '%s' lacks '%s'", type, c->message, message);
}

static void test_conditions_quiet_plan(void **state)
{
	(void)state;
	pool_phase_t ph[2] = { POOL_DRA, POOL_DRA };
	plan_conditions_input_t in = { .plan = &plan, .phases = ph };
	plan_condition_t c[PLAN_CONDITIONS];
	plan_status_conditions(&in, c);
	check_condition(&c[PLAN_COND_READY], "Ready", true, "AllPoolsOnDRA", "every pool");
	check_condition(&c[PLAN_COND_PROGRESSING], "Progressing", false, "Idle", NULL);
	check_condition(&c[PLAN_COND_PAUSED], "Paused", false, "NotPaused", "running");
	check_condition(&c[PLAN_COND_FROZEN], "Frozen", false, "NotFrozen", "no SLO breach");
	check_condition(&c[PLAN_COND_DEGRADED], "Degraded", false, "Healthy", "all nodes healthy");
	check_condition(&c[PLAN_COND_INVALID], "Invalid", false, "SpecValid", NULL);
	check_condition(&c[PLAN_COND_AWAITING_APPROVAL], "AwaitingApproval", false, "NotWaiting", "no pool waits");
	plan_conditions_free(c);
}

/* A pool waiting for a person's promotion is a condition that names it and the command that approves it. */
static void test_conditions_awaiting_approval(void **state)
{
	(void)state;
	pool_phase_t ph[2] = { POOL_DRA, POOL_CANARY };
	plan_conditions_input_t in = { .plan = &plan, .phases = ph, .awaiting_approval = "b" };
	plan_condition_t c[PLAN_CONDITIONS];
	plan_status_conditions(&in, c);
	check_condition(&c[PLAN_COND_AWAITING_APPROVAL], "AwaitingApproval", true, "PromotionManual",
			"pool b: canary baked and its SLO gate passed; promotion is Manual: approve with kubectl "
			"drashift promote gpu b");
	plan_conditions_free(c);
}

/* TenantBoundary: written, being written, refused (with the API's error), or nothing to restrict. */
static void test_conditions_tenant_boundary(void **state)
{
	(void)state;
	static char *ns[] = { "team-canary" };
	plan_pool_t restricted_pools[] = { { .name = "a", .canary_namespaces = ns, .n_canary_namespaces = 1 } };
	plan_t restricted = plan;
	restricted.pools = restricted_pools;
	restricted.n_pools = 1;
	pool_phase_t ph[2] = { POOL_CANARY, POOL_LEGACY };
	const struct {
		const plan_t *plan;
		tenancy_param_t param;
		const char *error;
		bool status;
		const char *reason, *message;
	} rows[] = {
		{ &plan, TENANCY_PARAM_UNWRITTEN, NULL, true, "NotRestricted", "the plan restricts no namespace" },
		{ &restricted, TENANCY_PARAM_WRITTEN, NULL, true, "Written",
		  "judges claims for the plan's classes by the parameter drashift-system/drashift-tenancy-gpu" },
		{ &restricted, TENANCY_PARAM_WRITING, NULL, false, "Writing",
		  "writing the parameter drashift-system/drashift-tenancy-gpu; no node starts a handover until it is written" },
		{ &restricted, TENANCY_PARAM_UNWRITTEN, NULL, false, "Writing", "no node starts a handover" },
		{ &restricted, TENANCY_PARAM_FAILED, "configmaps is forbidden", false, "WriteFailed",
		  "NOT ENFORCED: the parameter drashift-system/drashift-tenancy-gpu could not be written (tried again at "
		  "least 5 s apart): configmaps is forbidden; no node starts a handover until it is" },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		plan_conditions_input_t in = { .plan = rows[i].plan, .phases = ph, .retry_seconds = 5,
					       .tenancy_param = rows[i].param, .tenancy_error = rows[i].error };
		plan_condition_t c[PLAN_CONDITIONS];
		plan_status_conditions(&in, c);
		check_condition(&c[PLAN_COND_TENANT_BOUNDARY], "TenantBoundary", rows[i].status, rows[i].reason,
				rows[i].message);
		plan_conditions_free(c);
	}
}

static void test_conditions_frozen_says_what_is_enforced_and_refused(void **state)
{
	(void)state;
	static const struct {
		plan_freeze_mode_t mode;
		const char *param_error, *taint_error;
		const char *want, *not_want;
	} rows[] = {
		{ PLAN_FREEZE_ADMISSION, NULL, NULL, "new claims for gpu.example.com are denied;", "tainted" },
		{ PLAN_FREEZE_DEVICE_TAINT, NULL, NULL, "the driver's devices are tainted NoSchedule;", "denied" },
		{ PLAN_FREEZE_ADMISSION_AND_DEVICE_TAINT, NULL, "forbidden", "NOT ENFORCED YET (tried again at least 5 s apart): forbidden", NULL },
		{ PLAN_FREEZE_ADMISSION, "timeout", NULL, "(kubectl drashift rollback gpu b). NOT ENFORCED YET (tried again at least 5 s apart): timeout", NULL },
	};
	plan_breach_t b = { .id = "b-capacityDrift-7", .pool = "b", .signal = "capacityDrift", .value = "1", .threshold = "0" };
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		plan_t p = plan;
		p.slo.freeze_mode = rows[i].mode;
		pool_phase_t ph[2] = { POOL_DRA, POOL_FROZEN };
		plan_conditions_input_t in = { .plan = &p, .phases = ph, .frozen = true, .breach = &b,
					       .param_error = rows[i].param_error, .taint_error = rows[i].taint_error,
					       .retry_seconds = 5 };
		plan_condition_t c[PLAN_CONDITIONS];
		plan_status_conditions(&in, c);
		check_condition(&c[PLAN_COND_FROZEN], "Frozen", true, "SLOBreach",
				"pool b: capacityDrift measured 1, threshold 0;");
		check_condition(&c[PLAN_COND_FROZEN], "Frozen", true, "SLOBreach", rows[i].want);
		check_condition(&c[PLAN_COND_FROZEN], "Frozen", true, "SLOBreach", "lift with spec.acknowledgedBreach: b-capacityDrift-7");
		check_condition(&c[PLAN_COND_FROZEN], "Frozen", true, "SLOBreach", "(kubectl drashift acknowledge gpu)");
		if (rows[i].not_want && strstr(c[PLAN_COND_FROZEN].message, rows[i].not_want))
			fail_msg("row %zu: '%s' says '%s'", i, c[PLAN_COND_FROZEN].message, rows[i].not_want);
		check_condition(&c[PLAN_COND_READY], "Ready", false, "Migrating", NULL);
		plan_conditions_free(c);
	}
}

static void test_conditions_degraded(void **state)
{
	(void)state;
	static const struct {
		pool_phase_t a;
		const char *conflict;
		size_t failed, refused;
		bool want;
		const char *reason, *message;
	} rows[] = {
		{ POOL_CANARY, NULL, 0, 0, false, "Healthy", "all nodes healthy" },
		{ POOL_FAILED, NULL, 1, 0, true, "NodeProblems", "1 node(s) failed, 0 node(s) refused" },
		{ POOL_CANARY, NULL, 0, 2, true, "NodeProblems", "0 node(s) failed, 2 node(s) refused" },
		{ POOL_CANARY, "n-1 is matched by pool a of plan x and pool b of plan y", 0, 2, true, "NodeInTwoPools",
		  "n-1 is matched by pool a" },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		pool_phase_t ph[2] = { rows[i].a, POOL_LEGACY };
		plan_conditions_input_t in = { .plan = &plan, .phases = ph, .first_conflict = rows[i].conflict,
					       .failed_nodes = rows[i].failed, .refused_nodes = rows[i].refused };
		plan_condition_t c[PLAN_CONDITIONS];
		plan_status_conditions(&in, c);
		check_condition(&c[PLAN_COND_DEGRADED], "Degraded", rows[i].want, rows[i].reason, rows[i].message);
		check_condition(&c[PLAN_COND_PROGRESSING], "Progressing", rows[i].a == POOL_CANARY,
				rows[i].a == POOL_CANARY ? "NodesMoving" : "Idle", NULL);
		plan_conditions_free(c);
	}
}

/* The gate in one line: the verdict first, then the signal that decided it. */
static void test_gate_summary(void **state)
{
	(void)state;
	static const struct {
		slo_verdict_t lat, fail;
		uint32_t fail_samples;
		const char *want;
	} rows[] = {
		{ SLO_PASS, SLO_PASS, 9, "Pass: 2 signal(s) within their limits, 5 without a limit (not judged)" },
		{ SLO_BREACH, SLO_PASS, 9, "Breach: readyLatencyP95 6046ms over its limit 3000ms" },
		{ SLO_PASS, SLO_INCONCLUSIVE, 3,
		  "Inconclusive (not a pass): allocationFailurePercent has 3 of 5 samples" },
		{ SLO_INCONCLUSIVE, SLO_INCONCLUSIVE, 3,
		  "Inconclusive (not a pass): readyLatencyP95 has 0 of 5 samples, allocationFailurePercent has 3 of 5 samples" },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		slo_result_t r[SLO_SIGNALS];
		for (int k = 0; k < SLO_SIGNALS; k++)
			r[k] = (slo_result_t){ .name = "other", .unit = "", .verdict = SLO_UNJUDGED };
		r[0] = (slo_result_t){ .name = "readyLatencyP95", .value = 6046.4, .threshold = 3000, .unit = "ms",
				       .verdict = rows[i].lat };
		r[1] = (slo_result_t){ .name = "allocationFailurePercent", .value = 1, .threshold = 5, .unit = "%",
				       .samples = rows[i].fail_samples, .verdict = rows[i].fail };
		char *got = plan_status_gate_summary(r, SLO_SIGNALS, 5);
		if (strcmp(got, rows[i].want) != 0)
			fail_msg("row %zu: \"%s\"", i, got);
		free(got);
	}
}

/* A pool waiting for approval: the action is the command that approves it, not "none". */
static void test_activity_awaiting_approval(void **state)
{
	(void)state;
	const char *messages[] = { "msg a", "msg b" };
	pool_phase_t phases[2] = { POOL_DRA, POOL_CANARY };
	pool_record_t records[2] = { { 0 }, { .bake_start_ms = NOW - 60000 } };
	plan_activity_input_t in = { .plan = &plan, .phases = phases, .messages = messages, .records = records,
				     .awaiting_approval = "b", .now_ms = NOW };
	char *got = plan_status_activity(&in);
	assert_string_equal(got, "Canary: pool b: the canary baked and its SLO gate passed; promotion is Manual, so it "
				 "expands once a person approves. Action: kubectl drashift promote gpu b");
	free(got);
}

/*
 * status.activity answers the first three questions: the phase, what drashift
 * does or waits for next, and what a person should do (the command).
 */
static void test_activity_says_what_next_and_what_to_do(void **state)
{
	(void)state;
	plan_breach_t breach = { .id = "a-readyLatencyP95-9", .pool = "a", .signal = "readyLatencyP95", .value = "6046ms",
				 .threshold = "3000ms" };
	static const struct {
		pool_phase_t a, b;
		bool frozen, paused, rollback_all;
		int64_t bake_start_ms;
		const char *want[3]; /* parts of the text, in order */
		bool preflight_held; /* both pools wait for preflight */
	} rows[] = {
		{ POOL_CANARY, POOL_LEGACY, false, false, false, NOW - 60000,
		  { "Canary: pool a's canary is on DRA and bakes until 2025-11-29T18:49:00Z", "Action: none",
		    "kubectl drashift promote gpu a" }, false },
		{ POOL_CANARY, POOL_LEGACY, false, false, false, 0, { "Canary: pool a: msg a", "Action: none", "" }, false },
		{ POOL_FROZEN, POOL_LEGACY, true, false, false, NOW - 60000,
		  { "Frozen: pool a's readyLatencyP95 measured 6046ms over its limit 3000ms (breach a-readyLatencyP95-9)",
		    "Action: find the cause, then kubectl drashift acknowledge gpu", "kubectl drashift rollback gpu a" }, false },
		{ POOL_PAUSED, POOL_LEGACY, false, true, false, 0, { "Paused: ", "Action: kubectl drashift resume gpu", "" }, false },
		{ POOL_DRA, POOL_FAILED, false, false, false, 0,
		  { "Failed: pool b stopped: msg b", "drashift.io/failure", "kubectl drashift rollback gpu b" }, false },
		{ POOL_DRA, POOL_ROLLING_BACK, false, false, false, 0, { "RollingBack: pool b: msg b", "Action: none", "" }, false },
		{ POOL_DRA, POOL_EXPANDING, false, false, false, 0, { "Expanding: pool b: msg b", "Action: none", "" }, false },
		{ POOL_DRA, POOL_DRA, false, false, false, 0, { "DRA: every pool", "Action: none", "" }, false },
		{ POOL_LEGACY, POOL_LEGACY, false, false, true, 0,
		  { "Legacy: every pool is rolled back", "Action: remove the pools from spec.rollback", "" }, false },
		{ POOL_LEGACY, POOL_LEGACY, false, false, false, 0,
		  { "Legacy: pool a: msg a", "Action: none", "" }, false },
		{ POOL_LEGACY, POOL_LEGACY, false, false, false, 0,
		  { "Legacy: pool a waits for preflight", "Action: fix what the Preflight condition's Fail lines name",
		    "set spec.preflight: Warn" }, true },
		{ POOL_DRA, POOL_LEGACY, false, false, false, 0,
		  { "Legacy: pool b waits for preflight", "kubectl describe migrationplan gpu", "" }, true },
	};
	const char *messages[] = { "msg a", "msg b" };
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		plan_t p = plan;
		plan_pool_t ps[2] = { pools[0], pools[1] };
		ps[0].bake_ms = 10 * 60000;
		p.pools = ps;
		p.paused = rows[i].paused;
		p.rollback_all = rows[i].rollback_all;
		pool_phase_t phases[2] = { rows[i].a, rows[i].b };
		pool_record_t records[2] = { { .bake_start_ms = rows[i].bake_start_ms }, { 0 } };
		bool held[2] = { rows[i].preflight_held, rows[i].preflight_held };
		plan_activity_input_t in = { .plan = &p, .phases = phases, .messages = messages, .records = records,
					     .preflight_held = held,
					     .frozen = rows[i].frozen, .breach = &breach, .now_ms = NOW };
		char *got = plan_status_activity(&in);
		const char *at = got;
		for (int k = 0; k < 3; k++) {
			const char *found = strstr(at, rows[i].want[k]);
			if (found == NULL)
				fail_msg("row %zu: \"%s\" lacks \"%s\" (in this order)", i, got, rows[i].want[k]);
			at = found;
		}
		free(got);
	}
}

/*
 * Which status changes wait for the once-a-second write (counts, values and
 * their sentences only), and which a breach is judged ahead of while in
 * flight (all but a breach's and a pool's phase).
 */
static void test_observed_only(void **state)
{
	(void)state;
	const char *base = "{\"phase\":\"Canary\",\"activity\":\"Canary: a\",\"pools\":[{\"name\":\"a\",\"phase\":\"Canary\","
			   "\"canaryNodes\":[\"a-0\"],\"capacity\":{\"draDevices\":{\"allocated\":1}},\"nodes\":{\"dra\":1},"
			   "\"message\":\"baking: 30 s left\",\"gate\":\"Pass\"}],\"signals\":[{\"name\":\"drift\",\"pool\":\"a\","
			   "\"value\":\"0\",\"rawValue\":0,\"samples\":3,\"verdict\":\"Pass\"}],\"conditions\":[{\"type\":\"Frozen\","
			   "\"status\":\"False\",\"reason\":\"NoBreach\",\"message\":\"m\"}]}";
	const struct {
		const char *from, *to; /* a literal replaced in base */
		bool observed_only;
		bool ahead; /* a breach is judged ahead of it in flight: it changes no breach and no pool's phase */
	} rows[] = {
		{ "", "", true, true },
		{ "\"allocated\":1", "\"allocated\":2", true, true },
		{ "\"dra\":1", "\"dra\":2", true, true },
		{ "baking: 30 s left", "baking: 29 s left", true, true },
		{ "\"gate\":\"Pass\"", "\"gate\":\"Inconclusive\"", true, true },
		{ "\"samples\":3", "\"samples\":4", true, true },
		{ "\"rawValue\":0", "\"rawValue\":1", true, true },
		{ "\"message\":\"m\"", "\"message\":\"n\"", true, true },
		{ "Canary: a", "Canary: b", true, true },
		{ "\"verdict\":\"Pass\"", "\"verdict\":\"Breach\"", false, true },
		{ "\"phase\":\"Canary\",\"activity\"", "\"phase\":\"Frozen\",\"activity\"", false, true },
		{ "\"phase\":\"Canary\",\"canaryNodes\"", "\"phase\":\"Expanding\",\"canaryNodes\"", false, false },
		{ "[\"a-0\"]", "[\"a-0\",\"a-1\"]", false, true },
		{ "\"status\":\"False\"", "\"status\":\"True\"", false, true },
		{ "\"reason\":\"NoBreach\"", "\"reason\":\"Breach\"", false, true },
		{ "\"phase\":\"Canary\",\"activity\"", "\"breach\":{\"id\":\"x\"},\"phase\":\"Canary\",\"activity\"", false, false },
		{ "}],\"signals\"", "},{\"name\":\"b\"}],\"signals\"", false, false },
		{ "\"name\":\"a\",\"phase\"", "\"name\":\"b\",\"phase\"", false, false },
	};
	cJSON *old = cJSON_Parse(base);
	assert_non_null(old);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char text[2048];
		const char *at = rows[i].from[0] ? strstr(base, rows[i].from) : base;
		assert_non_null(at);
		snprintf(text, sizeof(text), "%.*s%s%s", (int)(at - base), base, rows[i].to, at + strlen(rows[i].from));
		cJSON *new = cJSON_Parse(text);
		assert_non_null(new);
		if (plan_status_observed_only(old, new) != rows[i].observed_only)
			fail_msg("row %zu (%s -> %s): want %d", i, rows[i].from, rows[i].to, rows[i].observed_only);
		if (plan_status_judges_ahead(old, new) != rows[i].ahead)
			fail_msg("row %zu (%s -> %s): judged ahead of it: want %d", i, rows[i].from, rows[i].to,
				 rows[i].ahead);
		cJSON_Delete(new);
	}
	assert_false(plan_status_observed_only(NULL, old));
	assert_true(plan_status_judges_ahead(old, NULL));
	cJSON_Delete(old);
}

/* A write in flight that acknowledges, lifts or records a breach holds the next breach until it is seen. */
static void test_judges_ahead_unless_the_breach_changes(void **state)
{
	(void)state;
	const char *frozen = "{\"phase\":\"Frozen\",\"breach\":{\"id\":\"a-capacityDrift-1\",\"pool\":\"a\"},"
			     "\"pools\":[{\"name\":\"a\",\"phase\":\"Canary\",\"nodes\":{\"dra\":1}}]}";
	const struct {
		const char *writing; /* NULL: no status write in flight */
		bool ahead;
	} rows[] = {
		{ NULL, true },
		{ "{\"phase\":\"Frozen\",\"breach\":{\"id\":\"a-capacityDrift-1\",\"pool\":\"a\"},"
		  "\"pools\":[{\"name\":\"a\",\"phase\":\"Canary\",\"nodes\":{\"dra\":2}}]}",
		  true },
		{ "{\"phase\":\"Canary\",\"breach\":{\"id\":\"a-capacityDrift-1\",\"pool\":\"a\",\"acknowledged\":true},"
		  "\"pools\":[{\"name\":\"a\",\"phase\":\"Canary\",\"nodes\":{\"dra\":1}}]}",
		  false },
		{ "{\"phase\":\"Frozen\",\"breach\":{\"id\":\"a-capacityDrift-2\",\"pool\":\"a\"},"
		  "\"pools\":[{\"name\":\"a\",\"phase\":\"Canary\",\"nodes\":{\"dra\":1}}]}",
		  false },
		{ "{\"phase\":\"Frozen\",\"pools\":[{\"name\":\"a\",\"phase\":\"Canary\",\"nodes\":{\"dra\":1}}]}", false },
	};
	cJSON *cached = cJSON_Parse(frozen);
	assert_non_null(cached);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		cJSON *writing = rows[i].writing ? cJSON_Parse(rows[i].writing) : NULL;
		assert_true(rows[i].writing == NULL || writing != NULL);
		if (plan_status_judges_ahead(cached, writing) != rows[i].ahead)
			fail_msg("row %zu: want %d", i, rows[i].ahead);
		cJSON_Delete(writing);
	}
	cJSON_Delete(cached);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_freeze_and_acknowledgement),
		cmocka_unit_test(test_parameter_breach_adopted_only_when_the_status_lacks_it),
		cmocka_unit_test(test_new_breach_only_when_not_frozen),
		cmocka_unit_test(test_phase),
		cmocka_unit_test(test_conditions_quiet_plan),
		cmocka_unit_test(test_conditions_awaiting_approval),
		cmocka_unit_test(test_conditions_tenant_boundary),
		cmocka_unit_test(test_activity_awaiting_approval),
		cmocka_unit_test(test_conditions_frozen_says_what_is_enforced_and_refused),
		cmocka_unit_test(test_conditions_degraded),
		cmocka_unit_test(test_gate_summary),
		cmocka_unit_test(test_observed_only),
		cmocka_unit_test(test_judges_ahead_unless_the_breach_changes),
		cmocka_unit_test(test_activity_says_what_next_and_what_to_do),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
