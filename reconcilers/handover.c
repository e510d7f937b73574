#include "handover.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capacity.h"
#include "driver_failure.h"
#include "rfc3339.h"
#include "xalloc.h"

static const char *const handover_step_names[HANDOVER_STEPS] = {
	[HANDOVER_LEGACY] = "legacy",
	[HANDOVER_DRAINING] = "draining",
	[HANDOVER_PLUGIN_OFF] = "plugin-off",
	[HANDOVER_DRIVER_ON] = "driver-on",
	[HANDOVER_VERIFIED] = "verified",
	[HANDOVER_DRA] = "dra",
	[HANDOVER_DRAINING_DRA] = "draining-dra",
	[HANDOVER_DRIVER_OFF] = "driver-off",
	[HANDOVER_PLUGIN_ON] = "plugin-on",
	[HANDOVER_VERIFIED_LEGACY] = "verified-legacy",
	[HANDOVER_FAILED] = "failed",
};

const char *handover_step_name(handover_step_t step)
{
	return step < HANDOVER_STEPS ? handover_step_names[step] : "unknown";
}

int handover_step_parse(const char *name)
{
	for (int i = 0; i < HANDOVER_STEPS; i++)
		if (strcmp(name, handover_step_names[i]) == 0)
			return i;
	return -1;
}

bool handover_step_settled(handover_step_t step)
{
	return step == HANDOVER_LEGACY || step == HANDOVER_DRA;
}

bool handover_step_in_flight(handover_step_t step)
{
	return !handover_step_settled(step) && step != HANDOVER_FAILED;
}

const char *handover_step_waits_for(handover_step_t step)
{
	switch (step) {
	case HANDOVER_DRAINING:
		return "pods using the extended resource to finish";
	case HANDOVER_PLUGIN_OFF:
		return "allocatable of the extended resource to drop to 0";
	case HANDOVER_DRIVER_ON:
		return "the driver's ResourceSlices for the node to be complete, with the physical devices the plugin's units stood for";
	case HANDOVER_DRAINING_DRA:
		return "pods holding DRA claims on the node to finish";
	case HANDOVER_DRIVER_OFF:
		return "the driver's ResourceSlices for the node to go";
	case HANDOVER_PLUGIN_ON:
		return "the device plugin to advertise the extended resource";
	case HANDOVER_FAILED:
		return "a person (the node failed; see its drashift.io/failure annotation)";
	default:
		return "nothing (its next step is written now)";
	}
}

/* ---- reading the record -------------------------------------------------- */

static const char *handover_annotation(const projection_node_t *node, const char *key)
{
	return projection_label_find(node->annotations, node->n_annotations, key);
}

static const char *handover_label(const projection_node_t *node, const char *key)
{
	return projection_label_find(node->labels, node->n_labels, key);
}

/* A recorded count: absent leaves *out; -1 when unreadable. */
static int handover_read_count(const char *v, int64_t *out)
{
	if (v == NULL)
		return 0;
	char *end;
	errno = 0;
	long long n = strtoll(v, &end, 10);
	if (errno != 0 || *end != '\0' || end == v || n < 0)
		return -1;
	*out = n;
	return 0;
}

void handover_read(const plan_t *plan, const projection_node_t *node, handover_state_t *out)
{
	*out = (handover_state_t){ .legacy_devices = -1, .dra_devices = -1 };
	const char *plugin = handover_label(node, plan->device_plugin_label.key);
	const char *dra = handover_label(node, plan->dra_label.key);
	out->plugin_enabled = plugin && strcmp(plugin, plan->device_plugin_label.enabled) == 0;
	out->dra_enabled = dra && strcmp(dra, plan->dra_label.enabled) == 0;
	out->plan = handover_annotation(node, HANDOVER_ANN_PLAN);
	out->orphaned_by = handover_annotation(node, HANDOVER_ANN_ORPHANED_BY);
	out->plan_uid = handover_annotation(node, HANDOVER_ANN_PLAN_UID);

	const char *step = handover_annotation(node, HANDOVER_ANN_STEP);
	if (step == NULL) {
		/* No handover recorded: whoever the labels name owns the node. */
		out->step = out->dra_enabled && !out->plugin_enabled ? HANDOVER_DRA : HANDOVER_LEGACY;
		out->direction = out->step == HANDOVER_DRA ? HANDOVER_TO_DRA : HANDOVER_TO_LEGACY;
		return;
	}
	int parsed = handover_step_parse(step);
	const char *direction = handover_annotation(node, HANDOVER_ANN_DIRECTION);
	const char *since = handover_annotation(node, HANDOVER_ANN_SINCE);
	const char *cordoned = handover_annotation(node, HANDOVER_ANN_CORDONED);
	const char *devices = handover_annotation(node, HANDOVER_ANN_LEGACY_DEVICES);
	out->failure = handover_annotation(node, HANDOVER_ANN_FAILURE);
	out->quarantine = handover_annotation(node, DRIVER_FAILURE_ANN_QUARANTINE);
	if (parsed < 0 || direction == NULL || since == NULL ||
	    (strcmp(direction, "ToDRA") != 0 && strcmp(direction, "ToLegacy") != 0)) {
		out->bad_record = true;
		return;
	}
	out->step = (handover_step_t)parsed;
	out->direction = strcmp(direction, "ToDRA") == 0 ? HANDOVER_TO_DRA : HANDOVER_TO_LEGACY;
	int64_t since_us;
	out->since_ms = rfc3339_parse(since, &since_us) == 0 ? since_us / 1000 : -1;
	if (out->since_ms < 0)
		out->bad_record = true;
	out->cordoned_by_us = cordoned && strcmp(cordoned, "true") == 0;
	if (handover_read_count(devices, &out->legacy_devices) != 0 ||
	    handover_read_count(handover_annotation(node, HANDOVER_ANN_DRA_DEVICES), &out->dra_devices) != 0)
		out->bad_record = true;
}

int64_t handover_expected_devices(const handover_state_t *st)
{
	return st->dra_devices >= 0 ? st->dra_devices : st->legacy_devices;
}

/* ---- building decisions -------------------------------------------------- */

typedef struct {
	cJSON *root, *labels, *annotations, *spec;
} handover_patch_t;

/*
 * Every patch names the node object it was decided for (metadata.uid, which
 * cannot change: the API refuses the patch, 422, when the name now belongs
 * to another object). A node deleted and registered again while a patch was
 * on its way got that patch's step alone, a record nobody could read, and
 * stopped its pool (tools/faults seed 6000).
 */
static void handover_patch_init(handover_patch_t *p, const projection_node_t *node)
{
	p->root = cJSON_CreateObject();
	cJSON *md = cJSON_AddObjectToObject(p->root, "metadata");
	if (node->meta.uid)
		cJSON_AddStringToObject(md, "uid", node->meta.uid);
	p->labels = cJSON_AddObjectToObject(md, "labels");
	p->annotations = cJSON_AddObjectToObject(md, "annotations");
	p->spec = NULL;
}

static void handover_patch_annotation(handover_patch_t *p, const char *key, const char *value)
{
	if (value)
		cJSON_AddStringToObject(p->annotations, key, value);
	else
		cJSON_AddNullToObject(p->annotations, key);
}

static void handover_patch_step(handover_patch_t *p, handover_step_t step, int64_t now_ms)
{
	char since[RFC3339_LEN];
	/* Fails only for a year outside 0..9999; an empty time then reads back as an unreadable record. */
	if (rfc3339_format(now_ms * 1000, 0, since, sizeof(since)) != 0)
		since[0] = '\0';
	handover_patch_annotation(p, HANDOVER_ANN_STEP, handover_step_name(step));
	handover_patch_annotation(p, HANDOVER_ANN_SINCE, since);
}

static void handover_patch_unschedulable(handover_patch_t *p, bool value)
{
	if (p->spec == NULL)
		p->spec = cJSON_AddObjectToObject(p->root, "spec");
	cJSON_AddBoolToObject(p->spec, "unschedulable", value);
}

static void handover_patch_label(handover_patch_t *p, const plan_label_t *label, bool enabled)
{
	cJSON_AddStringToObject(p->labels, label->key, enabled ? label->enabled : label->disabled);
}

static void handover_emit(handover_decision_t *d, handover_patch_t *p, handover_step_t from, handover_step_t to,
			  const char *reason, bool warning, const char *fmt, ...) __attribute__((format(printf, 7, 8)));

static void handover_emit(handover_decision_t *d, handover_patch_t *p, handover_step_t from, handover_step_t to,
			  const char *reason, bool warning, const char *fmt, ...)
{
	if (cJSON_GetArraySize(p->labels) == 0)
		cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(p->root, "metadata"), "labels");
	d->act = HANDOVER_ACT_PATCH;
	d->patch = cJSON_PrintUnformatted(p->root);
	cJSON_Delete(p->root);
	d->from = from;
	d->to = to;
	d->reason = reason;
	d->warning = warning;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&d->message, fmt, ap) < 0)
		abort();
	va_end(ap);
}

static void handover_refuse(handover_decision_t *d, const char *reason, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void handover_refuse(handover_decision_t *d, const char *reason, const char *fmt, ...)
{
	d->act = HANDOVER_ACT_REFUSE;
	d->reason = reason;
	d->warning = true;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&d->message, fmt, ap) < 0)
		abort();
	va_end(ap);
}

/* Move to step, keeping the direction; optionally change ownership labels in the same patch. */
static void handover_advance(const handover_input_t *in, handover_decision_t *d, handover_step_t to,
			     int plugin, int dra, const char *reason, const char *why)
{
	handover_patch_t p;
	handover_patch_init(&p, in->node);
	handover_patch_step(&p, to, in->now_ms);
	if (plugin >= 0)
		handover_patch_label(&p, &in->plan->device_plugin_label, plugin);
	if (dra >= 0)
		handover_patch_label(&p, &in->plan->dra_label, dra);
	handover_emit(d, &p, in->state->step, to, reason, false, "%s: %s", in->node->meta.name, why);
}

/*
 * Begin a handover from a settled state (legacy or dra): cordon, and record
 * whether the cordon is ours (invariant 4) and, towards DRA, how many devices
 * the plugin advertised (the count the DRA side must match).
 */
static void handover_begin(const handover_input_t *in, handover_decision_t *d, handover_direction_t dir)
{
	/*
	 * Towards DRA, what the plugin's units stand for in the driver's
	 * devices, to check the driver against. A node that advertises none (its
	 * plugin has not registered yet, or crashed) has an unknown count, not
	 * zero: none is recorded and the driver's devices are verified on their
	 * own (complete slices, at least one device). Units that cannot be
	 * mapped stop the node before anything is touched.
	 */
	capacity_legacy_t legacy = { .devices = -1 };
	if (dir == HANDOVER_TO_DRA) {
		capacity_legacy(in->plan, in->pool, in->node, &legacy);
		if (legacy.problem) {
			handover_refuse(d, "CapacityNotComparable", "%s: not handed over: %s", in->node->meta.name,
					legacy.problem);
			capacity_legacy_free(&legacy);
			return;
		}
	}
	handover_patch_t p;
	handover_patch_init(&p, in->node);
	handover_step_t to = dir == HANDOVER_TO_DRA ? HANDOVER_DRAINING : HANDOVER_DRAINING_DRA;
	handover_patch_annotation(&p, HANDOVER_ANN_PLAN, in->plan->name);
	if (in->plan_uid)
		handover_patch_annotation(&p, HANDOVER_ANN_PLAN_UID, in->plan_uid);
	handover_patch_annotation(&p, HANDOVER_ANN_DIRECTION, dir == HANDOVER_TO_DRA ? "ToDRA" : "ToLegacy");
	handover_patch_step(&p, to, in->now_ms);
	handover_patch_annotation(&p, HANDOVER_ANN_CORDONED, in->node->unschedulable ? "false" : "true");
	/*
	 * Whose cordon it is was read from the node as cached: the write holds
	 * only if the node is still that version (409 otherwise, and the next
	 * decision reads it again). A person's cordon that raced the cache is
	 * never recorded as drashift's, and so never lifted by it.
	 */
	if (in->node->meta.resource_version != NULL)
		cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(p.root, "metadata"), "resourceVersion",
					in->node->meta.resource_version);
	handover_patch_annotation(&p, HANDOVER_ANN_FAILURE, NULL);
	bool counted = legacy.devices > 0;
	if (dir == HANDOVER_TO_DRA) {
		char units[24], devices[24];
		snprintf(units, sizeof(units), "%lld", (long long)legacy.units);
		snprintf(devices, sizeof(devices), "%lld", (long long)legacy.devices);
		handover_patch_annotation(&p, HANDOVER_ANN_LEGACY_DEVICES, counted ? units : NULL);
		handover_patch_annotation(&p, HANDOVER_ANN_DRA_DEVICES, counted ? devices : NULL);
	}
	if (!in->node->unschedulable)
		handover_patch_unschedulable(&p, true);
	char *counts = dir != HANDOVER_TO_DRA ? xstrdup("")
		       : counted ? xasprintf("; the plugin's %lld units stand for %lld devices (%s)",
					     (long long)legacy.units, (long long)legacy.devices, legacy.source)
				 : xstrdup("; the device plugin advertises no extended resource, so its device count is "
					   "unknown and the driver's devices are verified on their own");
	handover_emit(d, &p, in->state->step, to, dir == HANDOVER_TO_DRA ? "HandoverStarted" : "RollbackStarted",
		      false, "%s: cordoned%s; waiting for %s%s", in->node->meta.name,
		      in->node->unschedulable ? " (already unschedulable, left so)" : "",
		      dir == HANDOVER_TO_DRA ? "pods using the extended resource to finish"
					     : "pods holding DRA claims on the node to finish",
		      counts);
	free(counts);
	capacity_legacy_free(&legacy);
}

/* Switch direction mid-way, keeping the cordon and the record of who cordoned. */
static void handover_turn(const handover_input_t *in, handover_decision_t *d, handover_step_t to,
			  handover_direction_t dir, int plugin, int dra, const char *why)
{
	handover_patch_t p;
	handover_patch_init(&p, in->node);
	handover_patch_annotation(&p, HANDOVER_ANN_DIRECTION, dir == HANDOVER_TO_DRA ? "ToDRA" : "ToLegacy");
	handover_patch_step(&p, to, in->now_ms);
	if (plugin >= 0)
		handover_patch_label(&p, &in->plan->device_plugin_label, plugin);
	if (dra >= 0)
		handover_patch_label(&p, &in->plan->dra_label, dra);
	handover_emit(d, &p, in->state->step, to, dir == HANDOVER_TO_DRA ? "HandoverResumed" : "RollbackStarted",
		      false, "%s: %s", in->node->meta.name, why);
}

static const char *const handover_record_keys[] = {
	HANDOVER_ANN_PLAN,    HANDOVER_ANN_DIRECTION,       HANDOVER_ANN_STEP,    HANDOVER_ANN_SINCE,
	HANDOVER_ANN_CORDONED, HANDOVER_ANN_LEGACY_DEVICES, HANDOVER_ANN_DRA_DEVICES, HANDOVER_ANN_FAILURE,
	HANDOVER_ANN_ORPHANED_BY, HANDOVER_ANN_PLAN_UID,
};

/* Remove every record drashift keeps on a node. */
static void handover_patch_forget(handover_patch_t *p)
{
	for (size_t i = 0; i < sizeof(handover_record_keys) / sizeof(handover_record_keys[0]); i++)
		handover_patch_annotation(p, handover_record_keys[i], NULL);
}

bool handover_has_record(const projection_node_t *node)
{
	for (size_t i = 0; i < sizeof(handover_record_keys) / sizeof(handover_record_keys[0]); i++)
		if (handover_annotation(node, handover_record_keys[i]))
			return true;
	return false;
}

/* The end of a handover: uncordon only a cordon that was ours (invariant 4). */
static void handover_finish(const handover_input_t *in, handover_decision_t *d, handover_step_t to)
{
	handover_patch_t p;
	handover_patch_init(&p, in->node);
	if (in->state->cordoned_by_us)
		handover_patch_unschedulable(&p, false);
	if (to == HANDOVER_LEGACY) {
		/* Back where it started: leave no trace but the labels it found. */
		handover_patch_forget(&p);
	} else {
		handover_patch_step(&p, to, in->now_ms);
		handover_patch_annotation(&p, HANDOVER_ANN_CORDONED, NULL);
	}
	handover_emit(d, &p, in->state->step, to, to == HANDOVER_DRA ? "HandoverComplete" : "RollbackComplete", false,
		      "%s: %s owns the node%s", in->node->meta.name,
		      to == HANDOVER_DRA ? "the DRA driver" : "the device plugin",
		      in->state->cordoned_by_us ? "; uncordoned" : "; left unschedulable as found");
}

static void handover_fail(const handover_input_t *in, handover_decision_t *d, const char *why)
{
	handover_patch_t p;
	handover_patch_init(&p, in->node);
	handover_patch_step(&p, HANDOVER_FAILED, in->now_ms);
	char *failure = xasprintf("%s: %s", handover_step_name(in->state->step), why);
	handover_patch_annotation(&p, HANDOVER_ANN_FAILURE, failure);
	handover_emit(d, &p, in->state->step, HANDOVER_FAILED, "HandoverFailed", true,
		      "%s failed at step %s: %s; the node stays cordoned until a person acts (rollback or fix)",
		      in->node->meta.name, handover_step_name(in->state->step), why);
	free(failure);
}

/* Past the step's deadline? Sets requeue for when it will be. */
static bool handover_past(const handover_input_t *in, handover_decision_t *d, uint64_t deadline_ms)
{
	int64_t due = in->state->since_ms + (int64_t)deadline_ms;
	if (in->now_ms >= due)
		return true;
	d->requeue_ms = (uint64_t)(due - in->now_ms);
	return false;
}

static void handover_wait(const handover_input_t *in, handover_decision_t *d, uint64_t deadline_ms,
			  const char *why)
{
	if (handover_past(in, d, deadline_ms))
		handover_fail(in, d, why);
}

/*
 * The ownership labels drashift writes for a step: 1 enabled, 0 not enabled,
 * -1 either (a node draining towards DRA may never have had the plugin label;
 * a DRA node's plugin label is all that keeps the plugin off).
 */
static void handover_step_labels(handover_step_t step, int *plugin, int *dra)
{
	*plugin = *dra = -1;
	switch (step) {
	case HANDOVER_DRAINING:
		*dra = 0;
		break;
	case HANDOVER_PLUGIN_OFF:
	case HANDOVER_DRIVER_OFF:
		*plugin = *dra = 0;
		break;
	case HANDOVER_DRIVER_ON:
	case HANDOVER_VERIFIED:
	case HANDOVER_DRAINING_DRA:
		*plugin = 0;
		*dra = 1;
		break;
	case HANDOVER_DRA:
		*plugin = 0;
		break;
	case HANDOVER_PLUGIN_ON:
	case HANDOVER_VERIFIED_LEGACY:
		*plugin = 1;
		*dra = 0;
		break;
	default:
		break;
	}
}

/* " KEY=VALUE" putting back a label the step wants (want 0/1) that differs from what it is; "" otherwise. */
static char *handover_label_arg(const plan_label_t *label, int want, bool enabled)
{
	if (want < 0 || want == enabled)
		return xstrdup("");
	return xasprintf(" %s=%s", label->key, want ? label->enabled : label->disabled);
}

/*
 * ": kubectl label node N --overwrite KEY=VALUE..." naming the ownership
 * labels that differ from what drashift wrote for the node's step, with the
 * values it wrote; "" when the step does not say (no handover under way).
 */
static char *handover_put_back(const handover_input_t *in)
{
	const handover_state_t *st = in->state;
	const plan_label_t *pl = &in->plan->device_plugin_label, *dl = &in->plan->dra_label;
	int plugin, dra;
	handover_step_labels(st->step, &plugin, &dra);
	char *p = handover_label_arg(pl, plugin, st->plugin_enabled), *d = handover_label_arg(dl, dra, st->dra_enabled);
	char *fix = p[0] || d[0] ? xasprintf(": kubectl label node %s --overwrite%s%s", in->node->meta.name, p, d)
				 : xstrdup("");
	free(p);
	free(d);
	return fix;
}

/* Where a rollback of a failed node starts, judged by the labels it has now. */
static handover_step_t handover_rollback_entry(const handover_state_t *st)
{
	if (st->dra_enabled)
		return HANDOVER_DRAINING_DRA;
	if (!st->plugin_enabled)
		return HANDOVER_DRIVER_OFF;
	return HANDOVER_PLUGIN_ON;
}

/* The node's records name this plan, but an earlier object of that name: a new plan adopts nothing. */
static bool handover_earlier_plan(const handover_input_t *in)
{
	const handover_state_t *st = in->state;
	return st->plan_uid && in->plan_uid && strcmp(st->plan_uid, in->plan_uid) != 0;
}

/*
 * Refuse a node drashift must not touch: its record is unreadable, another
 * plan or a forced delete owns it, or both ownership labels are on.
 */
static bool handover_untouchable(const handover_input_t *in, handover_decision_t *d)
{
	const handover_state_t *st = in->state;
	const char *node = in->node->meta.name;
	if (st->bad_record) {
		handover_refuse(d, "UnreadableRecord",
				"%s: drashift's annotations on the node cannot be read; nothing is done to it until "
				"they are fixed or removed", node);
		return true;
	}
	if (st->plan && strcmp(st->plan, in->plan->name) != 0) {
		handover_refuse(d, "OwnedByAnotherPlan", "%s is being handed over by plan %s", node, st->plan);
		return true;
	}
	if (handover_earlier_plan(in)) {
		handover_refuse(d, "OrphanedNode",
				"%s was handed over by an earlier plan named %s (uid %s), since deleted; drashift adopts "
				"nothing: bring the node to rest and remove drashift's annotations (docs/operations.md, "
				"\"Deleting a plan, and nodes that leave it\")",
				node, st->plan, st->plan_uid);
		return true;
	}
	if (st->orphaned_by) {
		handover_refuse(d, "OrphanedNode",
				"%s carries %s=%s: its plan was force-deleted mid-handover; drashift adopts nothing: "
				"bring the node to rest and remove drashift's annotations (docs/operations.md, \"Deleting a plan, and nodes that leave it\")",
				node, HANDOVER_ANN_ORPHANED_BY, st->orphaned_by);
		return true;
	}
	if (st->plugin_enabled && st->dra_enabled) {
		char *fix = handover_put_back(in);
		handover_refuse(d, "OwnershipFight",
				"%s carries both %s=%s and %s=%s, which drashift never writes together; someone "
				"else changed the labels, drashift does nothing to this node until they are put back%s",
				node, in->plan->device_plugin_label.key, in->plan->device_plugin_label.enabled,
				in->plan->dra_label.key, in->plan->dra_label.enabled,
				fix[0] ? fix : " (no step says which: turn off the one that should not run here)");
		free(fix);
		return true;
	}
	return false;
}

/* Whether the ownership labels are the ones drashift wrote for the node's step. */
static bool handover_labels_fit(const handover_state_t *st)
{
	int plugin, dra;
	handover_step_labels(st->step, &plugin, &dra);
	return (plugin < 0 || plugin == st->plugin_enabled) && (dra < 0 || dra == st->dra_enabled);
}

static void handover_fight(const handover_input_t *in, handover_decision_t *d)
{
	const handover_state_t *st = in->state;
	const plan_label_t *pl = &in->plan->device_plugin_label, *dl = &in->plan->dra_label;
	char *fix = handover_put_back(in);
	handover_refuse(d, "OwnershipFight",
			"%s: at step %s the labels are %s=%s, %s=%s, which drashift did not write; someone else "
			"changed them, drashift does nothing to this node until they are put back%s",
			in->node->meta.name, handover_step_name(st->step), pl->key,
			st->plugin_enabled ? pl->enabled : "(not enabled)", dl->key,
			st->dra_enabled ? dl->enabled : "(not enabled)", fix);
	free(fix);
}

/*
 * Whether the drain began too recently to believe that nobody uses the node
 * (HANDOVER_CORDON_SETTLE_MS; tools/faults trial 5008: three pods the
 * scheduler bound to the node 0.3 s after its cordon still held claims when
 * the DRA label went off). Sets the requeue for when it has settled.
 */
static bool handover_cordon_settling(const handover_input_t *in, handover_decision_t *d)
{
	if (in->state->since_ms < 0)
		return false;
	return !handover_past(in, d, HANDOVER_CORDON_SETTLE_MS);
}

/* Draining towards DRA: evict (drain policy Evict, before its deadline) or wait for the plugin's pods to go. */
static void handover_drain(const handover_input_t *in, handover_decision_t *d, handover_goal_t goal)
{
	const handover_state_t *st = in->state;
	const handover_usage_t *use = in->usage;
	if (goal == HANDOVER_GOAL_LEGACY) {
		handover_finish(in, d, HANDOVER_LEGACY); /* nothing changed yet: just undo the cordon */
		return;
	}
	if (use->unknown || use->plugin_users > 0) {
		int64_t evict_due = st->since_ms + (int64_t)in->pool->eviction_deadline_ms;
		if (in->pool->drain_policy == PLAN_DRAIN_EVICT && !use->unknown && use->n_evictable > 0 &&
		    in->now_ms < evict_due) {
			d->act = HANDOVER_ACT_EVICT;
			d->evict_ns = use->evictable[0];
			d->evict_name = use->evictable[1];
			d->reason = "Evicting";
			d->message = xasprintf("%s: evicting %s/%s through the Eviction API (drain policy Evict)",
					       in->node->meta.name, d->evict_ns, d->evict_name);
			d->requeue_ms = 1000;
			return;
		}
		char *why = xasprintf("%zu pod(s) still use %s on the node%s", use->plugin_users,
				      in->plan->extended_resource, use->unknown ? " (or the pods could not be read)" : "");
		handover_wait(in, d, in->pool->drain_deadline_ms, why);
		free(why);
		return;
	}
	if (handover_cordon_settling(in, d))
		return;
	handover_advance(in, d, HANDOVER_PLUGIN_OFF, 0, -1, "DevicePluginOff",
			 "no pod uses the extended resource: device-plugin label off, waiting for allocatable 0");
}

/* DRA label on: verified once the slices are complete with the devices the plugin's units stand for. */
static void handover_verify_slices(const handover_input_t *in, handover_decision_t *d)
{
	const handover_state_t *st = in->state;
	const handover_ads_t *ads = in->ads;
	int64_t expected = handover_expected_devices(st);
	if (ads->slices_complete && (expected < 0 ? ads->slice_devices > 0 : ads->slice_devices == expected)) {
		handover_advance(in, d, HANDOVER_VERIFIED, -1, -1, "DRADriverVerified",
				 "the node's ResourceSlices are complete and hold the physical devices the plugin's units stood for");
		return;
	}
	char *why = !ads->slices_complete
			    ? xstrdup("the driver's ResourceSlices for the node are not complete")
			    : xasprintf("the driver advertises %lld physical devices (%lld listed), the device plugin's "
					"%lld units stand for %lld; fix the driver, or spec.pools[].capacity if the "
					"mapping is wrong",
					(long long)ads->slice_devices, (long long)ads->slice_listed,
					(long long)st->legacy_devices, (long long)expected);
	handover_wait(in, d, in->pool->handover_deadline_ms, why);
	free(why);
}

/* The steps from legacy towards DRA (legacy, draining, plugin-off, driver-on, verified). */
static void handover_towards_dra(const handover_input_t *in, handover_decision_t *d, handover_goal_t goal)
{
	switch (in->state->step) {
	case HANDOVER_LEGACY:
		if (goal == HANDOVER_GOAL_DRA)
			handover_begin(in, d, HANDOVER_TO_DRA);
		return;
	case HANDOVER_DRAINING:
		handover_drain(in, d, goal);
		return;
	case HANDOVER_PLUGIN_OFF:
		if (goal == HANDOVER_GOAL_LEGACY) {
			handover_turn(in, d, HANDOVER_PLUGIN_ON, HANDOVER_TO_LEGACY, 1, -1,
				      "rollback: device-plugin label back on before DRA was enabled");
			return;
		}
		if (in->ads->allocatable == 0) {
			handover_advance(in, d, HANDOVER_DRIVER_ON, -1, 1, "DRADriverOn",
					 "allocatable is 0: DRA label on, waiting for the node's ResourceSlices");
			return;
		}
		handover_wait(in, d, in->pool->handover_deadline_ms,
			      "allocatable of the extended resource did not drop to 0 after the device plugin was turned off");
		return;
	case HANDOVER_DRIVER_ON:
	case HANDOVER_VERIFIED:
		if (goal == HANDOVER_GOAL_LEGACY) {
			handover_turn(in, d, HANDOVER_DRAINING_DRA, HANDOVER_TO_LEGACY, -1, -1,
				      "rollback: waiting for pods holding DRA claims on the node to finish");
			return;
		}
		if (in->state->step == HANDOVER_DRIVER_ON)
			handover_verify_slices(in, d);
		else
			handover_finish(in, d, HANDOVER_DRA);
		return;
	default:
		return;
	}
}

/* Draining towards legacy: never evict during a rollback; claims are released only by their pods finishing. */
static void handover_drain_dra(const handover_input_t *in, handover_decision_t *d, handover_goal_t goal)
{
	const handover_usage_t *use = in->usage;
	if (goal == HANDOVER_GOAL_DRA) {
		handover_turn(in, d, HANDOVER_VERIFIED, HANDOVER_TO_DRA, -1, -1,
			      "rollback withdrawn: the DRA driver never left the node");
		return;
	}
	if (use->unknown || use->driver_users > 0) {
		char *extended = use->extended_users > 0
					 ? xasprintf(", %zu of them through the claim the scheduler made for the extended "
						     "resource they ask for", use->extended_users)
					 : xstrdup("");
		char *why = xasprintf("%zu pod(s) on the node still hold claims allocated by %s%s%s", use->driver_users,
				      in->plan->driver, extended, use->unknown ? " (or the claims could not be read)" : "");
		free(extended);
		handover_wait(in, d, in->pool->drain_deadline_ms, why);
		free(why);
		return;
	}
	if (handover_cordon_settling(in, d))
		return;
	handover_advance(in, d, HANDOVER_DRIVER_OFF, -1, 0, "DRADriverOff",
			 "no pod holds a claim from the driver on the node: DRA label off, waiting for its ResourceSlices to go");
}

/* The steps from DRA back to legacy (dra, draining-dra, driver-off, plugin-on, verified-legacy), and failed. */
static void handover_towards_legacy(const handover_input_t *in, handover_decision_t *d, handover_goal_t goal)
{
	const handover_state_t *st = in->state;
	switch (st->step) {
	case HANDOVER_DRA:
		if (goal == HANDOVER_GOAL_LEGACY && st->dra_enabled)
			handover_begin(in, d, HANDOVER_TO_LEGACY);
		return;
	case HANDOVER_DRAINING_DRA:
		handover_drain_dra(in, d, goal);
		return;
	case HANDOVER_DRIVER_OFF:
		if (!in->ads->slices_present) {
			handover_advance(in, d, HANDOVER_PLUGIN_ON, 1, -1, "DevicePluginOn",
					 "the driver's ResourceSlices are gone: device-plugin label on, waiting for allocatable");
			return;
		}
		handover_wait(in, d, in->pool->handover_deadline_ms,
			      "the driver's ResourceSlices for the node did not go away after the DRA label was turned off");
		return;
	case HANDOVER_PLUGIN_ON:
		if (in->ads->allocatable > 0) {
			handover_advance(in, d, HANDOVER_VERIFIED_LEGACY, -1, -1, "DevicePluginVerified",
					 "the device plugin advertises the extended resource again");
			return;
		}
		handover_wait(in, d, in->pool->handover_deadline_ms,
			      "the device plugin did not advertise the extended resource after its label was turned on");
		return;
	case HANDOVER_VERIFIED_LEGACY:
		handover_finish(in, d, HANDOVER_LEGACY);
		return;
	case HANDOVER_FAILED:
		if (goal == HANDOVER_GOAL_LEGACY && in->goal == HANDOVER_GOAL_LEGACY)
			handover_turn(in, d, handover_rollback_entry(st), HANDOVER_TO_LEGACY, -1, -1,
				      "rollback of a failed node: resuming from its current labels");
		return;
	default:
		return;
	}
}

bool handover_reads_usage(handover_step_t step)
{
	return step == HANDOVER_DRAINING || step == HANDOVER_DRAINING_DRA; /* handover_drain, handover_drain_dra */
}

void handover_decide(const handover_input_t *in, handover_decision_t *d)
{
	const handover_state_t *st = in->state;
	*d = (handover_decision_t){ .act = HANDOVER_ACT_NONE, .from = st->step, .to = st->step };
	if (handover_untouchable(in, d))
		return;
	if (st->quarantine)
		return; /* a person lifts a quarantine; until then the node stays as it is, cordoned */
	if (!handover_labels_fit(st)) {
		handover_fight(in, d);
		return;
	}
	/* STAY finishes what is under way in its direction and starts nothing new. */
	handover_goal_t goal = in->goal;
	if (goal == HANDOVER_GOAL_STAY && handover_step_in_flight(st->step))
		goal = st->direction == HANDOVER_TO_DRA ? HANDOVER_GOAL_DRA : HANDOVER_GOAL_LEGACY;
	/* handover_step_t lists the steps towards DRA first, from legacy to verified. */
	if (st->step <= HANDOVER_VERIFIED)
		handover_towards_dra(in, d, goal);
	else
		handover_towards_legacy(in, d, goal);
}

/* ---- letting a node go ----------------------------------------------------- */

handover_goal_t handover_release_goal(const handover_state_t *st)
{
	switch (st->step) {
	case HANDOVER_LEGACY:
	case HANDOVER_DRA:
		return HANDOVER_GOAL_STAY;
	case HANDOVER_DRIVER_ON:
	case HANDOVER_VERIFIED:
		return st->direction == HANDOVER_TO_DRA ? HANDOVER_GOAL_DRA : HANDOVER_GOAL_LEGACY;
	default:
		return HANDOVER_GOAL_LEGACY;
	}
}

void handover_release(const handover_input_t *in, handover_decision_t *d)
{
	const handover_state_t *st = in->state;
	bool settled = handover_step_settled(st->step);
	if (st->bad_record || (st->plan && strcmp(st->plan, in->plan->name) != 0) || st->orphaned_by ||
	    handover_earlier_plan(in) || !settled) {
		handover_input_t walk = *in;
		walk.goal = handover_release_goal(st);
		handover_decide(&walk, d);
		return;
	}
	*d = (handover_decision_t){ .act = HANDOVER_ACT_NONE, .from = st->step, .to = st->step };
	if (!handover_has_record(in->node))
		return;
	if (st->plugin_enabled && st->dra_enabled) {
		handover_decide(in, d); /* reported as a fight, records kept for the person who sorts it out */
		return;
	}
	handover_patch_t p;
	handover_patch_init(&p, in->node);
	/* A quarantined node stays cordoned: the quarantine is a person's to lift, released or not. */
	bool uncordon = st->cordoned_by_us && !st->quarantine;
	if (uncordon)
		handover_patch_unschedulable(&p, false);
	handover_patch_forget(&p);
	handover_emit(d, &p, st->step, HANDOVER_LEGACY, "NodeReleased", false,
		      "%s: released by plan %s: %s owns the node, drashift's records removed%s", in->node->meta.name,
		      in->plan->name, st->step == HANDOVER_DRA ? "the DRA driver" : "the device plugin",
		      uncordon ? "; uncordoned" : st->quarantine ? "; quarantined, left cordoned" : "");
}

void handover_decision_free(handover_decision_t *d)
{
	free(d->patch);
	free(d->message);
	*d = (handover_decision_t){ 0 };
}
