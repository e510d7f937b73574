#include "plan_status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rfc3339.h"
#include "xalloc.h"

/* Past this the gate line names no more Inconclusive signals, only how many more there are. */
#define PLAN_STATUS_GATE_TEXT_MAX 2048

void plan_status_freeze(const plan_t *plan, const plan_breach_t *recorded, int64_t now_ms, plan_freeze_t *out)
{
	memset(out, 0, sizeof(*out));
	if (recorded->id == NULL)
		return;
	out->acknowledged = plan->acknowledged_breach && strcmp(plan->acknowledged_breach, recorded->id) == 0;
	out->frozen = !out->acknowledged;
	/* Acknowledged now if no time was recorded yet: the status records this moment. */
	if (out->acknowledged)
		out->judge_since_ms = recorded->acknowledged_ms ? recorded->acknowledged_ms : now_ms;
}

bool plan_status_adopts_breach(const char *plan_uid, const plan_freeze_t *freeze, const plan_breach_t *recorded,
			       const plan_parameter_t *param)
{
	const char *id = param ? param->breach.id : NULL;
	if (id == NULL || id[0] == '\0' || !param->frozen || freeze->frozen)
		return false;
	if (plan_uid == NULL || param->owner_uid == NULL || strcmp(plan_uid, param->owner_uid) != 0)
		return false;
	return recorded->id == NULL || strcmp(recorded->id, id) != 0;
}

void plan_status_signal_text(const slo_result_t *r, char *value, char *threshold, size_t len)
{
	if (r->id == SLO_PROMETHEUS) {
		/* A query's value is in its own unit, often seconds or a ratio: keep its digits. */
		if (r->samples == 0)
			snprintf(value, len, "%s", r->verdict == SLO_BREACH ? "none (counts as a breach)" : "none");
		else
			snprintf(value, len, "%.6g", r->value);
		snprintf(threshold, len, "%.6g", r->threshold);
		return;
	}
	snprintf(value, len, "%.0f%s", r->value, r->unit);
	snprintf(threshold, len, "%.0f%s", r->threshold, r->unit);
}

char *plan_status_gate_summary(const slo_result_t *results, size_t n, uint32_t min_samples)
{
	const slo_result_t *breach;
	char value[64], threshold[64];
	switch (slo_gate(results, n, &breach)) {
	case SLO_BREACH:
		plan_status_signal_text(breach, value, threshold, sizeof(value));
		if (breach->detail != NULL)
			return xasprintf("Breach: %s %s (%s; the plan counts that as a breach)", breach->name, value,
					 breach->detail);
		return xasprintf("Breach: %s %s over its limit %s", breach->name, value, threshold);
	case SLO_PASS: {
		int pass = 0, unjudged = 0;
		for (size_t i = 0; i < n; i++) {
			pass += results[i].verdict == SLO_PASS;
			unjudged += results[i].verdict == SLO_UNJUDGED;
		}
		return xasprintf("Pass: %d signal(s) within their limits, %d without a limit (not judged)", pass, unjudged);
	}
	default: {
		char *text = xstrdup("Inconclusive (not a pass):");
		const char *sep = " ";
		size_t left = 0;
		for (size_t i = 0; i < n; i++) {
			if (results[i].verdict != SLO_INCONCLUSIVE)
				continue;
			/* Queries' errors are long: the line stays within the CRD's 4096 characters. */
			if (strlen(text) > PLAN_STATUS_GATE_TEXT_MAX) {
				left++;
				continue;
			}
			char *next = results[i].detail != NULL
					     ? xasprintf("%s%s%s: %s", text, sep, results[i].name, results[i].detail)
					     : xasprintf("%s%s%s has %u of %u samples", text, sep, results[i].name,
							 results[i].samples, min_samples ? min_samples : 1);
			free(text);
			text = next;
			sep = ", ";
		}
		if (left > 0) {
			char *next = xasprintf("%s, and %zu more (status.signals)", text, left);
			free(text);
			text = next;
		}
		return text;
	}
	}
}

void plan_status_new_breach(const plan_t *plan, const plan_freeze_t *freeze, const plan_pool_gate_t *gates,
			    int64_t now_ms, plan_new_breach_t *out)
{
	memset(out, 0, sizeof(*out));
	if (freeze->frozen)
		return; /* frozen means frozen: the first breach stands until a person acknowledges it */
	size_t i = plan->n_pools;
	for (int pass = 0; pass < 2 && i == plan->n_pools; pass++)
		for (i = 0; i < plan->n_pools; i++)
			if (gates[i].gate == SLO_BREACH && gates[i].breach != NULL && (pass == 1 || gates[i].moving))
				break;
	if (i < plan->n_pools) {
		const slo_result_t *b = gates[i].breach;
		char value[64], threshold[64];
		plan_status_signal_text(b, value, threshold, sizeof(value));
		out->found = true;
		out->pool = i;
		out->signal = b->name;
		out->id = xasprintf("%s-%s-%lld", plan->pools[i].name, b->name, (long long)(now_ms / 1000));
		out->value = xstrdup(value);
		out->threshold = xstrdup(threshold);
	}
}

void plan_new_breach_free(plan_new_breach_t *b)
{
	free(b->id);
	free(b->value);
	free(b->threshold);
	memset(b, 0, sizeof(*b));
}

const char *plan_status_phase(const pool_phase_t *phases, size_t n_pools, bool frozen, bool paused)
{
	bool any_failed = false, any_rolling = false, all_legacy = true;
	size_t on_dra = 0;
	const char *active = NULL;
	for (size_t i = 0; i < n_pools; i++) {
		pool_phase_t ph = phases[i];
		any_failed |= ph == POOL_FAILED;
		any_rolling |= ph == POOL_ROLLING_BACK;
		all_legacy &= ph == POOL_LEGACY;
		on_dra += ph == POOL_DRA;
		if (active == NULL && ph != POOL_DRA && ph != POOL_LEGACY)
			active = pool_phase_name(ph);
	}
	return frozen		  ? "Frozen"
	       : any_failed	  ? "Failed"
	       : any_rolling	  ? "RollingBack"
	       : paused		  ? "Paused"
	       : on_dra == n_pools ? "DRA"
	       : all_legacy	  ? "Legacy"
	       : active		  ? active
				  : "Expanding";
}

static void plan_status_set(plan_condition_t *c, const char *type, bool status, const char *reason, char *message)
{
	*c = (plan_condition_t){ .type = type, .status = status, .reason = reason, .message = message };
}

static const char *plan_status_or_unknown(const char *s)
{
	return s ? s : "?";
}

/* The first pool in phase ph, or n when none is. */
static size_t plan_status_first(const plan_activity_input_t *in, pool_phase_t ph)
{
	size_t i = 0;
	while (i < in->plan->n_pools && in->phases[i] != ph)
		i++;
	return i;
}

static const char *plan_status_message(const plan_activity_input_t *in, size_t pool)
{
	return in->messages[pool] ? in->messages[pool] : "";
}

/* A canary baking: until when, and what comes after. NULL when the pool is not baking. */
static char *plan_status_baking(const plan_activity_input_t *in, size_t i)
{
	const plan_pool_t *pool = &in->plan->pools[i];
	int64_t end = in->records[i].bake_start_ms + (int64_t)pool->bake_ms;
	char when[RFC3339_LEN];
	if (in->phases[i] != POOL_CANARY || in->records[i].bake_start_ms == 0 || pool->promote || end <= in->now_ms ||
	    rfc3339_format(end * 1000, 0, when, sizeof(when)) != 0)
		return NULL;
	return xasprintf("Canary: pool %s's canary is on DRA and bakes until %s; then, once its SLO gate passes, the "
			 "pool expands. Action: none (kubectl drashift promote %s %s ends the bake now)",
			 pool->name, when, in->plan->name, pool->name);
}

char *plan_status_activity(const plan_activity_input_t *in)
{
	const plan_t *plan = in->plan;
	size_t n = plan->n_pools;
	const char *phase = plan_status_phase(in->phases, n, in->frozen, plan->paused);
	const plan_breach_t *b = in->breach;
	size_t i;
	if (in->frozen && b)
		return xasprintf("Frozen: pool %s's %s measured %s over its limit %s (breach %s); no node starts and new "
				 "DRA allocations are stopped until a person lifts the freeze. Action: find the cause, then "
				 "kubectl drashift acknowledge %s, or kubectl drashift rollback %s %s",
				 plan_status_or_unknown(b->pool), plan_status_or_unknown(b->signal),
				 plan_status_or_unknown(b->value), plan_status_or_unknown(b->threshold),
				 plan_status_or_unknown(b->id), plan->name, plan->name, plan_status_or_unknown(b->pool));
	if ((i = plan_status_first(in, POOL_FAILED)) < n)
		return xasprintf("Failed: pool %s stopped: %s. Action: read the failed nodes' drashift.io/failure "
				 "annotation and Events, fix the cause, or kubectl drashift rollback %s %s",
				 plan->pools[i].name, plan_status_message(in, i), plan->name, plan->pools[i].name);
	if ((i = plan_status_first(in, POOL_ROLLING_BACK)) < n)
		return xasprintf("RollingBack: pool %s: %s; it stays on the device plugin while spec.rollback names it. "
				 "Action: none",
				 plan->pools[i].name, plan_status_message(in, i));
	if (plan->paused && strcmp(phase, "Paused") == 0)
		return xasprintf("Paused: handovers under way finish, none start. Action: kubectl drashift resume %s "
				 "to go on",
				 plan->name);
	if (strcmp(phase, "DRA") == 0)
		return xstrdup("DRA: every pool is owned by the DRA driver. Action: none");
	for (i = 0; i < n; i++) {
		if (in->phases[i] == POOL_DRA)
			continue;
		if (in->awaiting_approval && strcmp(in->awaiting_approval, plan->pools[i].name) == 0)
			return xasprintf("%s: pool %s: the canary baked and its SLO gate passed; promotion is Manual, so it "
					 "expands once a person approves. Action: kubectl drashift promote %s %s",
					 phase, plan->pools[i].name, plan->name, plan->pools[i].name);
		char *baking = plan_status_baking(in, i);
		if (baking)
			return baking;
		if (in->phases[i] == POOL_LEGACY && (plan->rollback_all || plan->pools[i].rollback))
			continue; /* rolled back and held there: say what the others do */
		if (in->phases[i] == POOL_LEGACY && in->preflight_held && in->preflight_held[i])
			return xasprintf("Legacy: pool %s waits for preflight before its first node moves. Action: fix what "
					 "the Preflight condition's Fail lines name (kubectl describe migrationplan %s), or "
					 "set spec.preflight: Warn",
					 plan->pools[i].name, plan->name);
		return xasprintf("%s: pool %s: %s. Action: none", phase, plan->pools[i].name, plan_status_message(in, i));
	}
	return xstrdup("Legacy: every pool is rolled back to the device plugin and spec.rollback holds it there. "
		       "Action: remove the pools from spec.rollback to migrate them again");
}

/* What the Frozen condition says while frozen: the breach, what is enforced, how to lift it, what the API refused. */
static char *plan_status_frozen_message(const plan_conditions_input_t *in)
{
	const plan_breach_t *b = in->breach;
	plan_freeze_mode_t mode = in->plan->slo.freeze_mode;
	bool admission = plan_freeze_by_admission(mode);
	char *msg = xasprintf("pool %s: %s measured %s, threshold %s;%s%s%s%s lift with spec.acknowledgedBreach: %s "
			      "(kubectl drashift acknowledge %s) once the cause is understood, or roll the pool back "
			      "(kubectl drashift rollback %s %s)",
			      plan_status_or_unknown(b->pool), plan_status_or_unknown(b->signal),
			      plan_status_or_unknown(b->value), plan_status_or_unknown(b->threshold),
			      admission ? " new claims for " : "", admission ? in->plan->device_classes[0] : "",
			      admission ? " are denied;" : "",
			      plan_freeze_by_device_taint(mode) ? " the driver's devices are tainted NoSchedule;" : "",
			      plan_status_or_unknown(b->id), in->plan->name, in->plan->name, plan_status_or_unknown(b->pool));
	const char *errors[] = { in->param_error, in->taint_error };
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++) {
		if (errors[i] == NULL)
			continue;
		char *with = xasprintf("%s. NOT ENFORCED YET (tried again at least %d s apart): %s", msg, in->retry_seconds,
				       errors[i]);
		free(msg);
		msg = with;
	}
	return msg;
}

void plan_status_conditions(const plan_conditions_input_t *in, plan_condition_t out[PLAN_CONDITIONS])
{
	size_t n = in->plan->n_pools, on_dra = 0;
	bool progress = false, any_failed = false;
	for (size_t i = 0; i < n; i++) {
		pool_phase_t ph = in->phases[i];
		on_dra += ph == POOL_DRA;
		progress |= ph == POOL_CANARY || ph == POOL_EXPANDING || ph == POOL_ROLLING_BACK;
		any_failed |= ph == POOL_FAILED;
	}
	bool ready = on_dra == n, paused = in->plan->paused;
	const char *name = in->plan->name;
	plan_status_set(&out[PLAN_COND_READY], "Ready", ready, ready ? "AllPoolsOnDRA" : "Migrating",
			ready ? xstrdup("every pool is owned by the DRA driver; nothing to do")
			      : xasprintf("not every pool is on DRA yet; status.activity says what drashift waits for "
					  "(kubectl drashift status %s shows every node)",
					  name));
	plan_status_set(&out[PLAN_COND_PROGRESSING], "Progressing", progress, progress ? "NodesMoving" : "Idle",
			xstrdup(progress ? "nodes are being handed over; nothing to do" : "no handover under way"));
	plan_status_set(&out[PLAN_COND_PAUSED], "Paused", paused, paused ? "SpecPaused" : "NotPaused",
			paused ? xasprintf("spec.paused is true: no node starts a handover; to go on: kubectl drashift "
					   "resume %s (spec.paused: false)",
					   name)
			       : xstrdup("running"));
	plan_status_set(&out[PLAN_COND_FROZEN], "Frozen", in->frozen,
			in->frozen ? "SLOBreach" : in->acknowledged ? "BreachAcknowledged" : "NotFrozen",
			in->frozen	    ? plan_status_frozen_message(in)
			: in->acknowledged ? xstrdup("the last breach was acknowledged; the freeze is lifted")
					   : xstrdup("no SLO breach"));
	bool degraded = any_failed || in->refused_nodes > 0 || in->first_conflict != NULL;
	char *why = in->first_conflict ? xstrdup(in->first_conflict)
		    : in->failed_nodes || in->refused_nodes
			    ? xasprintf("%zu node(s) failed, %zu node(s) refused (see the nodes' Events); fix the cause "
					"named in a failed node's drashift.io/failure annotation, or roll its pool back "
					"(kubectl drashift rollback %s POOL)",
					in->failed_nodes, in->refused_nodes, name)
			    : xstrdup("all nodes healthy");
	plan_status_set(&out[PLAN_COND_DEGRADED], "Degraded", degraded,
			in->first_conflict ? "NodeInTwoPools" : degraded ? "NodeProblems" : "Healthy", why);
	plan_status_set(&out[PLAN_COND_INVALID], "Invalid", false, "SpecValid", xstrdup("the spec is valid"));
	const char *waiting = in->awaiting_approval;
	plan_status_set(&out[PLAN_COND_AWAITING_APPROVAL], "AwaitingApproval", waiting != NULL,
			waiting ? "PromotionManual" : "NotWaiting",
			waiting ? xasprintf("pool %s: canary baked and its SLO gate passed; promotion is Manual: approve "
					    "with kubectl drashift promote %s %s (spec.promote.pools)",
					    waiting, name, waiting)
				: xstrdup("no pool waits for approval"));
	bool restricts = tenancy_restricts(in->plan);
	tenancy_param_t param = in->tenancy_param;
	plan_status_set(&out[PLAN_COND_TENANT_BOUNDARY], "TenantBoundary", !restricts || param == TENANCY_PARAM_WRITTEN,
			!restricts			    ? "NotRestricted"
			: param == TENANCY_PARAM_WRITTEN ? "Written"
			: param == TENANCY_PARAM_FAILED	    ? "WriteFailed"
							    : "Writing",
			!restricts ? xstrdup("the plan restricts no namespace (no spec.tenancy, no canary.namespaces)")
			: param == TENANCY_PARAM_WRITTEN
				? xasprintf("the drashift-claim-tenancy policy judges claims for the plan's classes by the "
					    "parameter drashift-system/drashift-tenancy-%s",
					    name)
			: param == TENANCY_PARAM_FAILED
				? xasprintf("NOT ENFORCED: the parameter drashift-system/drashift-tenancy-%s could not be "
					    "written (tried again at least %d s apart): %s; no node starts a handover until "
					    "it is",
					    name, in->retry_seconds, in->tenancy_error ? in->tenancy_error : "unknown error")
				: xasprintf("writing the parameter drashift-system/drashift-tenancy-%s; no node starts a "
					    "handover until it is written",
					    name));
}

void plan_conditions_free(plan_condition_t c[PLAN_CONDITIONS])
{
	for (int i = 0; i < PLAN_CONDITIONS; i++) {
		free(c[i].message);
		c[i].message = NULL;
	}
}

/* a and b are equal, or both absent. */
static bool ps_same(const cJSON *a, const cJSON *b)
{
	return a == NULL || b == NULL ? a == b : cJSON_Compare(a, b, true);
}

/* a and b (objects, or both absent) are equal but for the members named in skip (NULL-terminated). */
static bool ps_equal_except(const cJSON *a, const cJSON *b, const char *const *skip)
{
	if (a == NULL || b == NULL || !cJSON_IsObject(a) || !cJSON_IsObject(b))
		return ps_same(a, b);
	const cJSON *sides[2][2] = { { a, b }, { b, a } };
	for (int s = 0; s < 2; s++) {
		const cJSON *m;
		cJSON_ArrayForEach(m, sides[s][0])
		{
			bool skipped = false;
			for (const char *const *k = skip; *k && !skipped; k++)
				skipped = strcmp(m->string, *k) == 0;
			if (!skipped && !cJSON_Compare(m, cJSON_GetObjectItemCaseSensitive(sides[s][1], m->string), true))
				return false;
		}
	}
	return true;
}

/* The arrays key of old and new hold as many elements, each equal to its peer but for skip. */
static bool ps_elements_equal_except(const cJSON *old, const cJSON *new, const char *key, const char *const *skip)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(old, key), *b = cJSON_GetObjectItemCaseSensitive(new, key);
	if (a == NULL || b == NULL)
		return a == b;
	if (!cJSON_IsArray(a) || !cJSON_IsArray(b) || cJSON_GetArraySize(a) != cJSON_GetArraySize(b))
		return false;
	for (const cJSON *x = a->child, *y = b->child; x && y; x = x->next, y = y->next)
		if (!ps_equal_except(x, y, skip))
			return false;
	return true;
}

bool plan_status_observed_only(const cJSON *old, const cJSON *new)
{
	static const char *const top[] = { "activity", "pools", "signals", "conditions", NULL };
	static const char *const pool[] = { "capacity", "nodes", "message", "gate", NULL };
	static const char *const signal[] = { "rawValue", "value", "samples", "byClass", NULL };
	static const char *const condition[] = { "message", NULL };
	return cJSON_IsObject(old) && cJSON_IsObject(new) && ps_equal_except(old, new, top) &&
	       ps_elements_equal_except(old, new, "pools", pool) && ps_elements_equal_except(old, new, "signals", signal) &&
	       ps_elements_equal_except(old, new, "conditions", condition);
}

bool plan_status_judges_ahead(const cJSON *cached, const cJSON *writing)
{
	if (writing == NULL)
		return true;
	if (!cJSON_IsObject(cached) || !cJSON_IsObject(writing))
		return false;
	if (!ps_same(cJSON_GetObjectItemCaseSensitive(cached, "breach"), cJSON_GetObjectItemCaseSensitive(writing, "breach")))
		return false;
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(cached, "pools");
	const cJSON *b = cJSON_GetObjectItemCaseSensitive(writing, "pools");
	if (cJSON_GetArraySize(a) != cJSON_GetArraySize(b))
		return false;
	static const char *const read[] = { "name", "phase" };
	for (const cJSON *x = a ? a->child : NULL, *y = b ? b->child : NULL; x && y; x = x->next, y = y->next)
		for (size_t k = 0; k < sizeof(read) / sizeof(read[0]); k++)
			if (!ps_same(cJSON_GetObjectItemCaseSensitive(x, read[k]), cJSON_GetObjectItemCaseSensitive(y, read[k])))
				return false;
	return true;
}
