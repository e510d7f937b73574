#include "history.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json_decode.h"
#include "xalloc.h"

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

bool history_sample_due(int64_t last_sample_ms, int64_t now_ms, bool verdict_changed, bool at_rest)
{
	return last_sample_ms == 0 || verdict_changed ||
	       now_ms - last_sample_ms >= (at_rest ? HISTORY_SAMPLE_REST_MS : HISTORY_SAMPLE_MS) ||
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

/* ---- the object ---------------------------------------------------------------- */

static void history_problem(history_data_t *d, const char *what, size_t line)
{
	d->dropped++;
	if (d->problem[0] == '\0')
		json_decode_bprintf(d->problem, sizeof(d->problem), "%s, record %zu: %s", what == NULL ? "?" : what,
				    line + 1, "unreadable");
}

/* One record: a JSON object of at most HISTORY_LINE_MAX bytes with a whole non-negative number "t" (ms). NULL otherwise. */
static cJSON *history_parse_line(const char *s, size_t len)
{
	if (len > HISTORY_LINE_MAX)
		return NULL;
	cJSON *obj = cJSON_ParseWithLength(s, len);
	int64_t t;
	if (!cJSON_IsObject(obj) || !json_number_int(cJSON_GetObjectItemCaseSensitive(obj, "t"), &t) || t < 0) {
		cJSON_Delete(obj);
		return NULL;
	}
	return obj;
}

static void history_decode_lines(history_data_t *d, const cJSON *data, const char *key, cJSON ***out, size_t *n)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(data, key);
	*out = NULL;
	*n = 0;
	if (!cJSON_IsString(v))
		return;
	size_t lines = 1;
	for (const char *p = v->valuestring; *p; p++)
		lines += *p == '\n';
	*out = xcalloc(lines, sizeof(cJSON *));
	size_t i = 0;
	for (const char *p = v->valuestring; *p; i++) {
		const char *end = strchr(p, '\n');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len > 0) {
			cJSON *rec = history_parse_line(p, len);
			if (rec)
				(*out)[(*n)++] = rec;
			else
				history_problem(d, key, i);
		}
		p += len + (end != NULL);
	}
}

/* A comparison is objects down to numbers, four levels at most. */
static bool history_counters_valid(const cJSON *obj, int depth)
{
	if (!cJSON_IsObject(obj) || depth > 4)
		return false;
	const cJSON *c;
	cJSON_ArrayForEach(c, obj)
	{
		if (cJSON_IsNumber(c) ? !isfinite(c->valuedouble) || c->valuedouble < 0 : !history_counters_valid(c, depth + 1))
			return false;
	}
	return true;
}

int history_decode(const cJSON *configmap, history_data_t *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	const cJSON *data = cJSON_GetObjectItemCaseSensitive(configmap, "data");
	if (!cJSON_IsObject(data))
		return json_decode_failf(err, errlen, "data: missing: not a drashift history");
	const cJSON *format = cJSON_GetObjectItemCaseSensitive(data, "format");
	if (!cJSON_IsString(format) || strcmp(format->valuestring, HISTORY_FORMAT) != 0) {
		char quoted[JSON_DECODE_QUOTE_BUF];
		json_decode_quote(quoted, sizeof(quoted), cJSON_IsString(format) ? format->valuestring : "");
		return json_decode_failf(err, errlen, "data.format: %s, want \"%s\"", quoted, HISTORY_FORMAT);
	}
	history_decode_lines(out, data, "transitions", &out->transitions, &out->n_transitions);
	history_decode_lines(out, data, "samples", &out->samples, &out->n_samples);
	const cJSON *cmp = cJSON_GetObjectItemCaseSensitive(data, "comparison");
	if (cJSON_IsString(cmp) && strlen(cmp->valuestring) <= HISTORY_COMPARISON_MAX) {
		out->comparison = cJSON_Parse(cmp->valuestring);
		if (!history_counters_valid(out->comparison, 0)) {
			cJSON_Delete(out->comparison);
			out->comparison = NULL;
		}
	}
	if (cmp != NULL && out->comparison == NULL)
		history_problem(out, "comparison", 0);
	return 0;
}

void history_data_free(history_data_t *d)
{
	for (size_t i = 0; i < d->n_transitions; i++)
		cJSON_Delete(d->transitions[i]);
	for (size_t i = 0; i < d->n_samples; i++)
		cJSON_Delete(d->samples[i]);
	free(d->transitions);
	free(d->samples);
	cJSON_Delete(d->comparison);
	memset(d, 0, sizeof(*d));
}
