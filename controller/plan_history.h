/*
 * A MigrationPlan's history: what happened during the migration, kept by the
 * leader in one ConfigMap per plan, read by `kubectl drashift report`
 * (docs/architecture.md, "The plan's history"; what is recorded and when is
 * decided in reconcilers/history.h).
 *
 *   drashift-system/drashift-history-<plan>
 *     labels  drashift.io/history: "true", drashift.io/plan: <plan>
 *     owner   the MigrationPlan (deleting the plan deletes its history)
 *     data    format       HISTORY_FORMAT
 *             transitions  JSON lines, oldest first, one per change:
 *               {"t":ms,"kind":"pool","pool":"a","from":"Legacy","to":"Canary","heldMs":1200}
 *               {"t":ms,"kind":"node","pool":"a","node":"gpu-1","from":"draining","to":"plugin-off","heldMs":900}
 *               {"t":ms,"kind":"freeze","pool":"a","signal":..,"value":..,"threshold":..,"breach":id}
 *               {"t":ms,"kind":"acknowledge","breach":id}
 *             samples      JSON lines, oldest first, one per pool and sample:
 *               {"t":ms,"pool":"a","gate":"Pass",
 *                "signals":[[name,value,threshold,samples,verdict,unit],...],
 *                "devices":{"legacy":[idle,fragmented],"dra":[idle,fragmented]}}
 *             comparison   one JSON object, counters since the history began:
 *               {"pools":{"a":{"legacy":{counters},"dra":{counters}}},"unplaced":{"legacy":n,"dra":n}}
 *               counters: placed failed retries allocMsSum allocCount allocMsMax
 *                         readyMsSum readyCount readyMsMax
 *
 * Why a ConfigMap: it outlives the process and a change of leader, kubectl
 * reads it with the plan's own credentials, and the grant to write
 * ConfigMaps in drashift-system exists already for the freeze parameters.
 * Bounded: transitions under PLAN_HISTORY_TRANSITIONS_MAX bytes (a ring),
 * samples under PLAN_HISTORY_SAMPLES_MAX (thinned), the comparison a fixed
 * set of counters per pool; the whole object stays well under the API's
 * 1 MiB. Written with server-side apply: PLAN_HISTORY_FLUSH_SOON_MS after a
 * transition, PLAN_HISTORY_FLUSH_MS after a sample, and
 * PLAN_HISTORY_FLUSH_COMPARISON_MS when only the comparison's counters
 * changed (jobs keep coming after a migration ends); what was not written
 * yet is lost with the process.
 *
 * The leader reads the object once per plan before it records anything, so
 * a new leader continues the history (and a replica that leads again reads
 * it again: the other leader wrote meanwhile). A record it cannot read (not JSON, no
 * time, longer than HISTORY_LINE_MAX) is dropped and counted in a log
 * line; a comparison it cannot read starts again from zero, said in a log
 * line. Nothing in the object can make it allocate more than the caps.
 */
#ifndef DRASHIFT_PLAN_HISTORY_H
#define DRASHIFT_PLAN_HISTORY_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "history.h"
#include "kube_http.h"
#include "projection.h"
#include "slo.h"

#define PLAN_HISTORY_LABEL "drashift.io/history"
#define PLAN_HISTORY_TRANSITIONS_MAX (384 * 1024)
#define PLAN_HISTORY_SAMPLES_MAX (256 * 1024)
#define PLAN_HISTORY_FLUSH_SOON_MS 2000
#define PLAN_HISTORY_FLUSH_MS 15000
#define PLAN_HISTORY_FLUSH_COMPARISON_MS 60000

/* ---- recording, in the operator ---- */

typedef struct plan_history plan_history_t;

plan_history_t *plan_history_new(kube_http_t *http);
/* Requests in flight (plan_history_busy) must have ended. */
void plan_history_free(plan_history_t *h);
bool plan_history_busy(const plan_history_t *h);

/*
 * Whether plan's history is read and may be recorded into. The first call
 * for a plan starts reading it (and again after a failed read, at most every
 * PLAN_HISTORY_FLUSH_MS); until it is read, nothing is recorded for the plan.
 */
bool plan_history_ready(plan_history_t *h, const char *plan, const char *plan_uid, int64_t now_ms);

/* A pool's phase now. */
void plan_history_pool(plan_history_t *h, const char *plan, const char *pool, const char *phase, int64_t now_ms);
/*
 * A node's step now, since since_ms (its step-since; 0 unknown). When that
 * is a change from the step recorded before and that step's start is known,
 * returns how long it lasted and puts its name in left; otherwise -1.
 */
int64_t plan_history_node(plan_history_t *h, const char *plan, const char *pool, const char *node, const char *step,
			  int64_t since_ms, int64_t now_ms, char *left, size_t left_len);
/*
 * Changes whenever what the history remembers as a pool's or a node's
 * latest state may have changed other than through plan_history_pool and
 * plan_history_node: a plan's history read (or its read failed), or
 * forgotten. A caller that skips telling a node what it told before does so
 * only while this stays the same.
 */
uint64_t plan_history_epoch(const plan_history_t *h);
/* status.breach now (id NULL: none). */
void plan_history_breach(plan_history_t *h, const char *plan, const char *id, const char *pool, const char *signal,
			 const char *value, const char *threshold, bool acknowledged, int64_t now_ms);
/* Whether plan_history_sample would record a sample now: the free devices need not be counted otherwise. */
bool plan_history_sample_due(plan_history_t *h, const char *plan, const char *pool,
			     const slo_result_t signals[SLO_SIGNALS], bool at_rest, int64_t now_ms);
/* A pool's signals and free devices ([path][0] idle, [path][1] fragmented), sampled when due; at_rest: Legacy or DRA. */
void plan_history_sample(plan_history_t *h, const char *plan, const char *pool, const slo_result_t signals[SLO_SIGNALS],
			 slo_verdict_t gate, const int64_t devices[HISTORY_PATHS][2], bool at_rest, int64_t now_ms);
/*
 * A pod changed (old and new: either NULL). plan and pool: where it runs
 * (pool NULL while it has no node), path: how it asks for devices. Counted
 * once in the plan's comparison, when its outcome is known.
 */
void plan_history_pod(plan_history_t *h, const char *plan, const char *pool, history_path_t path,
		      const projection_pod_t *old, const projection_pod_t *new);
/* A pod that no plan concerns was deleted: forget what was remembered of it. */
void plan_history_pod_gone(plan_history_t *h, const projection_pod_t *old);
/*
 * The plan is gone: forget it (its object goes with the garbage collector).
 * plan NULL: forget every plan, after leadership was lost; another leader
 * writes the histories meanwhile, so they are read again before recording.
 */
void plan_history_forget(plan_history_t *h, const char *plan);
/* Write the histories that changed, when due. */
void plan_history_flush(plan_history_t *h, int64_t now_ms);

#endif
