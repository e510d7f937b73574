#include "plan_controller.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api_versions.h"
#include "buf.h"
#include "capacity.h"
#include "driver_failures.h"
#include "freeze.h"
#include "handover.h"
#include "kube_api.h"
#include "log.h"
#include "node_owners.h"
#include "notifier.h"
#include "plan_history.h"
#include "plan_object.h"
#include "pool.h"
#include "plan_status.h"
#include "preflight.h"
#include "preflight_probe.h"
#include "pool_index.h"
#include "rfc3339.h"
#include "slo.h"
#include "prom_query.h"
#include "slo_tracker.h"
#include "strmap.h"
#include "timer.h"
#include "workqueue.h"
#include "xalloc.h"

/* How often orphaned nodes are counted even when nothing changes. */
#define PLAN_ORPHAN_CHECK_MS 5000

/* How long a write may stay unseen by the watch before the controller stops waiting for it. */
#define PLAN_EXPECTATION_TIMEOUT_MS 30000
/* Changes that arrive together are decided together: a reconcile runs at most this long after its plan is queued. */
#define PLAN_BATCH_MS 50
/*
 * ... but a ResourceSlice change is decided within this: a device leaving a
 * slice crosses capacityDrift by itself, and slices change seldom. At most
 * one such turn a batch, so a driver publishing every node's slice at once
 * at most doubles the turns.
 */
#define PLAN_URGENT_MS 5

/* A failing preflight reads the API again after this long, doubling up to the maximum. */
#define PLAN_PREFLIGHT_RETRY_MS 5000
#define PLAN_PREFLIGHT_RETRY_MAX_MS 60000
/* The Preflight condition's message holds 32768 bytes. */
#define PLAN_PREFLIGHT_MESSAGE_MAX 32000
/* The Quarantined condition lists nodes up to this many bytes, and counts the rest. */
#define PLAN_QUARANTINE_NAMES_MAX 30000

/*
 * A plan's preflight in this process: the last complete probe for the
 * generation it was read for, and when the next may start. A pass is
 * recorded in the plan's status (status.preflight), not here.
 */
typedef struct {
	int64_t generation;
	preflight_probe_t *facts; /* NULL: no probe answered yet for this generation */
	bool passed;              /* the last decision from them passed: no more probes (a dry run records nothing) */
	bool running;
	uint64_t next_ms; /* loop time */
	uint64_t backoff_ms;
} pc_preflight_t;

/*
 * One of the freeze's switches, per plan: the state this process wrote (or
 * "retry-at:<loop ms>" after a failed write) and why its last write failed,
 * shown in the Frozen condition until a write succeeds.
 */
typedef struct {
	strmap_t written;
	strmap_t errors;
	strmap_t writing; /* plans whose write is in flight (values unused) */
} pc_switch_t;

struct plan_controller {
	uv_loop_t *loop;
	kube_http_t *http;
	cache_t *cache;
	/* What the cluster serves (start-up discovery); no plan is reconciled before it is known. */
	bool apis_known;
	api_versions_t apis;
	int kube_minor;
	events_recorder_t *events;
	const leader_t *leader;
	bool dry_run;
	workqueue_t *queue;
	uv_timer_t timer;
	bool urgent;         /* the next turn comes within PLAN_URGENT_MS */
	uint64_t urgent_at;  /* when the last urgent turn was asked for */
	/* Node -> the step annotation our last patch wrote ("" for a removed record). */
	strmap_t expected;
	/* Plan -> the status our last write set (cJSON*): phase-change Events and status writes happen once. */
	strmap_t expected_status;
	uint64_t expected_since;
	int in_flight;
	int in_flight_status; /* of in_flight, the plan status writes */
	/*
	 * Plan -> {"uid", "breach"}: a breach judged while the plan's status
	 * writes were in flight (pc_judge_ahead), written to the freeze parameter
	 * and not yet to the status.
	 */
	strmap_t judged_ahead;
	slo_tracker_t *slo;
	/* Which pools select each node: members, conflicts, and the plans a node change concerns. */
	pool_index_t pools;
	/*
	 * The freeze's two switches: the admission parameter (written
	 * "frozen:<breach id>" or "lifted:<breach id>") and the DeviceTaintRule
	 * ("tainted:<breach id>" or "clear").
	 */
	pc_switch_t param, taint;
	/* The tenant boundary's parameter: the JSON last applied (or "retry-at:<loop ms>"). */
	pc_switch_t tenancy;
	/* The SLO gauges (NULL: none), and plan -> its pool names joined by '\x1f' that have series. */
	metrics_gauge_t *m_value, *m_threshold, *m_samples, *m_verdict, *m_frozen, *m_capacity;
	/* Pools by phase, nodes by step (per pool), and how long nodes stayed in each step. */
	metrics_gauge_t *m_pool_phase, *m_pool_nodes;
	metrics_histogram_t *m_step_seconds, *m_reconcile_seconds;
	/* The plans' histories (NULL in a dry run: it writes nothing). */
	plan_history_t *history;
	/* The plans' webhooks (NULL in a dry run: it sends nothing). */
	notifier_t *notifier;
	strmap_t metric_pools;
	/* Nodes by the plan their records name: what a plan holds, found without its selectors. */
	node_owners_t owners;
	/* Plan -> the resourceVersion a finalizer write was based on: not sent again until the plan changes. */
	strmap_t finalizer_sent;
	/* Orphaned nodes already reported in an Event (values unused), and their gauge. */
	strmap_t orphans_reported;
	/* Node -> the refusal last logged for it (its message): a refusal is logged when it starts or
	 * changes, not at every reconcile while a person has yet to act (its Events are aggregated). */
	strmap_t refusals;
	/* Plan -> when its status was last written (uint64_t *, loop ms): plan_status_observed_only. */
	strmap_t status_written;
	/* Node -> pc_node_rec_t *: what a reconcile read about it, until it or its pods, claims or slices change. */
	strmap_t node_recs;
	/* The wait after the last failed write (0: the last write succeeded); PLAN_WRITE_BACKOFF_*. */
	uint64_t write_backoff_ms;
	metrics_gauge_t *m_orphans;
	/*
	 * Counts orphans every PLAN_ORPHAN_CHECK_MS too (at start-up no change
	 * may come after the caches sync), and forgets what it kept about nodes
	 * and plans that are gone; orphans_soon counts them after a change.
	 */
	uv_timer_t orphan_timer, orphans_soon;
	/* Plan -> pc_preflight_t *, and the probes in flight (close waits for them). */
	strmap_t preflight;
	int probes;
	/* "plan\x1fpool" -> slo_capacity_t *: when each pool had no free DRA device (the latency judge's baseline). */
	strmap_t capacity;
	/* Plan -> its pools' SLO samples (slo_tracker_view_t*), kept up to date between reconciles. */
	strmap_t slo_views;
	/* Plan -> its pools' members (pc_members_t*), kept up to date between reconciles. */
	strmap_t members;
	/* The plans' Prometheus queries, asked on the loop; and plan -> the query names that have series. */
	prom_query_t *prom;
	strmap_t metric_queries;
	bool closing;
	void (*closed)(void *);
	void *closed_data;
};

typedef struct {
	plan_controller_t *pc;
	char *node; /* a node patch: its expectation */
	char *plan; /* a status write: its expectation */
	pc_switch_t *sw;  /* a freeze switch's write: written again if it fails */
	char *switch_plan; /* ... for this plan */
	bool missing_ok;   /* a delete: 404 means done */
	char *finalizer_plan; /* a finalizer write: sent again after a failure */
	notifier_batch_t *notes; /* a status write: the notifications it records, sent once it is written */
	cJSON *then_freeze; /* a status write that records a new breach: the breach, frozen once it is written */
	char *what;
	uint64_t sent; /* loop time it was sent: the API server's answer time is logged at debug level */
	const char *done;     /* a switch's write: logged at info once the API server has taken it */
	const char *done_key; /* ... with done_key=done_value (the breach, the tenancy stage) */
	char *done_value;
} pc_write_t;

static void pc_write_free(pc_write_t *w)
{
	cJSON_Delete(w->then_freeze);
	notifier_batch_free(w->notes);
	free(w->node);
	free(w->plan);
	free(w->switch_plan);
	free(w->done_value);
	free(w->finalizer_plan);
	free(w->what);
	free(w);
}

static void plan_controller_schedule(plan_controller_t *pc);
static void pc_poke_after(plan_controller_t *pc, uint64_t delay_ms);

static int64_t pc_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void pc_format_time(int64_t ms, char *buf, size_t len)
{
	rfc3339_format(ms * 1000, 0, buf, len);
}

/* A time the status recorded, in ms; 0 when absent or unreadable. */
static int64_t pc_parse_time(const cJSON *v)
{
	int64_t us;
	return cJSON_IsString(v) && rfc3339_parse(v->valuestring, &us) == 0 ? us / 1000 : 0;
}

static bool pc_may_write(const plan_controller_t *pc)
{
	return pc->leader == NULL || leader_is_leader(pc->leader);
}

/* ---- writes -------------------------------------------------------------- */

/* Forget a plan's entries (plan NULL: every plan's). */
static void pc_switch_forget(pc_switch_t *sw, const char *plan)
{
	if (plan == NULL) {
		strmap_clear(&sw->written, free);
		strmap_clear(&sw->errors, free);
		strmap_clear(&sw->writing, NULL);
		return;
	}
	free(strmap_remove(&sw->written, plan));
	free(strmap_remove(&sw->errors, plan));
	strmap_remove(&sw->writing, plan);
}

/* How long a failed freeze write waits before it is tried again. */
#define PLAN_FREEZE_RETRY_MS 5000

/*
 * After a write that failed (not a conflict: the cluster changed, decide
 * again at once), the next reconcile waits 0.5 s, doubling to 30 s while
 * writes keep failing; a write that succeeds resets it. An API server that
 * is down answers at once, and was asked again every 50 ms (tools/faults:
 * 45 failed writes in 15 s of an apiserver restart, a log line each).
 */
#define PLAN_WRITE_BACKOFF_MIN_MS 500
#define PLAN_WRITE_BACKOFF_MAX_MS 30000

/* A status that differs only in what was observed is written at most this often per plan. */
#define PLAN_STATUS_OBSERVED_MS 1000

/*
 * Whether a switch's record says to wait: a failed write's "retry-at:<loop
 * ms>" not yet due. When it does, the plan is queued for when it is due: the
 * requeue made when the write failed can run a moment early, and no other
 * event may come (fleetsim writing every node every 10 s hid this;
 * tenancy_hold).
 */
static bool pc_freeze_retry_pending(plan_controller_t *pc, const char *plan, const char *had)
{
	const char *prefix = "retry-at:";
	if (had == NULL || strncmp(had, prefix, strlen(prefix)) != 0)
		return false;
	uint64_t at = strtoull(had + strlen(prefix), NULL, 10), now = uv_now(pc->loop);
	if (now >= at)
		return false;
	workqueue_add_after(pc->queue, plan, at - now + 1, now);
	return true;
}

static void pc_assert_freeze(plan_controller_t *pc, const plan_object_t *po, const cJSON *breach, bool frozen);

static void pc_on_write(const kube_http_response_t *resp, void *data)
{
	pc_write_t *w = data;
	plan_controller_t *pc = w->pc;
	pc->in_flight--;
	if (w->plan)
		pc->in_flight_status--;
	char took[24];
	snprintf(took, sizeof(took), "%" PRIu64, uv_now(pc->loop) - w->sent);
	log_debug("write answered", "what", w->what, "node", w->node ? w->node : "", "status",
		  resp->error ? "failed" : "ok", "ms", took);
	if (w->sw)
		strmap_remove(&w->sw->writing, w->switch_plan);
	uint64_t retry_ms = 0;
	if (resp->error && !(w->missing_ok && resp->status == 404)) {
		if (w->node && resp->status == 409) { /* a handover start is conditional on the node it read */
			log_info("node changed since it was read; deciding again", "what", w->what, "node", w->node);
		} else if (w->node && resp->status == 422 && strstr(resp->error, "metadata.uid") != NULL) {
			/* Every node patch names the object's uid (reconcilers/handover.c): the API refuses it
			 * as an immutable field when the name now belongs to a node registered again. */
			log_info("node was deleted and registered again since it was read; deciding again", "what",
				 w->what, "node", w->node);
		} else {
			pc->write_backoff_ms = pc->write_backoff_ms == 0 ? PLAN_WRITE_BACKOFF_MIN_MS
					       : pc->write_backoff_ms >= PLAN_WRITE_BACKOFF_MAX_MS / 2
						       ? PLAN_WRITE_BACKOFF_MAX_MS
						       : 2 * pc->write_backoff_ms;
			retry_ms = pc->write_backoff_ms;
			char in[24];
			snprintf(in, sizeof(in), "%" PRIu64, retry_ms);
			log_error("write failed; deciding again from what the cluster shows", "what", w->what, "error",
				  resp->error, "retry_in_ms", in);
		}
		if (w->node)
			free(strmap_remove(&pc->expected, w->node));
		if (w->plan)
			cJSON_Delete(strmap_remove(&pc->expected_status, w->plan));
		if (w->finalizer_plan)
			free(strmap_remove(&pc->finalizer_sent, w->finalizer_plan));
		/*
		 * A freeze switch that failed is written again after a pause, not
		 * at the next change: an API that refuses it for good (RBAC, a
		 * cluster without DeviceTaintRules) must not turn every claim
		 * event into another request.
		 */
		if (w->sw) {
			uint64_t now = uv_now(pc->loop);
			free(strmap_put(&w->sw->written, w->switch_plan,
					xasprintf("retry-at:%" PRIu64, now + PLAN_FREEZE_RETRY_MS)));
			free(strmap_put(&w->sw->errors, w->switch_plan, xasprintf("%s failed: %s", w->what, resp->error)));
			workqueue_add_after(pc->queue, w->switch_plan, PLAN_FREEZE_RETRY_MS, now);
		}
	} else {
		pc->write_backoff_ms = 0;
		if (w->sw) {
			free(strmap_remove(&w->sw->errors, w->switch_plan));
			/* Logged when in force, not when asked for: with the write's time, the part of
			 * breach -> denial the API server took (tools/bench freeze reads it). */
			log_info(w->done, "plan", w->switch_plan, w->done_key, w->done_value, "write_ms", took);
		} else if (w->notes) {
			notifier_send(pc->notifier, w->notes);
			w->notes = NULL;
		}
		/*
		 * The breach is recorded: freeze now rather than after the watch
		 * shows the status and the next reconcile decides the same (the
		 * plan's spec, not its status, says how).
		 */
		const plan_object_t *po = w->then_freeze ? store_get(cache_store(pc->cache, CACHE_PLANS), NULL, w->plan) : NULL;
		if (po)
			pc_assert_freeze(pc, po, w->then_freeze, true);
	}
	pc_write_free(w);
	pc_poke_after(pc, retry_ms);
}

static pc_write_t *pc_write_new(plan_controller_t *pc, const char *node, const char *what)
{
	pc_write_t *w = xcalloc(1, sizeof(*w));
	w->pc = pc;
	w->node = node ? xstrdup(node) : NULL;
	w->what = xstrdup(what);
	w->sent = uv_now(pc->loop);
	return w;
}

/* A write of one of plan's switches: done is logged, with key=value, once the API server has taken it. */
static pc_write_t *pc_switch_write(plan_controller_t *pc, pc_switch_t *sw, const char *plan, const char *what,
				   const char *done, const char *key, const char *value)
{
	pc_write_t *w = pc_write_new(pc, NULL, what);
	w->sw = sw;
	w->switch_plan = xstrdup(plan);
	w->done = done;
	w->done_key = key;
	w->done_value = xstrdup(value);
	return w;
}

static void pc_node_event(plan_controller_t *pc, const plan_object_t *po, const projection_node_t *node,
			    const handover_decision_t *d)
{
	events_object_ref_t ref = { .api_version = "v1", .kind = "Node", .name = node->meta.name, .uid = node->meta.uid };
	events_emit(pc->events, &ref, d->warning ? "Warning" : "Normal", d->reason, "Handover", "%s", d->message);
	events_object_ref_t plan = { .api_version = "drashift.io/v1alpha1", .kind = "MigrationPlan", .name = po->meta.name,
				     .uid = po->meta.uid };
	events_emit(pc->events, &plan, d->warning ? "Warning" : "Normal", d->reason, "Handover", "%s", d->message);
}

/* Carry out one node decision. Returns true when a write was started. */
static bool pc_execute(plan_controller_t *pc, const plan_object_t *po, const projection_node_t *node,
			 const handover_decision_t *d)
{
	if (d->act != HANDOVER_ACT_REFUSE)
		free(strmap_remove(&pc->refusals, node->meta.name));
	if (d->act == HANDOVER_ACT_NONE)
		return false;
	if (d->act == HANDOVER_ACT_REFUSE) {
		const char *logged = strmap_get(&pc->refusals, node->meta.name);
		if (logged == NULL || strcmp(logged, d->message) != 0) {
			log_warn("node refused", "plan", po->meta.name, "node", node->meta.name, "reason", d->reason,
				 "detail", d->message);
			free(strmap_put(&pc->refusals, node->meta.name, xstrdup(d->message)));
		}
		if (!pc->dry_run)
			pc_node_event(pc, po, node, d);
		return false;
	}
	if (pc->dry_run) {
		log_info("dry run: would act", "plan", po->meta.name, "node", node->meta.name, "reason", d->reason,
			 "patch", d->patch ? d->patch : "", "evict", d->evict_name ? d->evict_name : "");
		return false;
	}
	if (d->act == HANDOVER_ACT_PATCH) {
		log_info("node step", "plan", po->meta.name, "node", node->meta.name, "from", handover_step_name(d->from),
			 "to", handover_step_name(d->to), "reason", d->reason);
		char *path = kube_path("v1", "nodes", NULL, node->meta.name, NULL);
		pc_write_t *w = pc_write_new(pc, node->meta.name, "node patch");
		/* Expect the record our patch writes: decide again only once the watch shows it. */
		bool cleared = d->to == HANDOVER_LEGACY;
		free(strmap_put(&pc->expected, node->meta.name, xstrdup(cleared ? "" : handover_step_name(d->to))));
		pc->expected_since = uv_now(pc->loop);
		if (kube_merge_patch(pc->http, path, d->patch, pc_on_write, w) == 0) {
			pc->in_flight++;
		} else {
			free(strmap_remove(&pc->expected, node->meta.name));
			pc_write_free(w);
		}
		free(path);
		pc_node_event(pc, po, node, d);
		return true;
	}
	/* HANDOVER_ACT_EVICT */
	log_info("evicting", "plan", po->meta.name, "node", node->meta.name, "pod", d->evict_name, "namespace", d->evict_ns);
	pc_write_t *w = pc_write_new(pc, NULL, "eviction");
	if (kube_evict(pc->http, d->evict_ns, d->evict_name, pc_on_write, w) == 0) {
		pc->in_flight++;
	} else {
		pc_write_free(w);
	}
	pc_node_event(pc, po, node, d);
	return true;
}

/* ---- the snapshot ------------------------------------------------------- */

static const projection_claim_t *pc_claim_by_name(void *ctx, const char *namespace, const char *name)
{
	const plan_controller_t *pc = ctx;
	return store_get(cache_store(pc->cache, CACHE_CLAIMS), namespace, name);
}

/*
 * Who still uses devices on the node (handover_count_users decides): the
 * pods bound to it and the claims allocated on it from the plan's driver.
 * Free with handover_usage_free.
 */
static void pc_usage(const plan_controller_t *pc, const plan_t *plan, const plan_pool_t *pool, const char *node,
		     handover_usage_t *use)
{
	const strmap_t *pods = cache_index_get(&pc->cache->pods_by_node, node);
	char *node_driver = cache_node_driver_key(node, plan->driver);
	const strmap_t *held = cache_index_get(&pc->cache->claims_by_node_driver, node_driver);
	free(node_driver);
	handover_users_t in = { .plan = plan, .pool = pool, .claim = pc_claim_by_name, .claim_ctx = (void *)pc };
	const projection_pod_t **on_node = xcalloc(pods ? strmap_size(pods) + 1 : 1, sizeof(*on_node));
	const projection_claim_t **pinned = xcalloc(held ? strmap_size(held) + 1 : 1, sizeof(*pinned));
	size_t it = 0;
	void *v;
	while (pods && strmap_next(pods, &it, NULL, &v))
		on_node[in.n_pods++] = v;
	it = 0;
	while (held && strmap_next(held, &it, NULL, &v))
		pinned[in.n_pinned++] = v;
	in.pods = on_node;
	in.pinned = pinned;
	handover_count_users(&in, use);
	free(on_node);
	free(pinned);
}

/* The driver's slices for a node, borrowed from the cache (free the array). */
static size_t pc_node_slices(const plan_controller_t *pc, const plan_t *plan, const char *node,
			     const projection_slice_t ***out)
{
	char *node_driver = cache_node_driver_key(node, plan->driver);
	const strmap_t *slices = cache_index_get(&pc->cache->slices_by_node_driver, node_driver);
	free(node_driver);
	size_t it = 0, n = 0;
	void *v;
	*out = slices ? xcalloc(strmap_size(slices) + 1, sizeof(**out)) : NULL;
	while (slices && strmap_next(slices, &it, NULL, &v))
		(*out)[n++] = v;
	return n;
}

/* What the node's owners advertise: allocatable of the pool's legacy resources, and the driver's slices. */
static void pc_ads(const plan_controller_t *pc, const plan_t *plan, const plan_pool_t *pool,
		   const projection_node_t *node, handover_ads_t *ads)
{
	memset(ads, 0, sizeof(*ads));
	bool known;
	ads->allocatable = capacity_legacy_sum(plan, pool, node->allocatable, node->n_allocatable, &ads->allocatable_known);
	ads->capacity = capacity_legacy_sum(plan, pool, node->capacity, node->n_capacity, &known);
	const projection_slice_t **slices;
	size_t n = pc_node_slices(pc, plan, node->meta.name, &slices);
	capacity_slices_t count;
	capacity_count_slices(slices, n, &count);
	free(slices);
	ads->slices_present = count.present;
	ads->slices_complete = count.complete;
	ads->slice_devices = count.physical;
	ads->slice_listed = count.listed;
}

/* ---- status --------------------------------------------------------------- */

static void pc_condition(cJSON *conds, const cJSON *old_status, const char *type, bool status, const char *reason,
			   const char *message, int64_t generation, const char *now)
{
	const char *when = now;
	const cJSON *old;
	cJSON_ArrayForEach(old, cJSON_GetObjectItemCaseSensitive(old_status, "conditions"))
	{
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(old, "type");
		const cJSON *s = cJSON_GetObjectItemCaseSensitive(old, "status");
		const cJSON *lt = cJSON_GetObjectItemCaseSensitive(old, "lastTransitionTime");
		if (cJSON_IsString(t) && strcmp(t->valuestring, type) == 0 && cJSON_IsString(s) &&
		    strcmp(s->valuestring, status ? "True" : "False") == 0 && cJSON_IsString(lt))
			when = lt->valuestring; /* unchanged: keep when it last changed */
	}
	cJSON *c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "type", type);
	cJSON_AddStringToObject(c, "status", status ? "True" : "False");
	cJSON_AddNumberToObject(c, "observedGeneration", (double)generation);
	cJSON_AddStringToObject(c, "lastTransitionTime", when);
	cJSON_AddStringToObject(c, "reason", reason);
	cJSON_AddStringToObject(c, "message", message);
	cJSON_AddItemToArray(conds, c);
}

/*
 * Write a plan's status; notes (may be NULL; taken) are sent once it is
 * written, and then_freeze (may be NULL; taken), a new breach the status
 * records, is frozen then. Returns 0, or the ms after which a status that
 * differs only in what was observed may be written (it waits until then).
 */
static uint64_t pc_write_status(plan_controller_t *pc, const plan_object_t *po, cJSON *status, notifier_batch_t *notes,
				cJSON *then_freeze)
{
	uint64_t now = uv_now(pc->loop);
	const uint64_t *last = strmap_get(&pc->status_written, po->meta.name);
	bool same = po->status && cJSON_Compare(po->status, status, true);
	uint64_t wait = !same && last && now < *last + PLAN_STATUS_OBSERVED_MS && notes == NULL && then_freeze == NULL &&
					plan_status_observed_only(po->status, status)
				? *last + PLAN_STATUS_OBSERVED_MS - now
				: 0;
	if (same || wait) {
		cJSON_Delete(status);
		cJSON_Delete(then_freeze);
		notifier_batch_free(notes);
		return wait;
	}
	/* The status as a whole: what the previous status had and this one lacks is removed (null). */
	cJSON *patch = cJSON_CreateObject();
	cJSON_AddItemToObject(patch, "status", kube_merge_patch_diff(po->status, status));
	char *body = cJSON_PrintUnformatted(patch);
	cJSON_Delete(patch);
	if (pc->dry_run) {
		log_info("dry run: would write status", "plan", po->meta.name, "status", body);
		free(body);
		cJSON_Delete(status);
		cJSON_Delete(then_freeze);
		notifier_batch_free(notes);
		return 0;
	}
	char *path = kube_path("drashift.io/v1alpha1", "migrationplans", NULL, po->meta.name, "status");
	pc_write_t *w = pc_write_new(pc, NULL, "plan status");
	w->plan = xstrdup(po->meta.name);
	w->notes = notes;
	w->then_freeze = then_freeze;
	cJSON_Delete(strmap_put(&pc->expected_status, po->meta.name, status));
	pc->expected_since = now;
	if (kube_merge_patch(pc->http, path, body, pc_on_write, w) == 0) {
		pc->in_flight++;
		pc->in_flight_status++;
		uint64_t *at = xmalloc(sizeof(*at));
		*at = now;
		free(strmap_put(&pc->status_written, po->meta.name, at));
	} else {
		cJSON_Delete(strmap_remove(&pc->expected_status, po->meta.name));
		pc_write_free(w);
	}
	free(path);
	free(body);
	return 0;
}

static void pc_status_invalid(plan_controller_t *pc, const plan_object_t *po, const char *why)
{
	char now[RFC3339_LEN];
	pc_format_time(pc_now_ms(), now, sizeof(now));
	/*
	 * Keep everything else that was recorded: the pools' records (a fixed
	 * spec resumes from them) and a breach (an invalid spec lifts no freeze).
	 */
	cJSON *st = cJSON_IsObject(po->status) ? cJSON_Duplicate(po->status, true) : cJSON_CreateObject();
	const char *replaced[] = { "activity", "phase", "observedGeneration", "conditions" };
	for (size_t i = 0; i < sizeof(replaced) / sizeof(replaced[0]); i++)
		cJSON_DeleteItemFromObjectCaseSensitive(st, replaced[i]);
	char *activity = xasprintf("Invalid: %s; drashift does nothing for the plan until it is fixed. Action: fix the "
				   "spec (kubectl edit migrationplan %s)",
				   why, po->meta.name);
	cJSON_AddStringToObject(st, "activity", activity);
	free(activity);
	cJSON_AddStringToObject(st, "phase", "Invalid");
	cJSON_AddNumberToObject(st, "observedGeneration", (double)po->generation);
	cJSON *conds = cJSON_AddArrayToObject(st, "conditions");
	pc_condition(conds, po->status, "Invalid", true, "SpecInvalid", why, po->generation, now);
	pc_condition(conds, po->status, "Ready", false, "SpecInvalid",
		     "the plan is invalid; nothing is done until the spec is fixed (the Invalid condition says where)",
		     po->generation, now);
	pc_write_status(pc, po, st, NULL, NULL);
}

/* ---- one plan ------------------------------------------------------------- */

typedef struct pc_node_rec pc_node_rec_t;

typedef struct {
	pool_member_t *members; /* sorted by node name; this and recs and ads are the plan's pc_members_t's */
	pc_node_rec_t **recs;   /* per member: its record (pc_node_rec), valid for this reconcile */
	size_t n;
	pool_output_t out;
	pool_record_t record;
	const char **canary_names;
	handover_ads_t *ads; /* per member: what its owners advertise (its record's) */
	capacity_view_t capacity; /* the pool's devices by state, in plugin units and DRA devices */
	slo_result_t signals[SLO_MAX_RESULTS]; /* the built-in signals, then the plan's Prometheus queries */
	size_t n_signals;
	slo_verdict_t gate;
	const slo_result_t *breach;
	char *gate_waiting; /* the first signal keeping the gate from a Pass; NULL when none */
	bool preflight_held; /* its start waits for preflight */
	driver_failure_decision_t *failures; /* per member: its driver failure classes and quarantine */
	uint32_t by_class[DRIVER_FAILURE_CLASSES]; /* members in each class */
	uint32_t failing_nodes; /* members not quarantined yet in permanent or needsCleanup: driverErrors */
} pc_pool_run_t;

/*
 * The driver's devices that claims allocated on a node hold (*held), and the
 * physical devices they are (returned: a MIG placement counts its GPU once).
 */
static int64_t pc_dra_allocated(const plan_controller_t *pc, const plan_t *plan, const char *node, int64_t *held_devices)
{
	const projection_slice_t **slices;
	size_t n = pc_node_slices(pc, plan, node, &slices);
	char *node_driver = cache_node_driver_key(node, plan->driver);
	const strmap_t *held = cache_index_get(&pc->cache->claims_by_node_driver, node_driver);
	free(node_driver);
	strmap_t used = STRMAP_INIT;
	size_t it = 0;
	void *v;
	while (held && strmap_next(held, &it, NULL, &v)) {
		const projection_claim_t *claim = v;
		for (size_t r = 0; claim->allocated && r < claim->n_results; r++) {
			const projection_device_result_t *res = &claim->results[r];
			if (res->driver == NULL || strcmp(res->driver, plan->driver) != 0)
				continue;
			(*held_devices)++;
			if (res->pool == NULL || res->device == NULL)
				continue;
			const char *key = capacity_physical_key(slices, n, res->pool, res->device);
			char *k = xasprintf("%s/%s", res->pool, key ? key : res->device);
			strmap_put(&used, k, NULL);
			free(k);
		}
	}
	int64_t count = (int64_t)strmap_size(&used);
	strmap_clear(&used, NULL);
	free(slices);
	return count;
}

/*
 * What a reconcile reads about a member node from the caches: its handover
 * record, what its owners advertise, and what its pods and claims hold. Kept
 * until the node, a pod bound to it, a claim allocated on it or one of its
 * slices changes (pc_node_changed forgets it), or the plan's spec or the
 * node's pool does (kept with it: the plan's uid and generation, the pool's
 * name). Reading all of it again for every member at every reconcile was a
 * fifth of a reconcile's time at 1,000 nodes (tools/bench scale); a change now
 * costs the reading of the nodes it touched. state points into the node's projection,
 * which outlives the record: a change of the node forgets both. What takes a
 * walk of the node's pods or claims is read when first asked for (known).
 * One block with its strings, freed with free().
 */
enum { PC_REC_LEGACY = 1, PC_REC_DRA = 2 };

struct pc_node_rec {
	handover_state_t state;
	handover_ads_t ads;
	unsigned known; /* PC_REC_LEGACY, PC_REC_DRA: which of the values below are read */
	/* PC_REC_LEGACY: capacity_legacy (advertised units, the devices they stand for), and the pool's legacy
	 * units and the plan's extended resource that unfinished pods request */
	int64_t legacy_units, legacy_devices, legacy_allocated, legacy_used;
	/* PC_REC_DRA: the driver's devices that allocated claims hold, and the physical devices they are */
	int64_t dra_held, dra_allocated;
	int64_t generation;
	char *plan_uid, *pool;
	/* The step and step-since last told to the plan's history, at plan_history_epoch told_epoch (told: any). */
	bool told;
	handover_step_t told_step;
	int64_t told_since_ms;
	uint64_t told_epoch;
};

/* The member's record for po's pool, read again when missing or read for another plan, spec or pool. */
static pc_node_rec_t *pc_node_rec(plan_controller_t *pc, const plan_object_t *po, const plan_pool_t *pool,
				  const projection_node_t *node)
{
	const char *uid = po->meta.uid ? po->meta.uid : "";
	pc_node_rec_t *rec = strmap_get(&pc->node_recs, node->meta.name);
	if (rec != NULL && rec->generation == po->generation && strcmp(rec->plan_uid, uid) == 0 &&
	    strcmp(rec->pool, pool->name) == 0)
		return rec;
	size_t n_uid = strlen(uid) + 1, n_pool = strlen(pool->name) + 1;
	rec = xcalloc(1, sizeof(*rec) + n_uid + n_pool);
	rec->generation = po->generation;
	rec->plan_uid = memcpy((char *)(rec + 1), uid, n_uid);
	rec->pool = memcpy(rec->plan_uid + n_uid, pool->name, n_pool);
	handover_read(&po->plan, node, &rec->state);
	pc_ads(pc, &po->plan, pool, node, &rec->ads);
	free(strmap_put(&pc->node_recs, node->meta.name, rec));
	return rec;
}

static void pc_members_stale(plan_controller_t *pc, const char *node);

/* A change of kind touched these nodes: forget their records. */
static void pc_node_changed(plan_controller_t *pc, cache_kind_t kind, const void *old, const void *new)
{
	const void *objs[] = { old, new };
	for (size_t i = 0; i < 2; i++) {
		const char *node = NULL;
		if (objs[i] == NULL)
			continue;
		if (kind == CACHE_NODES)
			node = ((const projection_node_t *)objs[i])->meta.name;
		else if (kind == CACHE_PODS)
			node = cache_pod_node(objs[i]);
		else if (kind == CACHE_CLAIMS)
			node = ((const projection_claim_t *)objs[i])->node_name;
		else if (kind == CACHE_SLICES)
			node = ((const projection_slice_t *)objs[i])->node_name;
		pc_node_rec_t *rec = node ? strmap_remove(&pc->node_recs, node) : NULL;
		if (rec != NULL) {
			free(rec);
			pc_members_stale(pc, node);
		}
	}
}

/* The record's legacy values: its capacity from labels, and what its unfinished pods request. */
static const pc_node_rec_t *pc_rec_legacy(const plan_controller_t *pc, const plan_t *plan, const plan_pool_t *pool,
					  const projection_node_t *node, pc_node_rec_t *rec)
{
	if (rec->known & PC_REC_LEGACY)
		return rec;
	capacity_legacy_t legacy;
	capacity_legacy(plan, pool, node, &legacy);
	rec->legacy_units = legacy.units;
	rec->legacy_devices = legacy.devices;
	capacity_legacy_free(&legacy);
	const strmap_t *pods = cache_index_get(&pc->cache->pods_by_node, node->meta.name);
	size_t it = 0;
	void *v;
	bool known;
	while (pods && strmap_next(pods, &it, NULL, &v)) {
		const projection_pod_t *pod = v;
		int64_t count = 0;
		if (pod->phase == PROJECTION_POD_SUCCEEDED || pod->phase == PROJECTION_POD_FAILED)
			continue;
		rec->legacy_allocated += capacity_legacy_sum(plan, pool, pod->requests, pod->n_requests, &known);
		if (projection_quantity_find(pod->requests, pod->n_requests, plan->extended_resource, &count))
			rec->legacy_used += count;
	}
	rec->known |= PC_REC_LEGACY;
	return rec;
}

/* The record's DRA values: the driver's devices its allocated claims hold, and the physical devices they are. */
static const pc_node_rec_t *pc_rec_dra(const plan_controller_t *pc, const plan_t *plan, const projection_node_t *node,
				       pc_node_rec_t *rec)
{
	if (rec->known & PC_REC_DRA)
		return rec;
	rec->dra_allocated = pc_dra_allocated(pc, plan, node->meta.name, &rec->dra_held);
	rec->known |= PC_REC_DRA;
	return rec;
}

/*
 * The pool's capacity history for the latency judge: when its first node
 * reached DRA (the step time recorded on the nodes), and whether its DRA
 * nodes have a device no claim holds now.
 */
static const slo_capacity_t *pc_observe_capacity(plan_controller_t *pc, const plan_t *plan, const pc_pool_run_t *run,
						 const char *pool, int64_t now)
{
	char *key = xjoin(plan->name, '\x1f', pool);
	slo_capacity_t *c = strmap_get(&pc->capacity, key);
	if (c == NULL) {
		c = xcalloc(1, sizeof(*c));
		strmap_put(&pc->capacity, key, c);
	}
	free(key);
	int64_t first = 0, free_devices = 0;
	for (size_t m = 0; m < run->n; m++) {
		const pool_member_t *mem = &run->members[m];
		if (mem->state.step != HANDOVER_DRA)
			continue;
		if (mem->state.since_ms > 0 && (first == 0 || mem->state.since_ms < first))
			first = mem->state.since_ms;
		free_devices += run->ads[m].slice_devices - pc_rec_dra(pc, plan, mem->node, run->recs[m])->dra_held;
	}
	slo_capacity_observe(c, first, free_devices, now, now - (int64_t)plan->slo.window_ms);
	return c;
}

/*
 * Judge a pool's SLO signals from the tracker's samples and the nodes'
 * records: capacity drift of DRA nodes (the driver's physical devices against
 * what the plugin's units stood for), ownership fights (both labels on) and failed steps.
 */
static void pc_judge_pool(plan_controller_t *pc, const plan_t *plan, pc_pool_run_t *run, const char *pool,
			  int64_t now, const slo_sample_t *samples, size_t n_samples, const slo_result_t *queries,
			  size_t n_queries)
{
	slo_node_devices_t *on_dra = xcalloc(run->n + 1, sizeof(*on_dra));
	size_t n_dra = 0;
	uint32_t fights = 0, failed = 0;
	for (size_t m = 0; m < run->n; m++) {
		const pool_member_t *mem = &run->members[m];
		if (mem->state.plugin_enabled && mem->state.dra_enabled)
			fights++;
		if (mem->state.step == HANDOVER_FAILED)
			failed++;
		if (mem->state.step == HANDOVER_DRA)
			on_dra[n_dra++] = (slo_node_devices_t){
				.expected = handover_expected_devices(&mem->state),
				.published = run->ads[m].slice_devices,
				.incomplete = run->ads[m].slices_present && !run->ads[m].slices_complete
			};
	}
	uint32_t unknown;
	int64_t drift = slo_capacity_drift(on_dra, n_dra, &unknown);
	free(on_dra);
	slo_input_t in = { .slo = &plan->slo, .samples = samples, .n_samples = n_samples, .capacity_drift = drift,
			   .drift_unknown = unknown,
			   .fights = fights, .failed_steps = failed, .failing_nodes = run->failing_nodes,
			   .capacity = pc_observe_capacity(pc, plan, run, pool, now), .now_ms = now };
	slo_judge(&in, run->signals);
	/* The plan's queries join every pool's gate: a breach freezes, an error or no data holds a pass. */
	memcpy(&run->signals[SLO_SIGNALS], queries, n_queries * sizeof(*queries));
	run->n_signals = SLO_SIGNALS + n_queries;
	run->gate = slo_gate(run->signals, run->n_signals, &run->breach);
	for (size_t i = 0; i < run->n_signals && run->gate == SLO_INCONCLUSIVE; i++)
		if (run->signals[i].verdict == SLO_INCONCLUSIVE) {
			const slo_result_t *s = &run->signals[i];
			run->gate_waiting = s->detail ? xasprintf("%s: %s", s->name, s->detail)
						      : xasprintf("%s has %u of %u samples in the window", s->name, s->samples,
								  plan->slo.min_samples ? plan->slo.min_samples : 1);
			break;
		}
}

/* The pool's capacity view: each member counted by its owner, in both units (reconcilers/capacity.h). */
static void pc_capacity(const plan_controller_t *pc, const plan_t *plan, const plan_pool_t *pool, pc_pool_run_t *run)
{
	memset(&run->capacity, 0, sizeof(run->capacity));
	for (size_t m = 0; m < run->n; m++) {
		const pool_member_t *mem = &run->members[m];
		const projection_node_t *node = mem->node;
		const handover_state_t *st = &mem->state;
		const handover_ads_t *ads = &run->ads[m];
		capacity_node_t cn = {
			.in_handover = handover_step_in_flight(st->step),
			.unavailable = st->step == HANDOVER_FAILED || node->unschedulable || node->tainted ||
				       node->ready != PROJECTION_CONDITION_TRUE,
			.dra_owned = st->step == HANDOVER_DRA,
		};
		if (st->legacy_devices > 0 && handover_expected_devices(st) > 0) {
			cn.units_per = st->legacy_devices;
			cn.devices_per = handover_expected_devices(st);
		}
		if (cn.dra_owned) {
			cn.total = ads->slice_devices;
			cn.allocated = pc_rec_dra(pc, plan, node, run->recs[m])->dra_allocated;
		} else if (cn.in_handover || st->step == HANDOVER_FAILED) {
			cn.total = st->legacy_devices > 0 ? st->legacy_devices : ads->allocatable;
		} else {
			const pc_node_rec_t *rec = pc_rec_legacy(pc, plan, pool, node, run->recs[m]);
			if (rec->legacy_devices > 0) {
				cn.units_per = rec->legacy_units;
				cn.devices_per = rec->legacy_devices;
			}
			cn.total = ads->allocatable;
			cn.allocated = rec->legacy_allocated;
		}
		capacity_view_add(&run->capacity, &cn);
	}
}

/* ---- metrics --------------------------------------------------------------- */

static const slo_verdict_t pc_verdicts[] = { SLO_PASS, SLO_BREACH, SLO_INCONCLUSIVE, SLO_UNJUDGED };
static const char *const pc_capacity_units[] = { "legacyUnits", "draDevices" };

void plan_controller_set_metrics(plan_controller_t *pc, metrics_registry_t *r)
{
	if (pc->notifier)
		notifier_set_metrics(pc->notifier, r);
	pc->m_value = metrics_gauge_new(r, "drashift_slo_signal_value",
					"An SLO signal as last measured for a pool, in its unit: ms for latencies, percent "
					"for failures, a Prometheus query's own unit, a count otherwise.",
					"plan", "pool", "signal", NULL);
	pc->m_threshold = metrics_gauge_new(r, "drashift_slo_signal_threshold",
					    "The plan's threshold for an SLO signal, in the signal's unit.", "plan", "pool",
					    "signal", NULL);
	pc->m_samples = metrics_gauge_new(r, "drashift_slo_signal_samples",
					  "Samples an SLO signal was computed from (0 for counted signals).", "plan", "pool",
					  "signal", NULL);
	pc->m_verdict = metrics_gauge_new(r, "drashift_slo_signal_verdict",
					  "1 for an SLO signal's current verdict (Pass, Breach, Inconclusive, NotJudged), 0 "
					  "for the others.",
					  "plan", "pool", "signal", "verdict", NULL);
	pc->m_frozen = metrics_gauge_new(r, "drashift_plan_frozen",
					 "1 while an unacknowledged SLO breach freezes the plan.", "plan", NULL);
	pc->m_pool_phase = metrics_gauge_new(r, "drashift_pool_phase",
					     "1 for a pool's current phase (Legacy, Canary, Expanding, DRA, Paused, Frozen, "
					     "RollingBack, Failed), 0 for the others.",
					     "plan", "pool", "phase", NULL);
	pc->m_pool_nodes = metrics_gauge_new(r, "drashift_pool_nodes",
					     "Nodes of a pool by their handover step (legacy, draining, ..., dra, failed).",
					     "plan", "pool", "step", NULL);
	static const double step_buckets[] = { 1, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200 };
	pc->m_step_seconds = metrics_histogram_new(r, "drashift_node_step_duration_seconds",
						   "How long nodes stayed in a handover step before the next one, by the "
						   "step they left, as the plan's history recorded it.",
						   step_buckets, sizeof(step_buckets) / sizeof(step_buckets[0]), "step",
						   NULL);
	static const double reconcile_buckets[] = { 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1 };
	pc->m_reconcile_seconds = metrics_histogram_new(r, "drashift_reconcile_duration_seconds",
							"How long one reconcile of a plan took, from reading the caches to "
							"sending its writes (the loop does nothing else meanwhile).",
							reconcile_buckets,
							sizeof(reconcile_buckets) / sizeof(reconcile_buckets[0]), NULL);
	pc->m_capacity = metrics_gauge_new(r, "drashift_pool_capacity",
					   "A pool's devices by state (idle, allocated, unavailable, inHandover), in the device "
					   "plugin's units (legacyUnits) and in the DRA driver's physical devices (draDevices).",
					   "plan", "pool", "state", "unit", NULL);
	pc->m_orphans = metrics_gauge_new(r, "drashift_orphaned_nodes",
					  "Nodes carrying drashift's handover annotations that no MigrationPlan claims "
					  "(docs/operations.md says how to release them).",
					  NULL);
	metrics_gauge_set(pc->m_orphans, 0, NULL);
	prom_query_set_metrics(pc->prom, r);
}

static void pc_metrics_forget_signal(plan_controller_t *pc, const char *plan, const char *pool, const char *sig)
{
	metrics_gauge_remove(pc->m_value, plan, pool, sig, NULL);
	metrics_gauge_remove(pc->m_threshold, plan, pool, sig, NULL);
	metrics_gauge_remove(pc->m_samples, plan, pool, sig, NULL);
	for (size_t v = 0; v < sizeof(pc_verdicts) / sizeof(pc_verdicts[0]); v++)
		metrics_gauge_remove(pc->m_verdict, plan, pool, sig, slo_verdict_name(pc_verdicts[v]), NULL);
}

/* Drop every series of a plan (deleted, invalid, or its pools or queries changed). */
static void pc_metrics_forget(plan_controller_t *pc, const char *plan)
{
	char *pools = strmap_remove(&pc->metric_pools, plan);
	char *queries = strmap_remove(&pc->metric_queries, plan);
	if (pc->m_value == NULL || pools == NULL) {
		free(pools);
		free(queries);
		return;
	}
	for (char *pool = pools, *end; pool; pool = end ? end + 1 : NULL) {
		end = strchr(pool, '\x1f');
		if (end)
			*end = '\0';
		for (int k = 0; k < SLO_SIGNALS; k++)
			pc_metrics_forget_signal(pc, plan, pool, slo_signal_name((slo_signal_id_t)k));
		for (char *q = queries && queries[0] ? queries : NULL, *qend; q; q = qend ? qend + 1 : NULL) {
			qend = strchr(q, '\x1f');
			if (qend)
				*qend = '\0';
			pc_metrics_forget_signal(pc, plan, pool, q);
			if (qend)
				*qend = '\x1f';
		}
		for (int ph = 0; ph < POOL_PHASES; ph++)
			metrics_gauge_remove(pc->m_pool_phase, plan, pool, pool_phase_name((pool_phase_t)ph), NULL);
		for (int st = 0; st < HANDOVER_STEPS; st++)
			metrics_gauge_remove(pc->m_pool_nodes, plan, pool, handover_step_name((handover_step_t)st), NULL);
		for (int s = 0; s < CAPACITY_STATES; s++)
			for (size_t u = 0; u < sizeof(pc_capacity_units) / sizeof(pc_capacity_units[0]); u++)
				metrics_gauge_remove(pc->m_capacity, plan, pool, capacity_state_name((capacity_state_t)s),
						     pc_capacity_units[u], NULL);
	}
	metrics_gauge_remove(pc->m_frozen, plan, NULL);
	free(pools);
	free(queries);
}

static void pc_metrics_set(plan_controller_t *pc, const char *name, const plan_t *plan, const pc_pool_run_t *runs,
			     bool frozen)
{
	if (pc->m_value == NULL)
		return;
	size_t len = 1;
	for (size_t i = 0; i < plan->n_pools; i++)
		len += strlen(plan->pools[i].name) + 1;
	char *pools = xcalloc(len, 1);
	for (size_t i = 0; i < plan->n_pools; i++) {
		if (i > 0)
			strcat(pools, "\x1f");
		strcat(pools, plan->pools[i].name);
	}
	char *queries = xstrdup("");
	for (size_t i = 0; i < plan->slo.prometheus.n_queries; i++) {
		char *next = xasprintf("%s%s%s", queries, i ? "\x1f" : "", plan->slo.prometheus.queries[i].name);
		free(queries);
		queries = next;
	}
	const char *had = strmap_get(&pc->metric_pools, name);
	const char *had_queries = strmap_get(&pc->metric_queries, name);
	if ((had && strcmp(had, pools) != 0) || (had_queries && strcmp(had_queries, queries) != 0))
		pc_metrics_forget(pc, name);
	free(strmap_put(&pc->metric_pools, name, pools));
	free(strmap_put(&pc->metric_queries, name, queries));
	for (size_t i = 0; i < plan->n_pools; i++)
		for (size_t k = 0; k < runs[i].n_signals; k++) {
			const slo_result_t *r = &runs[i].signals[k];
			const char *pool = plan->pools[i].name;
			metrics_gauge_set(pc->m_value, r->value, name, pool, r->name, NULL);
			metrics_gauge_set(pc->m_threshold, r->threshold, name, pool, r->name, NULL);
			metrics_gauge_set(pc->m_samples, (double)r->samples, name, pool, r->name, NULL);
			for (size_t v = 0; v < sizeof(pc_verdicts) / sizeof(pc_verdicts[0]); v++)
				metrics_gauge_set(pc->m_verdict, r->verdict == pc_verdicts[v] ? 1 : 0, name, pool, r->name,
						  slo_verdict_name(pc_verdicts[v]), NULL);
		}
	for (size_t i = 0; i < plan->n_pools; i++) {
		const char *pool = plan->pools[i].name;
		size_t steps[HANDOVER_STEPS] = { 0 };
		for (size_t m = 0; m < runs[i].n; m++)
			if ((int)runs[i].members[m].state.step >= 0 && runs[i].members[m].state.step < HANDOVER_STEPS)
				steps[runs[i].members[m].state.step]++;
		for (int st = 0; st < HANDOVER_STEPS; st++)
			metrics_gauge_set(pc->m_pool_nodes, (double)steps[st], name, pool,
					  handover_step_name((handover_step_t)st), NULL);
		for (int ph = 0; ph < POOL_PHASES; ph++)
			metrics_gauge_set(pc->m_pool_phase, runs[i].out.phase == (pool_phase_t)ph ? 1 : 0, name, pool,
					  pool_phase_name((pool_phase_t)ph), NULL);
	}
	for (size_t i = 0; i < plan->n_pools; i++)
		for (int s = 0; s < CAPACITY_STATES; s++) {
			const char *state = capacity_state_name((capacity_state_t)s);
			metrics_gauge_set(pc->m_capacity, (double)runs[i].capacity.units[s], name, plan->pools[i].name,
					  state, pc_capacity_units[0], NULL);
			metrics_gauge_set(pc->m_capacity, (double)runs[i].capacity.devices[s], name, plan->pools[i].name,
					  state, pc_capacity_units[1], NULL);
		}
	metrics_gauge_set(pc->m_frozen, frozen ? 1 : 0, name, NULL);
}

/*
 * Keep the admission parameter in step with the recorded breach: frozen while
 * it is unacknowledged, lifted once acknowledged. The cached parameter says
 * what the API server holds (so a restart writes only when it differs);
 * pc->param.written covers a write the watch has not shown yet.
 */
static void pc_assert_parameter(plan_controller_t *pc, const plan_object_t *po, const cJSON *breach, bool frozen)
{
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(breach, "id");
	const char *breach_id = cJSON_IsString(id) ? id->valuestring : "";
	char *want = xasprintf("%s:%s", frozen ? "frozen" : "lifted", breach_id);
	const char *had = strmap_get(&pc->param.written, po->meta.name);
	char *param_name = freeze_parameter_name(po->meta.name);
	const freeze_parameter_t *param = store_get(cache_store(pc->cache, CACHE_FREEZE_PARAMETERS), FREEZE_NAMESPACE, param_name);
	free(param_name);
	bool in_place = param && param->frozen == frozen && param->breach_id && strcmp(param->breach_id, breach_id) == 0;
	if (in_place || (had && strcmp(had, want) == 0) || pc_freeze_retry_pending(pc, po->meta.name, had) || pc->dry_run) {
		free(want);
		return;
	}
	const plan_t *plan = &po->plan;
	const char *fields[] = { "pool", "signal", "value", "threshold", "time" };
	const char *v[5];
	for (int i = 0; i < 5; i++) {
		const cJSON *f = cJSON_GetObjectItemCaseSensitive(breach, fields[i]);
		v[i] = cJSON_IsString(f) ? f->valuestring : "";
	}
	freeze_state_t state = {
		.plan = po->meta.name,
		.pool = v[0],
		.signal = v[1],
		.value = v[2],
		.threshold = v[3],
		.time = v[4],
		.breach_id = cJSON_IsString(id) ? id->valuestring : "",
		.plan_uid = po->meta.uid,
		.device_classes = (const char *const *)plan->device_classes,
		.n_classes = plan->n_device_classes,
		.frozen = frozen,
	};
	pc_write_t *w = pc_switch_write(pc, &pc->param, po->meta.name, frozen ? "freeze parameter (freeze)" : "freeze parameter (lift)",
				      frozen ? "freeze enforced: new claims for the plan's classes are denied" : "admission freeze lifted",
				      "breach", breach_id);
	if (freeze_set(pc->http, &state, pc_on_write, w) == 0) {
		pc->in_flight++;
		free(strmap_put(&pc->param.written, po->meta.name, want));
	} else {
		pc_write_free(w);
		free(want);
	}
}

/*
 * Keep the plan's DeviceTaintRule in step: applied while frozen, deleted
 * otherwise. No cache of the rules: after a restart the state is asserted
 * once (an apply changes nothing when it is in place, a delete of no rule
 * is a 404), then only on change.
 */
static void pc_assert_taint(plan_controller_t *pc, const plan_object_t *po, const cJSON *breach, bool tainted)
{
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(breach, "id");
	const cJSON *signal = cJSON_GetObjectItemCaseSensitive(breach, "signal");
	const char *breach_id = cJSON_IsString(id) ? id->valuestring : "";
	char *want = tainted ? xasprintf("tainted:%s", breach_id) : xstrdup("clear");
	const char *had = strmap_get(&pc->taint.written, po->meta.name);
	if ((had && strcmp(had, want) == 0) || pc_freeze_retry_pending(pc, po->meta.name, had) || pc->dry_run) {
		free(want);
		return;
	}
	pc_write_t *w = pc_switch_write(pc, &pc->taint, po->meta.name, tainted ? "DeviceTaintRule (freeze)" : "DeviceTaintRule (lift)",
				      tainted ? "freeze enforced: the driver's devices are tainted NoSchedule" : "device taint lifted",
				      "breach", breach_id);
	w->missing_ok = !tainted;
	freeze_taint_t taint = { .plan = po->meta.name,
				 .plan_uid = po->meta.uid,
				 .driver = po->plan.driver,
				 .signal = cJSON_IsString(signal) ? signal->valuestring : NULL,
				 .breach_id = breach_id,
				 .api_version = pc->apis.taint_rules };
	int rc = tainted ? freeze_taint_set(pc->http, &taint, pc_on_write, w)
			 : freeze_taint_clear(pc->http, po->meta.name, pc->apis.taint_rules, pc_on_write, w);
	if (rc == 0) {
		pc->in_flight++;
		free(strmap_put(&pc->taint.written, po->meta.name, want));
	} else {
		pc_write_free(w);
		free(want);
	}
}

/* The freeze's switches, as the plan's freezeMode asks: each one on while frozen, off otherwise. */
static void pc_assert_freeze(plan_controller_t *pc, const plan_object_t *po, const cJSON *breach, bool frozen)
{
	plan_freeze_mode_t mode = po->plan.slo.freeze_mode;
	pc_assert_parameter(pc, po, breach, frozen && plan_freeze_by_admission(mode));
	/* Without DeviceTaintRules the plan is refused (pc_reconcile), and there is no rule to lift. */
	if (pc->apis.taint_rules)
		pc_assert_taint(pc, po, breach, frozen && plan_freeze_by_device_taint(mode));
}

/* ---- holding and releasing nodes ------------------------------------------- */

static const char *pc_node_annotation(const projection_node_t *node, const char *key)
{
	for (size_t i = 0; i < node->n_annotations; i++)
		if (strcmp(node->annotations[i].key, key) == 0)
			return node->annotations[i].value;
	return NULL;
}

/* One entry of status.handovers (pool and message may be NULL). */
static void pc_handover_entry(cJSON *handovers, const char *node, const handover_state_t *st, const char *pool,
				const char *message)
{
	cJSON *h = cJSON_CreateObject();
	cJSON_AddStringToObject(h, "node", node);
	if (pool)
		cJSON_AddStringToObject(h, "pool", pool);
	cJSON_AddStringToObject(h, "direction", st->direction == HANDOVER_TO_DRA ? "ToDRA" : "ToLegacy");
	cJSON_AddStringToObject(h, "step", handover_step_name(st->step));
	char since[RFC3339_LEN];
	pc_format_time(st->since_ms, since, sizeof(since));
	cJSON_AddStringToObject(h, "since", since);
	if (message)
		cJSON_AddStringToObject(h, "message", message);
	cJSON_AddItemToArray(handovers, h);
}

/* Write the plan's finalizers as want (consumed), based on the resourceVersion the cache holds. */
static void pc_write_finalizers(plan_controller_t *pc, const plan_object_t *po, cJSON *want, const char *what)
{
	const char *rv = po->meta.resource_version ? po->meta.resource_version : "";
	const char *sent = strmap_get(&pc->finalizer_sent, po->meta.name);
	if (sent && strcmp(sent, rv) == 0) {
		cJSON_Delete(want); /* sent from this version: wait for the watch to show the next one */
		return;
	}
	cJSON *patch = cJSON_CreateObject();
	cJSON *md = cJSON_AddObjectToObject(patch, "metadata");
	cJSON_AddItemToObject(md, "finalizers", want);
	if (rv[0] != '\0')
		cJSON_AddStringToObject(md, "resourceVersion", rv); /* a finalizer someone else adds meanwhile is kept */
	char *body = cJSON_PrintUnformatted(patch);
	cJSON_Delete(patch);
	log_info(what, "plan", po->meta.name, "finalizers", body);
	if (pc->dry_run) {
		free(body);
		return;
	}
	char *path = kube_path("drashift.io/v1alpha1", "migrationplans", NULL, po->meta.name, NULL);
	pc_write_t *w = pc_write_new(pc, NULL, what);
	w->finalizer_plan = xstrdup(po->meta.name);
	free(strmap_put(&pc->finalizer_sent, po->meta.name, xstrdup(rv)));
	if (kube_merge_patch(pc->http, path, body, pc_on_write, w) == 0) {
		pc->in_flight++;
	} else {
		free(strmap_remove(&pc->finalizer_sent, po->meta.name));
		pc_write_free(w);
	}
	free(path);
	free(body);
}

/* The plan's finalizers with ours added (add) or removed. */
static cJSON *pc_finalizers_with(const plan_object_t *po, bool add)
{
	cJSON *want = cJSON_CreateArray();
	const cJSON *f;
	cJSON_ArrayForEach(f, po->finalizers)
	{
		if (!cJSON_IsString(f) || strcmp(f->valuestring, PLAN_FINALIZER) != 0)
			cJSON_AddItemToArray(want, cJSON_Duplicate(f, true));
	}
	if (add)
		cJSON_AddItemToArray(want, cJSON_CreateString(PLAN_FINALIZER));
	return want;
}

/* Whether the plan holds nodes: a pool has started or wants a node moved, or a node's records name the plan. */
static bool pc_holds_nodes(const plan_controller_t *pc, const plan_object_t *po, const pc_pool_run_t *runs)
{
	for (size_t i = 0; i < po->plan.n_pools; i++) {
		if (runs[i].out.record.start_ms != 0)
			return true;
		for (size_t m = 0; m < runs[i].n; m++)
			if (runs[i].out.goals[m] != HANDOVER_GOAL_STAY)
				return true;
	}
	return node_owners_nodes(&pc->owners, po->meta.name) != NULL;
}

/*
 * Whether the plan may write nodes: its finalizer is on (deleting it
 * releases them) and its status says it holds nodes (what it is cannot
 * change). Both are written, and seen, before the first node write; this
 * adds the finalizer when it is missing.
 */
static bool pc_ready_to_hold(plan_controller_t *pc, const plan_object_t *po)
{
	if (pc->dry_run)
		return true;
	if (!po->releases_nodes)
		pc_write_finalizers(pc, po, pc_finalizers_with(po, true), "adding the finalizer before the first node write");
	return po->releases_nodes && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(po->status, "holdsNodes"));
}

/*
 * Deadlines for a node the plan lets go: its pool's, or the longest of the
 * plan's when no pool selects it, with every pool's legacy resources (any of
 * them may be what the node's plugin serves); *legacy holds that list (free it).
 */
static plan_pool_t pc_release_pool(const plan_controller_t *pc, const plan_t *plan, const char *node, char ***legacy)
{
	*legacy = NULL;
	const pool_index_node_t *n = pool_index_node(&pc->pools, node);
	for (size_t m = 0; n && m < n->n; m++)
		for (size_t i = 0; strcmp(n->matches[m].plan, plan->name) == 0 && i < plan->n_pools; i++)
			if (strcmp(plan->pools[i].name, n->matches[m].pool) == 0)
				return plan->pools[i];
	plan_pool_t pool = plan->pools[0];
	for (size_t i = 1; i < plan->n_pools; i++) {
		if (plan->pools[i].drain_deadline_ms > pool.drain_deadline_ms)
			pool.drain_deadline_ms = plan->pools[i].drain_deadline_ms;
		if (plan->pools[i].handover_deadline_ms > pool.handover_deadline_ms)
			pool.handover_deadline_ms = plan->pools[i].handover_deadline_ms;
	}
	pool.drain_policy = PLAN_DRAIN_WAIT;
	pool.n_legacy_resources = 0;
	for (size_t i = 0; i < plan->n_pools; i++)
		for (size_t r = 0; r < plan->pools[i].n_legacy_resources; r++) {
			size_t k = 0;
			while (k < pool.n_legacy_resources && strcmp((*legacy)[k], plan->pools[i].legacy_resources[r]) != 0)
				k++;
			if (k < pool.n_legacy_resources)
				continue;
			*legacy = xrealloc(*legacy, (pool.n_legacy_resources + 1) * sizeof(**legacy));
			(*legacy)[pool.n_legacy_resources++] = plan->pools[i].legacy_resources[r];
		}
	pool.legacy_resources = *legacy;
	return pool;
}

/*
 * Take the next step of letting one node go (handover_release decides).
 * why, when set, is added to the step's Event. Adds the node to waiting
 * (status.handovers) as it stands.
 */
static void pc_release_node(plan_controller_t *pc, const plan_object_t *po, const projection_node_t *node,
			      const char *why, int64_t now, uint64_t *requeue_ms, cJSON *waiting)
{
	const plan_t *plan = &po->plan;
	handover_state_t st;
	handover_read(plan, node, &st);
	char **legacy;
	plan_pool_t pool = pc_release_pool(pc, plan, node->meta.name, &legacy);
	handover_usage_t use;
	pc_usage(pc, plan, &pool, node->meta.name, &use);
	handover_ads_t ads;
	pc_ads(pc, plan, &pool, node, &ads);
	handover_input_t in = { .plan = plan, .pool = &pool, .node = node, .state = &st, .usage = &use, .ads = &ads,
				.goal = HANDOVER_GOAL_STAY, .now_ms = now, .plan_uid = po->meta.uid };
	handover_decision_t d;
	handover_release(&in, &d);
	if (why && d.message) {
		char *m = xasprintf("%s (%s)", d.message, why);
		free(d.message);
		d.message = m;
	}
	char *line = d.act == HANDOVER_ACT_REFUSE ? xasprintf("%s: release refused: %s", why ? why : "plan deleted", d.message)
		     : d.act == HANDOVER_ACT_NONE
			     ? xasprintf("%s: being released, waiting for %s", why ? why : "plan deleted",
					 handover_step_waits_for(st.step))
			     : xasprintf("%s: being released, now %s -> %s", why ? why : "plan deleted",
					 handover_step_name(d.from), handover_step_name(d.to));
	/* status.handovers[].message holds 1024 bytes; cut on a character boundary. */
	size_t len = strlen(line);
	if (len > 1000) {
		len = 1000;
		while (len > 0 && (line[len] & 0xC0) == 0x80)
			len--;
		line[len] = '\0';
	}
	pc_handover_entry(waiting, node->meta.name, &st, NULL, line);
	free(line);
	pc_execute(pc, po, node, &d);
	if (d.requeue_ms && (*requeue_ms == 0 || d.requeue_ms < *requeue_ms))
		*requeue_ms = d.requeue_ms;
	handover_decision_free(&d);
	handover_usage_free(&use);
	free(legacy);
}

/* Ask to be decided again within ms (0: no wish), keeping the earliest wish. */
static void pc_requeue_within(uint64_t *requeue_ms, uint64_t ms)
{
	if (ms && (*requeue_ms == 0 || ms < *requeue_ms))
		*requeue_ms = ms;
}

/* A copy of the node names in a set: acting on nodes must not iterate an index the watch changes. */
static char **pc_names(const strmap_t *set, size_t *n)
{
	*n = set ? strmap_size(set) : 0;
	char **names = xcalloc(*n + 1, sizeof(char *));
	size_t it = 0, k = 0;
	const char *name;
	while (set && strmap_next(set, &it, &name, NULL))
		names[k++] = xstrdup(name);
	return names;
}

static void pc_names_free(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* Whether a pool of the plan selects the node. */
static bool pc_selects(const plan_controller_t *pc, const char *plan, const char *node)
{
	const pool_index_node_t *n = pool_index_node(&pc->pools, node);
	for (size_t m = 0; n && m < n->n; m++)
		if (strcmp(n->matches[m].plan, plan) == 0)
			return true;
	return false;
}

/*
 * Nodes whose records name the plan but that no pool of it selects any more
 * (selector edit, relabel, pool removed from the spec): released the way a
 * deleted plan releases them, shown in status.handovers, each step an Event.
 */
static void pc_release_strays(plan_controller_t *pc, const plan_object_t *po, bool hold, int64_t now,
				uint64_t *requeue_ms, cJSON *handovers)
{
	size_t n;
	char **names = pc_names(node_owners_nodes(&pc->owners, po->meta.name), &n);
	const store_t *nodes = cache_store(pc->cache, CACHE_NODES);
	for (size_t i = 0; i < n; i++) {
		const projection_node_t *node = store_get(nodes, NULL, names[i]);
		if (node == NULL || pc_selects(pc, po->meta.name, names[i]))
			continue;
		if (hold) {
			handover_state_t st;
			handover_read(&po->plan, node, &st);
			pc_handover_entry(handovers, names[i], &st, NULL, "left the plan's pools: to be released");
			continue;
		}
		pc_release_node(pc, po, node, "the node left the plan's pools", now, requeue_ms, handovers);
	}
	pc_names_free(names, n);
}

/*
 * The escape hatch (annotation drashift.io/force-delete: "true"): each node
 * the plan holds keeps its records and gets drashift.io/orphaned-by, then the
 * finalizer goes. The nodes are orphans from then on: reported, never adopted.
 */
static void pc_force_release(plan_controller_t *pc, const plan_object_t *po, char **names, size_t n, int64_t now)
{
	const store_t *nodes = cache_store(pc->cache, CACHE_NODES);
	bool marked = true;
	char t[RFC3339_LEN];
	pc_format_time(now, t, sizeof(t));
	for (size_t i = 0; i < n; i++) {
		const projection_node_t *node = store_get(nodes, NULL, names[i]);
		if (node == NULL || pc_node_annotation(node, HANDOVER_ANN_ORPHANED_BY))
			continue;
		marked = false;
		const char *step = pc_node_annotation(node, HANDOVER_ANN_STEP);
		const char *cordoned = pc_node_annotation(node, HANDOVER_ANN_CORDONED);
		char *record = xasprintf("%s/%s at %s: step %s, cordoned by drashift: %s", po->meta.name,
					 po->meta.uid ? po->meta.uid : "", t, step ? step : "(none)",
					 cordoned && strcmp(cordoned, "true") == 0 ? "yes" : "no");
		cJSON *patch = cJSON_CreateObject();
		cJSON *ann = cJSON_AddObjectToObject(cJSON_AddObjectToObject(patch, "metadata"), "annotations");
		cJSON_AddStringToObject(ann, HANDOVER_ANN_ORPHANED_BY, record);
		int parsed = step ? handover_step_parse(step) : -1;
		handover_decision_t d = {
			.act = HANDOVER_ACT_PATCH,
			.patch = cJSON_PrintUnformatted(patch),
			.from = parsed < 0 ? HANDOVER_LEGACY : (handover_step_t)parsed,
			.reason = "OrphanedByForcedDelete",
			.warning = true,
			.message = xasprintf("%s: plan %s was force-deleted while it held the node; drashift's records are "
					     "kept and %s added; release the node as docs/operations.md says",
					     names[i], po->meta.name, HANDOVER_ANN_ORPHANED_BY),
		};
		d.to = d.from;
		cJSON_Delete(patch);
		pc_execute(pc, po, node, &d);
		handover_decision_free(&d);
		free(record);
	}
	if (marked) {
		log_warn("force-deleted: the plan lets its nodes go as they are", "plan", po->meta.name);
		pc_write_finalizers(pc, po, pc_finalizers_with(po, false), "removing the finalizer (forced)");
	}
}

/*
 * A deleted plan holding nodes: bring each to rest (handover_release), then
 * drop the finalizer. Status, the Deleting condition and Events say what
 * deletion waits for.
 */
static void pc_release_deleting(plan_controller_t *pc, const plan_object_t *po, uint64_t *requeue_ms)
{
	size_t n;
	char **names = pc_names(node_owners_nodes(&pc->owners, po->meta.name), &n);
	int64_t now = pc_now_ms();
	if (n == 0) {
		log_info("deleted plan holds no node: letting it go", "plan", po->meta.name);
		pc_write_finalizers(pc, po, pc_finalizers_with(po, false), "removing the finalizer");
	} else if (po->force_delete) {
		pc_force_release(pc, po, names, n, now);
	} else {
		char now_s[RFC3339_LEN];
		pc_format_time(now, now_s, sizeof(now_s));
		cJSON *st = cJSON_IsObject(po->status) ? cJSON_Duplicate(po->status, true) : cJSON_CreateObject();
		cJSON_DeleteItemFromObjectCaseSensitive(st, "handovers");
		cJSON *waiting = cJSON_AddArrayToObject(st, "handovers");
		char *msg;
		if (po->valid) {
			const store_t *nodes = cache_store(pc->cache, CACHE_NODES);
			for (size_t i = 0; i < n; i++) {
				const projection_node_t *node = store_get(nodes, NULL, names[i]);
				if (node)
					pc_release_node(pc, po, node, NULL, now, requeue_ms, waiting);
			}
			msg = xasprintf("deletion waits for %zu node(s) to be released (see status.handovers and the nodes' "
					"Events); to delete now, annotate the plan %s=true",
					n, PLAN_ANN_FORCE_DELETE);
		} else {
			msg = xasprintf("the spec is invalid (%s): drashift cannot release the plan's %zu node(s); fix the "
					"spec, or annotate the plan %s=true to delete it now",
					po->invalid_reason, n, PLAN_ANN_FORCE_DELETE);
		}
		/* The Deleting condition replaces its old self; the others stay as they were. */
		cJSON *conds = cJSON_CreateArray();
		const cJSON *c;
		cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(po->status, "conditions"))
		{
			const cJSON *type = cJSON_GetObjectItemCaseSensitive(c, "type");
			if (!cJSON_IsString(type) || strcmp(type->valuestring, "Deleting") != 0)
				cJSON_AddItemToArray(conds, cJSON_Duplicate(c, true));
		}
		pc_condition(conds, po->status, "Deleting", true, "ReleasingNodes", msg, po->generation, now_s);
		char *activity = xasprintf("Deleting: %s", msg);
		cJSON_DeleteItemFromObjectCaseSensitive(st, "activity");
		cJSON_AddStringToObject(st, "activity", activity);
		free(activity);
		cJSON_DeleteItemFromObjectCaseSensitive(st, "conditions");
		cJSON_AddItemToObject(st, "conditions", conds);
		if (!pc->dry_run && !(po->status && cJSON_Compare(cJSON_GetObjectItemCaseSensitive(po->status, "handovers"),
								   waiting, true))) {
			events_object_ref_t ref = { .api_version = "drashift.io/v1alpha1", .kind = "MigrationPlan",
						    .name = po->meta.name, .uid = po->meta.uid };
			events_emit(pc->events, &ref, "Normal", "Deleting", "Release", "%s", msg);
		}
		free(msg);
		pc_requeue_within(requeue_ms, pc_write_status(pc, po, st, NULL, NULL));
	}
	pc_names_free(names, n);
}

/*
 * Orphans: nodes whose records name no plan the cache holds (left by an
 * older drashift, a forced delete, or a plan deleted without drashift's
 * finalizer). Counted on /metrics and reported once each in an Event on the
 * node; never adopted.
 */
static void pc_report_orphans(plan_controller_t *pc)
{
	static char reported; /* the value of orphans_reported entries */
	if (!cache_synced(pc->cache))
		return;
	bool tell = pc_may_write(pc) && !pc->dry_run;
	const store_t *plans = cache_store(pc->cache, CACHE_PLANS);
	const store_t *nodes = cache_store(pc->cache, CACHE_NODES);
	strmap_t now_orphans = STRMAP_INIT;
	size_t it = 0;
	const char *plan;
	void *set;
	while (strmap_next(&pc->owners.by_plan, &it, &plan, &set)) {
		if (plan[0] != '\0' && store_get(plans, NULL, plan) != NULL)
			continue;
		size_t nit = 0;
		const char *name;
		while (strmap_next(set, &nit, &name, NULL)) {
			strmap_put(&now_orphans, name, &reported);
			const projection_node_t *node = store_get(nodes, NULL, name);
			if (!tell || node == NULL || strmap_get(&pc->orphans_reported, name))
				continue;
			const char *step = pc_node_annotation(node, HANDOVER_ANN_STEP);
			log_warn("orphaned node: its records name no plan; left alone", "node", name, "plan", plan, "step",
				 step ? step : "");
			events_object_ref_t ref = { .api_version = "v1", .kind = "Node", .name = name, .uid = node->meta.uid };
			events_emit(pc->events, &ref, "Warning", "OrphanedNode", "Release",
				    "%s carries drashift's handover records (plan %s, step %s) but no such MigrationPlan "
				    "exists; drashift does not touch it: release it as docs/operations.md says (\"Deleting a "
				    "plan, and nodes that leave it\")",
				    name, plan[0] ? plan : "(none)", step ? step : "(none)");
			strmap_put(&pc->orphans_reported, name, &reported);
		}
	}
	size_t n;
	char **was = pc_names(&pc->orphans_reported, &n);
	for (size_t i = 0; i < n; i++)
		if (strmap_get(&now_orphans, was[i]) == NULL)
			strmap_remove(&pc->orphans_reported, was[i]);
	pc_names_free(was, n);
	if (pc->m_orphans)
		metrics_gauge_set(pc->m_orphans, (double)strmap_size(&now_orphans), NULL);
	strmap_clear(&now_orphans, NULL);
}

/*
 * One reconcile of a valid plan: what it gathers from the caches, what the
 * reconcilers decide from that, and what is rendered and acted on.
 */
typedef struct {
	const plan_object_t *po;
	const plan_t *plan;
	int64_t now;
	char now_s[RFC3339_LEN];
	pc_pool_run_t *runs; /* one per pool */
	const cJSON *conflicts; /* messages: nodes two plans' pools select (the plan's pc_members_t's) */
	const cJSON *breach;   /* status.breach as recorded (or adopted) */
	cJSON *adopted;        /* a breach the freeze parameter holds and the status lacks (owned; r->breach then) */
	plan_breach_t recorded;
	plan_freeze_t freeze;
	plan_new_breach_t new_breach;
	const char *breach_pool; /* the pool whose breach froze the plan */
	events_object_ref_t ref; /* the plan, for its Events */
	bool record_changed;     /* the status must be written before any node moves */
	bool holds;              /* the plan holds nodes (status.holdsNodes) */
	bool write_status;       /* the status is written this round (not when the finalizer must go first) */
	size_t refused, failed_nodes;
	cJSON *handovers;        /* status.handovers */
	uint64_t requeue_ms;
	bool preflight_recorded;      /* status.preflight records a pass for this generation */
	preflight_result_t preflight; /* this round's checks (zeroed when recorded) */
	bool window_open;        /* inside a maintenance window (or the plan has none) */
	bool ahead;              /* judged ahead of status writes in flight: only a new breach may come of it */
	int64_t window_edge_ms;  /* when that changes next; 0: never */
	char window_edge_s[RFC3339_LEN];
} pc_reconcile_t;

/*
 * A plan's members as a reconcile gathered them, kept for the next: each
 * pool's nodes that no other pool selects, sorted by name, with their
 * records and the conflicts found. Kept while the nodes-by-pool index
 * (pool_index_t.version), the plan's spec and its uid stay what they were;
 * a change that forgets a member's record (pc_node_changed) marks the
 * member stale, and the next reconcile reads again only the stale ones. A
 * reconcile borrows the arrays (pc_pool_run_t) and changes none of them.
 */
typedef struct {
	pool_member_t *members;
	pc_node_rec_t **recs;
	handover_ads_t *ads;
	char **names; /* the members' node names, sorted: a stale member is found by name, its node may be gone */
	size_t n;
} pc_members_pool_t;

typedef struct {
	uint64_t index_version;
	int64_t generation;
	char *uid;
	pc_members_pool_t *pools;
	size_t n_pools;
	cJSON *conflicts; /* the messages, in the order found */
	strmap_t stale;   /* node names whose records were forgotten since (values unused) */
} pc_members_t;

static void pc_members_free(void *v)
{
	pc_members_t *g = v;
	if (g == NULL)
		return;
	for (size_t i = 0; i < g->n_pools; i++) {
		pc_members_pool_t *mp = &g->pools[i];
		for (size_t m = 0; m < mp->n; m++)
			free(mp->names[m]);
		free(mp->names);
		free(mp->members);
		free(mp->recs);
		free(mp->ads);
	}
	free(g->pools);
	free(g->uid);
	cJSON_Delete(g->conflicts);
	strmap_clear(&g->stale, NULL);
	free(g);
}

/* Member m of pool i, the node given, read from its record. */
static void pc_member_set(plan_controller_t *pc, const pc_reconcile_t *r, size_t i, pc_members_pool_t *mp, size_t m,
			  const projection_node_t *node)
{
	pc_node_rec_t *rec = pc_node_rec(pc, r->po, &r->plan->pools[i], node);
	mp->members[m] = (pool_member_t){ .node = node, .state = rec->state };
	mp->recs[m] = rec;
	mp->ads[m] = rec->ads;
}

/* Gather from the index: each pool's members and the conflicts, every member read. */
static pc_members_t *pc_members_read(plan_controller_t *pc, const pc_reconcile_t *r)
{
	const char *name = r->po->meta.name;
	const store_t *nodes = cache_store(pc->cache, CACHE_NODES);
	pc_members_t *g = xcalloc(1, sizeof(*g));
	g->index_version = pc->pools.version;
	g->generation = r->po->generation;
	g->uid = xstrdup(r->po->meta.uid ? r->po->meta.uid : "");
	g->n_pools = r->plan->n_pools;
	g->pools = xcalloc(g->n_pools + 1, sizeof(*g->pools));
	g->conflicts = cJSON_CreateArray();
	g->stale = (strmap_t)STRMAP_INIT;
	for (size_t i = 0; i < r->plan->n_pools; i++) {
		const pool_index_member_t *selected;
		size_t n_selected = pool_index_members(&pc->pools, name, r->plan->pools[i].name, &selected);
		pc_members_pool_t *mp = &g->pools[i];
		mp->members = xcalloc(n_selected + 1, sizeof(*mp->members));
		mp->recs = xcalloc(n_selected + 1, sizeof(*mp->recs));
		mp->ads = xcalloc(n_selected + 1, sizeof(*mp->ads));
		mp->names = xcalloc(n_selected + 1, sizeof(*mp->names));
		for (size_t s = 0; s < n_selected; s++) {
			const char *node_name = selected[s].node;
			const projection_node_t *node = store_get(nodes, NULL, node_name);
			const pool_index_match_t *mine, *other;
			if (node == NULL)
				continue; /* the index follows the node cache: never, but never act on a guess */
			if (pool_index_conflict(selected[s].matches, name, &mine, &other)) {
				if (strcmp(mine->pool, r->plan->pools[i].name) != 0)
					continue; /* reported once, under this plan's first pool that selects it */
				char *msg = xasprintf("%s is matched by pool %s of plan %s and pool %s of plan %s; nothing is done to it",
						      node_name, mine->pool, mine->plan, other->pool, other->plan);
				cJSON_AddItemToArray(g->conflicts, cJSON_CreateString(msg));
				free(msg);
				continue;
			}
			mp->names[mp->n] = xstrdup(node_name); /* in the index's order: by name */
			pc_member_set(pc, r, i, mp, mp->n++, node);
		}
	}
	return g;
}

/* The member of a pool named node, or n when none. */
static size_t pc_members_find(const pc_members_pool_t *mp, const char *node)
{
	size_t lo = 0, hi = mp->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(mp->names[mid], node);
		if (c == 0)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return mp->n;
}

/* Read again the stale members of g; false when one's node is gone from the cache (then gather anew). */
static bool pc_members_refresh(plan_controller_t *pc, const pc_reconcile_t *r, pc_members_t *g)
{
	const store_t *nodes = cache_store(pc->cache, CACHE_NODES);
	size_t it = 0;
	const char *name;
	while (strmap_next(&g->stale, &it, &name, NULL))
		for (size_t i = 0; i < g->n_pools; i++) {
			size_t m = pc_members_find(&g->pools[i], name);
			if (m == g->pools[i].n)
				continue;
			const projection_node_t *node = store_get(nodes, NULL, name);
			if (node == NULL)
				return false;
			pc_member_set(pc, r, i, &g->pools[i], m, node);
		}
	strmap_clear(&g->stale, NULL);
	return true;
}

/* Gather: each pool's members (nodes it selects that no other plan's pool selects), sorted, with their records. */
static void pc_gather_members(plan_controller_t *pc, pc_reconcile_t *r)
{
	const char *name = r->po->meta.name;
	const char *uid = r->po->meta.uid ? r->po->meta.uid : "";
	pc_members_t *g = strmap_get(&pc->members, name);
	bool same = g != NULL && g->index_version == pc->pools.version && g->generation == r->po->generation &&
		    g->n_pools == r->plan->n_pools && strcmp(g->uid, uid) == 0;
	if (!same || !pc_members_refresh(pc, r, g)) {
		g = pc_members_read(pc, r);
		pc_members_free(strmap_put(&pc->members, name, g));
	}
	for (size_t i = 0; i < r->plan->n_pools; i++) {
		pc_pool_run_t *run = &r->runs[i];
		run->members = g->pools[i].members;
		run->recs = g->pools[i].recs;
		run->ads = g->pools[i].ads;
		run->n = g->pools[i].n;
	}
	r->conflicts = g->conflicts;
}

/* The node's record was forgotten: the plans whose pools select it read the member again. */
static void pc_members_stale(plan_controller_t *pc, const char *node)
{
	const pool_index_node_t *n = pool_index_node(&pc->pools, node);
	for (size_t i = 0; n != NULL && i < n->n; i++) {
		pc_members_t *g = strmap_get(&pc->members, n->matches[i].plan);
		if (g != NULL)
			strmap_put(&g->stale, node, g);
	}
}

/* What admission cannot know: node counts. A canary larger than its pool makes the plan invalid (NULL: it is not). */
static char *pc_canary_too_large(const pc_reconcile_t *r)
{
	for (size_t i = 0; i < r->plan->n_pools; i++) {
		const plan_pool_t *pool = &r->plan->pools[i];
		if (r->runs[i].n > 0 && pool->canary_nodes > 0 && (size_t)pool->canary_nodes > r->runs[i].n)
			return xasprintf("spec.pools[%zu].canary.nodes: %d is more than the %zu node(s) the pool's selector matches",
					 i, pool->canary_nodes, r->runs[i].n);
	}
	return NULL;
}

/*
 * Each member's driver failure classes (reconcilers/driver_failure.h), from
 * the kubelet's Events and claims since the window began (or since the last
 * acknowledged breach, as the claims' samples), and whether to quarantine it.
 * A node already quarantined is shown by class but no longer counted in
 * driverErrors: it is out of the pool's progress, and its kubelet may keep
 * retrying the pods stuck on it.
 */
static void pc_driver_failures(plan_controller_t *pc, pc_reconcile_t *r)
{
	size_t total = 0;
	for (size_t i = 0; i < r->plan->n_pools; i++)
		total += r->runs[i].n;
	driver_failure_node_t *ev = xcalloc(total + 1, sizeof(*ev));
	size_t k = 0;
	for (size_t i = 0; i < r->plan->n_pools; i++)
		for (size_t m = 0; m < r->runs[i].n; m++) {
			const pool_member_t *mem = &r->runs[i].members[m];
			ev[k++] = (driver_failure_node_t){ .node = mem->node->meta.name,
							   .slices_present = r->runs[i].ads[m].slices_present,
							   .dra_owned = mem->state.dra_enabled,
							   .quarantined = mem->state.quarantine != NULL,
							   .unschedulable = mem->node->unschedulable,
							   .now_ms = r->now };
		}
	int64_t since = r->now - (int64_t)r->plan->slo.window_ms;
	if (r->freeze.judge_since_ms > since)
		since = r->freeze.judge_since_ms;
	driver_failures_gather(pc->cache, r->plan->driver, since, r->plan->slo.stuck_threshold_ms, r->now, ev, total);
	k = 0;
	for (size_t i = 0; i < r->plan->n_pools; i++) {
		pc_pool_run_t *run = &r->runs[i];
		run->failures = xcalloc(run->n + 1, sizeof(*run->failures));
		for (size_t m = 0; m < run->n; m++, k++) {
			driver_failure_decision_t *d = &run->failures[m];
			driver_failure_decide(&ev[k], d);
			for (int c = 0; c < DRIVER_FAILURE_CLASSES; c++)
				run->by_class[c] += d->in[c];
			if ((d->in[DRIVER_FAILURE_PERMANENT] || d->in[DRIVER_FAILURE_CLEANUP]) && !ev[k].quarantined)
				run->failing_nodes++;
		}
	}
	free(ev);
}

/* Read the recorded breach (r->breach) and whether it freezes the plan. */
static void pc_read_breach(pc_reconcile_t *r)
{
	const char *fields[] = { "id", "pool", "signal", "value", "threshold" };
	const char **into[] = { &r->recorded.id, &r->recorded.pool, &r->recorded.signal, &r->recorded.value,
				&r->recorded.threshold };
	for (size_t f = 0; f < sizeof(fields) / sizeof(fields[0]); f++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(r->breach, fields[f]);
		*into[f] = cJSON_IsString(v) ? v->valuestring : NULL;
	}
	r->recorded.acknowledged_ms = pc_parse_time(cJSON_GetObjectItemCaseSensitive(r->breach, "acknowledgedTime"));
	plan_status_freeze(r->plan, &r->recorded, r->now, &r->freeze);
	r->breach_pool = r->recorded.pool;
}

/*
 * A new breach is written to the freeze parameter and the status together,
 * the parameter first (pc_reconcile). When the parameter holds a breach the
 * status lacks (plan_status_adopts_breach: the status write was refused, or
 * the leader stopped between the two), the status records it now, and
 * nothing else acts until that write is answered: the cluster already denies
 * claims for that breach, so the plan must show it to be acknowledged.
 */
static void pc_adopt_breach(plan_controller_t *pc, pc_reconcile_t *r)
{
	char *name = freeze_parameter_name(r->po->meta.name);
	const freeze_parameter_t *p = store_get(cache_store(pc->cache, CACHE_FREEZE_PARAMETERS), FREEZE_NAMESPACE, name);
	free(name);
	if (p == NULL)
		return;
	plan_parameter_t param = { .frozen = p->frozen, .owner_uid = p->owner_uid, .breach = { .id = p->breach_id } };
	if (!plan_status_adopts_breach(r->po->meta.uid, &r->freeze, &r->recorded, &param))
		return;
	if (r->ahead) {
		r->freeze.frozen = true; /* the reconcile that follows records it; nothing new is judged meanwhile */
		return;
	}
	const char *fields[] = { "id", "pool", "signal", "value", "threshold" };
	const char *values[] = { p->breach_id, p->pool, p->signal, p->value, p->threshold };
	r->adopted = cJSON_CreateObject();
	for (size_t f = 0; f < sizeof(fields) / sizeof(fields[0]); f++)
		cJSON_AddStringToObject(r->adopted, fields[f], values[f] ? values[f] : "");
	int64_t us;
	cJSON_AddStringToObject(r->adopted, "time", p->time && rfc3339_parse(p->time, &us) == 0 ? p->time : r->now_s);
	r->breach = r->adopted;
	pc_read_breach(r);
	r->record_changed = true;
	log_warn("breach recorded from the freeze parameter: the status write that should have recorded it did not land",
		 "plan", r->po->meta.name, "breach", r->recorded.id, "pool", r->recorded.pool, "signal", r->recorded.signal);
	if (!pc->dry_run)
		events_emit(pc->events, &r->ref, "Warning", "SLOBreach", "Freeze",
			    "pool %s: %s measured %s, threshold %s: recorded from the freeze parameter, which already denies "
			    "new claims for the plan's DeviceClasses; acknowledge with spec.acknowledgedBreach: %s",
			    r->recorded.pool, r->recorded.signal, r->recorded.value, r->recorded.threshold, r->recorded.id);
}

/*
 * A breach judged ahead of the plan's status writes (pc_judge_ahead) is
 * recorded by the first reconcile that follows them, as the freeze parameter
 * already has it; forgotten once the status has it, or when the plan was made
 * again or is frozen by another breach.
 */
static void pc_adopt_ahead(plan_controller_t *pc, pc_reconcile_t *r)
{
	const char *name = r->po->meta.name;
	const cJSON *rec = strmap_get(&pc->judged_ahead, name);
	if (rec == NULL) /* pc_judge_ahead skips a plan that has one */
		return;
	const cJSON *uid = cJSON_GetObjectItemCaseSensitive(rec, "uid");
	const cJSON *breach = cJSON_GetObjectItemCaseSensitive(rec, "breach");
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(breach, "id");
	bool same_plan = r->po->meta.uid && strcmp(uid->valuestring, r->po->meta.uid) == 0;
	bool recorded = r->recorded.id && strcmp(r->recorded.id, id->valuestring) == 0;
	if (!same_plan || recorded || r->freeze.frozen) {
		cJSON_Delete(strmap_remove(&pc->judged_ahead, name));
		return;
	}
	r->adopted = cJSON_Duplicate(breach, true);
	r->breach = r->adopted;
	pc_read_breach(r);
	r->record_changed = true;
	log_info("breach recorded in the status: judged while a status write was in flight, the freeze parameter "
		 "went first", "plan", name, "breach", r->recorded.id);
}

/*
 * Which of the plan's pools a node is a member of, -1 when none: as in
 * pc_gather_members, a pool of this plan selects it and no other pool does
 * (the index follows the node cache, so the node is there). The tracker's
 * samples are told apart by it (slo_tracker_view_samples), and its answers
 * change only when the index does (pool_index_t.version).
 */
typedef struct {
	const plan_controller_t *pc;
	const plan_t *plan;
	const char *name; /* the plan object's */
} pc_member_of_t;

static void pc_slo_view_free(void *v)
{
	slo_tracker_view_free(v);
}

static ptrdiff_t pc_member_of(const char *node, void *data)
{
	const pc_member_of_t *m = data;
	const pool_index_node_t *n = pool_index_node(&m->pc->pools, node);
	const pool_index_match_t *mine, *other;
	if (n == NULL || pool_index_conflict(n, m->name, &mine, &other) || mine == NULL)
		return -1;
	for (size_t i = 0; i < m->plan->n_pools; i++)
		if (strcmp(m->plan->pools[i].name, mine->pool) == 0)
			return (ptrdiff_t)i;
	return -1;
}

/* Gather and judge: the recorded breach and its acknowledgement, then each pool's advertisements and signals. */
static void pc_judge(plan_controller_t *pc, pc_reconcile_t *r)
{
	r->breach = cJSON_GetObjectItemCaseSensitive(r->po->status, "breach");
	pc_read_breach(r);
	pc_adopt_ahead(pc, r);
	pc_adopt_breach(pc, r);
	slo_result_t queries[PLAN_MAX_PROM_QUERIES];
	size_t n_queries = 0;
	if (r->plan->slo.prometheus.n_queries > 0 && r->plan->slo.prometheus.n_queries <= PLAN_MAX_PROM_QUERIES)
		n_queries = prom_query_judge(pc->prom, r->plan->name, &r->plan->slo.prometheus, r->freeze.judge_since_ms,
					     r->now, queries);
	pc_driver_failures(pc, r);
	/* The tracker's samples of every pool, from the plan's view: only the claims changed since are looked at. */
	size_t n_pools = r->plan->n_pools;
	const slo_sample_t **samples = xcalloc(n_pools + 1, sizeof(*samples));
	size_t *n_samples = xcalloc(n_pools + 1, sizeof(*n_samples));
	int64_t since = r->now - (int64_t)r->plan->slo.window_ms;
	if (r->freeze.judge_since_ms > since)
		since = r->freeze.judge_since_ms;
	slo_tracker_view_t *view = strmap_get(&pc->slo_views, r->po->meta.name);
	if (view == NULL) {
		view = slo_tracker_view_new(pc->slo);
		strmap_put(&pc->slo_views, r->po->meta.name, view);
	}
	pc_member_of_t member_of = { .pc = pc, .plan = r->plan, .name = r->po->meta.name };
	slo_tracker_view_samples(view, r->plan->driver, (const char *const *)r->plan->device_classes,
				 r->plan->n_device_classes, pc_member_of, &member_of, n_pools, pc->pools.version, since,
				 samples, n_samples);
	for (size_t i = 0; i < n_pools; i++) {
		pc_pool_run_t *run = &r->runs[i];
		pc_judge_pool(pc, r->plan, run, r->plan->pools[i].name, r->now, samples[i], n_samples[i], queries,
			      n_queries);
		pc_capacity(pc, r->plan, &r->plan->pools[i], run);
	}
	free(samples);
	free(n_samples);
}

/* ---- preflight -------------------------------------------------------------- */

static void pc_preflight_free(void *v)
{
	pc_preflight_t *st = v;
	if (st == NULL)
		return;
	preflight_probe_free(st->facts);
	free(st);
}

typedef struct {
	plan_controller_t *pc;
	char *plan;
	int64_t generation;
} pc_probe_t;

/* A probe answered: keep it for its generation, set when the next may start, and decide again. */
static void pc_on_preflight(preflight_probe_t *probe, void *data)
{
	pc_probe_t *c = data;
	plan_controller_t *pc = c->pc;
	pc->probes--;
	pc_preflight_t *st = pc->closing ? NULL : strmap_get(&pc->preflight, c->plan);
	if (st != NULL) {
		uint64_t now = uv_now(pc->loop);
		st->running = false;
		if (st->generation == c->generation) {
			preflight_probe_free(st->facts);
			st->facts = probe;
			probe = NULL;
			st->next_ms = now + st->backoff_ms;
			st->backoff_ms = st->backoff_ms * 2 > PLAN_PREFLIGHT_RETRY_MAX_MS ? PLAN_PREFLIGHT_RETRY_MAX_MS
											  : st->backoff_ms * 2;
		}
		workqueue_add(pc->queue, c->plan, now);
		plan_controller_schedule(pc);
	}
	preflight_probe_free(probe);
	free(c->plan);
	free(c);
}

/* Pods on the pool's nodes that may preempt and request the extended resource; *example names one. */
static size_t pc_preempting_pods(const plan_controller_t *pc, const plan_t *plan, const pc_pool_run_t *run,
				 char **example)
{
	size_t n = 0;
	*example = NULL;
	for (size_t m = 0; m < run->n; m++) {
		const strmap_t *pods = cache_index_get(&pc->cache->pods_by_node, run->members[m].node->meta.name);
		size_t it = 0;
		void *v;
		while (pods && strmap_next(pods, &it, NULL, &v)) {
			const projection_pod_t *pod = v;
			int64_t count = 0;
			if (!pod->preempts || pod->phase == PROJECTION_POD_SUCCEEDED || pod->phase == PROJECTION_POD_FAILED ||
			    !projection_quantity_find(pod->requests, pod->n_requests, plan->extended_resource, &count) ||
			    count <= 0)
				continue;
			if (n++ == 0)
				*example = xasprintf("%s/%s", pod->meta.namespace, pod->meta.name);
		}
	}
	return n;
}

/*
 * Preflight (reconcilers/preflight.h): a pass recorded for this generation
 * stands; otherwise the last probe's answers and the caches are judged, and
 * the API is probed again while the checks fail, at a doubling pace.
 */
static void pc_preflight(plan_controller_t *pc, pc_reconcile_t *r)
{
	const plan_object_t *po = r->po;
	r->preflight_recorded = plan_object_preflight_recorded(po);
	if (r->preflight_recorded)
		return;
	pc_preflight_t *st = strmap_get(&pc->preflight, po->meta.name);
	if (st == NULL) {
		st = xcalloc(1, sizeof(*st));
		st->generation = -1;
		strmap_put(&pc->preflight, po->meta.name, st);
	}
	uint64_t now = uv_now(pc->loop);
	if (st->generation != po->generation) {
		preflight_probe_free(st->facts);
		st->facts = NULL;
		st->generation = po->generation;
		st->next_ms = 0;
		st->backoff_ms = PLAN_PREFLIGHT_RETRY_MS;
		st->passed = false;
	}
	if (!st->running && !st->passed && now >= st->next_ms) {
		pc_probe_t *c = xcalloc(1, sizeof(*c));
		*c = (pc_probe_t){ .pc = pc, .plan = xstrdup(po->meta.name), .generation = po->generation };
		if (preflight_probe_start(pc->http, r->plan, FREEZE_NAMESPACE, pc->apis.taint_rules, pc_on_preflight, c) != NULL) {
			st->running = true;
			pc->probes++;
		} else {
			free(c->plan);
			free(c);
			st->next_ms = now + st->backoff_ms;
		}
	}
	const plan_t *plan = r->plan;
	preflight_pool_t *pools = xcalloc(plan->n_pools + 1, sizeof(*pools));
	char **examples = xcalloc(plan->n_pools + 1, sizeof(char *));
	for (size_t i = 0; i < plan->n_pools; i++) {
		const cJSON *rec = plan_object_pool_status(po, plan->pools[i].name);
		pools[i] = (preflight_pool_t){
			.started = pc_parse_time(cJSON_GetObjectItemCaseSensitive(rec, "startTime")) != 0,
			.members = r->runs[i].members,
			.ads = r->runs[i].ads,
			.n_members = r->runs[i].n,
			.preempting_pods = pc_preempting_pods(pc, plan, &r->runs[i], &examples[i]),
		};
		pools[i].preempting_example = examples[i];
	}
	preflight_input_t in = { .plan = plan, .pools = pools, .taint_rules_version = pc->apis.taint_rules };
	if (st->facts)
		preflight_probe_fill(st->facts, &in);
	preflight_decide(&in, &r->preflight);
	st->passed = r->preflight.passed;
	if (!r->preflight.passed && !st->running)
		pc_requeue_within(&r->requeue_ms, st->next_ms > now ? st->next_ms - now : 1);
	for (size_t i = 0; i < plan->n_pools; i++)
		free(examples[i]);
	free(examples);
	free(pools);
}

/* The condition of this type as the status recorded it, or NULL. */
static const cJSON *pc_recorded_condition(const plan_object_t *po, const char *type)
{
	const cJSON *c;
	cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(po->status, "conditions"))
	{
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(c, "type");
		if (cJSON_IsString(t) && strcmp(t->valuestring, type) == 0)
			return c;
	}
	return NULL;
}

/* status.preflight: the generation whose checks passed, and when; kept while that is the plan's generation. */
static void pc_render_preflight(cJSON *st, const pc_reconcile_t *r)
{
	if (r->preflight_recorded) {
		cJSON_AddItemToObject(st, "preflight",
				      cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(r->po->status, "preflight"), true));
		return;
	}
	if (!r->preflight.passed)
		return;
	cJSON *p = cJSON_AddObjectToObject(st, "preflight");
	cJSON_AddNumberToObject(p, "passedGeneration", (double)r->po->generation);
	cJSON_AddStringToObject(p, "passedTime", r->now_s);
}

/*
 * The Preflight condition: as recorded once a pass is (the checks do not run
 * again for that generation), otherwise this round's checks. A change of
 * reason is logged and an Event, once, with the status that records it.
 */
static void pc_render_preflight_condition(plan_controller_t *pc, cJSON *conds, const pc_reconcile_t *r)
{
	const cJSON *old = pc_recorded_condition(r->po, "Preflight");
	if (r->preflight_recorded && old) {
		cJSON_AddItemToArray(conds, cJSON_Duplicate(old, true));
		return;
	}
	const preflight_result_t *pf = &r->preflight;
	const char *reason = r->preflight_recorded ? "Passed" : pf->reason;
	char *message = r->preflight_recorded ? xstrdup("the checks passed for this generation of the spec")
					      : xstrdup(pf->message);
	events_utf8_truncate(message, PLAN_PREFLIGHT_MESSAGE_MAX);
	bool ok = r->preflight_recorded || pf->passed;
	pc_condition(conds, r->po->status, "Preflight", ok, reason, message, r->po->generation, r->now_s);
	const cJSON *old_reason = cJSON_GetObjectItemCaseSensitive(old, "reason");
	if (r->write_status && !pc->dry_run && strcmp(reason, "Checking") != 0 &&
	    !(cJSON_IsString(old_reason) && strcmp(old_reason->valuestring, reason) == 0)) {
		log_info("preflight", "plan", r->po->meta.name, "reason", reason);
		events_emit(pc->events, &r->ref, ok ? "Normal" : "Warning", ok ? "PreflightPassed" : "PreflightFailed",
			    "Preflight", "%s", pf->problems ? pf->problems : message);
	}
	free(message);
}

/* Decide: a new breach freezes the plan, recorded before anything acts on it. */
static void pc_decide_breach(plan_controller_t *pc, pc_reconcile_t *r)
{
	plan_pool_gate_t *gates = xcalloc(r->plan->n_pools + 1, sizeof(*gates));
	for (size_t i = 0; i < r->plan->n_pools; i++) {
		const cJSON *ph = cJSON_GetObjectItemCaseSensitive(plan_object_pool_status(r->po, r->plan->pools[i].name),
								   "phase");
		bool moving = cJSON_IsString(ph) && (strcmp(ph->valuestring, pool_phase_name(POOL_CANARY)) == 0 ||
						     strcmp(ph->valuestring, pool_phase_name(POOL_EXPANDING)) == 0);
		gates[i] = (plan_pool_gate_t){ .gate = r->runs[i].gate, .breach = r->runs[i].breach, .moving = moving };
	}
	plan_status_new_breach(r->plan, &r->freeze, gates, r->now, &r->new_breach);
	free(gates);
	const plan_new_breach_t *nb = &r->new_breach;
	if (!nb->found)
		return;
	const char *pool = r->plan->pools[nb->pool].name;
	log_warn("SLO breach: freezing the plan", "plan", r->po->meta.name, "pool", pool, "signal", nb->signal, "value",
		 nb->value, "threshold", nb->threshold, "breach", nb->id);
	if (!pc->dry_run)
		events_emit(pc->events, &r->ref, "Warning", "SLOBreach", "Freeze",
			    "pool %s: %s measured %s, threshold %s: expansion stopped, new claims for the plan's DeviceClasses "
			    "frozen; acknowledge with spec.acknowledgedBreach: %s",
			    pool, nb->signal, nb->value, nb->threshold, nb->id);
	r->freeze.frozen = true;
	r->breach_pool = pool;
	r->record_changed = true; /* nothing but the freeze parameter acts before the status records it */
}

/* The pool's record as the status has it: its canary set and the times it started, baked and finished. */
static void pc_read_pool_record(const plan_object_t *po, const char *pool, pc_pool_run_t *run)
{
	const cJSON *rec = plan_object_pool_status(po, pool);
	const cJSON *canary = cJSON_GetObjectItemCaseSensitive(rec, "canaryNodes");
	run->canary_names = xcalloc((size_t)cJSON_GetArraySize(canary) + 1, sizeof(char *));
	size_t k = 0;
	const cJSON *c;
	cJSON_ArrayForEach(c, canary)
	{
		if (cJSON_IsString(c))
			run->canary_names[k++] = c->valuestring;
	}
	run->record = (pool_record_t){
		.canary_nodes = run->canary_names,
		.n_canary = k,
		.start_ms = pc_parse_time(cJSON_GetObjectItemCaseSensitive(rec, "startTime")),
		.bake_start_ms = pc_parse_time(cJSON_GetObjectItemCaseSensitive(rec, "bakeStartTime")),
		.finish_ms = pc_parse_time(cJSON_GetObjectItemCaseSensitive(rec, "finishTime")),
	};
}

/* Decide: are the maintenance windows open, and when does that change? Decided again at that edge. */
static void pc_decide_window(pc_reconcile_t *r)
{
	const plan_t *plan = r->plan;
	int64_t now_s = r->now / 1000;
	r->window_open = window_open(plan->windows, plan->n_windows, now_s);
	int64_t edge = window_next_edge(plan->windows, plan->n_windows, now_s);
	r->window_edge_ms = edge * 1000;
	r->window_edge_s[0] = '\0';
	if (edge == 0)
		return;
	pc_format_time(r->window_edge_ms, r->window_edge_s, sizeof(r->window_edge_s));
	pc_requeue_within(&r->requeue_ms, r->window_edge_ms > r->now ? (uint64_t)(r->window_edge_ms - r->now) : 1);
}

/* Decide: each pool's phase and its nodes' goals, in plan order. */
/* Where the plan's tenant boundary parameter stands (a dry run writes none: nothing waits for it). */
static tenancy_param_t pc_tenancy_param(const plan_controller_t *pc, const char *plan)
{
	const char *had = strmap_get(&pc->tenancy.written, plan);
	if (pc->dry_run)
		return TENANCY_PARAM_WRITTEN;
	if (strmap_get(&pc->tenancy.errors, plan))
		return TENANCY_PARAM_FAILED;
	if (strmap_get(&pc->tenancy.writing, plan))
		return TENANCY_PARAM_WRITING;
	return had && strncmp(had, "retry-at:", 9) != 0 ? TENANCY_PARAM_WRITTEN : TENANCY_PARAM_UNWRITTEN;
}

static void pc_decide_pools(const plan_controller_t *pc, pc_reconcile_t *r)
{
	const char *boundary_pending = tenancy_hold(r->plan, pc_tenancy_param(pc, r->plan->name));
	const plan_t *plan = r->plan;
	size_t not_done_before = 0;
	pc_decide_window(r);
	for (size_t i = 0; i < plan->n_pools; i++) {
		pc_pool_run_t *run = &r->runs[i];
		pc_read_pool_record(r->po, plan->pools[i].name, run);
		bool checked = preflight_pool_may_start(&r->preflight, r->preflight_recorded, run->record.start_ms != 0);
		run->preflight_held = !checked;
		pool_input_t in = {
			.plan = plan,
			.pool = &plan->pools[i],
			.record = run->record,
			.members = run->members,
			.n_members = run->n,
			.may_start = not_done_before < (size_t)plan->max_concurrent_pools && checked,
			.start_held = checked ? NULL
					      : "waiting for preflight: fix what the Preflight condition's Fail lines name, "
						"or set spec.preflight: Warn",
			.frozen = r->freeze.frozen,
			.breach_rollback = r->freeze.frozen && plan->slo.breach_policy == PLAN_BREACH_FREEZE_AND_ROLLBACK &&
					   r->breach_pool && strcmp(r->breach_pool, plan->pools[i].name) == 0,
			/* Expansion waits for a Pass: too few samples is no pass (docs/state-machines.md). */
			.gate_passed = run->gate == SLO_PASS,
			.gate_waiting = run->gate_waiting,
			.window_closed = !r->window_open,
			.window_opens = !r->window_open && r->window_edge_s[0] ? r->window_edge_s : NULL,
			.boundary_pending = boundary_pending,
			.now_ms = r->now,
		};
		pool_decide(&in, &run->out);
		if (run->out.phase != POOL_DRA)
			not_done_before++;
		r->record_changed |= run->out.record_changed;
		pc_requeue_within(&r->requeue_ms, run->out.requeue_ms);
	}
}

/*
 * A permanent driver failure: cordon the node and record the quarantine in
 * one patch (the record is on the node, as every step's). Even while the
 * plan is frozen: the patch lifts no freeze and moves no handover, and a
 * node whose driver cannot prepare devices must not take new pods. Returns
 * true when the patch was sent.
 */
static bool pc_quarantine(plan_controller_t *pc, const pc_reconcile_t *r, const pool_member_t *mem,
			  const driver_failure_decision_t *f)
{
	if (f->patch == NULL)
		return false;
	log_warn("quarantining node: permanent driver failure", "plan", r->po->meta.name, "node", mem->node->meta.name,
		 "detail", f->message);
	handover_decision_t q = { .act = HANDOVER_ACT_PATCH, .patch = f->patch, .from = mem->state.step,
				  .to = mem->state.step, .reason = "NodeQuarantined", .message = f->message,
				  .warning = true };
	return pc_execute(pc, r->po, mem->node, &q);
}

/* Decide and act: each member's next step, carried out only when the pools' records are what the status says. */
static void pc_act_on_nodes(plan_controller_t *pc, pc_reconcile_t *r)
{
	const plan_t *plan = r->plan;
	for (size_t i = 0; i < plan->n_pools; i++) {
		pc_pool_run_t *run = &r->runs[i];
		r->failed_nodes += run->out.n_failed;
		for (size_t m = 0; m < run->n; m++) {
			const pool_member_t *mem = &run->members[m];
			if (!handover_step_settled(mem->state.step))
				pc_handover_entry(r->handovers, mem->node->meta.name, &mem->state, plan->pools[i].name,
						  mem->state.failure);
			if (pc_quarantine(pc, r, mem, &run->failures[m]))
				continue; /* its handover, if any, stops here: the next round sees the quarantine */
			if (r->record_changed)
				continue; /* restart safety: the record first */
			handover_usage_t use = { 0 };
			bool counted = handover_reads_usage(mem->state.step);
			if (counted)
				pc_usage(pc, plan, &plan->pools[i], mem->node->meta.name, &use);
			handover_input_t hin = { .plan = plan, .pool = &plan->pools[i], .node = mem->node, .state = &mem->state,
						 .usage = counted ? &use : NULL, .ads = &run->ads[m], .goal = run->out.goals[m], .now_ms = r->now,
						 .plan_uid = r->po->meta.uid };
			handover_decision_t d;
			handover_decide(&hin, &d);
			if (d.act == HANDOVER_ACT_REFUSE)
				r->refused++;
			pc_execute(pc, r->po, mem->node, &d);
			pc_requeue_within(&r->requeue_ms, d.requeue_ms);
			handover_decision_free(&d);
			handover_usage_free(&use);
		}
	}
}

static void pc_add_time(cJSON *obj, const char *key, int64_t ms)
{
	char t[RFC3339_LEN];
	if (ms == 0)
		return;
	pc_format_time(ms, t, sizeof(t));
	cJSON_AddStringToObject(obj, key, t);
}

/* status.pools[].driverFailures: the nodes in each class, those quarantined, and one line per failing node. */
static void pc_render_driver_failures(cJSON *p, const pc_pool_run_t *run)
{
	cJSON *df = cJSON_AddObjectToObject(p, "driverFailures");
	for (int c = 0; c < DRIVER_FAILURE_CLASSES; c++) {
		cJSON *nodes = cJSON_AddArrayToObject(df, driver_failure_class_name((driver_failure_class_t)c));
		for (size_t m = 0; m < run->n; m++)
			if (run->failures[m].in[c])
				cJSON_AddItemToArray(nodes, cJSON_CreateString(run->members[m].node->meta.name));
	}
	cJSON *quarantined = cJSON_AddArrayToObject(df, "quarantined");
	cJSON *messages = cJSON_AddArrayToObject(df, "messages");
	for (size_t m = 0; m < run->n; m++) {
		if (run->members[m].state.quarantine)
			cJSON_AddItemToArray(quarantined, cJSON_CreateString(run->members[m].node->meta.name));
		if (run->failures[m].message)
			cJSON_AddItemToArray(messages, cJSON_CreateString(run->failures[m].message));
	}
}

/* Render one pool's status entry; a phase change is an Event. */
static cJSON *pc_render_pool(plan_controller_t *pc, const pc_reconcile_t *r, size_t i)
{
	const pc_pool_run_t *run = &r->runs[i];
	const char *name = r->plan->pools[i].name;
	pool_phase_t ph = run->out.phase;
	const cJSON *old_phase = cJSON_GetObjectItemCaseSensitive(plan_object_pool_status(r->po, name), "phase");
	/* Said once, with the status that records it: not in a round whose status waits for the finalizer. */
	if (!pc->dry_run && r->write_status &&
	    (!cJSON_IsString(old_phase) || strcmp(old_phase->valuestring, pool_phase_name(ph)) != 0))
		events_emit(pc->events, &r->ref, ph == POOL_FAILED ? "Warning" : "Normal", "PoolPhaseChanged", "Migrate",
			    "pool %s: %s -> %s: %s", name, cJSON_IsString(old_phase) ? old_phase->valuestring : "(new)",
			    pool_phase_name(ph), run->out.message ? run->out.message : "");
	const cJSON *was_awaiting = cJSON_GetObjectItemCaseSensitive(plan_object_pool_status(r->po, name), "awaitingApproval");
	if (!pc->dry_run && r->write_status && run->out.awaiting_approval && !cJSON_IsTrue(was_awaiting))
		events_emit(pc->events, &r->ref, "Normal", "AwaitingApproval", "Promote",
			    "pool %s: canary baked and its SLO gate passed; promotion is Manual: approve with kubectl "
			    "drashift promote %s %s",
			    name, r->plan->name, name);
	cJSON *p = cJSON_CreateObject();
	cJSON_AddStringToObject(p, "name", name);
	cJSON_AddStringToObject(p, "phase", pool_phase_name(ph));
	if (run->out.awaiting_approval)
		cJSON_AddBoolToObject(p, "awaitingApproval", true);
	cJSON *counts = cJSON_AddObjectToObject(p, "nodes");
	cJSON_AddNumberToObject(counts, "legacy", (double)run->out.n_legacy);
	cJSON_AddNumberToObject(counts, "inHandover", (double)run->out.n_handover);
	cJSON_AddNumberToObject(counts, "dra", (double)run->out.n_dra);
	cJSON_AddNumberToObject(counts, "failed", (double)run->out.n_failed);
	cJSON_AddNumberToObject(counts, "quarantined", (double)run->out.n_quarantined);
	cJSON_AddNumberToObject(counts, "total", (double)run->n);
	pc_render_driver_failures(p, run);
	cJSON *batch = cJSON_AddArrayToObject(p, "currentBatch");
	for (size_t m = 0; m < run->n; m++)
		if (handover_step_in_flight(run->members[m].state.step))
			cJSON_AddItemToArray(batch, cJSON_CreateString(run->members[m].node->meta.name));
	cJSON *canary = cJSON_AddArrayToObject(p, "canaryNodes");
	for (size_t c = 0; c < run->out.record.n_canary; c++)
		cJSON_AddItemToArray(canary, cJSON_CreateString(run->out.record.canary_nodes[c]));
	pc_add_time(p, "startTime", run->out.record.start_ms);
	pc_add_time(p, "bakeStartTime", run->out.record.bake_start_ms);
	pc_add_time(p, "finishTime", run->out.record.finish_ms);
	cJSON_AddStringToObject(p, "message", run->out.message ? run->out.message : "");
	char *gate = plan_status_gate_summary(run->signals, run->n_signals, r->plan->slo.min_samples);
	cJSON_AddStringToObject(p, "gate", gate);
	free(gate);
	cJSON *capacity = cJSON_AddObjectToObject(p, "capacity");
	cJSON *units = cJSON_AddObjectToObject(capacity, "legacyUnits");
	cJSON *devices = cJSON_AddObjectToObject(capacity, "draDevices");
	for (int s = 0; s < CAPACITY_STATES; s++) {
		cJSON_AddNumberToObject(units, capacity_state_name((capacity_state_t)s), (double)run->capacity.units[s]);
		cJSON_AddNumberToObject(devices, capacity_state_name((capacity_state_t)s), (double)run->capacity.devices[s]);
	}
	return p;
}

/* Render every pool's signals: value, threshold, samples and verdict. */
static void pc_render_signals(cJSON *st, const pc_reconcile_t *r)
{
	cJSON *signals = cJSON_AddArrayToObject(st, "signals");
	for (size_t i = 0; i < r->plan->n_pools; i++)
		for (size_t k = 0; k < r->runs[i].n_signals; k++) {
			const slo_result_t *s = &r->runs[i].signals[k];
			char value[64], threshold[64];
			plan_status_signal_text(s, value, threshold, sizeof(value));
			cJSON *sig = cJSON_CreateObject();
			cJSON_AddStringToObject(sig, "name", s->name);
			cJSON_AddStringToObject(sig, "pool", r->plan->pools[i].name);
			cJSON_AddStringToObject(sig, "value", value);
			cJSON_AddStringToObject(sig, "threshold", threshold);
			if (s->id == SLO_ALLOCATION_LATENCY) {
				/* Beside the judged value: the same p95 counted from the claims' creation. */
				slo_result_t raw = *s;
				raw.value = s->raw_value;
				plan_status_signal_text(&raw, value, threshold, sizeof(value));
				cJSON_AddStringToObject(sig, "rawValue", value);
			}
			cJSON_AddNumberToObject(sig, "samples", s->samples);
			cJSON_AddStringToObject(sig, "verdict", slo_verdict_name(s->verdict));
			if (s->id == SLO_PROMETHEUS) {
				/* Why it has no value (no data, the query's error), and how many answers failed. */
				cJSON_AddStringToObject(sig, "source", "Prometheus");
				if (s->detail)
					cJSON_AddStringToObject(sig, "message", s->detail);
				cJSON_AddNumberToObject(sig, "errors", (double)s->errors);
			}
			if (s->id == SLO_DRIVER_ERRORS) {
				/* The pool's nodes in each driver failure class (retryable ones are shown, not counted). */
				cJSON *by = cJSON_AddObjectToObject(sig, "byClass");
				for (int c = 0; c < DRIVER_FAILURE_CLASSES; c++)
					cJSON_AddNumberToObject(by, driver_failure_class_name((driver_failure_class_t)c),
								(double)r->runs[i].by_class[c]);
			}
			cJSON_AddItemToArray(signals, sig);
		}
}

/* Render status.breach: a new one, or the recorded one with its acknowledgement. */
static void pc_render_breach(cJSON *st, const pc_reconcile_t *r)
{
	const plan_new_breach_t *nb = &r->new_breach;
	if (nb->found) {
		cJSON *b = cJSON_AddObjectToObject(st, "breach");
		cJSON_AddStringToObject(b, "id", nb->id);
		cJSON_AddStringToObject(b, "pool", r->plan->pools[nb->pool].name);
		cJSON_AddStringToObject(b, "signal", nb->signal);
		cJSON_AddStringToObject(b, "value", nb->value);
		cJSON_AddStringToObject(b, "threshold", nb->threshold);
		cJSON_AddStringToObject(b, "time", r->now_s);
		return;
	}
	if (r->breach == NULL)
		return;
	cJSON *kept = cJSON_Duplicate(r->breach, true);
	cJSON_DeleteItemFromObjectCaseSensitive(kept, "acknowledged");
	cJSON_DeleteItemFromObjectCaseSensitive(kept, "acknowledgedTime");
	if (r->freeze.acknowledged) {
		cJSON_AddBoolToObject(kept, "acknowledged", true);
		pc_add_time(kept, "acknowledgedTime", r->freeze.judge_since_ms);
	}
	cJSON_AddItemToObject(st, "breach", kept);
}

/* The breach that holds the freeze: the one recorded now, or the one recorded before. */
static plan_breach_t pc_breach_in_force(const pc_reconcile_t *r)
{
	if (!r->new_breach.found)
		return r->recorded;
	return (plan_breach_t){ .id = r->new_breach.id, .pool = r->breach_pool, .signal = r->new_breach.signal,
				.value = r->new_breach.value, .threshold = r->new_breach.threshold };
}

/* The first pool (plan order) waiting for a person's promotion, or NULL. */
static const char *pc_awaiting_approval(const pc_reconcile_t *r)
{
	for (size_t i = 0; i < r->plan->n_pools; i++)
		if (r->runs[i].out.awaiting_approval)
			return r->plan->pools[i].name;
	return NULL;
}

/*
 * Condition ExtendedResourceOnDRA: whether pods asking for the plan's
 * extended resource can run on DRA nodes (a class of the plan maps it), and
 * when not, why and what to enable on this Kubernetes version. Only for plans
 * that name an extended resource.
 */
static void pc_render_extended_resource(plan_controller_t *pc, cJSON *conds, const pc_reconcile_t *r)
{
	const plan_t *plan = r->plan;
	if (plan->extended_resource == NULL)
		return;
	const store_t *classes = cache_store(pc->cache, CACHE_DEVICE_CLASSES);
	const char **mapped = xcalloc(plan->n_device_classes + 1, sizeof(*mapped));
	for (size_t i = 0; i < plan->n_device_classes; i++) {
		const projection_device_class_t *dc = store_get(classes, NULL, plan->device_classes[i]);
		mapped[i] = dc ? dc->extended_resource_name : NULL;
	}
	char *gap = api_versions_extended_resource_gap(plan->extended_resource, (const char *const *)plan->device_classes,
						      mapped, plan->n_device_classes, pc->kube_minor);
	char *ok = gap ? NULL : xasprintf("pods asking for %s can run on DRA nodes: a DeviceClass of the plan maps it",
					 plan->extended_resource);
	pc_condition(conds, r->po->status, "ExtendedResourceOnDRA", gap == NULL, gap ? "NotMapped" : "Mapped",
		     gap ? gap : ok, r->po->generation, r->now_s);
	free(gap);
	free(ok);
	free(mapped);
}

/* Quarantined: which nodes a permanent driver failure took out of their pools, and how to lift it. */
static void pc_render_quarantine(cJSON *conds, const pc_reconcile_t *r)
{
	buf_t names;
	buf_init(&names, PLAN_QUARANTINE_NAMES_MAX);
	size_t n = 0, listed = 0;
	for (size_t i = 0; i < r->plan->n_pools; i++)
		for (size_t m = 0; m < r->runs[i].n; m++) {
			const pool_member_t *mem = &r->runs[i].members[m];
			if (mem->state.quarantine == NULL && r->runs[i].failures[m].patch == NULL)
				continue;
			n++;
			/* The condition's message holds 32768 bytes: names that do not fit are counted. */
			char *one = xasprintf("%s%s (pool %s)", listed ? ", " : "", mem->node->meta.name,
					      r->plan->pools[i].name);
			if (!names.full && buf_puts(&names, one) == 0)
				listed++;
			free(one);
		}
	char *msg = n ? xasprintf("%zu node(s) quarantined by a permanent driver failure, cordoned and left out of "
				  "their pools' progress: %s%s; once the driver is fixed, acknowledge the breach (failures "
				  "before it are judged no more), then lift with kubectl annotate node NODE %s- and uncordon it",
				  n, names.data ? names.data : "", listed < n ? ", and more (status.pools[].driverFailures)" : "",
				  DRIVER_FAILURE_ANN_QUARANTINE)
		      : xstrdup("no node is quarantined");
	pc_condition(conds, r->po->status, "Quarantined", n > 0, n ? "PermanentDriverFailure" : "NoneQuarantined", msg,
		     r->po->generation, r->now_s);
	free(msg);
	buf_free(&names);
}

/* Render the plan's conditions as the reconciler decided them. */
static void pc_render_conditions(plan_controller_t *pc, cJSON *st, const pc_reconcile_t *r, const pool_phase_t *phases)
{
	const char *name = r->po->meta.name;
	plan_breach_t in_force = pc_breach_in_force(r);
	const cJSON *conflict = cJSON_GetArrayItem(r->conflicts, 0);
	plan_conditions_input_t in = {
		.plan = r->plan,
		.phases = phases,
		.frozen = r->freeze.frozen,
		.acknowledged = r->freeze.acknowledged,
		.breach = &in_force,
		.param_error = strmap_get(&pc->param.errors, name),
		.taint_error = strmap_get(&pc->taint.errors, name),
		.retry_seconds = PLAN_FREEZE_RETRY_MS / 1000,
		.first_conflict = conflict ? conflict->valuestring : NULL,
		.failed_nodes = r->failed_nodes,
		.refused_nodes = r->refused,
		.awaiting_approval = pc_awaiting_approval(r),
		.tenancy_param = pc_tenancy_param(pc, name),
		.tenancy_error = strmap_get(&pc->tenancy.errors, name),
	};
	plan_condition_t conds[PLAN_CONDITIONS];
	plan_status_conditions(&in, conds);
	cJSON *out = cJSON_AddArrayToObject(st, "conditions");
	for (int c = 0; c < PLAN_CONDITIONS; c++)
		pc_condition(out, r->po->status, conds[c].type, conds[c].status, conds[c].reason, conds[c].message,
			     r->po->generation, r->now_s);
	plan_conditions_free(conds);
	pc_render_preflight_condition(pc, out, r);
	pc_render_extended_resource(pc, out, r);
	pc_render_quarantine(out, r);
}

/* Render the whole status of a valid plan. */
static cJSON *pc_render_status(plan_controller_t *pc, const pc_reconcile_t *r)
{
	const plan_t *plan = r->plan;
	cJSON *st = cJSON_CreateObject();
	pool_phase_t *phases = xcalloc(plan->n_pools + 1, sizeof(*phases));
	size_t pools_dra = 0, nodes_dra = 0, nodes_total = 0;
	const char **messages = xcalloc(plan->n_pools + 1, sizeof(*messages));
	pool_record_t *records = xcalloc(plan->n_pools + 1, sizeof(*records));
	bool *held = xcalloc(plan->n_pools + 1, sizeof(*held));
	cJSON *pools = cJSON_AddArrayToObject(st, "pools");
	for (size_t i = 0; i < plan->n_pools; i++) {
		phases[i] = r->runs[i].out.phase;
		messages[i] = r->runs[i].out.message;
		records[i] = r->runs[i].out.record;
		held[i] = r->runs[i].preflight_held;
		pools_dra += phases[i] == POOL_DRA;
		nodes_dra += r->runs[i].out.n_dra;
		nodes_total += r->runs[i].n;
		cJSON_AddItemToArray(pools, pc_render_pool(pc, r, i));
	}
	/* First in kubectl describe (its fields are sorted): the phase, what happens next, what to do. */
	plan_breach_t in_force = pc_breach_in_force(r);
	plan_activity_input_t activity = { .plan = plan, .phases = phases, .messages = messages, .records = records,
					   .preflight_held = held, .frozen = r->freeze.frozen, .breach = &in_force,
					   .awaiting_approval = pc_awaiting_approval(r), .now_ms = r->now };
	char *text = plan_status_activity(&activity);
	cJSON_AddStringToObject(st, "activity", text);
	free(text);
	free(messages);
	free(records);
	free(held);
	pc_render_signals(st, r);
	pc_render_breach(st, r);
	cJSON_AddStringToObject(st, "phase", plan_status_phase(phases, plan->n_pools, r->freeze.frozen, plan->paused));
	cJSON_AddNumberToObject(st, "observedGeneration", (double)r->po->generation);
	char buf[64];
	snprintf(buf, sizeof(buf), "%zu/%zu", pools_dra, plan->n_pools);
	cJSON_AddStringToObject(st, "poolsOnDRA", buf);
	snprintf(buf, sizeof(buf), "%zu/%zu", nodes_dra, nodes_total);
	cJSON_AddStringToObject(st, "nodesOnDRA", buf);
	cJSON_AddBoolToObject(st, "frozen", r->freeze.frozen);
	if (plan->n_windows > 0) {
		cJSON *w = cJSON_AddObjectToObject(st, "window");
		cJSON_AddBoolToObject(w, "open", r->window_open);
		if (r->window_edge_s[0])
			cJSON_AddStringToObject(w, r->window_open ? "closeTime" : "nextOpenTime", r->window_edge_s);
	}
	cJSON_AddBoolToObject(st, "holdsNodes", r->holds);
	cJSON_AddItemToObject(st, "handovers", cJSON_Duplicate(r->handovers, true));
	pc_render_preflight(st, r);
	pc_render_conditions(pc, st, r, phases);
	free(phases);
	return st;
}

/*
 * Keep the plan's tenant boundary (reconcilers/tenancy.h) in its admission
 * parameter. Asserted once after a start (an apply of what is in place
 * changes nothing), then whenever the decision changes. The pool entering its
 * canary is seen while the canary is being recorded, before any of its nodes
 * starts, so the restriction is written before DRA serves anyone.
 */
static void pc_assert_tenancy(plan_controller_t *pc, const pc_reconcile_t *r)
{
	const plan_t *plan = r->plan;
	tenancy_pool_t *pools = xcalloc(plan->n_pools + 1, sizeof(*pools));
	for (size_t i = 0; i < plan->n_pools; i++) {
		const pool_output_t *out = &r->runs[i].out;
		pools[i] = (tenancy_pool_t){ .phase = out->phase,
					     .n_canary = out->record.n_canary,
					     .n_moved = out->n_dra + out->n_handover + out->n_failed };
	}
	tenancy_t t;
	tenancy_decide(plan, pools, &t);
	free(pools);
	char *json = tenancy_parameter_json(plan, r->po->meta.uid, &t);
	const char *had = strmap_get(&pc->tenancy.written, plan->name);
	if (json == NULL || (had && strcmp(had, json) == 0) || pc_freeze_retry_pending(pc, plan->name, had) || pc->dry_run) {
		tenancy_free(&t);
		free(json);
		return;
	}
	pc_write_t *w = pc_switch_write(pc, &pc->tenancy, plan->name, "tenancy parameter",
				      "tenant boundary written: claims for the plan's classes are admitted as the stage says",
				      "stage", tenancy_stage_name(t.stage));
	if (tenancy_parameter_set(pc->http, json, plan->name, pc_on_write, w) == 0) {
		pc->in_flight++;
		strmap_put(&pc->tenancy.writing, plan->name, pc);
		free(strmap_put(&pc->tenancy.written, plan->name, json));
	} else {
		pc_write_free(w);
		free(json);
	}
	tenancy_free(&t);
}

/* ---- history ---------------------------------------------------------------- */

/* The node owner's devices that serve nobody, added to devices[path] (reconcilers/history.h says which are idle). */
static void pc_free_devices(const plan_controller_t *pc, const plan_t *plan, const plan_pool_t *pool,
			    const pc_pool_run_t *run, size_t m, int64_t devices[HISTORY_PATHS][2])
{
	const pool_member_t *mem = &run->members[m];
	const handover_ads_t *ads = &run->ads[m];
	if (mem->state.step == HANDOVER_LEGACY)
		history_node_devices(ads->allocatable, pc_rec_legacy(pc, plan, pool, mem->node, run->recs[m])->legacy_used,
				     &devices[HISTORY_PATH_LEGACY][0], &devices[HISTORY_PATH_LEGACY][1]);
	else if (mem->state.step == HANDOVER_DRA)
		history_node_devices(ads->slice_devices, pc_rec_dra(pc, plan, mem->node, run->recs[m])->dra_held,
				     &devices[HISTORY_PATH_DRA][0], &devices[HISTORY_PATH_DRA][1]);
}

/* Record what this reconcile saw in the plan's history: phases, steps, the breach, signals and free devices. */
static void pc_record_history(plan_controller_t *pc, const pc_reconcile_t *r)
{
	const char *name = r->po->meta.name;
	plan_history_t *h = pc->history;
	if (h == NULL || !plan_history_ready(h, name, r->po->meta.uid, r->now))
		return;
	for (size_t i = 0; i < r->plan->n_pools; i++) {
		const pc_pool_run_t *run = &r->runs[i];
		const char *pool = r->plan->pools[i].name;
		plan_history_pool(h, name, pool, pool_phase_name(run->out.phase), r->now);
		uint64_t epoch = plan_history_epoch(h);
		for (size_t m = 0; m < run->n; m++) {
			const pool_member_t *mem = &run->members[m];
			pc_node_rec_t *rec = run->recs[m];
			/* A member is told again only when its step changed, or the history may remember otherwise. */
			if (rec->told && rec->told_epoch == epoch && rec->told_step == mem->state.step &&
			    rec->told_since_ms == mem->state.since_ms)
				continue;
			char left[64];
			int64_t held = plan_history_node(h, name, pool, mem->node->meta.name, handover_step_name(mem->state.step),
							 mem->state.since_ms, r->now, left, sizeof(left));
			if (held >= 0 && pc->m_step_seconds)
				metrics_histogram_observe(pc->m_step_seconds, (double)held / 1000, left, NULL);
			rec->told = true;
			rec->told_epoch = epoch;
			rec->told_step = mem->state.step;
			rec->told_since_ms = mem->state.since_ms;
		}
		bool at_rest = run->out.phase == POOL_LEGACY || run->out.phase == POOL_DRA;
		if (!plan_history_sample_due(h, name, pool, run->signals, at_rest, r->now))
			continue;
		int64_t devices[HISTORY_PATHS][2] = { { 0 } };
		for (size_t m = 0; m < run->n; m++)
			pc_free_devices(pc, r->plan, &r->plan->pools[i], run, m, devices);
		plan_history_sample(h, name, pool, run->signals, run->gate, devices, at_rest, r->now);
	}
	const plan_new_breach_t *nb = &r->new_breach;
	if (nb->found)
		plan_history_breach(h, name, nb->id, r->plan->pools[nb->pool].name, nb->signal, nb->value, nb->threshold,
				    false, r->now);
	else
		plan_history_breach(h, name, r->recorded.id, r->recorded.pool, r->recorded.signal, r->recorded.value,
				    r->recorded.threshold, r->freeze.acknowledged, r->now);
	plan_history_flush(h, r->now);
}

/* A pod changed: count it in the DRA-against-legacy comparison of the plan whose pool it runs in (or asks for). */
static void pc_history_pod(plan_controller_t *pc, const projection_pod_t *old, const projection_pod_t *new)
{
	const projection_pod_t *pod = new ? new : old;
	const store_t *plans = cache_store(pc->cache, CACHE_PLANS);
	const char *node = pod->node_name ? pod->node_name : old ? old->node_name : NULL;
	if (node != NULL) {
		const pool_index_node_t *n = pool_index_node(&pc->pools, node);
		const plan_object_t *po = n ? store_get(plans, NULL, n->matches[0].plan) : NULL;
		int64_t count = 0;
		if (po && po->valid && pod->n_claims > 0)
			plan_history_pod(pc->history, po->meta.name, n->matches[0].pool, HISTORY_PATH_DRA, old, new);
		else if (po && po->valid &&
			 projection_quantity_find(pod->requests, pod->n_requests, po->plan.extended_resource, &count))
			plan_history_pod(pc->history, po->meta.name, n->matches[0].pool, HISTORY_PATH_LEGACY, old, new);
	} else {
		/* Not placed: the plan whose extended resource, or whose DeviceClasses through its claims, it asks for. */
		const store_t *claims = cache_store(pc->cache, CACHE_CLAIMS);
		size_t it = 0;
		const void *v;
		bool counted = false;
		while (!counted && store_next(plans, &it, &v)) {
			const plan_object_t *po = v;
			int64_t count = 0;
			if (!po->valid)
				continue;
			for (size_t c = 0; c < pod->n_claims && !counted; c++) {
				const projection_claim_t *claim = store_get(claims, pod->meta.namespace, pod->claims[c]);
				for (size_t k = 0; claim && k < claim->n_device_classes && !counted; k++)
					for (size_t d = 0; d < po->plan.n_device_classes && !counted; d++)
						counted = strcmp(claim->device_classes[k], po->plan.device_classes[d]) == 0;
			}
			if (counted)
				plan_history_pod(pc->history, po->meta.name, NULL, HISTORY_PATH_DRA, old, new);
			else if (pod->n_claims == 0 &&
				 projection_quantity_find(pod->requests, pod->n_requests, po->plan.extended_resource, &count)) {
				plan_history_pod(pc->history, po->meta.name, NULL, HISTORY_PATH_LEGACY, old, new);
				counted = true;
			}
		}
	}
	if (new == NULL)
		plan_history_pod_gone(pc->history, old);
}

static void pc_reconcile_free(pc_reconcile_t *r)
{
	for (size_t i = 0; i < r->plan->n_pools; i++) {
		pool_output_free(&r->runs[i].out); /* members, recs and ads are the plan's pc_members_t */
		free(r->runs[i].canary_names);
		free(r->runs[i].gate_waiting);
		for (size_t m = 0; r->runs[i].failures && m < r->runs[i].n; m++)
			driver_failure_decision_free(&r->runs[i].failures[m]);
		free(r->runs[i].failures);
	}
	free(r->runs);
	cJSON_Delete(r->handovers);
	plan_new_breach_free(&r->new_breach);
	cJSON_Delete(r->adopted);
	preflight_result_free(&r->preflight);
}

static void pc_capacity_free(void *v)
{
	if (v)
		slo_capacity_free(v);
	free(v);
}

/* Forget the capacity history of a plan's pools. */
static void pc_capacity_forget(plan_controller_t *pc, const char *plan)
{
	size_t n;
	char **keys = pc_names(&pc->capacity, &n);
	size_t len = strlen(plan);
	for (size_t i = 0; i < n; i++)
		if (strncmp(keys[i], plan, len) == 0 && keys[i][len] == '\x1f')
			pc_capacity_free(strmap_remove(&pc->capacity, keys[i]));
	pc_names_free(keys, n);
}

/* The plan is gone or going: forget what this process remembers of it, and release its nodes while its finalizer holds it. */
static void pc_reconcile_gone(plan_controller_t *pc, const char *name, const plan_object_t *po, uint64_t *requeue_ms)
{
	/* Its freeze objects and its history go with the garbage collector. */
	pc_metrics_forget(pc, name);
	prom_query_forget(pc->prom, name);
	pc_slo_view_free(strmap_remove(&pc->slo_views, name));
	pc_members_free(strmap_remove(&pc->members, name));
	if (pc->history)
		plan_history_forget(pc->history, name);
	if (pc->notifier)
		notifier_forget(pc->notifier, name);
	pc_switch_forget(&pc->param, name);
	pc_switch_forget(&pc->taint, name);
	pc_switch_forget(&pc->tenancy, name);
	pc_preflight_free(strmap_remove(&pc->preflight, name));
	pc_capacity_forget(pc, name);
	cJSON_Delete(strmap_remove(&pc->judged_ahead, name));
	if (po && po->releases_nodes)
		pc_release_deleting(pc, po, requeue_ms);
}

/* Start a reconcile of po at this moment (ahead: pc_judge_plan_ahead's), its pools' members gathered. */
static void pc_gather(plan_controller_t *pc, const plan_object_t *po, bool ahead, pc_reconcile_t *r)
{
	*r = (pc_reconcile_t){ .po = po, .plan = &po->plan, .now = pc_now_ms(),
			       .handovers = cJSON_CreateArray(), .ahead = ahead };
	r->ref = (events_object_ref_t){ .api_version = "drashift.io/v1alpha1", .kind = "MigrationPlan",
					.name = po->meta.name, .uid = po->meta.uid };
	pc_format_time(r->now, r->now_s, sizeof(r->now_s));
	r->runs = xcalloc(r->plan->n_pools + 1, sizeof(*r->runs));
	pc_gather_members(pc, r);
}

static void pc_reconcile(plan_controller_t *pc, const char *name, uint64_t *requeue_ms)
{
	const plan_object_t *po = store_get(cache_store(pc->cache, CACHE_PLANS), NULL, name);
	if (po == NULL || po->meta.deleting) {
		pc_reconcile_gone(pc, name, po, requeue_ms);
		return;
	}
	if (!po->valid) {
		log_warn("plan is invalid; nothing is done for it", "plan", name, "error", po->invalid_reason);
		pc_status_invalid(pc, po, po->invalid_reason);
		pc_metrics_forget(pc, name);
		prom_query_forget(pc->prom, name);
		return;
	}
	char *refused = api_versions_freeze_refusal(po->plan.slo.freeze_mode, &pc->apis, pc->kube_minor);
	if (refused) {
		log_warn("plan is invalid on this cluster; nothing is done for it", "plan", name, "error", refused);
		pc_status_invalid(pc, po, refused);
		pc_metrics_forget(pc, name);
		prom_query_forget(pc->prom, name);
		free(refused);
		return;
	}
	prom_query_sync(pc->prom, name, &po->plan.slo.prometheus);
	pc_reconcile_t r;
	pc_gather(pc, po, false, &r);
	r.requeue_ms = *requeue_ms;
	char *too_large = pc_canary_too_large(&r);
	if (too_large) {
		log_warn("plan is invalid; nothing is done for it", "plan", name, "error", too_large);
		pc_status_invalid(pc, po, too_large);
		free(too_large);
		pc_reconcile_free(&r);
		return;
	}
	pc_judge(pc, &r);
	pc_preflight(pc, &r);
	pc_decide_breach(pc, &r);
	pc_decide_pools(pc, &r);
	/* Hold nodes only once deleting the plan, or changing what it is, cannot strand them. */
	r.holds = pc_holds_nodes(pc, po, r.runs);
	if (r.holds && !pc_ready_to_hold(pc, po))
		r.record_changed = true;
	pc_act_on_nodes(pc, &r);
	pc_release_strays(pc, po, r.record_changed, r.now, &r.requeue_ms, r.handovers);
	pc_metrics_set(pc, name, r.plan, r.runs, r.freeze.frozen);
	pc_record_history(pc, &r);
	/* The finalizer goes first and alone: a status write would change the version its patch is based on. */
	r.write_status = !(r.holds && !po->releases_nodes && !pc->dry_run);
	cJSON *st = pc_render_status(pc, &r);
	const cJSON *recording = r.new_breach.found || r.adopted ? cJSON_GetObjectItemCaseSensitive(st, "breach") : NULL;
	/*
	 * A new breach freezes admission first: the parameter records the breach
	 * as fully as the status does (plan_status_adopts_breach), and an API
	 * server writes a ConfigMap several times faster than a custom resource's
	 * status. The DeviceTaintRule, the nodes and the notifications wait for
	 * the status (then_freeze).
	 */
	if (r.write_status && r.new_breach.found && plan_freeze_by_admission(r.plan->slo.freeze_mode))
		pc_assert_parameter(pc, po, recording, true);
	if (r.write_status)
		pc_requeue_within(&r.requeue_ms,
				  pc_write_status(pc, po, st,
						  pc->notifier ? notifier_decide(r.plan, po->status, st, r.now, r.now_s)
							       : NULL,
						  recording ? cJSON_Duplicate(recording, true) : NULL));
	else
		cJSON_Delete(st);
	if (r.recorded.id && !r.record_changed)
		pc_assert_freeze(pc, po, r.breach, r.freeze.frozen);
	pc_assert_tenancy(pc, &r);
	*requeue_ms = r.requeue_ms;
	pc_reconcile_free(&r);
}

/*
 * Judge a plan for a new breach only (r.ahead), and freeze at once when one
 * is found: the freeze parameter is written, the breach logged and its Event
 * sent, and the reconcile that follows the writes in flight records it in the
 * status (pc_adopt_ahead). Nothing else is decided here.
 */
static void pc_judge_plan_ahead(plan_controller_t *pc, const plan_object_t *po)
{
	pc_reconcile_t r;
	pc_gather(pc, po, true, &r);
	char *too_large = pc_canary_too_large(&r);
	if (too_large == NULL) {
		pc_judge(pc, &r);
		pc_decide_breach(pc, &r);
	}
	free(too_large);
	if (r.new_breach.found) {
		cJSON *rec = cJSON_CreateObject();
		cJSON_AddStringToObject(rec, "uid", po->meta.uid);
		pc_render_breach(rec, &r); /* rec.breach, as the status will record it */
		pc_assert_parameter(pc, po, cJSON_GetObjectItemCaseSensitive(rec, "breach"), true);
		cJSON_Delete(strmap_put(&pc->judged_ahead, po->meta.name, rec));
	}
	pc_reconcile_free(&r);
}

/*
 * A breach does not wait for a counts write (plan_status_judges_ahead).
 * While the writes in flight, or answered and not yet seen, are only plan
 * statuses that change no breach and no pool's phase, the plans whose freeze
 * goes through admission are judged for a new breach; no node write may be
 * pending, as every judgment reads the nodes' records. Returns whether it
 * judged: the slice change that made the turn urgent is then decided.
 */
static bool pc_judge_ahead(plan_controller_t *pc)
{
	if (pc->dry_run || pc->in_flight > pc->in_flight_status || strmap_size(&pc->expected) > 0)
		return false;
	const store_t *plans = cache_store(pc->cache, CACHE_PLANS);
	size_t it = 0;
	const void *v;
	while (store_next(plans, &it, &v)) {
		const plan_object_t *po = v;
		if (!po->valid || po->meta.deleting || po->meta.uid == NULL ||
		    !plan_freeze_by_admission(po->plan.slo.freeze_mode) ||
		    strmap_get(&pc->judged_ahead, po->meta.name) != NULL ||
		    !plan_status_judges_ahead(po->status, strmap_get(&pc->expected_status, po->meta.name)))
			continue;
		char *refused = api_versions_freeze_refusal(po->plan.slo.freeze_mode, &pc->apis, pc->kube_minor);
		if (refused == NULL)
			pc_judge_plan_ahead(pc, po);
		free(refused);
	}
	return true;
}

/* ---- the queue -------------------------------------------------------------- */

/* Our own writes must show in the caches before the next decision. */
static void pc_status_expectation_free(void *v)
{
	cJSON_Delete(v);
}

/* Remove keys (m's own, collected while iterating it) from m with their values; frees the list. */
static void pc_expectations_clear(strmap_t *m, const char **keys, size_t n, void (*free_value)(void *))
{
	for (size_t i = 0; i < n; i++) {
		char *key = xstrdup(keys[i]);
		free_value(strmap_remove(m, key));
		free(key);
	}
	free(keys);
}

static bool pc_expectations_met(plan_controller_t *pc)
{
	if (strmap_size(&pc->expected) == 0 && strmap_size(&pc->expected_status) == 0)
		return true;
	if (uv_now(pc->loop) - pc->expected_since > PLAN_EXPECTATION_TIMEOUT_MS) {
		log_warn("writes not seen in the caches in time; deciding from what they show");
		strmap_clear(&pc->expected, free);
		strmap_clear(&pc->expected_status, pc_status_expectation_free);
		return true;
	}
	/* Every expectation met is cleared this round, however many writes there were. */
	const store_t *plans = cache_store(pc->cache, CACHE_PLANS);
	size_t sit = 0;
	const char *plan_name;
	void *want_status;
	const char **met_plans = xcalloc(strmap_size(&pc->expected_status) + 1, sizeof(char *));
	size_t n_met = 0;
	while (strmap_next(&pc->expected_status, &sit, &plan_name, &want_status)) {
		const plan_object_t *po = store_get(plans, NULL, plan_name);
		if (po == NULL || (po->status && cJSON_Compare(po->status, want_status, true)))
			met_plans[n_met++] = plan_name;
	}
	pc_expectations_clear(&pc->expected_status, met_plans, n_met, pc_status_expectation_free);
	const store_t *nodes = cache_store(pc->cache, CACHE_NODES);
	size_t it = 0;
	const char *node_name;
	void *v;
	const char **seen_keys = xcalloc(strmap_size(&pc->expected) + 1, sizeof(char *));
	size_t n_seen = 0;
	while (strmap_next(&pc->expected, &it, &node_name, &v)) {
		const projection_node_t *node = store_get(nodes, NULL, node_name);
		const char *step = NULL;
		for (size_t a = 0; node && a < node->n_annotations; a++)
			if (strcmp(node->annotations[a].key, HANDOVER_ANN_STEP) == 0)
				step = node->annotations[a].value;
		const char *want = v;
		if (node == NULL || (want[0] == '\0' ? step == NULL : (step && strcmp(step, want) == 0)))
			seen_keys[n_seen++] = node_name;
	}
	pc_expectations_clear(&pc->expected, seen_keys, n_seen, free);
	return strmap_size(&pc->expected) == 0 && strmap_size(&pc->expected_status) == 0;
}

static void pc_on_timer(uv_timer_t *t)
{
	plan_controller_t *pc = t->data;
	if (pc->closing)
		return;
	uint64_t now = uv_now(pc->loop);
	bool ready = pc->apis_known && cache_synced(pc->cache) && pc_may_write(pc);
	if (!ready || pc->in_flight > 0 || !pc_expectations_met(pc)) {
		/* Judged ahead, a slice change waits for the writes like any other: no 5 ms turns meanwhile. */
		if (ready && pc_judge_ahead(pc))
			pc->urgent = false;
		if (pc->in_flight == 0)
			uv_timer_start(&pc->timer, pc_on_timer, 200, 0);
		return;
	}
	pc->urgent = false;
	const char *key;
	while ((key = workqueue_get(pc->queue, now)) != NULL) {
		char *name = xstrdup(key);
		uint64_t requeue = 0;
		uint64_t started = uv_hrtime();
		pc_reconcile(pc, name, &requeue);
		double seconds = (double)(uv_hrtime() - started) / 1e9;
		if (pc->m_reconcile_seconds)
			metrics_histogram_observe(pc->m_reconcile_seconds, seconds, NULL);
		char ms[24];
		snprintf(ms, sizeof(ms), "%.1f", seconds * 1e3);
		log_debug("reconciled", "plan", name, "ms", ms);
		workqueue_done(pc->queue, name);
		if (requeue)
			workqueue_add_after(pc->queue, name, requeue, now);
		free(name);
		if (pc->in_flight > 0)
			break; /* decide again once these writes are seen */
	}
	plan_controller_schedule(pc);
}

/* Arm the timer for the next reconcile, or, while only status writes are in flight, for pc_judge_ahead. */
static void plan_controller_schedule(plan_controller_t *pc)
{
	if (pc->closing || pc->in_flight > pc->in_flight_status)
		return;
	uint64_t due = workqueue_next_due(pc->queue, uv_now(pc->loop));
	if (due == UINT64_MAX)
		return;
	/*
	 * Events may bring the next reconcile forward, never push it back: a
	 * busy cluster sends them less than the 50 ms batching delay apart.
	 */
	uint64_t batch = pc->urgent ? PLAN_URGENT_MS : PLAN_BATCH_MS;
	timer_arm_within(&pc->timer, pc_on_timer, due < batch ? batch : due);
}

void plan_controller_stopped_leading(plan_controller_t *pc)
{
	if (pc->history)
		plan_history_forget(pc->history, NULL);
	strmap_clear(&pc->judged_ahead, pc_status_expectation_free); /* the next leader adopts them from the parameter */
	prom_query_close(pc->prom); /* only the leader asks Prometheus; reconciles start it again */
}

/* Reconcile every plan after delay_ms (0: now). */
static void pc_poke_after(plan_controller_t *pc, uint64_t delay_ms)
{
	if (pc->closing)
		return;
	uint64_t now = uv_now(pc->loop);
	size_t it = 0;
	const void *v;
	const reflector_t *r = cache_reflector(pc->cache, CACHE_PLANS);
	if (r == NULL)
		return;
	const store_t *plans = reflector_store(r);
	while (store_next(plans, &it, &v))
		workqueue_add_after(pc->queue, ((const plan_object_t *)v)->meta.name, delay_ms, now);
	plan_controller_schedule(pc);
}

void plan_controller_poke(plan_controller_t *pc)
{
	pc_poke_after(pc, 0);
}

/* Forget the entries of map (values freed) whose cluster-scoped object is gone from live. */
static void pc_forget_gone(strmap_t *map, const store_t *live)
{
	size_t n;
	char **names = pc_names(map, &n);
	for (size_t i = 0; i < n; i++)
		if (store_get(live, NULL, names[i]) == NULL)
			free(strmap_remove(map, names[i]));
	pc_names_free(names, n);
}

static void pc_on_orphan_timer(uv_timer_t *t)
{
	plan_controller_t *pc = t->data;
	pc_report_orphans(pc);
	/*
	 * A node that comes back has its refusal logged anew; a plan made again
	 * starts without a write time. A walk of every node: here, never at
	 * every change.
	 */
	pc_forget_gone(&pc->refusals, cache_store(pc->cache, CACHE_NODES));
	pc_forget_gone(&pc->status_written, cache_store(pc->cache, CACHE_PLANS));
}

static void pc_on_orphans_soon(uv_timer_t *t)
{
	pc_report_orphans(t->data);
}

/*
 * Count orphans on the next turn of the loop, once for all the changes of
 * this turn: a cache change arrives inside an HTTP callback, where the Event
 * an orphan gets cannot be sent.
 */
static void pc_orphans_soon(plan_controller_t *pc)
{
	if (!uv_is_active((uv_handle_t *)&pc->orphans_soon))
		uv_timer_start(&pc->orphans_soon, pc_on_orphans_soon, 0, 0);
}

/* A round of a plan's Prometheus queries is in: judge the plan again. */
static void pc_on_prom_answers(void *data, const char *plan)
{
	plan_controller_t *pc = data;
	if (pc->closing)
		return;
	workqueue_add(pc->queue, plan, uv_now(pc->loop));
	plan_controller_schedule(pc);
}

plan_controller_t *plan_controller_new(uv_loop_t *loop, kube_http_t *http, cache_t *cache, events_recorder_t *events,
				       const char *namespace, bool dry_run)
{
	plan_controller_t *pc = xcalloc(1, sizeof(*pc));
	pc->loop = loop;
	pc->http = http;
	pc->cache = cache;
	pc->events = events;
	pc->dry_run = dry_run;
	pc->queue = workqueue_new();
	pc->slo = slo_tracker_new();
	pc->history = dry_run ? NULL : plan_history_new(http);
	pc->notifier = dry_run ? NULL : notifier_new(loop);
	pool_index_init(&pc->pools, plan_selector_matches);
	pc->param = pc->taint = pc->tenancy =
		(pc_switch_t){ .written = STRMAP_INIT, .errors = STRMAP_INIT, .writing = STRMAP_INIT };
	pc->metric_pools = (strmap_t)STRMAP_INIT;
	pc->slo_views = (strmap_t)STRMAP_INIT;
	pc->members = (strmap_t)STRMAP_INIT;
	pc->expected = (strmap_t)STRMAP_INIT;
	pc->expected_status = (strmap_t)STRMAP_INIT;
	node_owners_init(&pc->owners);
	pc->finalizer_sent = (strmap_t)STRMAP_INIT;
	pc->orphans_reported = (strmap_t)STRMAP_INIT;
	pc->refusals = (strmap_t)STRMAP_INIT;
	pc->preflight = (strmap_t)STRMAP_INIT;
	pc->capacity = (strmap_t)STRMAP_INIT;
	pc->metric_queries = (strmap_t)STRMAP_INIT;
	pc->prom = prom_query_new(loop, http, namespace, pc_on_prom_answers, pc);
	uv_timer_init(loop, &pc->timer);
	pc->timer.data = pc;
	uv_timer_init(loop, &pc->orphan_timer);
	pc->orphan_timer.data = pc;
	uv_timer_init(loop, &pc->orphans_soon);
	pc->orphans_soon.data = pc;
	uv_timer_start(&pc->orphan_timer, pc_on_orphan_timer, PLAN_ORPHAN_CHECK_MS, PLAN_ORPHAN_CHECK_MS);
	return pc;
}

/* Queue the plan the node's records name. */
static void pc_queue_owner(plan_controller_t *pc, const char *node, uint64_t now)
{
	const char *plan = node_owners_of(&pc->owners, node);
	if (plan && plan[0] != '\0')
		workqueue_add(pc->queue, plan, now);
}

/* Queue the plans whose pools select the node. */
static void pc_queue_selecting(plan_controller_t *pc, const char *node, uint64_t now)
{
	const pool_index_node_t *n = pool_index_node(&pc->pools, node);
	for (size_t i = 0; n != NULL && i < n->n; i++)
		workqueue_add(pc->queue, n->matches[i].plan, now);
}

void plan_controller_observe(plan_controller_t *pc, cache_kind_t kind, const void *old, const void *new)
{
	if (pc->closing)
		return;
	int64_t now = pc_now_ms();
	const store_t *plans = cache_store(pc->cache, CACHE_PLANS);
	pc_node_changed(pc, kind, old, new);
	if (kind == CACHE_NODES) {
		/* Only the plans whose pools select the node, before or after the change, read it. */
		const char *name = ((const projection_node_t *)(new ? new : old))->meta.name;
		uint64_t queued = uv_now(pc->loop);
		pc_queue_selecting(pc, name, queued);
		pc_queue_owner(pc, name, queued);
		pool_index_set_node(&pc->pools, plans, name, new);
		node_owners_set(&pc->owners, name, new);
		pc_queue_selecting(pc, name, queued);
		pc_queue_owner(pc, name, queued);
		pc_orphans_soon(pc);
		plan_controller_schedule(pc);
		return;
	}
	if (kind == CACHE_PLANS) {
		pool_index_plan_changed(&pc->pools, plans, cache_store(pc->cache, CACHE_NODES), old, new);
		if (new == NULL)
			free(strmap_remove(&pc->finalizer_sent, ((const plan_object_t *)old)->meta.name));
		pc_orphans_soon(pc);
	} else if (kind == CACHE_SLICES) {
		uint64_t at = uv_now(pc->loop);
		if (at - pc->urgent_at >= PLAN_BATCH_MS) {
			pc->urgent = true;
			pc->urgent_at = at;
		}
	} else if (kind == CACHE_CLAIMS) {
		const projection_claim_t *gone = old;
		slo_tracker_observe_claim(pc->slo, new, new ? NULL : gone->meta.uid, now);
	} else if (kind == CACHE_PODS) {
		if (new != NULL)
			slo_tracker_observe_pod(pc->slo, new, now);
		if (pc->history)
			pc_history_pod(pc, old, new);
	}
	plan_controller_poke(pc);
}

void plan_controller_set_leader(plan_controller_t *pc, const leader_t *leader)
{
	pc->leader = leader;
}

void plan_controller_set_apis(plan_controller_t *pc, const api_versions_t *apis, int kube_minor)
{
	pc->apis = *apis;
	pc->kube_minor = kube_minor;
	pc->apis_known = true;
	plan_controller_poke(pc);
}

static void plan_controller_free(uv_handle_t *h)
{
	plan_controller_t *pc = h->data;
	void (*done)(void *) = pc->closed;
	void *data = pc->closed_data;
	workqueue_free(pc->queue);
	strmap_clear(&pc->slo_views, pc_slo_view_free);
	slo_tracker_free(pc->slo); /* after its views */
	plan_history_free(pc->history);
	notifier_free(pc->notifier);
	pool_index_free(&pc->pools);
	pc_switch_forget(&pc->param, NULL);
	pc_switch_forget(&pc->taint, NULL);
	pc_switch_forget(&pc->tenancy, NULL);
	strmap_clear(&pc->metric_pools, free);
	strmap_clear(&pc->metric_queries, free);
	prom_query_free(pc->prom);
	strmap_clear(&pc->expected, free);
	strmap_clear(&pc->expected_status, pc_status_expectation_free);
	strmap_clear(&pc->judged_ahead, pc_status_expectation_free);
	node_owners_free(&pc->owners);
	strmap_clear(&pc->finalizer_sent, free);
	strmap_clear(&pc->orphans_reported, NULL);
	strmap_clear(&pc->refusals, free);
	strmap_clear(&pc->status_written, free);
	strmap_clear(&pc->members, pc_members_free);
	strmap_clear(&pc->node_recs, free);
	strmap_clear(&pc->preflight, pc_preflight_free);
	strmap_clear(&pc->capacity, pc_capacity_free);
	free(pc);
	if (done)
		done(data);
}

static void plan_controller_drain(uv_timer_t *t)
{
	plan_controller_t *pc = t->data;
	if (pc->in_flight > 0 || pc->probes > 0 || (pc->history && plan_history_busy(pc->history)) ||
	    (pc->notifier && notifier_busy(pc->notifier)) || prom_query_busy(pc->prom) > 0) {
		uv_timer_start(&pc->timer, plan_controller_drain, 50, 0);
		return;
	}
	uv_close((uv_handle_t *)&pc->timer, plan_controller_free);
}

void plan_controller_close(plan_controller_t *pc, void (*done)(void *data), void *data)
{
	pc->closing = true;
	pc->closed = done;
	pc->closed_data = data;
	/* Closed before the drain closes the main timer, whose callback frees pc. */
	uv_close((uv_handle_t *)&pc->orphan_timer, NULL);
	uv_close((uv_handle_t *)&pc->orphans_soon, NULL);
	if (pc->notifier)
		notifier_close(pc->notifier);
	prom_query_close(pc->prom);
	uv_timer_stop(&pc->timer);
	uv_timer_start(&pc->timer, plan_controller_drain, 0, 0);
}
