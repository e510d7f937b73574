/*
 * The SLO gate: judging a pool's signals against the plan's thresholds
 * (docs/state-machines.md, "The SLO gate").
 *
 * Pure: slo_judge() reads samples the controller collected (see
 * controller/slo_tracker.h) plus now, and returns one result per signal. No
 * I/O, no clock. Its one rule above all: too few samples is Inconclusive,
 * never a pass, so losing observations (a restart, a watch gap) can delay a
 * pool but never wave it through.
 *
 * Signals, over the samples created within [now - window, now]:
 *   allocationLatencyP95     p95 of allocated - servable, in ms, over claims
 *                            whose allocation was observed happening, where
 *                            servable is the later of the claim's creation
 *                            and the moment the pool could first have served
 *                            it (slo_capacity_t); the raw p95 of allocated -
 *                            created is shown beside it (raw_value)
 *   readyLatencyP95          p95 of ready - allocated, in ms, over the same
 *                            claims once a consumer pod was seen Ready
 *   allocationFailurePercent claims that waited unallocatable (their pod
 *                            Pending, PodScheduled=False, Unschedulable) for
 *                            stuck_threshold or longer, as a percent of the
 *                            claims that are allocated or old enough to judge
 *   driverErrors             claims allocated whose pod stayed not Ready for
 *                            stuck_threshold or longer, plus claims with a
 *                            device condition False (each claim counts once),
 *                            plus the pool's nodes with a permanent or a
 *                            needs-cleanup driver failure (driver_failure.h;
 *                            a node in both counts once). Retryable failures
 *                            are shown by class but count only through the
 *                            claims they leave stuck
 *   capacityDrift            over the pool's DRA nodes, |physical devices the driver
 *                            publishes - devices the plugin's units stood for|
 *                            (slo_capacity_drift, reconcilers/capacity.h); a
 *                            node whose driver is rewriting its slices (its
 *                            pool incomplete) has no drift yet
 *   ownershipFights          label fights the controller saw
 *   failedSteps              node handover steps that failed
 *
 * Verdicts:
 *   - a latency with threshold 0 is NotJudged (the plan did not ask); its
 *     value is still measured and shown;
 *   - latency and percentage signals with fewer than min_samples samples are
 *     Inconclusive (the value is still shown);
 *   - driverErrors is a count over samples: more errors than allowed is a
 *     Breach however few the samples (more samples can only add errors), but
 *     a Pass needs min_samples allocated claims, otherwise Inconclusive;
 *   - capacityDrift, ownershipFights and failedSteps are counts judged
 *     always. The plan has no threshold for fights and failed steps: their
 *     threshold is 0, so one is a Breach. capacityDrift is Inconclusive in
 *     one case: it is within its threshold while a DRA node's driver is
 *     rewriting its ResourceSlices (drift_unknown). A driver republishes a
 *     pool slice by slice under a new generation, so a reader between two
 *     writes sees part of the pool; the scheduler allocates nothing from an
 *     incomplete pool, and neither does the judge count it. A driver that
 *     never finishes holds the gate (its detail says why) and leaves claims
 *     unallocated, which allocationFailurePercent judges;
 *   - Breach when value > threshold, otherwise Pass.
 *
 * Resolution: creation timestamps come from the API in whole seconds, and
 * "allocated"/"ready" are the times drashift observed the change, so each
 * allocation latency over-reads by up to 1 s plus the watch delay. Both
 * errors only ever make a latency look worse, never better. A negative
 * difference (clock skew between drashift and the API server) reads as 0.
 */
#ifndef DRASHIFT_SLO_H
#define DRASHIFT_SLO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plan.h"

typedef enum {
	SLO_ALLOCATION_LATENCY,
	SLO_READY_LATENCY,
	SLO_ALLOCATION_FAILURES,
	SLO_DRIVER_ERRORS,
	SLO_CAPACITY_DRIFT,
	SLO_OWNERSHIP_FIGHTS,
	SLO_FAILED_STEPS,
	SLO_SIGNALS,
	/* Not built in: a query of spec.slo.prometheus (reconcilers/prometheus.h), after the built-in ones. */
	SLO_PROMETHEUS = SLO_SIGNALS,
} slo_signal_id_t;

/* Room for a pool's signals: the built-in ones, then the plan's Prometheus queries. */
#define SLO_MAX_RESULTS (SLO_SIGNALS + PLAN_MAX_PROM_QUERIES)

typedef enum {
	SLO_PASS,
	SLO_BREACH,
	SLO_INCONCLUSIVE,
	SLO_UNJUDGED,
} slo_verdict_t;

/*
 * What was observed of one ResourceClaim. Times are wall-clock ms since the
 * epoch (they are compared with API creation timestamps).
 */
typedef struct {
	int64_t created_ms;   /* metadata.creationTimestamp */
	int64_t allocated_ms; /* first observed allocated; 0: not yet */
	int64_t ready_ms;     /* a consumer pod first observed Ready after that; 0: not yet (or not measurable) */
	/*
	 * Already allocated when first observed (drashift started, or the watch
	 * relisted): allocated_ms is the first sight, not the allocation, so the
	 * claim is no latency sample. It still counts for failures and driver errors.
	 */
	bool latency_unknown;
	/* A consumer pod was seen Pending with PodScheduled=False reason Unschedulable while the claim was unallocated. */
	bool unallocatable;
	/*
	 * Since allocation a consumer pod was seen waiting (not Ready, not
	 * finished) and none has been Ready: what a stuck prepare looks like.
	 */
	bool not_ready_since_allocation;
	/* status.devices[] reported a condition False at some point. */
	bool device_condition_false;
	/*
	 * The current wait (for allocation, or for Ready) ended without success:
	 * the claim was deleted or its pod went away. Its length is measured up
	 * to here instead of now, so a claim deleted after a long wait stays a
	 * failure for the whole window and one deleted quickly never becomes one.
	 * 0: still waiting (or not waiting).
	 */
	int64_t ended_ms;
} slo_sample_t;

/*
 * When a pool had no free DRA device, as the controller saw it: before its
 * first node reached DRA (that node's recorded step time), and each stretch
 * of observations that found every device of its DRA nodes allocated. A
 * claim could not have been served in those spans, so its latency is judged
 * from the end of the last one before its allocation (or from its creation,
 * if later): the migration is not blamed for a wait for capacity that did
 * not exist yet, nor for a wait for a full pool (the same wait the device
 * plugin would have had). Spans are only ever known too short (observations
 * are discrete, and a restart forgets the full stretches), which only makes
 * a latency look worse, never better.
 */
typedef struct {
	int64_t from_ms; /* the first observation that found the pool full */
	int64_t to_ms;   /* the last one that still did */
	bool open;       /* no observation since found a free device */
} slo_span_t;

typedef struct {
	int64_t first_dra_ms; /* earliest a node of the pool was seen on DRA (sticky); 0: none yet */
	slo_span_t *full;     /* oldest first */
	size_t n_full;
} slo_capacity_t;

/*
 * One observation of a pool at now_ms: first_dra_ms the earliest DRA step
 * time among its nodes (0: none on DRA), free_devices the devices of its DRA
 * nodes that no claim holds. Spans that ended before keep_since_ms are
 * dropped (the judge looks back one window).
 */
void slo_capacity_observe(slo_capacity_t *c, int64_t first_dra_ms, int64_t free_devices, int64_t now_ms,
			  int64_t keep_since_ms);
void slo_capacity_free(slo_capacity_t *c);

/*
 * When a claim created at created_ms, and allocated at until_ms (or still
 * waiting: now), could first have been served: never before created_ms,
 * never after until_ms. c NULL: its creation.
 */
int64_t slo_servable_ms(const slo_capacity_t *c, int64_t created_ms, int64_t until_ms, int64_t now_ms);

typedef struct {
	slo_signal_id_t id;
	/* allocationLatencyP95, readyLatencyP95, allocationFailurePercent, driverErrors, capacityDrift, ownershipFights, failedSteps */
	const char *name;
	double value;
	double raw_value; /* allocationLatencyP95: the p95 from creation; the others: value */
	double threshold;
	const char *unit; /* "ms", "%" or "" (a count) */
	uint32_t samples; /* samples the value was computed from (0 for the controller's counts) */
	slo_verdict_t verdict;
	/* Prometheus queries: why there is no value ("no data", the query's error), or NULL; borrowed. */
	const char *detail;
	uint64_t errors; /* Prometheus queries: errors since drashift started (the controller's count) */
} slo_result_t;

typedef struct {
	const plan_slo_t *slo;
	const slo_sample_t *samples; /* any order; those outside the window are skipped */
	size_t n_samples;
	int64_t capacity_drift;      /* the sign is ignored: too many devices is drift too */
	uint32_t drift_unknown;      /* DRA nodes left out of capacity_drift: their pool is incomplete */
	uint32_t fights;
	uint32_t failed_steps;
	/* The pool's nodes with a permanent or needsCleanup driver failure (driver_failure.h), each once. */
	uint32_t failing_nodes;
	const slo_capacity_t *capacity; /* NULL: latencies count from creation */
	int64_t now_ms;
} slo_input_t;

/*
 * One node on DRA: the physical devices its handover expected (-1: unknown,
 * the plugin advertised nothing), the physical devices its driver publishes
 * now, and whether its driver is rewriting them: slices there, but fewer at
 * the newest generation than the pool's resourceSliceCount (capacity.h).
 * A node with no slices at all is not incomplete: it publishes 0.
 */
typedef struct {
	int64_t expected;
	int64_t published;
	bool incomplete;
} slo_node_devices_t;

/*
 * The capacity drift of a pool: the sum of |published - expected| over nodes
 * whose expectation is known and whose pool is complete; *unknown counts the
 * nodes with a known expectation left out because their pool is incomplete.
 */
int64_t slo_capacity_drift(const slo_node_devices_t *nodes, size_t n, uint32_t *unknown);

/* Judge every signal; out[i].id == i. */
void slo_judge(const slo_input_t *in, slo_result_t out[SLO_SIGNALS]);

/*
 * The gate over n results (the built-in signals, then any Prometheus
 * queries): Breach if any signal breached (*first_breach, when first_breach
 * is not NULL, is the first breached signal in order), Pass only if every
 * judged signal passed, otherwise Inconclusive (*first_breach NULL).
 */
slo_verdict_t slo_gate(const slo_result_t *results, size_t n, const slo_result_t **first_breach);

/*
 * The exact nearest-rank percentile: the smallest value v such that at least
 * p percent of the values are <= v, that is sorted[ceil(p * n / 100) - 1]
 * (p95 of 1..100 is 95, of 20 values the 19th smallest, of one value that
 * value). Always one of the values, never interpolated; exact for integer p.
 * p <= 0 gives the smallest, p >= 100 the largest; n == 0 gives 0. Sorts
 * values in place.
 */
double slo_percentile(double *values, size_t n, double p);

/* "Pass", "Breach", "Inconclusive", "NotJudged". */
const char *slo_verdict_name(slo_verdict_t v);

/* The signal's status/metrics name (allocationLatencyP95, ...), "unknown" out of range. */
const char *slo_signal_name(slo_signal_id_t id);

#endif
