/*
 * Node handover: one node moving between the device plugin and the DRA
 * driver, one recorded step at a time (docs/state-machines.md, "Node handover").
 *
 *   to DRA:    legacy -cordon-> draining -plugin label off-> plugin-off
 *              -(allocatable 0) DRA label on-> driver-on
 *              -(slices complete, physical devices == what the plugin's units stand for)-> verified
 *              -uncordon-> dra
 *   to legacy: dra -cordon-> draining-dra -DRA label off-> driver-off
 *              -(slices gone) plugin label on-> plugin-on
 *              -(allocatable > 0)-> verified-legacy -uncordon, forget-> legacy
 *
 * The step lives in the node's annotations and every action that moves it is
 * one JSON merge patch carrying both the side effect and the new step, so the
 * record and the effect cannot diverge: a crash before the patch repeats the
 * decision, a crash after it resumes from the new step. Waiting steps have a
 * deadline (wall clock, since the step's recorded start); past it the node
 * becomes failed and stays cordoned until a person acts.
 *
 * Pure: handover_decide() reads a snapshot and returns what to do.
 */
#ifndef DRASHIFT_HANDOVER_H
#define DRASHIFT_HANDOVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plan.h"
#include "projection.h"

/* Annotations drashift keeps on a node it hands over. */
/*
 * How long after a drain began (cordon) "no pod uses the node" is believed: a
 * pod the scheduler placed just before it saw the cordon is bound, and its
 * claim allocated, after the cordon, and drashift's caches show it later still.
 * The step's start is recorded to the second, so the wait is 4 to 5 s.
 */
#define HANDOVER_CORDON_SETTLE_MS 5000

#define HANDOVER_ANN_PLAN "drashift.io/plan"
#define HANDOVER_ANN_DIRECTION "drashift.io/direction"
#define HANDOVER_ANN_STEP "drashift.io/step"
#define HANDOVER_ANN_SINCE "drashift.io/step-since"
#define HANDOVER_ANN_CORDONED "drashift.io/cordoned-by-drashift"
#define HANDOVER_ANN_LEGACY_DEVICES "drashift.io/legacy-devices"
/* The physical devices the plugin's units stand for (reconcilers/capacity.h): what the driver must publish. */
#define HANDOVER_ANN_DRA_DEVICES "drashift.io/dra-devices"
#define HANDOVER_ANN_FAILURE "drashift.io/failure"
/* Left by a forced delete of the plan: who let the node go, when, at which step. */
#define HANDOVER_ANN_ORPHANED_BY "drashift.io/orphaned-by"
#define HANDOVER_ANN_PLAN_UID "drashift.io/plan-uid"

typedef enum {
	HANDOVER_LEGACY,      /* the device plugin owns the node; no handover recorded */
	HANDOVER_DRAINING,    /* to DRA: cordoned, waiting for extended-resource pods to go */
	HANDOVER_PLUGIN_OFF,  /* to DRA: plugin label off, waiting for allocatable 0 */
	HANDOVER_DRIVER_ON,   /* to DRA: DRA label on, waiting for complete slices */
	HANDOVER_VERIFIED,    /* to DRA: the slices hold the physical devices the plugin's units stood for */
	HANDOVER_DRA,         /* the DRA driver owns the node */
	HANDOVER_DRAINING_DRA,/* to legacy: cordoned, waiting for claims on the node to be released */
	HANDOVER_DRIVER_OFF,  /* to legacy: DRA label off, waiting for the slices to go */
	HANDOVER_PLUGIN_ON,   /* to legacy: plugin label on, waiting for allocatable > 0 */
	HANDOVER_VERIFIED_LEGACY, /* to legacy: the plugin advertises again */
	HANDOVER_FAILED,      /* a deadline passed; cordoned, counted, never retried by itself */
	HANDOVER_STEPS,
} handover_step_t;

/* The annotation value of a step ("draining", "plugin-off", ...), and back (-1: unknown). */
const char *handover_step_name(handover_step_t step);
int handover_step_parse(const char *name);
/* Settled: the node rests with one owner (legacy or dra). In flight: neither settled nor failed. */
bool handover_step_settled(handover_step_t step);
bool handover_step_in_flight(handover_step_t step);

typedef enum { HANDOVER_TO_DRA, HANDOVER_TO_LEGACY } handover_direction_t;

/* What the pool wants for this node right now. */
typedef enum {
	HANDOVER_GOAL_STAY,   /* start nothing new; finish a step already begun? see handover_decide */
	HANDOVER_GOAL_DRA,    /* move to (or stay on) DRA */
	HANDOVER_GOAL_LEGACY, /* move back to (or stay on) the device plugin */
} handover_goal_t;

/* A node's recorded handover state, read from its annotations and labels. */
typedef struct {
	handover_step_t step;
	handover_direction_t direction;
	const char *plan;          /* HANDOVER_ANN_PLAN, NULL when absent */
	int64_t since_ms;          /* wall-clock ms the step began; 0 when unknown */
	bool cordoned_by_us;
	int64_t legacy_devices;    /* the plugin's units when the handover began; -1 when not recorded */
	int64_t dra_devices;       /* the physical devices they stand for; -1 when not recorded */
	const char *failure;       /* why the node failed, when it did */
	/* DRIVER_FAILURE_ANN_QUARANTINE (driver_failure.h): a permanent driver failure; nothing moves it. NULL: none */
	const char *quarantine;
	const char *orphaned_by;   /* HANDOVER_ANN_ORPHANED_BY: a forced delete let the node go; adopt nothing */
	const char *plan_uid;      /* HANDOVER_ANN_PLAN_UID: the uid of the plan that started the handover, NULL when absent */
	bool plugin_enabled;       /* device-plugin label has its enabled value */
	bool dra_enabled;          /* DRA label has its enabled value */
	bool bad_record;           /* annotations present but unreadable: act on nothing */
} handover_state_t;

/* Read the node's state for plan; never fails (bad annotations set bad_record). */
void handover_read(const plan_t *plan, const projection_node_t *node, handover_state_t *out);

/*
 * What the node's pods and claims say about who still uses what
 * (handover_count_users). A pod asking for an extended resource is a user
 * of the device plugin, or of the driver when the scheduler served that
 * resource through DRA (KEP-5004: a claim it made, annotated
 * resource.kubernetes.io/extended-resource-claim, named in the pod's
 * status.extendedResourceClaimStatus).
 */
typedef struct {
	/* Non-terminal pods on the node requesting one of the pool's legacy resources from the device plugin. */
	size_t plugin_users;
	/*
	 * Consumers (pods) of the driver's devices on the node: pods there,
	 * running or terminating, holding a claim allocated from the driver, and
	 * the consumers in reservedFor of claims allocated on the node (a pod
	 * not yet bound, or finished but not yet released). Each counted once.
	 */
	size_t driver_users;
	/* Of driver_users: through a claim the scheduler made for an extended resource. */
	size_t extended_users;
	/* Something could not be read (cache not synced, a claim missing): assume both are in use. */
	bool unknown;
	/* Pods to evict when the drain policy is Evict: namespace/name pairs (the array is owned when counted). */
	const char **evictable; /* 2*n strings */
	size_t n_evictable;
} handover_usage_t;

/* A claim by namespace and name, as the caller's cache holds it; NULL when it holds none. */
typedef const projection_claim_t *(*handover_claim_fn)(void *ctx, const char *namespace, const char *name);

/* What handover_count_users reads: one node's pods and claims. */
typedef struct {
	const plan_t *plan;
	const plan_pool_t *pool;
	const projection_pod_t *const *pods; /* the pods bound to the node, any phase */
	size_t n_pods;
	const projection_claim_t *const *pinned; /* claims allocated on the node with a device of the plan's driver */
	size_t n_pinned;
	handover_claim_fn claim; /* the pods' claims by name */
	void *claim_ctx;
} handover_users_t;

/*
 * Whether handover_decide reads the node's usage at this step: only the
 * drains wait for users to go. Counting them walks the node's pods and
 * claims, so the caller counts them only then.
 */
bool handover_reads_usage(handover_step_t step);

/* Count who uses the node's devices. Free with handover_usage_free. */
void handover_count_users(const handover_users_t *in, handover_usage_t *out);
void handover_usage_free(handover_usage_t *use);

/* What the node's advertisements say. */
typedef struct {
	/* Summed over the pool's legacy resources (spec.extendedResource and capacity.legacyResources). */
	bool allocatable_known; /* the node lists one of them in allocatable */
	int64_t allocatable;    /* status.allocatable (0 when absent) */
	int64_t capacity;       /* status.capacity (0 when absent) */
	bool slices_present;    /* any ResourceSlice of the driver for this node */
	bool slices_complete;   /* every pool of the driver: resourceSliceCount slices of its newest generation present */
	int64_t slice_devices;  /* physical devices in those slices (reconcilers/capacity.h) */
	int64_t slice_listed;   /* devices listed in them (more than physical with partitionable devices) */
} handover_ads_t;

typedef enum {
	HANDOVER_ACT_NONE,     /* wait: nothing to do until something changes (or requeue_ms) */
	HANDOVER_ACT_PATCH,    /* apply patch (a JSON merge patch of the node) */
	HANDOVER_ACT_EVICT,    /* evict evict_ns/evict_name through the Eviction API */
	HANDOVER_ACT_REFUSE,   /* the node is in a state drashift must not touch: report why */
} handover_act_t;

typedef struct {
	handover_act_t act;
	char *patch;             /* HANDOVER_ACT_PATCH: JSON merge patch (owned) */
	handover_step_t from, to; /* the step change the patch records (same for no change) */
	const char *evict_ns, *evict_name;
	/* For the Event and the log: a reason (CamelCase) and one line a person can act on (owned). */
	const char *reason;
	char *message;
	bool warning;            /* the Event is a Warning */
	/* Ask to be called again after this long even if nothing changes (deadlines, evictions); 0: no. */
	uint64_t requeue_ms;
} handover_decision_t;

typedef struct {
	const plan_t *plan;
	const plan_pool_t *pool;
	const projection_node_t *node;
	const handover_state_t *state;
	/* Who uses the node's devices: read only at the steps handover_reads_usage names; may be NULL at the others. */
	const handover_usage_t *usage;
	const handover_ads_t *ads;
	handover_goal_t goal;
	int64_t now_ms; /* wall clock, ms since the epoch: deadlines compare with recorded step starts */
	/*
	 * The plan object's uid, recorded when a handover starts: a node whose
	 * records carry another uid was left by an earlier plan of the same name
	 * and is never adopted. NULL: not checked (records without a uid, from
	 * drashift 0.1.0, are adopted by name).
	 */
	const char *plan_uid;
} handover_input_t;

/*
 * The physical devices the driver must publish on a node handed over to DRA:
 * the recorded mapping, else (a record from before it) the recorded units,
 * else -1 (unknown: the driver's devices are verified on their own).
 */
int64_t handover_expected_devices(const handover_state_t *state);

/* Decide the next action for one node. Free the decision with handover_decision_free. */
void handover_decide(const handover_input_t *in, handover_decision_t *out);
void handover_decision_free(handover_decision_t *d);

/*
 * Letting a node go: its plan is being deleted, or the node left the plan's
 * pools (selector edit, relabel, pool removed). The node is brought to rest
 * first, then drashift's records go:
 *   - towards DRA before the DRA label is on (draining, plugin-off): walk
 *     back to the device plugin, as a rollback does;
 *   - towards DRA with the DRA label on (driver-on, verified: past the point
 *     of no return): finish on DRA;
 *   - towards legacy (a rollback under way): finish the rollback;
 *   - failed: roll back from its current labels, as a rollback of a failed node;
 *   - settled (dra, or legacy with stray records): remove the records, touch nothing else.
 * Never evicts; uncordons only a cordon drashift recorded as its own.
 */
handover_goal_t handover_release_goal(const handover_state_t *state);
/* The next action of a release (in->goal is ignored). HANDOVER_ACT_NONE with no requeue: nothing left to do. */
void handover_release(const handover_input_t *in, handover_decision_t *out);
/* What a node at step waits for, in words ("pods holding DRA claims on the node to finish"). */
const char *handover_step_waits_for(handover_step_t step);
/* Whether the node carries any of drashift's handover annotations. */
bool handover_has_record(const projection_node_t *node);

#endif
