#include "plan_status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

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

void plan_status_signal_text(const slo_result_t *r, char *value, char *threshold, size_t len)
{
	snprintf(value, len, "%.0f%s", r->value, r->unit);
	snprintf(threshold, len, "%.0f%s", r->threshold, r->unit);
}

void plan_status_new_breach(const plan_t *plan, const plan_freeze_t *freeze, const plan_pool_gate_t *gates,
			    int64_t now_ms, plan_new_breach_t *out)
{
	memset(out, 0, sizeof(*out));
	if (freeze->frozen)
		return; /* frozen means frozen: the first breach stands until a person acknowledges it */
	for (size_t i = 0; i < plan->n_pools; i++) {
		if (gates[i].gate != SLO_BREACH || gates[i].breach == NULL)
			continue;
		const slo_result_t *b = gates[i].breach;
		char value[64], threshold[64];
		plan_status_signal_text(b, value, threshold, sizeof(value));
		out->found = true;
		out->pool = i;
		out->signal = b->name;
		out->id = xasprintf("%s-%s-%lld", plan->pools[i].name, b->name, (long long)(now_ms / 1000));
		out->value = xstrdup(value);
		out->threshold = xstrdup(threshold);
		return;
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

/* What the Frozen condition says while frozen: the breach, what is enforced, how to lift it, what the API refused. */
static char *plan_status_frozen_message(const plan_conditions_input_t *in)
{
	const plan_breach_t *b = in->breach;
	plan_freeze_mode_t mode = in->plan->slo.freeze_mode;
	bool admission = plan_freeze_by_admission(mode);
	char *msg = xasprintf("pool %s: %s measured %s, threshold %s;%s%s%s%s lift with spec.acknowledgedBreach: %s",
			      plan_status_or_unknown(b->pool), plan_status_or_unknown(b->signal),
			      plan_status_or_unknown(b->value), plan_status_or_unknown(b->threshold),
			      admission ? " new claims for " : "", admission ? in->plan->device_classes[0] : "",
			      admission ? " are denied;" : "",
			      plan_freeze_by_device_taint(mode) ? " the driver's devices are tainted NoSchedule;" : "",
			      plan_status_or_unknown(b->id));
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
	plan_status_set(&out[PLAN_COND_READY], "Ready", ready, ready ? "AllPoolsOnDRA" : "Migrating",
			xstrdup(ready ? "every pool is owned by the DRA driver" : "not every pool is on DRA yet"));
	plan_status_set(&out[PLAN_COND_PROGRESSING], "Progressing", progress, progress ? "NodesMoving" : "Idle",
			xstrdup(progress ? "nodes are being handed over" : "no handover under way"));
	plan_status_set(&out[PLAN_COND_PAUSED], "Paused", paused, paused ? "SpecPaused" : "NotPaused",
			xstrdup(paused ? "spec.paused is true: no node starts a handover" : "running"));
	plan_status_set(&out[PLAN_COND_FROZEN], "Frozen", in->frozen,
			in->frozen ? "SLOBreach" : in->acknowledged ? "BreachAcknowledged" : "NotFrozen",
			in->frozen	    ? plan_status_frozen_message(in)
			: in->acknowledged ? xstrdup("the last breach was acknowledged; the freeze is lifted")
					   : xstrdup("no SLO breach"));
	bool degraded = any_failed || in->refused_nodes > 0 || in->first_conflict != NULL;
	char *why = in->first_conflict ? xstrdup(in->first_conflict)
		    : in->failed_nodes || in->refused_nodes
			    ? xasprintf("%zu node(s) failed, %zu node(s) refused (see the nodes' Events)", in->failed_nodes,
					in->refused_nodes)
			    : xstrdup("all nodes healthy");
	plan_status_set(&out[PLAN_COND_DEGRADED], "Degraded", degraded,
			in->first_conflict ? "NodeInTwoPools" : degraded ? "NodeProblems" : "Healthy", why);
	plan_status_set(&out[PLAN_COND_INVALID], "Invalid", false, "SpecValid", xstrdup("the spec is valid"));
}

void plan_conditions_free(plan_condition_t c[PLAN_CONDITIONS])
{
	for (int i = 0; i < PLAN_CONDITIONS; i++) {
		free(c[i].message);
		c[i].message = NULL;
	}
}
