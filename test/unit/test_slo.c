/*
 * The SLO judge: each signal passes, breaches with its measured value and
 * threshold, is Inconclusive under min_samples (never a pass), NotJudged when
 * the plan sets no threshold, and only counts samples inside the window. The
 * percentile is exact nearest-rank. The gate breaches on any breach and
 * passes only when every judged signal passed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slo.h"

#define NOW 1764441600000LL
#define SEC 1000LL
#define MIN 60000LL

/* window 10m, stuck 5m, min_samples 10 */
static const plan_slo_t base = {
	.window_ms = 10 * MIN,
	.min_samples = 10,
	.allocation_latency_p95_ms = 2000,
	.ready_latency_p95_ms = 30000,
	.max_allocation_failure_percent = 5,
	.max_driver_errors = 0,
	.max_capacity_drift = 0,
	.stuck_threshold_ms = 5 * MIN,
};

/* ---- percentile ------------------------------------------------------------------ */

static void shuffle(double *v, size_t n)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)rand() % i;
		double t = v[i - 1];
		v[i - 1] = v[j];
		v[j] = t;
	}
}

static void test_percentile_is_exact_nearest_rank(void **state)
{
	(void)state;
	double v[100];
	srand(7);
	struct {
		double p;
		double want;
	} of_1_to_100[] = { { 95, 95 }, { 50, 50 }, { 99, 99 }, { 100, 100 }, { 0, 1 }, { 1, 1 }, { 0.5, 1 }, { 94.5, 95 } };
	for (size_t r = 0; r < sizeof(of_1_to_100) / sizeof(of_1_to_100[0]); r++) {
		for (size_t i = 0; i < 100; i++)
			v[i] = (double)(i + 1);
		shuffle(v, 100);
		double got = slo_percentile(v, 100, of_1_to_100[r].p);
		if (got != of_1_to_100[r].want)
			fail_msg("p%g of 1..100: got %g, want %g", of_1_to_100[r].p, got, of_1_to_100[r].want);
	}
	/* Sorted in place. */
	for (size_t i = 0; i < 100; i++)
		assert_true(v[i] == (double)(i + 1));

	/* 20 values: ceil(0.95 * 20) = 19, the 19th smallest, not an interpolation towards the 20th. */
	for (size_t i = 0; i < 20; i++)
		v[i] = (double)(10 * (i + 1));
	shuffle(v, 20);
	assert_true(slo_percentile(v, 20, 95) == 190);
	/* 21 values: ceil(19.95) = 20. */
	for (size_t i = 0; i < 21; i++)
		v[i] = (double)(i + 1);
	shuffle(v, 21);
	assert_true(slo_percentile(v, 21, 95) == 20);
	/* 19 values: ceil(18.05) = 19, the largest. */
	for (size_t i = 0; i < 19; i++)
		v[i] = (double)(i + 1);
	assert_true(slo_percentile(v, 19, 95) == 19);
	/* One value is every percentile; none is 0. */
	v[0] = 1234;
	assert_true(slo_percentile(v, 1, 95) == 1234);
	assert_true(slo_percentile(v, 1, 50) == 1234);
	assert_true(slo_percentile(v, 0, 95) == 0);
	/* Duplicates and an outlier: p95 of nineteen 5s and one 1000 is 5. */
	for (size_t i = 0; i < 19; i++)
		v[i] = 5;
	v[19] = 1000;
	shuffle(v, 20);
	assert_true(slo_percentile(v, 20, 95) == 5);
}

/* ---- signals, as table rows --------------------------------------------------------- */

/* One kind of sample, relative to NOW. */
typedef struct {
	int64_t created_ago;  /* created at NOW - created_ago */
	int64_t alloc_after;  /* allocated this long after creation; -1: not allocated */
	int64_t ready_after;  /* Ready this long after allocation; -1: not ready */
	int64_t ended_ago;    /* the wait ended at NOW - ended_ago; 0: not ended */
	bool unknown;         /* latency_unknown */
	bool unallocatable;
	bool not_ready;
	bool cond_false;
} proto_t;

typedef struct {
	const char *what;
	slo_signal_id_t signal;
	size_t n_a;
	proto_t a;
	size_t n_b;
	proto_t b;
	uint64_t threshold; /* the row's signal's threshold */
	slo_verdict_t verdict;
	double value;
	uint32_t samples;
} row_t;

#define ALLOCATED(ago, lat) { .created_ago = (ago), .alloc_after = (lat), .ready_after = -1 }
#define READY(ago, lat, rl) { .created_ago = (ago), .alloc_after = (lat), .ready_after = (rl) }

static const row_t rows[] = {
	/* allocationLatencyP95, threshold 2000 ms */
	{ "alloc: p95 under threshold passes (one slow claim in 20 is the 5%)", SLO_ALLOCATION_LATENCY,
	  19, ALLOCATED(MIN, 1000), 1, ALLOCATED(MIN, 9000), 2000, SLO_PASS, 1000, 20 },
	{ "alloc: two slow claims in 20 breach", SLO_ALLOCATION_LATENCY,
	  18, ALLOCATED(MIN, 1000), 2, ALLOCATED(MIN, 9000), 2000, SLO_BREACH, 9000, 20 },
	{ "alloc: exactly the threshold passes", SLO_ALLOCATION_LATENCY,
	  20, ALLOCATED(MIN, 2000), 0, { 0 }, 2000, SLO_PASS, 2000, 20 },
	{ "alloc: slow but under min_samples is inconclusive, not a breach", SLO_ALLOCATION_LATENCY,
	  9, ALLOCATED(MIN, 9000), 0, { 0 }, 2000, SLO_INCONCLUSIVE, 9000, 9 },
	{ "alloc: fast but under min_samples is inconclusive, never a pass", SLO_ALLOCATION_LATENCY,
	  9, ALLOCATED(MIN, 10), 5, { .created_ago = MIN, .alloc_after = -1, .ready_after = -1 }, 2000,
	  SLO_INCONCLUSIVE, 10, 9 },
	{ "alloc: threshold 0 is not judged, the value is still measured", SLO_ALLOCATION_LATENCY,
	  20, ALLOCATED(MIN, 9000), 0, { 0 }, 0, SLO_UNJUDGED, 9000, 20 },
	{ "alloc: samples created before the window do not count", SLO_ALLOCATION_LATENCY,
	  20, ALLOCATED(MIN, 1000), 20, ALLOCATED(11 * MIN, 60000), 2000, SLO_PASS, 1000, 20 },
	{ "alloc: samples created after now do not count", SLO_ALLOCATION_LATENCY,
	  20, ALLOCATED(MIN, 1000), 20, ALLOCATED(-MIN, 60000), 2000, SLO_PASS, 1000, 20 },
	{ "alloc: the window's oldest edge is inside", SLO_ALLOCATION_LATENCY,
	  10, ALLOCATED(MIN, 1000), 10, ALLOCATED(10 * MIN, 60000), 2000, SLO_BREACH, 60000, 20 },
	{ "alloc: allocations found already made are no latency samples", SLO_ALLOCATION_LATENCY,
	  20, ALLOCATED(MIN, 1000), 20, { .created_ago = MIN, .alloc_after = 60000, .ready_after = -1, .unknown = true },
	  2000, SLO_PASS, 1000, 20 },
	{ "alloc: only found-already-made allocations: inconclusive", SLO_ALLOCATION_LATENCY,
	  0, { 0 }, 30, { .created_ago = MIN, .alloc_after = 10, .ready_after = -1, .unknown = true },
	  2000, SLO_INCONCLUSIVE, 0, 0 },

	/* readyLatencyP95, threshold 30 s */
	{ "ready: under threshold passes", SLO_READY_LATENCY,
	  20, READY(2 * MIN, 500, 10000), 0, { 0 }, 30000, SLO_PASS, 10000, 20 },
	{ "ready: two slow pods in 20 breach", SLO_READY_LATENCY,
	  18, READY(2 * MIN, 500, 10000), 2, READY(2 * MIN, 500, 60000), 30000, SLO_BREACH, 60000, 20 },
	{ "ready: allocated claims whose pod is not Ready yet are no samples", SLO_READY_LATENCY,
	  20, READY(2 * MIN, 500, 10000), 5, ALLOCATED(2 * MIN, 500), 30000, SLO_PASS, 10000, 20 },
	{ "ready: under min_samples is inconclusive", SLO_READY_LATENCY,
	  5, READY(2 * MIN, 500, 90000), 15, ALLOCATED(2 * MIN, 500), 30000, SLO_INCONCLUSIVE, 90000, 5 },
	{ "ready: threshold 0 is not judged", SLO_READY_LATENCY,
	  20, READY(2 * MIN, 500, 90000), 0, { 0 }, 0, SLO_UNJUDGED, 90000, 20 },
	{ "ready: samples created before the window do not count", SLO_READY_LATENCY,
	  20, READY(2 * MIN, 500, 10000), 20, READY(20 * MIN, 500, 90000), 30000, SLO_PASS, 10000, 20 },
	{ "ready: not measured when the allocation time is unknown", SLO_READY_LATENCY,
	  20, READY(2 * MIN, 500, 10000), 20,
	  { .created_ago = 2 * MIN, .alloc_after = 500, .ready_after = 90000, .unknown = true }, 30000, SLO_PASS, 10000, 20 },

	/* allocationFailurePercent, threshold 5 %, stuck 5 min */
	{ "fail: all allocated passes at 0%", SLO_ALLOCATION_FAILURES,
	  20, ALLOCATED(MIN, 1000), 0, { 0 }, 5, SLO_PASS, 0, 20 },
	{ "fail: 2 of 20 stuck unallocatable past the threshold breach at 10%", SLO_ALLOCATION_FAILURES,
	  18, ALLOCATED(MIN, 1000), 2, { .created_ago = 6 * MIN, .alloc_after = -1, .ready_after = -1, .unallocatable = true },
	  5, SLO_BREACH, 10, 20 },
	{ "fail: exactly the threshold (1 in 20) passes", SLO_ALLOCATION_FAILURES,
	  19, ALLOCATED(MIN, 1000), 1, { .created_ago = 6 * MIN, .alloc_after = -1, .ready_after = -1, .unallocatable = true },
	  5, SLO_PASS, 5, 20 },
	{ "fail: pending claims younger than the stuck threshold are not judged yet", SLO_ALLOCATION_FAILURES,
	  20, ALLOCATED(MIN, 1000), 5, { .created_ago = MIN, .alloc_after = -1, .ready_after = -1, .unallocatable = true },
	  5, SLO_PASS, 0, 20 },
	{ "fail: old pending claims that are not unallocatable count, as successes", SLO_ALLOCATION_FAILURES,
	  19, ALLOCATED(MIN, 1000), 1, { .created_ago = 6 * MIN, .alloc_after = -1, .ready_after = -1 },
	  5, SLO_PASS, 0, 20 },
	{ "fail: under min_samples is inconclusive even at 50%", SLO_ALLOCATION_FAILURES,
	  4, ALLOCATED(MIN, 1000), 4, { .created_ago = 6 * MIN, .alloc_after = -1, .ready_after = -1, .unallocatable = true },
	  5, SLO_INCONCLUSIVE, 50, 8 },
	{ "fail: stuck claims created before the window do not count", SLO_ALLOCATION_FAILURES,
	  20, ALLOCATED(MIN, 1000), 5, { .created_ago = 11 * MIN, .alloc_after = -1, .ready_after = -1, .unallocatable = true },
	  5, SLO_PASS, 0, 20 },
	{ "fail: allocated only after a stuck wait still failed", SLO_ALLOCATION_FAILURES,
	  18, ALLOCATED(MIN, 1000), 2, { .created_ago = 8 * MIN, .alloc_after = 6 * MIN, .ready_after = -1, .unallocatable = true },
	  5, SLO_BREACH, 10, 20 },
	{ "fail: deleted after 30 s of waiting is no failure", SLO_ALLOCATION_FAILURES,
	  18, ALLOCATED(MIN, 1000), 2,
	  { .created_ago = 8 * MIN, .alloc_after = -1, .ready_after = -1, .ended_ago = 8 * MIN - 30 * SEC, .unallocatable = true },
	  5, SLO_PASS, 0, 20 },
	{ "fail: deleted after a 7 min wait stays a failure", SLO_ALLOCATION_FAILURES,
	  18, ALLOCATED(MIN, 1000), 2,
	  { .created_ago = 9 * MIN, .alloc_after = -1, .ready_after = -1, .ended_ago = 2 * MIN, .unallocatable = true },
	  5, SLO_BREACH, 10, 20 },

	/* driverErrors, threshold 0, stuck 5 min */
	{ "driver: allocated and Ready passes", SLO_DRIVER_ERRORS,
	  20, READY(MIN, 100, 1000), 0, { 0 }, 0, SLO_PASS, 0, 20 },
	{ "driver: not Ready 7 min after allocation breaches", SLO_DRIVER_ERRORS,
	  19, READY(MIN, 100, 1000), 1, { .created_ago = 8 * MIN, .alloc_after = MIN, .ready_after = -1, .not_ready = true },
	  0, SLO_BREACH, 1, 20 },
	{ "driver: not Ready for 1 min is not stuck yet", SLO_DRIVER_ERRORS,
	  19, READY(MIN, 100, 1000), 1, { .created_ago = 2 * MIN, .alloc_after = MIN, .ready_after = -1, .not_ready = true },
	  0, SLO_PASS, 0, 20 },
	{ "driver: a device condition False breaches even with few samples", SLO_DRIVER_ERRORS,
	  3, READY(MIN, 100, 1000), 1, { .created_ago = MIN, .alloc_after = 100, .ready_after = 1000, .cond_false = true },
	  0, SLO_BREACH, 1, 4 },
	{ "driver: no error but under min_samples is inconclusive", SLO_DRIVER_ERRORS,
	  5, READY(MIN, 100, 1000), 10, { .created_ago = MIN, .alloc_after = -1, .ready_after = -1 },
	  0, SLO_INCONCLUSIVE, 0, 5 },
	{ "driver: stuck and condition False on one claim count once", SLO_DRIVER_ERRORS,
	  19, READY(MIN, 100, 1000), 1,
	  { .created_ago = 8 * MIN, .alloc_after = MIN, .ready_after = -1, .not_ready = true, .cond_false = true },
	  0, SLO_BREACH, 1, 20 },
	{ "driver: errors within max_driver_errors pass", SLO_DRIVER_ERRORS,
	  18, READY(MIN, 100, 1000), 2, { .created_ago = MIN, .alloc_after = 100, .ready_after = 1000, .cond_false = true },
	  2, SLO_PASS, 2, 20 },
	{ "driver: a pod deleted after a 7 min stuck prepare stays an error", SLO_DRIVER_ERRORS,
	  19, READY(MIN, 100, 1000), 1,
	  { .created_ago = 9 * MIN, .alloc_after = MIN, .ready_after = -1, .ended_ago = MIN, .not_ready = true },
	  0, SLO_BREACH, 1, 20 },
	{ "driver: a pod deleted 30 s after allocation is no error", SLO_DRIVER_ERRORS,
	  19, READY(MIN, 100, 1000), 1,
	  { .created_ago = 9 * MIN, .alloc_after = MIN, .ready_after = -1, .ended_ago = 8 * MIN - 30 * SEC, .not_ready = true },
	  0, SLO_PASS, 0, 20 },
	{ "driver: errors created before the window do not count", SLO_DRIVER_ERRORS,
	  20, READY(MIN, 100, 1000), 3, { .created_ago = 11 * MIN, .alloc_after = 100, .ready_after = 1000, .cond_false = true },
	  0, SLO_PASS, 0, 20 },
};

static size_t add_samples(slo_sample_t *s, size_t n, const proto_t *p)
{
	for (size_t i = 0; i < n; i++) {
		slo_sample_t *x = &s[i];
		*x = (slo_sample_t){ .created_ms = NOW - p->created_ago };
		if (p->alloc_after >= 0)
			x->allocated_ms = x->created_ms + p->alloc_after;
		if (p->alloc_after >= 0 && p->ready_after >= 0)
			x->ready_ms = x->allocated_ms + p->ready_after;
		if (p->ended_ago)
			x->ended_ms = NOW - p->ended_ago;
		x->latency_unknown = p->unknown;
		x->unallocatable = p->unallocatable;
		x->not_ready_since_allocation = p->not_ready;
		x->device_condition_false = p->cond_false;
	}
	return n;
}

static void test_signal_rows(void **state)
{
	(void)state;
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		const row_t *row = &rows[r];
		plan_slo_t slo = base;
		switch (row->signal) {
		case SLO_ALLOCATION_LATENCY: slo.allocation_latency_p95_ms = row->threshold; break;
		case SLO_READY_LATENCY: slo.ready_latency_p95_ms = row->threshold; break;
		case SLO_ALLOCATION_FAILURES: slo.max_allocation_failure_percent = (uint32_t)row->threshold; break;
		case SLO_DRIVER_ERRORS: slo.max_driver_errors = (uint32_t)row->threshold; break;
		default: fail_msg("row %zu: not a sampled signal", r);
		}
		slo_sample_t samples[64];
		size_t n = add_samples(samples, row->n_a, &row->a);
		n += add_samples(samples + n, row->n_b, &row->b);
		/* Order must not matter: reverse every other row. */
		if (r % 2)
			for (size_t i = 0; i < n / 2; i++) {
				slo_sample_t t = samples[i];
				samples[i] = samples[n - 1 - i];
				samples[n - 1 - i] = t;
			}
		slo_input_t in = { .slo = &slo, .samples = samples, .n_samples = n, .now_ms = NOW };
		slo_result_t out[SLO_SIGNALS];
		slo_judge(&in, out);
		const slo_result_t *got = &out[row->signal];
		if (got->verdict != row->verdict || got->value != row->value || got->samples != row->samples ||
		    got->threshold != (double)row->threshold)
			fail_msg("%s: got %s value %g threshold %g samples %u; want %s value %g threshold %g samples %u",
				 row->what, slo_verdict_name(got->verdict), got->value, got->threshold, got->samples,
				 slo_verdict_name(row->verdict), row->value, (double)row->threshold, row->samples);
	}
}

/*
 * Nodes with a permanent or needs-cleanup driver failure add to driverErrors
 * beside the claims: one such node breaches a threshold of 0 even before
 * min_samples, and within the threshold the usual sample rule holds.
 */
static void test_failing_nodes_are_driver_errors(void **state)
{
	(void)state;
	slo_sample_t samples[20];
	proto_t ready = READY(MIN, 100, 1000);
	size_t n = add_samples(samples, 3, &ready);
	plan_slo_t slo = base;
	slo_input_t in = { .slo = &slo, .samples = samples, .n_samples = n, .failing_nodes = 1, .now_ms = NOW };
	slo_result_t out[SLO_SIGNALS];
	slo_judge(&in, out);
	assert_int_equal(out[SLO_DRIVER_ERRORS].verdict, SLO_BREACH);
	assert_true(out[SLO_DRIVER_ERRORS].value == 1);

	slo.max_driver_errors = 2;
	in.failing_nodes = 2;
	slo_judge(&in, out);
	assert_true(out[SLO_DRIVER_ERRORS].value == 2);
	assert_int_equal(out[SLO_DRIVER_ERRORS].verdict, SLO_INCONCLUSIVE); /* 3 of 10 samples */
	n += add_samples(samples + n, 17, &ready);
	in.n_samples = n;
	slo_judge(&in, out);
	assert_int_equal(out[SLO_DRIVER_ERRORS].verdict, SLO_PASS);
}

static void test_counts_are_always_judged(void **state)
{
	(void)state;
	struct {
		const char *what;
		int64_t drift;
		uint32_t max_drift, unknown, fights, failed;
		slo_verdict_t drift_v, fights_v, failed_v;
		double drift_value;
	} cases[] = {
		{ "nothing wrong, no samples at all", 0, 0, 0, 0, 0, SLO_PASS, SLO_PASS, SLO_PASS, 0 },
		{ "two devices missing breach drift 0", -2, 0, 0, 0, 0, SLO_BREACH, SLO_PASS, SLO_PASS, 2 },
		{ "two devices too many breach too", 2, 0, 0, 0, 0, SLO_BREACH, SLO_PASS, SLO_PASS, 2 },
		{ "drift within max passes", -2, 2, 0, 0, 0, SLO_PASS, SLO_PASS, SLO_PASS, 2 },
		{ "a node rewriting its slices holds a pass", 0, 0, 1, 0, 0, SLO_INCONCLUSIVE, SLO_PASS, SLO_PASS, 0 },
		{ "drift elsewhere breaches while one rewrites", 1, 0, 1, 0, 0, SLO_BREACH, SLO_PASS, SLO_PASS, 1 },
		{ "one fight breaches", 0, 0, 0, 1, 0, SLO_PASS, SLO_BREACH, SLO_PASS, 0 },
		{ "one failed step breaches", 0, 0, 0, 0, 1, SLO_PASS, SLO_PASS, SLO_BREACH, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		plan_slo_t slo = base;
		slo.max_capacity_drift = cases[i].max_drift;
		slo_input_t in = { .slo = &slo, .capacity_drift = cases[i].drift, .drift_unknown = cases[i].unknown,
				   .fights = cases[i].fights, .failed_steps = cases[i].failed, .now_ms = NOW };
		slo_result_t out[SLO_SIGNALS];
		slo_judge(&in, out);
		if (out[SLO_CAPACITY_DRIFT].verdict != cases[i].drift_v || out[SLO_OWNERSHIP_FIGHTS].verdict != cases[i].fights_v ||
		    out[SLO_FAILED_STEPS].verdict != cases[i].failed_v || out[SLO_CAPACITY_DRIFT].value != cases[i].drift_value)
			fail_msg("%s: drift %s (%g) fights %s failed %s", cases[i].what,
				 slo_verdict_name(out[SLO_CAPACITY_DRIFT].verdict), out[SLO_CAPACITY_DRIFT].value,
				 slo_verdict_name(out[SLO_OWNERSHIP_FIGHTS].verdict), slo_verdict_name(out[SLO_FAILED_STEPS].verdict));
		assert_true(out[SLO_CAPACITY_DRIFT].threshold == (double)cases[i].max_drift);
		/* Why it waits is shown in the pool's message; nothing to say otherwise. */
		assert_true((out[SLO_CAPACITY_DRIFT].detail != NULL) == (cases[i].drift_v == SLO_INCONCLUSIVE));
		assert_true(out[SLO_OWNERSHIP_FIGHTS].value == (double)cases[i].fights);
		assert_true(out[SLO_FAILED_STEPS].value == (double)cases[i].failed);
	}
}

/* Capacity drift in physical devices: a time-sliced node's 32 units stood for 8, a MIG node's 9 for 2. */
static void test_capacity_drift_counts_physical_devices(void **state)
{
	(void)state;
	struct {
		const char *what;
		slo_node_devices_t nodes[3];
		size_t n;
		int64_t drift;
		uint32_t unknown;
	} cases[] = {
		{ "time-sliced and MIG nodes publishing what they stood for", { { 8, 8, false }, { 2, 2, false } }, 2, 0, 0 },
		{ "a GPU gone on one node, one too many on another", { { 8, 7, false }, { 2, 3, false } }, 2, 2, 0 },
		{ "an unknown expectation is not drift", { { -1, 8, false }, { 8, 8, false } }, 2, 0, 0 },
		{ "a node whose driver published nothing", { { 8, 0, false } }, 1, 8, 0 },
		/* The MIG node of the shapes test, one of its two device slices at the new generation. */
		{ "a driver halfway through rewriting its slices", { { 2, 1, true }, { 2, 2, false } }, 2, 0, 1 },
		{ "rewriting beside a real drift", { { 2, 1, true }, { 2, 3, false } }, 2, 1, 1 },
		{ "rewriting with nothing expected", { { -1, 1, true } }, 1, 0, 0 },
		{ "no nodes on DRA", { { 0, 0, false } }, 0, 0, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint32_t unknown;
		int64_t drift = slo_capacity_drift(cases[i].nodes, cases[i].n, &unknown);
		if (drift != cases[i].drift || unknown != cases[i].unknown)
			fail_msg("%s: drift %lld with %u unknown, want %lld with %u", cases[i].what, (long long)drift,
				 unknown, (long long)cases[i].drift, cases[i].unknown);
	}
}

static void test_results_name_and_unit_every_signal(void **state)
{
	(void)state;
	static const char *const names[SLO_SIGNALS] = { "allocationLatencyP95", "readyLatencyP95", "allocationFailurePercent",
							"driverErrors", "capacityDrift", "ownershipFights", "failedSteps" };
	static const char *const units[SLO_SIGNALS] = { "ms", "ms", "%", "", "", "", "" };
	slo_input_t in = { .slo = &base, .now_ms = NOW };
	slo_result_t out[SLO_SIGNALS];
	slo_judge(&in, out);
	for (int i = 0; i < SLO_SIGNALS; i++) {
		assert_int_equal(out[i].id, i);
		assert_string_equal(out[i].name, names[i]);
		assert_string_equal(slo_signal_name((slo_signal_id_t)i), names[i]);
		assert_string_equal(out[i].unit, units[i]);
	}
	assert_string_equal(slo_verdict_name(SLO_PASS), "Pass");
	assert_string_equal(slo_verdict_name(SLO_BREACH), "Breach");
	assert_string_equal(slo_verdict_name(SLO_INCONCLUSIVE), "Inconclusive");
	assert_string_equal(slo_verdict_name(SLO_UNJUDGED), "NotJudged");
}

/* ---- the gate --------------------------------------------------------------------------- */

static void set_verdicts(slo_result_t r[SLO_SIGNALS], const char *v)
{
	for (int i = 0; i < SLO_SIGNALS; i++) {
		r[i] = (slo_result_t){ .id = (slo_signal_id_t)i, .name = slo_signal_name((slo_signal_id_t)i) };
		r[i].verdict = v[i] == 'P' ? SLO_PASS : v[i] == 'B' ? SLO_BREACH : v[i] == 'I' ? SLO_INCONCLUSIVE : SLO_UNJUDGED;
	}
}

static void test_gate_combinations(void **state)
{
	(void)state;
	struct {
		const char *verdicts; /* P pass, B breach, I inconclusive, U not judged; one per signal */
		slo_verdict_t want;
		int first_breach; /* -1: none */
	} cases[] = {
		{ "PPPPPPP", SLO_PASS, -1 },
		{ "UUPPPPP", SLO_PASS, -1 },         /* latencies the plan does not judge do not hold the gate */
		{ "IPPPPPP", SLO_INCONCLUSIVE, -1 }, /* one inconclusive signal: no pass */
		{ "UUIIPPP", SLO_INCONCLUSIVE, -1 },
		{ "PPPBPBP", SLO_BREACH, 3 },        /* the first breach in enum order is reported */
		{ "IIIIIIB", SLO_BREACH, 6 },        /* a breach wins over inconclusive */
		{ "BUIPPPP", SLO_BREACH, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		slo_result_t r[SLO_SIGNALS];
		set_verdicts(r, cases[i].verdicts);
		const slo_result_t *first = (const slo_result_t *)&r; /* must be overwritten */
		slo_verdict_t got = slo_gate(r, SLO_SIGNALS, &first);
		if (got != cases[i].want)
			fail_msg("%s: got %s", cases[i].verdicts, slo_verdict_name(got));
		if (cases[i].first_breach < 0)
			assert_null(first);
		else
			assert_ptr_equal(first, &r[cases[i].first_breach]);
		assert_int_equal(slo_gate(r, SLO_SIGNALS, NULL), cases[i].want);
	}
}

/* End to end through the judge: an empty window is never a pass, whatever min_samples says. */
static void test_empty_window_is_inconclusive(void **state)
{
	(void)state;
	plan_slo_t slo = base;
	for (uint32_t min = 0; min <= 1; min++) {
		slo.min_samples = min;
		slo_input_t in = { .slo = &slo, .now_ms = NOW };
		slo_result_t out[SLO_SIGNALS];
		slo_judge(&in, out);
		const slo_result_t *first;
		assert_int_equal(slo_gate(out, SLO_SIGNALS, &first), SLO_INCONCLUSIVE);
		assert_int_equal(out[SLO_ALLOCATION_LATENCY].verdict, SLO_INCONCLUSIVE);
		assert_int_equal(out[SLO_ALLOCATION_FAILURES].verdict, SLO_INCONCLUSIVE);
		assert_int_equal(out[SLO_DRIVER_ERRORS].verdict, SLO_INCONCLUSIVE);
	}

	/* A healthy full window passes; the same window with one fight breaches on ownershipFights. */
	slo = base;
	slo_sample_t s[20];
	proto_t healthy = READY(MIN, 800, 5000);
	add_samples(s, 20, &healthy);
	slo_input_t in = { .slo = &slo, .samples = s, .n_samples = 20, .now_ms = NOW };
	slo_result_t out[SLO_SIGNALS];
	slo_judge(&in, out);
	const slo_result_t *first;
	assert_int_equal(slo_gate(out, SLO_SIGNALS, &first), SLO_PASS);
	in.fights = 1;
	slo_judge(&in, out);
	assert_int_equal(slo_gate(out, SLO_SIGNALS, &first), SLO_BREACH);
	assert_string_equal(first->name, "ownershipFights");
	assert_true(first->value == 1 && first->threshold == 0);
}

/* ---- latency from when the claim could have been served --------------------------------- */

/*
 * The pool's capacity history, built by observations as the controller makes
 * them: DRA at 'first' (0: none), then (time, free devices) observations.
 */
typedef struct {
	int64_t at;
	int64_t first_dra;
	int64_t free_devices;
} obs_t;

static const struct {
	const char *name;
	obs_t obs[6];
	int64_t created, until;
	int64_t want; /* servable */
} servable_rows[] = {
	/* The case: claims created a minute before the canary reached DRA. */
	{ "created before the first DRA node", { { NOW, NOW - 10 * SEC, 8 } }, NOW - 70 * SEC, NOW - 9 * SEC, NOW - 10 * SEC },
	{ "created after it", { { NOW, NOW - 10 * SEC, 8 } }, NOW - 5 * SEC, NOW - 4 * SEC, NOW - 5 * SEC },
	{ "no DRA node seen: not before it was served", { { NOW, 0, 0 } }, NOW - 70 * SEC, NOW - 2 * SEC, NOW - 2 * SEC },
	/* Full from NOW-40s to NOW-20s (the last full observation), free at NOW-10s. */
	{ "waited for a full pool",
	  { { NOW - 40 * SEC, NOW - 60 * SEC, 0 }, { NOW - 20 * SEC, NOW - 60 * SEC, 0 }, { NOW - 10 * SEC, NOW - 60 * SEC, 2 } },
	  NOW - 50 * SEC, NOW - 15 * SEC, NOW - 20 * SEC },
	{ "allocated while still full: never after its allocation",
	  { { NOW - 40 * SEC, NOW - 60 * SEC, 0 }, { NOW - 5 * SEC, NOW - 60 * SEC, 0 } },
	  NOW - 50 * SEC, NOW - 30 * SEC, NOW - 30 * SEC },
	{ "a full stretch after its allocation does not count",
	  { { NOW - 40 * SEC, NOW - 60 * SEC, 3 }, { NOW - 20 * SEC, NOW - 60 * SEC, 0 } },
	  NOW - 50 * SEC, NOW - 30 * SEC, NOW - 50 * SEC },
	/* The first DRA time is sticky: a node rolled back does not move the baseline forward. */
	{ "the first DRA time only moves back",
	  { { NOW - 40 * SEC, NOW - 60 * SEC, 4 }, { NOW - 20 * SEC, NOW - 30 * SEC, 4 }, { NOW - 10 * SEC, 0, 0 } },
	  NOW - 90 * SEC, NOW - 15 * SEC, NOW - 60 * SEC },
	{ "every DRA node rolled back: no capacity from then",
	  { { NOW - 40 * SEC, NOW - 60 * SEC, 4 }, { NOW - 10 * SEC, 0, 0 } },
	  NOW - 90 * SEC, NOW - 5 * SEC, NOW - 5 * SEC },
};

static void test_servable_rows(void **state)
{
	(void)state;
	for (size_t r = 0; r < sizeof(servable_rows) / sizeof(servable_rows[0]); r++) {
		slo_capacity_t c = { 0 };
		for (size_t i = 0; i < 6 && servable_rows[r].obs[i].at; i++)
			slo_capacity_observe(&c, servable_rows[r].obs[i].first_dra, servable_rows[r].obs[i].free_devices,
					     servable_rows[r].obs[i].at, NOW - 10 * MIN);
		int64_t got = slo_servable_ms(&c, servable_rows[r].created, servable_rows[r].until, NOW);
		if (got != servable_rows[r].want)
			fail_msg("%s: servable at NOW%+llds, want NOW%+llds", servable_rows[r].name,
				 (long long)((got - NOW) / SEC), (long long)((servable_rows[r].want - NOW) / SEC));
		slo_capacity_free(&c);
	}
	assert_int_equal(slo_servable_ms(NULL, NOW - 5 * SEC, NOW, NOW), NOW - 5 * SEC);
}

/* Full stretches that ended before the window are dropped; the one still open never is. */
static void test_capacity_forgets_old_stretches(void **state)
{
	(void)state;
	slo_capacity_t c = { 0 };
	slo_capacity_observe(&c, NOW - 60 * MIN, 0, NOW - 50 * MIN, NOW - 60 * MIN);
	slo_capacity_observe(&c, NOW - 60 * MIN, 1, NOW - 40 * MIN, NOW - 60 * MIN);
	slo_capacity_observe(&c, NOW - 60 * MIN, 0, NOW - 30 * MIN, NOW - 60 * MIN);
	assert_int_equal(c.n_full, 2);
	slo_capacity_observe(&c, NOW - 60 * MIN, 0, NOW, NOW - 10 * MIN);
	assert_int_equal(c.n_full, 1);
	assert_true(c.full[0].open);
	assert_int_equal(c.full[0].from_ms, NOW - 30 * MIN);
	slo_capacity_free(&c);
}

/*
 * End to end through the judge: twenty claims created 60 s before the
 * canary's first DRA node, allocated within 2 s of it, breach a 60 s
 * threshold counted from creation and pass counted from when they could be
 * served; the raw figure stays beside the judged one.
 */
static void test_latency_judged_from_capacity(void **state)
{
	(void)state;
	slo_sample_t s[20];
	int64_t dra = NOW - 30 * SEC;
	for (size_t i = 0; i < 20; i++)
		s[i] = (slo_sample_t){ .created_ms = dra - 60 * SEC, .allocated_ms = dra + 1500 + 20 * (int64_t)i };
	plan_slo_t slo = base;
	slo.allocation_latency_p95_ms = 60000;
	slo_capacity_t c = { 0 };
	slo_capacity_observe(&c, dra, 8, NOW, NOW - 10 * MIN);
	slo_result_t out[SLO_SIGNALS];
	slo_input_t in = { .slo = &slo, .samples = s, .n_samples = 20, .now_ms = NOW };
	slo_judge(&in, out);
	assert_int_equal(out[SLO_ALLOCATION_LATENCY].verdict, SLO_BREACH);
	assert_true(out[SLO_ALLOCATION_LATENCY].value > 60000);
	in.capacity = &c;
	slo_judge(&in, out);
	assert_int_equal(out[SLO_ALLOCATION_LATENCY].verdict, SLO_PASS);
	assert_true(out[SLO_ALLOCATION_LATENCY].value == 1500 + 20 * 18); /* p95 of 20: the 19th */
	assert_true(out[SLO_ALLOCATION_LATENCY].raw_value == 61500 + 20 * 18);
	/* A claim slow after capacity existed still breaches: the migration is judged on what it caused. */
	s[19].allocated_ms = dra + 70 * SEC;
	s[18].allocated_ms = dra + 70 * SEC;
	slo_judge(&in, out);
	assert_int_equal(out[SLO_ALLOCATION_LATENCY].verdict, SLO_BREACH);
	slo_capacity_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_percentile_is_exact_nearest_rank),
		cmocka_unit_test(test_signal_rows),
		cmocka_unit_test(test_counts_are_always_judged),
		cmocka_unit_test(test_failing_nodes_are_driver_errors),
		cmocka_unit_test(test_capacity_drift_counts_physical_devices),
		cmocka_unit_test(test_results_name_and_unit_every_signal),
		cmocka_unit_test(test_gate_combinations),
		cmocka_unit_test(test_empty_window_is_inconclusive),
		cmocka_unit_test(test_servable_rows),
		cmocka_unit_test(test_capacity_forgets_old_stretches),
		cmocka_unit_test(test_latency_judged_from_capacity),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
