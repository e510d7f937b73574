#include "history.h"

#include <string.h>

void history_change(const history_subject_t *s, int64_t now_ms, history_change_t *out)
{
	*out = (history_change_t){ .held_ms = -1 };
	if (s->is == NULL || (s->was != NULL && strcmp(s->was, s->is) == 0))
		return;
	out->record = true;
	out->at_ms = now_ms;
	/* The node's own record of when its step began is the better time, when it is believable. */
	if (s->since_ms > 0 && s->since_ms <= now_ms && s->since_ms >= s->was_since_ms)
		out->at_ms = s->since_ms;
	if (s->was != NULL && s->was_since_ms > 0 && out->at_ms >= s->was_since_ms)
		out->held_ms = out->at_ms - s->was_since_ms;
}

static bool history_same(const char *a, const char *b)
{
	return a != NULL && b != NULL && strcmp(a, b) == 0;
}

void history_breach(const history_breach_input_t *in, history_breach_output_t *out)
{
	*out = (history_breach_output_t){ 0 };
	if (in->breach_id == NULL)
		return;
	out->record_freeze = !history_same(in->breach_id, in->last_frozen_id);
	out->record_acknowledge = in->acknowledged && !history_same(in->breach_id, in->last_acked_id);
}

bool history_sample_due(int64_t last_sample_ms, int64_t now_ms, bool verdict_changed)
{
	return last_sample_ms == 0 || verdict_changed || now_ms - last_sample_ms >= HISTORY_SAMPLE_MS ||
	       now_ms < last_sample_ms; /* the clock went back: sample rather than wait for it */
}

size_t history_ring_drop(const size_t *sizes, size_t n, size_t cap)
{
	size_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += sizes[i];
	size_t drop = 0;
	while (total > cap && drop + 1 < n)
		total -= sizes[drop++];
	return drop;
}

size_t history_thin(const size_t *sizes, size_t n, size_t cap, bool *keep)
{
	size_t total = 0, kept = n;
	for (size_t i = 0; i < n; i++) {
		keep[i] = true;
		total += sizes[i];
	}
	while (total > cap && kept > 1) {
		/* Among the records still kept, the older half loses every second one; of three or fewer, the oldest goes. */
		size_t older = kept / 2, seen = 0;
		bool oldest_only = older < 2;
		for (size_t i = 0; i < n && seen < older; i++) {
			if (!keep[i])
				continue;
			if (oldest_only || seen % 2 == 1) {
				keep[i] = false;
				total -= sizes[i];
				kept--;
				if (oldest_only)
					break;
			}
			seen++;
		}
	}
	return kept;
}

void history_node_devices(int64_t advertised, int64_t used, int64_t *idle, int64_t *fragmented)
{
	if (advertised <= 0)
		return;
	if (used <= 0)
		*idle += advertised;
	else if (used < advertised)
		*fragmented += advertised - used;
}

const char *history_path_name(history_path_t p)
{
	return p == HISTORY_PATH_DRA ? "dra" : "legacy";
}

history_pod_outcome_t history_pod_outcome(const history_pod_view_t *old, const history_pod_view_t *new, bool settled,
					  bool retried)
{
	if (settled)
		return HISTORY_POD_NOTHING;
	bool ended = !new->present || new->gone;
	if (!old->present && new->present && (new->ready || new->succeeded))
		return HISTORY_POD_SETTLED; /* running when first seen: its start is not ours to measure */
	if (new->present && !new->gone && (new->ready || new->succeeded))
		return HISTORY_POD_PLACED;
	const history_pod_view_t *last = new->present ? new : old;
	if (ended && last->present)
		return last->on_node ? HISTORY_POD_FAILED : retried ? HISTORY_POD_UNPLACED : HISTORY_POD_NOTHING;
	if (new->present && new->unschedulable && !new->on_node && !retried)
		return HISTORY_POD_RETRIED;
	return HISTORY_POD_NOTHING;
}
