/*
 * What a plan's history records, and when (docs/architecture.md, "The
 * plan's history"). The controller keeps the history in a ConfigMap per plan
 * (controller/history.h) and asks these pure functions what to add to it and
 * what to drop from it; they see no clock and do no I/O.
 *
 *   transitions  a pool's phase or a node's step changed, a breach froze the
 *                plan, a person acknowledged it: one record each, with the
 *                time it happened
 *   samples      each pool's SLO signals against their thresholds, and its
 *                idle and fragmented devices, every HISTORY_SAMPLE_MS (and at
 *                once when a verdict changes)
 *   comparison   per pool, jobs placed on device-plugin nodes against jobs
 *                placed on DRA nodes: how many got running, failed, retried,
 *                and how long they took
 *
 * Bounded: transitions are a ring (the oldest go first), samples are thinned
 * (every other one of the older half goes, so the report keeps the whole span
 * at a coarser grain), each under a byte cap; the comparison is a fixed set
 * of counters per pool.
 */
#ifndef DRASHIFT_HISTORY_DECIDE_H
#define DRASHIFT_HISTORY_DECIDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

/* Signals are sampled this often per pool (a pool at rest: Legacy or DRA, less often); a verdict change at once. */
#define HISTORY_SAMPLE_MS 10000
#define HISTORY_SAMPLE_REST_MS 300000

/* A pool's phase or a node's step, as recorded last and as it is now. */
typedef struct {
	const char *was;      /* the last recorded state; NULL: none recorded */
	int64_t was_since_ms; /* when that record says it began; 0: unknown */
	const char *is;       /* the state now */
	int64_t since_ms;     /* when the state now began, when the object records it (a node's step-since); 0: unknown */
} history_subject_t;

typedef struct {
	bool record;     /* the state changed: add a transition */
	int64_t at_ms;   /* when it changed */
	int64_t held_ms; /* how long the previous state lasted; -1: unknown */
} history_change_t;

/*
 * A transition is recorded when the state differs from the last record. Its
 * time is the object's own record of it (since_ms) when that is plausible
 * (not in the future, not before the previous record), otherwise now.
 */
void history_change(const history_subject_t *s, int64_t now_ms, history_change_t *out);

/* The breach in status.breach, and what the history recorded of breaches. */
typedef struct {
	const char *breach_id;       /* status.breach.id now; NULL: none */
	bool acknowledged;           /* status.breach is acknowledged */
	const char *last_frozen_id;  /* the last freeze recorded; NULL: none */
	const char *last_acked_id;   /* the last acknowledgement recorded; NULL: none */
} history_breach_input_t;

typedef struct {
	bool record_freeze;
	bool record_acknowledge;
} history_breach_output_t;

void history_breach(const history_breach_input_t *in, history_breach_output_t *out);

/*
 * Whether a pool's signals are sampled now: never sampled, a verdict
 * changed, or HISTORY_SAMPLE_MS passed (HISTORY_SAMPLE_REST_MS for a pool at
 * rest, so a finished plan does not keep writing its history).
 */
bool history_sample_due(int64_t last_sample_ms, int64_t now_ms, bool verdict_changed, bool at_rest);

/*
 * The ring of transitions: how many of the oldest records go so that the
 * rest fit cap bytes (sizes[i] is record i's, oldest first). The newest
 * record always stays, even when it alone exceeds the cap (the caller refuses
 * such a record before it gets here).
 */
size_t history_ring_drop(const size_t *sizes, size_t n, size_t cap);

/*
 * Thinning samples (oldest first) to fit cap bytes: while they do not fit,
 * every second record of the older half goes. keep[i] says which stay;
 * returns how many stay. The newest record always stays.
 */
size_t history_thin(const size_t *sizes, size_t n, size_t cap, bool *keep);

/*
 * Devices of one node that serve nobody: on a node where nothing is in use
 * they are idle (a whole node free), on a node partly in use they are
 * fragmented (free, but not a whole node). Adds to *idle or *fragmented.
 */
void history_node_devices(int64_t advertised, int64_t used, int64_t *idle, int64_t *fragmented);

/* How a job reached its devices: the device plugin (extended resource) or DRA (a claim). */
typedef enum {
	HISTORY_PATH_LEGACY,
	HISTORY_PATH_DRA,
	HISTORY_PATHS,
} history_path_t;

const char *history_path_name(history_path_t p);

/* One version of a pod, as the comparison sees it. */
typedef struct {
	bool present;       /* false: no such version (first sight, or deleted) */
	bool on_node;       /* spec.nodeName set */
	bool ready;
	bool succeeded;     /* phase Succeeded */
	bool gone;          /* phase Failed, or being deleted */
	bool unschedulable; /* Pending, PodScheduled False, reason Unschedulable */
} history_pod_view_t;

/* What a pod's change adds to the comparison. */
typedef enum {
	HISTORY_POD_NOTHING,
	HISTORY_POD_RETRIED,  /* it could not be placed: remember it, it is a retry once placed */
	HISTORY_POD_SETTLED,  /* first seen running: counted before, or before anyone watched; not a sample */
	HISTORY_POD_PLACED,   /* it got its devices and became Ready (or completed): a success */
	HISTORY_POD_FAILED,   /* it was placed on a node and ended without ever being Ready */
	HISTORY_POD_UNPLACED, /* it waited unplaceable and ended without a node */
} history_pod_outcome_t;

/*
 * A pod changed from old to new (either may be absent). settled: it already
 * counted (placed, failed or settled); retried: it was seen unplaceable. A
 * pod counts once, at the first change that decides it.
 */
history_pod_outcome_t history_pod_outcome(const history_pod_view_t *old, const history_pod_view_t *new, bool settled,
					  bool retried);

/* ---- the object, read by the operator and by `kubectl drashift report` ---- */

/* drashift-system/drashift-history-<plan> (controller/plan_history.h describes it). */
#define HISTORY_NAMESPACE "drashift-system"
#define HISTORY_NAME_PREFIX "drashift-history-"
#define HISTORY_FORMAT "drashift.io/history/v1"
/* No record is longer; a comparison is at most this large. */
#define HISTORY_LINE_MAX 4096
#define HISTORY_COMPARISON_MAX (64 * 1024)

/* Records decoded from the object. Lines are parsed JSON objects, each with a number "t". */
typedef struct {
	cJSON **transitions;
	size_t n_transitions;
	cJSON **samples;
	size_t n_samples;
	cJSON *comparison; /* an object; NULL when absent or unreadable */
	size_t dropped;    /* records that could not be read */
	char problem[256]; /* the first thing that could not be read; "" when none */
} history_data_t;

/*
 * Decode a ConfigMap (the API's JSON). Returns 0, or -1 with err set when it
 * is not a history at all (no data, an unknown format); unreadable records
 * are dropped and counted, never fatal.
 */
int history_decode(const cJSON *configmap, history_data_t *out, char *err, size_t errlen);
void history_data_free(history_data_t *d);

#endif
