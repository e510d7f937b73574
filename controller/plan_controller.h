/*
 * Executes the reconcilers' decisions for every MigrationPlan: reads the
 * caches into a snapshot, asks pool_decide() and handover_decide() what to
 * do, performs the writes (node patches, evictions, the plan's status,
 * Events), and waits until the caches show its own writes before deciding
 * again, so a decision never rests on a state older than the last action.
 *
 * Only the leader writes. With dry_run it logs each action it would take and
 * writes nothing.
 */
#ifndef DRASHIFT_PLAN_CONTROLLER_H
#define DRASHIFT_PLAN_CONTROLLER_H

#include <stdbool.h>
#include <uv.h>

#include "api_versions.h"
#include "cache.h"
#include "events.h"
#include "kube_http.h"
#include "leader.h"
#include "metrics.h"

typedef struct plan_controller plan_controller_t;

/* namespace: drashift's own, where the Secrets of spec.slo.prometheus.secretName are read. */
plan_controller_t *plan_controller_new(uv_loop_t *loop, kube_http_t *http, cache_t *cache,
				       events_recorder_t *events, const char *namespace, bool dry_run);
/*
 * What the cluster serves (controller/discovery.c): the DeviceTaintRule
 * version to write, and the freeze modes a plan may ask for (a plan whose
 * mode the cluster cannot enforce is Invalid, saying what to enable). No
 * plan is reconciled before this is called.
 */
void plan_controller_set_apis(plan_controller_t *pc, const api_versions_t *apis, int kube_minor);
/* The leader elector gating writes; NULL: this process always writes (no election). */
void plan_controller_set_leader(plan_controller_t *pc, const leader_t *leader);
/*
 * Register the SLO gauges in r (drashift_slo_signal_value, _threshold,
 * _samples, _verdict, the plans' Prometheus queries among the signals;
 * drashift_plan_frozen), kept current by every reconcile and removed with
 * the plan, and the Prometheus query counters. Without it no metrics are kept.
 */
void plan_controller_set_metrics(plan_controller_t *pc, metrics_registry_t *r);
/*
 * Leadership was lost: forget what only a leader keeps (the plans' histories,
 * read again when leading again) and stop asking Prometheus.
 */
void plan_controller_stopped_leading(plan_controller_t *pc);
/* Every plan is looked at again (few plans, cheap): leadership was won, a write finished. */
void plan_controller_poke(plan_controller_t *pc);
/*
 * A cache changed (after its indexes followed): feed the SLO tracker (claims,
 * pods) and the nodes-by-pool index (nodes, plans), and queue what the change
 * concerns: a node, the plans whose pools select it before or after; anything
 * else, every plan.
 */
void plan_controller_observe(plan_controller_t *pc, cache_kind_t kind, const void *old, const void *new);
/* Stop; done runs from the loop once nothing is in flight and memory is freed. */
void plan_controller_close(plan_controller_t *pc, void (*done)(void *data), void *data);

#endif
