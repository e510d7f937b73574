/*
 * libFuzzer target for the SLO gate's inputs: the samples the controller
 * collects from claims and pods (timestamps from the API, which may be skewed,
 * zero or absurd), the controller's counts and the plan's thresholds.
 *
 * The bytes become a plan_slo_t, the counts, a clock and an array of samples;
 * slo_judge and slo_gate must keep the promises of slo.h: one result per
 * signal in order, a latency or percentage never passes on fewer than
 * min_samples samples, a threshold of 0 leaves a latency not judged, counts
 * are always judged (drift waits while a driver rewrites its slices), and
 * the gate passes only when every judged signal passed. slo_percentile must
 * return one of its values.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "slo.h"

typedef struct {
	const uint8_t *p;
	size_t n;
} bytes_t;

static uint64_t take(bytes_t *b, size_t len)
{
	uint64_t v = 0;
	for (size_t i = 0; i < len && b->n > 0; i++, b->p++, b->n--)
		v = v << 8 | *b->p;
	return v;
}

static void check_results(const slo_input_t *in, const slo_result_t r[SLO_SIGNALS])
{
	for (int i = 0; i < SLO_SIGNALS; i++) {
		if (r[i].id != (slo_signal_id_t)i || r[i].name == NULL || r[i].unit == NULL || isnan(r[i].value))
			abort();
	}
	const slo_signal_id_t counted[] = {SLO_ALLOCATION_LATENCY, SLO_READY_LATENCY, SLO_ALLOCATION_FAILURES};
	for (size_t i = 0; i < sizeof(counted) / sizeof(counted[0]); i++) {
		const slo_result_t *x = &r[counted[i]];
		if (x->verdict == SLO_PASS && x->samples < in->slo->min_samples)
			abort();
	}
	if (in->slo->allocation_latency_p95_ms == 0 && r[SLO_ALLOCATION_LATENCY].verdict != SLO_UNJUDGED)
		abort();
	if (in->slo->ready_latency_p95_ms == 0 && r[SLO_READY_LATENCY].verdict != SLO_UNJUDGED)
		abort();
	const slo_signal_id_t always[] = {SLO_OWNERSHIP_FIGHTS, SLO_FAILED_STEPS};
	for (size_t i = 0; i < sizeof(always) / sizeof(always[0]); i++) {
		slo_verdict_t v = r[always[i]].verdict;
		if (v != SLO_PASS && v != SLO_BREACH)
			abort();
	}
	/* Drift breaches past its threshold; within it, a node rewriting its slices holds it. */
	const slo_result_t *drift = &r[SLO_CAPACITY_DRIFT];
	slo_verdict_t want = SLO_PASS;
	if (drift->value > drift->threshold)
		want = SLO_BREACH;
	else if (in->drift_unknown > 0)
		want = SLO_INCONCLUSIVE;
	if (drift->verdict != want || (drift->detail != NULL) != (want == SLO_INCONCLUSIVE))
		abort();
	if ((in->fights > 0) != (r[SLO_OWNERSHIP_FIGHTS].verdict == SLO_BREACH))
		abort();
	if ((in->failed_steps > 0) != (r[SLO_FAILED_STEPS].verdict == SLO_BREACH))
		abort();

	const slo_result_t *first = NULL;
	slo_verdict_t gate = slo_gate(r, SLO_SIGNALS, &first);
	bool any_breach = false, all_pass = true;
	for (int i = 0; i < SLO_SIGNALS; i++) {
		any_breach |= r[i].verdict == SLO_BREACH;
		all_pass &= r[i].verdict == SLO_PASS || r[i].verdict == SLO_UNJUDGED;
	}
	if ((gate == SLO_BREACH) != any_breach || (gate == SLO_BREACH) != (first != NULL))
		abort();
	if (first != NULL && first->verdict != SLO_BREACH)
		abort();
	if (gate == SLO_PASS && !all_pass)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	bytes_t b = {data, size};
	plan_slo_t slo = {
		.window_ms = take(&b, 4) + 1,
		.min_samples = (uint32_t)take(&b, 1),
		.allocation_latency_p95_ms = take(&b, 3),
		.ready_latency_p95_ms = take(&b, 3),
		.max_allocation_failure_percent = (uint32_t)(take(&b, 1) % 101),
		.max_driver_errors = (uint32_t)take(&b, 1),
		.max_capacity_drift = (uint32_t)take(&b, 1),
		.stuck_threshold_ms = take(&b, 3),
	};
	if (slo.min_samples == 0)
		slo.min_samples = 1;
	slo_input_t in = {
		.slo = &slo,
		.capacity_drift = (int64_t)take(&b, 8),
		.fights = (uint32_t)take(&b, 1),
		.failed_steps = (uint32_t)take(&b, 1),
		.drift_unknown = (uint32_t)take(&b, 1),
		.now_ms = (int64_t)take(&b, 6),
	};
	/* Each sample: four 6-byte times relative to now (signed by a flag byte), and the flags. */
	size_t n = b.n / 26;
	slo_sample_t *samples = calloc(n ? n : 1, sizeof(*samples));
	double *values = calloc(n ? n : 1, sizeof(*values));
	if (samples == NULL || values == NULL)
		abort();
	for (size_t i = 0; i < n; i++) {
		uint8_t flags = (uint8_t)take(&b, 1);
		int64_t t[4];
		for (int k = 0; k < 4; k++) {
			int64_t d = (int64_t)take(&b, 6) % 100000000;
			t[k] = flags & (1u << (4 + k)) ? 0 : in.now_ms + ((flags >> k) & 1 ? d : -d);
		}
		(void)take(&b, 1);
		samples[i] = (slo_sample_t){.created_ms = t[0], .allocated_ms = t[1], .ready_ms = t[2],
					    .ended_ms = t[3], .latency_unknown = flags & 1,
					    .unallocatable = flags & 2, .not_ready_since_allocation = flags & 4,
					    .device_condition_false = flags & 8};
		values[i] = (double)t[1] - (double)t[0];
	}
	in.samples = samples;
	in.n_samples = n;

	slo_result_t r[SLO_SIGNALS];
	slo_judge(&in, r);
	check_results(&in, r);

	double p = (double)(data[0] % 120) - 10;
	double v = slo_percentile(values, n, p);
	if (n == 0 ? v != 0 : (v < values[0] || v > values[n - 1]))
		abort();
	free(samples);
	free(values);
	return 0;
}
