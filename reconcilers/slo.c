#include "slo.h"

#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

static const char *const slo_verdict_names[] = {
	[SLO_PASS] = "Pass",
	[SLO_BREACH] = "Breach",
	[SLO_INCONCLUSIVE] = "Inconclusive",
	[SLO_UNJUDGED] = "NotJudged",
};

static const char *const slo_signal_names[SLO_SIGNALS] = {
	[SLO_ALLOCATION_LATENCY] = "allocationLatencyP95",
	[SLO_READY_LATENCY] = "readyLatencyP95",
	[SLO_ALLOCATION_FAILURES] = "allocationFailurePercent",
	[SLO_DRIVER_ERRORS] = "driverErrors",
	[SLO_CAPACITY_DRIFT] = "capacityDrift",
	[SLO_OWNERSHIP_FIGHTS] = "ownershipFights",
	[SLO_FAILED_STEPS] = "failedSteps",
};

const char *slo_verdict_name(slo_verdict_t v)
{
	return (size_t)v < sizeof(slo_verdict_names) / sizeof(slo_verdict_names[0]) ? slo_verdict_names[v] : "Unknown";
}

const char *slo_signal_name(slo_signal_id_t id)
{
	return (size_t)id < SLO_SIGNALS ? slo_signal_names[id] : "unknown";
}

static int slo_compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double slo_percentile(double *values, size_t n, double p)
{
	if (n == 0)
		return 0;
	qsort(values, n, sizeof(double), slo_compare_double);
	if (!(p > 0))
		return values[0];
	if (p >= 100)
		return values[n - 1];
	/*
	 * rank = ceil(p * n / 100) without libm. For integer p, p * n is an
	 * exact integer in a double and the division is correctly rounded, so an
	 * integral quotient is exact and a fractional one (fraction >= 1/100)
	 * stays fractional: the rank is exact.
	 */
	double r = p * (double)n / 100.0;
	size_t rank = (size_t)r;
	if ((double)rank < r)
		rank++;
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return values[rank - 1];
}

/* A difference of two observation times in ms, never negative (clock skew reads as 0). */
static double slo_elapsed(int64_t from, int64_t to)
{
	return to > from ? (double)(to - from) : 0.0;
}

void slo_capacity_observe(slo_capacity_t *c, int64_t first_dra_ms, int64_t free_devices, int64_t now_ms,
			  int64_t keep_since_ms)
{
	if (first_dra_ms > 0 && (c->first_dra_ms == 0 || first_dra_ms < c->first_dra_ms))
		c->first_dra_ms = first_dra_ms;
	slo_span_t *last = c->n_full ? &c->full[c->n_full - 1] : NULL;
	/* No free device: every DRA node's devices are held, or no node is on DRA any more. */
	bool full = c->first_dra_ms > 0 && (first_dra_ms == 0 || free_devices <= 0);
	if (full && last != NULL && last->open) {
		last->to_ms = now_ms;
	} else if (full) {
		c->full = xrealloc(c->full, (c->n_full + 1) * sizeof(*c->full));
		c->full[c->n_full++] = (slo_span_t){ .from_ms = now_ms, .to_ms = now_ms, .open = true };
	} else if (last != NULL) {
		last->open = false; /* it ended after its last full observation: that one is the bound kept */
	}
	size_t drop = 0;
	while (drop < c->n_full && !c->full[drop].open && c->full[drop].to_ms < keep_since_ms)
		drop++;
	if (drop > 0) {
		memmove(c->full, c->full + drop, (c->n_full - drop) * sizeof(*c->full));
		c->n_full -= drop;
	}
}

void slo_capacity_free(slo_capacity_t *c)
{
	free(c->full);
	memset(c, 0, sizeof(*c));
}

int64_t slo_servable_ms(const slo_capacity_t *c, int64_t created_ms, int64_t until_ms, int64_t now_ms)
{
	if (c == NULL)
		return created_ms;
	/* Nothing could serve it before the first DRA node; with none yet, not before it was served. */
	int64_t blocked = c->first_dra_ms ? c->first_dra_ms : until_ms;
	for (size_t i = 0; i < c->n_full; i++) {
		if (c->full[i].from_ms > until_ms)
			break;
		int64_t end = c->full[i].open ? now_ms : c->full[i].to_ms;
		if (end > blocked)
			blocked = end;
	}
	if (blocked > until_ms)
		blocked = until_ms;
	return blocked > created_ms ? blocked : created_ms;
}

static void slo_set(slo_result_t *r, slo_signal_id_t id, double value, double threshold, const char *unit,
		    uint32_t samples)
{
	*r = (slo_result_t){ .id = id,
			     .name = slo_signal_names[id],
			     .value = value,
			     .raw_value = value,
			     .threshold = threshold,
			     .unit = unit,
			     .samples = samples };
}

static uint32_t slo_clamp_count(size_t n)
{
	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

/*
 * Latencies and percentages: a value computed from too few samples says
 * nothing, in either direction. At least one sample is needed whatever
 * min_samples says: a p95 of nothing is no pass.
 */
static void slo_verdict_sampled(slo_result_t *r, uint32_t min_samples)
{
	uint32_t need = min_samples > 0 ? min_samples : 1;
	if (r->samples < need)
		r->verdict = SLO_INCONCLUSIVE;
	else
		r->verdict = r->value > r->threshold ? SLO_BREACH : SLO_PASS;
}

static void slo_latency(slo_result_t *r, slo_signal_id_t id, double *values, size_t n, uint64_t threshold_ms,
			uint32_t min_samples)
{
	slo_set(r, id, slo_percentile(values, n, 95), (double)threshold_ms, "ms", slo_clamp_count(n));
	if (threshold_ms == 0)
		r->verdict = SLO_UNJUDGED;
	else
		slo_verdict_sampled(r, min_samples);
}

static void slo_count(slo_result_t *r, slo_signal_id_t id, double value, double threshold)
{
	slo_set(r, id, value, threshold, "", 0);
	r->verdict = value > threshold ? SLO_BREACH : SLO_PASS;
}

void slo_judge(const slo_input_t *in, slo_result_t out[SLO_SIGNALS])
{
	const plan_slo_t *slo = in->slo;
	int64_t now = in->now_ms;
	int64_t window = slo->window_ms > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)slo->window_ms;
	int64_t oldest = now >= INT64_MIN + window ? now - window : INT64_MIN;
	int64_t stuck = slo->stuck_threshold_ms > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)slo->stuck_threshold_ms;

	size_t cap = in->n_samples ? in->n_samples : 1;
	double *alloc_lat = xmalloc(cap * sizeof(double));
	double *alloc_raw = xmalloc(cap * sizeof(double));
	double *ready_lat = xmalloc(cap * sizeof(double));
	size_t n_alloc_lat = 0, n_ready_lat = 0;
	size_t judged = 0, failed = 0; /* allocation failures: denominator, numerator */
	size_t allocated = 0, driver_errors = 0;

	for (size_t i = 0; i < in->n_samples; i++) {
		const slo_sample_t *s = &in->samples[i];
		if (s->created_ms < oldest || s->created_ms > now)
			continue;
		if (s->allocated_ms != 0 && !s->latency_unknown) {
			alloc_raw[n_alloc_lat] = slo_elapsed(s->created_ms, s->allocated_ms);
			alloc_lat[n_alloc_lat++] = slo_elapsed(
				slo_servable_ms(in->capacity, s->created_ms, s->allocated_ms, now), s->allocated_ms);
			if (s->ready_ms != 0)
				ready_lat[n_ready_lat++] = slo_elapsed(s->allocated_ms, s->ready_ms);
		}

		/* The wait that is judged ends at allocation, at the end recorded, or now. */
		int64_t wait_end = s->allocated_ms ? s->allocated_ms : s->ended_ms ? s->ended_ms : now;
		bool old_enough = slo_elapsed(s->created_ms, now) >= (double)stuck;
		if (s->allocated_ms != 0 || old_enough) {
			judged++;
			if (s->unallocatable && slo_elapsed(s->created_ms, wait_end) >= (double)stuck)
				failed++;
		}

		if (s->allocated_ms != 0) {
			allocated++;
			int64_t ready_wait_end = s->ended_ms ? s->ended_ms : now;
			bool stuck_not_ready = s->not_ready_since_allocation &&
					       slo_elapsed(s->allocated_ms, ready_wait_end) >= (double)stuck;
			if (stuck_not_ready || s->device_condition_false)
				driver_errors++;
		}
	}

	slo_latency(&out[SLO_ALLOCATION_LATENCY], SLO_ALLOCATION_LATENCY, alloc_lat, n_alloc_lat,
		    slo->allocation_latency_p95_ms, slo->min_samples);
	out[SLO_ALLOCATION_LATENCY].raw_value = slo_percentile(alloc_raw, n_alloc_lat, 95);
	free(alloc_raw);
	slo_latency(&out[SLO_READY_LATENCY], SLO_READY_LATENCY, ready_lat, n_ready_lat, slo->ready_latency_p95_ms,
		    slo->min_samples);
	free(alloc_lat);
	free(ready_lat);

	slo_result_t *r = &out[SLO_ALLOCATION_FAILURES];
	slo_set(r, SLO_ALLOCATION_FAILURES, judged ? 100.0 * (double)failed / (double)judged : 0.0,
		(double)slo->max_allocation_failure_percent, "%", slo_clamp_count(judged));
	slo_verdict_sampled(r, slo->min_samples);

	/* More errors than allowed is a breach however few the samples; a pass needs enough of them. */
	r = &out[SLO_DRIVER_ERRORS];
	slo_set(r, SLO_DRIVER_ERRORS, (double)driver_errors + (double)in->failing_nodes, (double)slo->max_driver_errors, "",
		slo_clamp_count(allocated));
	if (r->value > r->threshold)
		r->verdict = SLO_BREACH;
	else
		slo_verdict_sampled(r, slo->min_samples);

	double drift = in->capacity_drift < 0 ? -(double)in->capacity_drift : (double)in->capacity_drift;
	r = &out[SLO_CAPACITY_DRIFT];
	slo_count(r, SLO_CAPACITY_DRIFT, drift, (double)slo->max_capacity_drift);
	if (r->verdict == SLO_PASS && in->drift_unknown > 0) {
		r->verdict = SLO_INCONCLUSIVE;
		r->detail = "a DRA node's ResourceSlices are incomplete: its driver is rewriting them";
	}
	slo_count(&out[SLO_OWNERSHIP_FIGHTS], SLO_OWNERSHIP_FIGHTS, (double)in->fights, 0);
	slo_count(&out[SLO_FAILED_STEPS], SLO_FAILED_STEPS, (double)in->failed_steps, 0);
}

slo_verdict_t slo_gate(const slo_result_t *results, size_t n, const slo_result_t **first_breach)
{
	if (first_breach)
		*first_breach = NULL;
	bool all_pass = true;
	for (size_t i = 0; i < n; i++) {
		switch (results[i].verdict) {
		case SLO_BREACH:
			if (first_breach)
				*first_breach = &results[i];
			return SLO_BREACH;
		case SLO_PASS:
		case SLO_UNJUDGED:
			break;
		default:
			all_pass = false;
			break;
		}
	}
	return all_pass ? SLO_PASS : SLO_INCONCLUSIVE;
}

int64_t slo_capacity_drift(const slo_node_devices_t *nodes, size_t n, uint32_t *unknown)
{
	int64_t drift = 0;
	*unknown = 0;
	for (size_t i = 0; i < n; i++) {
		if (nodes[i].expected < 0)
			continue;
		if (nodes[i].incomplete) {
			(*unknown)++;
			continue;
		}
		int64_t d = nodes[i].published - nodes[i].expected;
		drift += d < 0 ? -d : d;
	}
	return drift;
}
