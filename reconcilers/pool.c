#include "pool.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

static const char *const pool_phase_names[POOL_PHASES] = {
	[POOL_LEGACY] = "Legacy",       [POOL_CANARY] = "Canary", [POOL_EXPANDING] = "Expanding",
	[POOL_DRA] = "DRA",             [POOL_PAUSED] = "Paused", [POOL_FROZEN] = "Frozen",
	[POOL_ROLLING_BACK] = "RollingBack", [POOL_FAILED] = "Failed",
};

const char *pool_phase_name(pool_phase_t phase)
{
	return phase < POOL_PHASES ? pool_phase_names[phase] : "Unknown";
}

static bool pool_in_canary(const pool_record_t *rec, const char *node)
{
	for (size_t i = 0; i < rec->n_canary; i++)
		if (strcmp(rec->canary_nodes[i], node) == 0)
			return true;
	return false;
}


/*
 * The canary: nodes already past Legacy first (a restart, or a status that
 * was lost, must not leave a half-moved node out of the set), then the rest
 * by name, up to the canary size; schedulable nodes before those someone else
 * cordoned, which no claim could land on to judge the canary by.
 */
static int pool_canary_rank(const pool_member_t *m)
{
	if (m->state.step != HANDOVER_LEGACY)
		return 0;
	return m->node->unschedulable ? 2 : 1;
}

static void pool_choose_canary(const pool_input_t *in, pool_output_t *out)
{
	size_t want = plan_canary_size(in->pool, in->n_members);
	const char **names = xcalloc(want ? want : 1, sizeof(char *));
	size_t n = 0;
	for (int rank = 0; rank < 3 && n < want; rank++)
		for (size_t i = 0; i < in->n_members && n < want; i++)
			if (pool_canary_rank(&in->members[i]) == rank)
				names[n++] = in->members[i].node->meta.name;
	out->record.canary_nodes = names;
	out->record.n_canary = n;
}

/*
 * The first canary node that someone else cordoned (drashift's own cordon is
 * lifted when its handover ends), when every canary node is cordoned: then no
 * claim can land on the canary and its gate cannot pass. NULL otherwise.
 */
static const char *pool_canary_all_cordoned(const pool_input_t *in, const pool_output_t *out)
{
	const char *first = NULL;
	for (size_t i = 0; i < in->n_members; i++) {
		const pool_member_t *m = &in->members[i];
		if (!pool_in_canary(&out->record, m->node->meta.name))
			continue;
		if (!m->node->unschedulable || m->state.cordoned_by_us)
			return NULL;
		if (first == NULL)
			first = m->node->meta.name;
	}
	return first;
}

static void pool_message(pool_output_t *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void pool_message(pool_output_t *out, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	free(out->message);
	if (vasprintf(&out->message, fmt, ap) < 0)
		abort();
	va_end(ap);
}

/* Let up to the free maxUnavailable slots start towards goal, in name order; in-flight nodes go on. */
static void pool_assign(const pool_input_t *in, pool_output_t *out, bool canary_only, int32_t max_unavailable)
{
	size_t in_flight = 0;
	for (size_t i = 0; i < in->n_members; i++)
		if (!in->members[i].state.quarantine && handover_step_in_flight(in->members[i].state.step))
			in_flight++;
	size_t slots = (size_t)max_unavailable > in_flight ? (size_t)max_unavailable - in_flight : 0;
	if (in->window_closed || in->boundary_pending)
		slots = 0; /* outside the maintenance windows, or before the tenant boundary, nothing starts; what started finishes */
	for (size_t i = 0; i < in->n_members; i++) {
		const pool_member_t *m = &in->members[i];
		if (m->state.quarantine || (canary_only && !pool_in_canary(&out->record, m->node->meta.name)))
			continue;
		if (handover_step_in_flight(m->state.step)) {
			out->goals[i] = HANDOVER_GOAL_DRA;
		} else if (m->state.step == HANDOVER_LEGACY && slots > 0) {
			out->goals[i] = HANDOVER_GOAL_DRA;
			slots--;
		}
	}
}

/* Start the output: every node stays, the canary re-pointed at member names, the steps counted. */
static void pool_tally(const pool_input_t *in, pool_output_t *out)
{
	memset(out, 0, sizeof(*out));
	out->goals = xcalloc(in->n_members ? in->n_members : 1, sizeof(handover_goal_t));
	out->record = in->record;
	/* The canary list is re-pointed at member names so the output owns only the array. */
	const char **canary = xcalloc(in->record.n_canary + 1, sizeof(char *));
	size_t nc = 0;
	for (size_t i = 0; i < in->n_members; i++)
		if (pool_in_canary(&in->record, in->members[i].node->meta.name))
			canary[nc++] = in->members[i].node->meta.name;
	out->record.canary_nodes = canary;
	out->record.n_canary = nc;

	for (size_t i = 0; i < in->n_members; i++) {
		out->goals[i] = HANDOVER_GOAL_STAY;
		if (in->members[i].state.quarantine) {
			out->n_quarantined++;
			continue;
		}
		switch (in->members[i].state.step) {
		case HANDOVER_LEGACY:
			out->n_legacy++;
			break;
		case HANDOVER_DRA:
			out->n_dra++;
			break;
		case HANDOVER_FAILED:
			out->n_failed++;
			break;
		default:
			out->n_handover++;
			break;
		}
	}
}

/* Rolling back: one node at a time; nodes under way turn around at once. Done when no node left legacy. */
static void pool_roll_back(const pool_input_t *in, pool_output_t *out)
{
	if (out->n_dra == 0 && out->n_handover == 0 && out->n_failed == 0) {
		out->phase = POOL_LEGACY;
		out->record_changed = out->record.n_canary > 0 || out->record.start_ms || out->record.bake_start_ms ||
				      out->record.finish_ms;
		free((void *)out->record.canary_nodes);
		out->record = (pool_record_t){ 0 };
		out->record.canary_nodes = xcalloc(1, sizeof(char *));
		if (out->n_quarantined > 0)
			pool_message(out, "rolled back: the device plugin owns every node but %zu quarantined one(s), left "
					  "as they are until a person lifts the quarantine",
				     out->n_quarantined);
		else
			pool_message(out, "rolled back: the device plugin owns every node");
		return;
	}
	out->phase = POOL_ROLLING_BACK;
	bool started = out->n_handover > 0;
	for (size_t i = 0; i < in->n_members; i++) {
		const handover_state_t *st = &in->members[i].state;
		if (st->quarantine)
			continue;
		if (handover_step_in_flight(st->step)) {
			out->goals[i] = HANDOVER_GOAL_LEGACY;
		} else if ((st->step == HANDOVER_DRA || st->step == HANDOVER_FAILED) && !started) {
			out->goals[i] = HANDOVER_GOAL_LEGACY;
			started = true;
		}
	}
	pool_message(out, "rolling back one node at a time: %zu on DRA, %zu in handover, %zu failed",
		     out->n_dra, out->n_handover, out->n_failed);
}

/*
 * The phases in which no node starts: done (a pause or a freeze stops only
 * what would still move), paused, frozen, failed, not its turn, or empty.
 * Returns false when the pool may move.
 */
static bool pool_held(const pool_input_t *in, pool_output_t *out)
{
	if (out->n_dra > 0 && out->n_dra + out->n_quarantined == in->n_members) {
		out->phase = POOL_DRA;
		if (out->record.finish_ms == 0) {
			out->record.finish_ms = in->now_ms;
			out->record_changed = true;
		}
		if (out->n_quarantined > 0)
			pool_message(out, "all %zu nodes but %zu quarantined are owned by the DRA driver", in->n_members,
				     out->n_quarantined);
		else
			pool_message(out, "all %zu nodes are owned by the DRA driver", in->n_members);
		return true;
	}
	if (in->plan->paused) {
		out->phase = POOL_PAUSED;
		pool_message(out, "paused by spec.paused: handovers under way finish, none start");
		return true;
	}
	if (in->frozen) {
		out->phase = POOL_FROZEN;
		pool_message(out, "frozen by an SLO breach: no node starts until a person lifts the freeze");
		return true;
	}
	if (out->n_failed > 0) {
		out->phase = POOL_FAILED;
		pool_message(out, "%zu node(s) failed their handover; expansion stopped (see the nodes' Events, or roll back)",
			     out->n_failed);
		return true;
	}
	if (!in->may_start && out->n_dra == 0 && out->n_handover == 0) {
		out->phase = POOL_LEGACY;
		pool_message(out, "%s", !in->n_members ? "no node matches the pool's selector"
				       : in->start_held ? in->start_held
							: "waiting for its turn in the plan's pool order");
		return true;
	}
	if (in->n_members == 0) {
		out->phase = POOL_LEGACY;
		pool_message(out, "no node matches the pool's selector");
		return true;
	}
	return false;
}

/* Moving: choose the canary, move it, bake it, pass the gate, then expand. */
static void pool_advance(const pool_input_t *in, pool_output_t *out)
{
	if (out->record.n_canary == 0) {
		free((void *)out->record.canary_nodes);
		pool_choose_canary(in, out);
		out->record.start_ms = out->record.start_ms ? out->record.start_ms : in->now_ms;
		out->record_changed = true;
		out->phase = POOL_CANARY;
		pool_message(out, "canary chosen: %zu node(s); recording before the first handover", out->record.n_canary);
		return;
	}

	/* A quarantined canary node proves nothing: the rest of the canary must be on DRA, and one at least. */
	bool canary_done = true;
	bool beyond_canary = false;
	size_t canary_dra = 0;
	for (size_t i = 0; i < in->n_members; i++) {
		if (in->members[i].state.quarantine)
			continue;
		bool is_canary = pool_in_canary(&out->record, in->members[i].node->meta.name);
		if (is_canary && in->members[i].state.step != HANDOVER_DRA)
			canary_done = false;
		if (is_canary && in->members[i].state.step == HANDOVER_DRA)
			canary_dra++;
		if (!is_canary && in->members[i].state.step != HANDOVER_LEGACY)
			beyond_canary = true;
	}
	canary_done = canary_done && canary_dra > 0;
	if (canary_done && out->record.bake_start_ms == 0) {
		out->record.bake_start_ms = in->now_ms;
		out->record_changed = true;
		out->phase = POOL_CANARY;
		pool_message(out, "canary on DRA; baking for %llu s", (unsigned long long)(in->pool->bake_ms / 1000));
		return;
	}
	/* spec.promote ends the bake early; the gate must still pass. */
	bool baked = canary_done &&
		     (in->pool->promote || in->now_ms - out->record.bake_start_ms >= (int64_t)in->pool->bake_ms);
	/* promotion: Manual: a person's yes (spec.promote) after the bake and the gate. */
	bool approved = !in->pool->manual_promotion || in->pool->promote;
	if (beyond_canary || (baked && in->gate_passed && approved)) {
		out->phase = POOL_EXPANDING;
		pool_assign(in, out, false, in->pool->max_unavailable);
		pool_message(out, "expanding: %zu of %zu nodes on DRA, %zu in handover (maxUnavailable %d)", out->n_dra,
			     in->n_members, out->n_handover, in->pool->max_unavailable);
		return;
	}
	out->phase = POOL_CANARY;
	if (!canary_done) {
		pool_assign(in, out, true, in->pool->max_unavailable);
		pool_message(out, "canary: %zu of %zu canary node(s) on DRA", out->n_dra, out->record.n_canary);
	} else if (!baked) {
		int64_t left = out->record.bake_start_ms + (int64_t)in->pool->bake_ms - in->now_ms;
		out->requeue_ms = (uint64_t)left;
		pool_message(out, "canary baking: %lld s left", (long long)(left + 999) / 1000);
	} else if (in->gate_passed) {
		out->awaiting_approval = true;
		pool_message(out, "canary baked and its SLO gate passed; waiting for approval (promotion: Manual): "
				  "kubectl drashift promote %s %s",
			     in->plan->name, in->pool->name);
	} else {
		const char *cordoned = pool_canary_all_cordoned(in, out);
		out->requeue_ms = 10000;
		pool_message(out, "canary %s; waiting for the SLO gate to pass (inconclusive is not a pass): %s%s%s%s",
			     in->pool->promote ? "promoted (spec.promote), bake skipped" : "baked",
			     in->gate_waiting ? in->gate_waiting : "not judged yet",
			     cordoned ? "; every canary node is cordoned by someone else (first: " : "",
			     cordoned ? cordoned : "",
			     cordoned ? "), so no claim can land there: uncordon one (kubectl uncordon) for the gate to judge" : "");
	}
}

/* A moving pool outside its windows, or waiting for its tenant boundary, says so, and when a node may start next. */
static void pool_note_held(const pool_input_t *in, pool_output_t *out)
{
	if ((!in->window_closed && !in->boundary_pending) || out->n_legacy == 0 || out->awaiting_approval ||
	    out->record_changed)
		return;
	char *was = out->message;
	out->message = NULL;
	if (in->window_closed)
		pool_message(out, "%s; outside the maintenance windows: no handover starts until %s", was,
			     in->window_opens ? in->window_opens : "a window opens");
	else
		pool_message(out, "%s; no handover starts until the tenant boundary is in place: %s", was,
			     in->boundary_pending);
	free(was);
}

void pool_decide(const pool_input_t *in, pool_output_t *out)
{
	pool_tally(in, out);
	if (in->plan->rollback_all || in->pool->rollback || in->breach_rollback)
		pool_roll_back(in, out);
	else if (!pool_held(in, out)) {
		pool_advance(in, out);
		pool_note_held(in, out);
	}
}

void pool_output_free(pool_output_t *out)
{
	free(out->goals);
	free((void *)out->record.canary_nodes);
	free(out->message);
	memset(out, 0, sizeof(*out));
}
