#include "plan_history.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube_api.h"
#include "log.h"
#include "plan_object.h"
#include "strmap.h"
#include "xalloc.h"

/* ---- the object ------------------------------------------------------------ */

/* The ConfigMap's API path for a plan; NULL when plan is NULL or empty. */
static char *ph_path(const char *plan)
{
	char *name = plan_child_name(HISTORY_NAME_PREFIX, plan);
	if (name == NULL)
		return NULL;
	char *path = kube_path("v1", "configmaps", HISTORY_NAMESPACE, name, NULL);
	free(name);
	return path;
}

/* ---- recording ---------------------------------------------------------------- */

/* Records as written, oldest first, their sizes (with the newline) and the bytes they take. */
typedef struct {
	char **lines;
	size_t *sizes;
	size_t n, cap, bytes, max;
} ph_lines_t;

typedef struct {
	char *state;
	int64_t since_ms;
} ph_last_t;

typedef struct {
	int64_t last_ms;
	bool known; /* verdicts below are the last sample's */
	slo_verdict_t verdicts[SLO_SIGNALS];
} ph_sampled_t;

typedef enum { PH_UNREAD, PH_READING, PH_READ } ph_state_t;

typedef struct {
	char *name;
	char *uid;
	ph_state_t state;
	int64_t retry_at_ms;
	ph_lines_t transitions, samples;
	cJSON *comparison;
	strmap_t last;    /* "pool\x1f<pool>" or "node\x1f<node>" -> ph_last_t* */
	strmap_t sampled; /* pool -> ph_sampled_t* */
	char *last_frozen, *last_acked;
	/* What changed since the last write: it says how soon to write (PLAN_HISTORY_FLUSH_*). */
	enum { PH_CLEAN, PH_COUNTERS, PH_SAMPLES, PH_TRANSITIONS } dirty;
	bool writing;
	int64_t flushed_ms;
} ph_plan_t;

/* Pod uid -> PH_POD_* bits (never 0, so the map can tell them from absent). */
#define PH_POD_KNOWN 1u
#define PH_POD_SETTLED 2u
#define PH_POD_RETRIED 4u

struct plan_history {
	kube_http_t *http;
	strmap_t plans; /* name -> ph_plan_t* */
	strmap_t pods;
	int in_flight;
	uint64_t epoch; /* plan_history_epoch */
};

typedef struct {
	plan_history_t *h;
	char *plan;
	bool read;
	int level; /* a write: what it carried (ph_plan_t.dirty), kept again if it fails */
} ph_request_t;

plan_history_t *plan_history_new(kube_http_t *http)
{
	plan_history_t *h = xcalloc(1, sizeof(*h));
	h->http = http;
	h->plans = (strmap_t)STRMAP_INIT;
	h->pods = (strmap_t)STRMAP_INIT;
	return h;
}

static void ph_lines_clear(ph_lines_t *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->lines[i]);
	free(l->lines);
	free(l->sizes);
	l->lines = NULL;
	l->sizes = NULL;
	l->n = l->cap = l->bytes = 0;
}

static void ph_last_free(void *v)
{
	ph_last_t *l = v;
	free(l->state);
	free(l);
}

static void ph_plan_reset(ph_plan_t *p)
{
	ph_lines_clear(&p->transitions);
	ph_lines_clear(&p->samples);
	cJSON_Delete(p->comparison);
	p->comparison = NULL;
	strmap_clear(&p->last, ph_last_free);
	strmap_clear(&p->sampled, free);
	free(p->last_frozen);
	free(p->last_acked);
	p->last_frozen = p->last_acked = NULL;
}

static void ph_plan_free(void *v)
{
	ph_plan_t *p = v;
	ph_plan_reset(p);
	free(p->name);
	free(p->uid);
	free(p);
}

void plan_history_free(plan_history_t *h)
{
	if (h == NULL)
		return;
	strmap_clear(&h->plans, ph_plan_free);
	strmap_clear(&h->pods, NULL);
	free(h);
}

bool plan_history_busy(const plan_history_t *h)
{
	return h->in_flight > 0;
}

uint64_t plan_history_epoch(const plan_history_t *h)
{
	return h->epoch;
}

void plan_history_forget(plan_history_t *h, const char *plan)
{
	h->epoch++;
	if (plan == NULL) {
		strmap_clear(&h->plans, ph_plan_free);
		strmap_clear(&h->pods, NULL);
		return;
	}
	ph_plan_t *p = strmap_remove(&h->plans, plan);
	if (p)
		ph_plan_free(p);
}

/*
 * Append a record, then drop (transitions) or thin (samples) to stay under
 * the cap. Past the cap they go down to seven eighths of it in one go, so a
 * full history pays one pass per eighth of the cap, not one per record
 * (reading back a history of many tiny records stays linear).
 */
static void ph_lines_push(ph_lines_t *l, char *line, bool thin)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 64;
		l->lines = xrealloc(l->lines, l->cap * sizeof(char *));
		l->sizes = xrealloc(l->sizes, l->cap * sizeof(size_t));
	}
	l->sizes[l->n] = strlen(line) + 1;
	l->bytes += l->sizes[l->n];
	l->lines[l->n++] = line;
	if (l->bytes <= l->max)
		return;
	size_t target = l->max - l->max / 8;
	if (thin) {
		bool *keep = xcalloc(l->n, sizeof(bool));
		history_thin(l->sizes, l->n, target, keep);
		size_t k = 0;
		l->bytes = 0;
		for (size_t i = 0; i < l->n; i++) {
			if (keep[i]) {
				l->sizes[k] = l->sizes[i];
				l->lines[k++] = l->lines[i];
				l->bytes += l->sizes[i];
			} else {
				free(l->lines[i]);
			}
		}
		l->n = k;
		free(keep);
	} else {
		size_t drop = history_ring_drop(l->sizes, l->n, target);
		for (size_t i = 0; i < drop; i++) {
			l->bytes -= l->sizes[i];
			free(l->lines[i]);
		}
		memmove(l->lines, l->lines + drop, (l->n - drop) * sizeof(char *));
		memmove(l->sizes, l->sizes + drop, (l->n - drop) * sizeof(size_t));
		l->n -= drop;
	}
}

static char *ph_print(const cJSON *obj)
{
	char *s = cJSON_PrintUnformatted(obj);
	if (s == NULL)
		abort(); /* cJSON fails only when out of memory; see xalloc.h */
	return s;
}

static void ph_dirty(ph_plan_t *p, int level)
{
	if ((int)p->dirty < level)
		p->dirty = level;
}

/* Add a record (freed here); a record too long to keep is refused with a log line. */
static void ph_record(ph_plan_t *p, cJSON *rec, bool sample)
{
	char *line = ph_print(rec);
	cJSON_Delete(rec);
	if (strlen(line) > HISTORY_LINE_MAX) {
		log_warn("history record too long; not recorded", "plan", p->name, "record", sample ? "sample" : "transition");
		free(line);
		return;
	}
	ph_lines_push(sample ? &p->samples : &p->transitions, line, sample);
	ph_dirty(p, sample ? PH_SAMPLES : PH_TRANSITIONS);
}

static void ph_set_last(ph_plan_t *p, const char *kind, const char *name, const char *state, int64_t since_ms)
{
	char *key = xjoin(kind, '\x1f', name);
	ph_last_t *l = xcalloc(1, sizeof(*l));
	l->state = xstrdup(state);
	l->since_ms = since_ms;
	ph_last_t *old = strmap_put(&p->last, key, l);
	if (old)
		ph_last_free(old);
	free(key);
}

static const char *ph_string(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void ph_replace(char **field, const char *value)
{
	free(*field);
	*field = value ? xstrdup(value) : NULL;
}

/* What a record read back says is the latest state of its pool, node or breach. */
static void ph_follow(ph_plan_t *p, const cJSON *rec)
{
	const char *kind = ph_string(rec, "kind");
	int64_t t = (int64_t)cJSON_GetObjectItemCaseSensitive(rec, "t")->valuedouble;
	const char *to = ph_string(rec, "to");
	if (kind == NULL)
		return;
	if (strcmp(kind, "pool") == 0 && ph_string(rec, "pool") && to)
		ph_set_last(p, "pool", ph_string(rec, "pool"), to, t);
	else if (strcmp(kind, "node") == 0 && ph_string(rec, "node") && to)
		ph_set_last(p, "node", ph_string(rec, "node"), to, t);
	else if (strcmp(kind, "freeze") == 0)
		ph_replace(&p->last_frozen, ph_string(rec, "breach"));
	else if (strcmp(kind, "acknowledge") == 0)
		ph_replace(&p->last_acked, ph_string(rec, "breach"));
}

static void ph_load(ph_plan_t *p, const history_data_t *d)
{
	for (size_t i = 0; i < d->n_transitions; i++) {
		ph_follow(p, d->transitions[i]);
		ph_lines_push(&p->transitions, ph_print(d->transitions[i]), false);
	}
	for (size_t i = 0; i < d->n_samples; i++) {
		const char *pool = ph_string(d->samples[i], "pool");
		if (pool) {
			ph_sampled_t *s = strmap_get(&p->sampled, pool);
			if (s == NULL)
				strmap_put(&p->sampled, pool, s = xcalloc(1, sizeof(*s)));
			s->last_ms = (int64_t)cJSON_GetObjectItemCaseSensitive(d->samples[i], "t")->valuedouble;
		}
		ph_lines_push(&p->samples, ph_print(d->samples[i]), true);
	}
	p->comparison = d->comparison ? cJSON_Duplicate(d->comparison, true) : NULL;
}

static void ph_on_read(const kube_http_response_t *resp, void *data)
{
	ph_request_t *req = data;
	plan_history_t *h = req->h;
	h->in_flight--;
	ph_plan_t *p = strmap_get(&h->plans, req->plan);
	if (p != NULL && p->state == PH_READING) {
		h->epoch++; /* read or not, what it remembers may differ from what it was told before */
		if (resp->status == 404) {
			p->state = PH_READ;
		} else if (resp->error) {
			log_warn("history not read; trying again later", "plan", req->plan, "error", resp->error);
			p->state = PH_UNREAD;
		} else {
			cJSON *obj = cJSON_ParseWithLength(resp->body, resp->body_len);
			history_data_t d;
			char err[256];
			if (history_decode(obj, &d, err, sizeof(err)) != 0) {
				log_warn("history unreadable; starting a new one", "plan", req->plan, "error", err);
			} else {
				if (d.dropped > 0) {
					char n[24];
					snprintf(n, sizeof(n), "%zu", d.dropped);
					log_warn("history records unreadable; dropped", "plan", req->plan, "dropped", n, "first",
						 d.problem);
				}
				ph_load(p, &d);
			}
			history_data_free(&d);
			cJSON_Delete(obj);
			p->state = PH_READ;
		}
	}
	free(req->plan);
	free(req);
}

static ph_request_t *ph_request_new(plan_history_t *h, const char *plan, bool read)
{
	ph_request_t *req = xcalloc(1, sizeof(*req));
	req->h = h;
	req->plan = xstrdup(plan);
	req->read = read;
	return req;
}

static void ph_request_free(ph_request_t *req)
{
	free(req->plan);
	free(req);
}

bool plan_history_ready(plan_history_t *h, const char *plan, const char *plan_uid, int64_t now_ms)
{
	ph_plan_t *p = strmap_get(&h->plans, plan);
	if (p == NULL) {
		p = xcalloc(1, sizeof(*p));
		p->name = xstrdup(plan);
		p->last = (strmap_t)STRMAP_INIT;
		p->sampled = (strmap_t)STRMAP_INIT;
		p->transitions.max = PLAN_HISTORY_TRANSITIONS_MAX;
		p->samples.max = PLAN_HISTORY_SAMPLES_MAX;
		strmap_put(&h->plans, plan, p);
	}
	if (plan_uid && (p->uid == NULL || strcmp(p->uid, plan_uid) != 0))
		ph_replace(&p->uid, plan_uid);
	if (p->state == PH_UNREAD && now_ms >= p->retry_at_ms) {
		char *path = ph_path(plan);
		ph_request_t *req = ph_request_new(h, plan, true);
		p->retry_at_ms = now_ms + PLAN_HISTORY_FLUSH_MS;
		if (path && kube_get(h->http, path, ph_on_read, req) == 0) {
			h->in_flight++;
			p->state = PH_READING;
		} else {
			ph_request_free(req);
		}
		free(path);
	}
	return p->state == PH_READ;
}

static ph_plan_t *ph_ready_plan(plan_history_t *h, const char *plan)
{
	ph_plan_t *p = strmap_get(&h->plans, plan);
	return p && p->state == PH_READ ? p : NULL;
}

static int64_t ph_transition(ph_plan_t *p, const char *kind, const char *pool, const char *name, const char *state,
			     int64_t since_ms, int64_t now_ms, char *left, size_t left_len)
{
	char *key = xjoin(kind, '\x1f', name);
	const ph_last_t *last = strmap_get(&p->last, key);
	free(key);
	history_subject_t s = { .was = last ? last->state : NULL, .was_since_ms = last ? last->since_ms : 0, .is = state,
				.since_ms = since_ms };
	history_change_t c;
	history_change(&s, now_ms, &c);
	if (!c.record)
		return -1;
	cJSON *rec = cJSON_CreateObject();
	cJSON_AddNumberToObject(rec, "t", (double)c.at_ms);
	cJSON_AddStringToObject(rec, "kind", kind);
	cJSON_AddStringToObject(rec, "pool", pool);
	if (strcmp(kind, "node") == 0)
		cJSON_AddStringToObject(rec, "node", name);
	if (s.was)
		cJSON_AddStringToObject(rec, "from", s.was);
	cJSON_AddStringToObject(rec, "to", state);
	if (c.held_ms >= 0) {
		cJSON_AddNumberToObject(rec, "heldMs", (double)c.held_ms);
		snprintf(left, left_len, "%s", s.was);
	}
	ph_record(p, rec, false);
	ph_set_last(p, kind, name, state, c.at_ms);
	return c.held_ms;
}

void plan_history_pool(plan_history_t *h, const char *plan, const char *pool, const char *phase, int64_t now_ms)
{
	ph_plan_t *p = ph_ready_plan(h, plan);
	char left[64];
	if (p)
		ph_transition(p, "pool", pool, pool, phase, 0, now_ms, left, sizeof(left));
}

int64_t plan_history_node(plan_history_t *h, const char *plan, const char *pool, const char *node, const char *step,
			  int64_t since_ms, int64_t now_ms, char *left, size_t left_len)
{
	ph_plan_t *p = ph_ready_plan(h, plan);
	return p ? ph_transition(p, "node", pool, node, step, since_ms, now_ms, left, left_len) : -1;
}

void plan_history_breach(plan_history_t *h, const char *plan, const char *id, const char *pool, const char *signal,
			 const char *value, const char *threshold, bool acknowledged, int64_t now_ms)
{
	ph_plan_t *p = ph_ready_plan(h, plan);
	if (p == NULL)
		return;
	history_breach_input_t in = { id, acknowledged, p->last_frozen, p->last_acked };
	history_breach_output_t out;
	history_breach(&in, &out);
	if (out.record_freeze) {
		cJSON *rec = cJSON_CreateObject();
		cJSON_AddNumberToObject(rec, "t", (double)now_ms);
		cJSON_AddStringToObject(rec, "kind", "freeze");
		cJSON_AddStringToObject(rec, "pool", pool ? pool : "");
		cJSON_AddStringToObject(rec, "signal", signal ? signal : "");
		cJSON_AddStringToObject(rec, "value", value ? value : "");
		cJSON_AddStringToObject(rec, "threshold", threshold ? threshold : "");
		cJSON_AddStringToObject(rec, "breach", id);
		ph_record(p, rec, false);
		ph_replace(&p->last_frozen, id);
	}
	if (out.record_acknowledge) {
		cJSON *rec = cJSON_CreateObject();
		cJSON_AddNumberToObject(rec, "t", (double)now_ms);
		cJSON_AddStringToObject(rec, "kind", "acknowledge");
		cJSON_AddStringToObject(rec, "breach", id);
		ph_record(p, rec, false);
		ph_replace(&p->last_acked, id);
	}
}

/* The pool's sample record, made when first asked for; NULL when the plan's history is not read yet. */
static ph_sampled_t *ph_sampled(plan_history_t *h, const char *plan, const char *pool)
{
	ph_plan_t *p = ph_ready_plan(h, plan);
	if (p == NULL)
		return NULL;
	ph_sampled_t *s = strmap_get(&p->sampled, pool);
	if (s == NULL)
		strmap_put(&p->sampled, pool, s = xcalloc(1, sizeof(*s)));
	return s;
}

bool plan_history_sample_due(plan_history_t *h, const char *plan, const char *pool,
			     const slo_result_t signals[SLO_SIGNALS], bool at_rest, int64_t now_ms)
{
	const ph_sampled_t *s = ph_sampled(h, plan, pool);
	if (s == NULL)
		return false;
	bool changed = false;
	for (int k = 0; k < SLO_SIGNALS && s->known; k++)
		changed |= s->verdicts[k] != signals[k].verdict;
	return history_sample_due(s->last_ms, now_ms, changed, at_rest);
}

void plan_history_sample(plan_history_t *h, const char *plan, const char *pool, const slo_result_t signals[SLO_SIGNALS],
			 slo_verdict_t gate, const int64_t devices[HISTORY_PATHS][2], bool at_rest, int64_t now_ms)
{
	if (!plan_history_sample_due(h, plan, pool, signals, at_rest, now_ms))
		return;
	ph_plan_t *p = ph_ready_plan(h, plan);
	ph_sampled_t *s = ph_sampled(h, plan, pool);
	cJSON *rec = cJSON_CreateObject();
	cJSON_AddNumberToObject(rec, "t", (double)now_ms);
	cJSON_AddStringToObject(rec, "pool", pool);
	cJSON_AddStringToObject(rec, "gate", slo_verdict_name(gate));
	cJSON *sigs = cJSON_AddArrayToObject(rec, "signals");
	for (int k = 0; k < SLO_SIGNALS; k++) {
		cJSON *sig = cJSON_CreateArray();
		cJSON_AddItemToArray(sig, cJSON_CreateString(signals[k].name));
		cJSON_AddItemToArray(sig, cJSON_CreateNumber(signals[k].value));
		cJSON_AddItemToArray(sig, cJSON_CreateNumber(signals[k].threshold));
		cJSON_AddItemToArray(sig, cJSON_CreateNumber(signals[k].samples));
		cJSON_AddItemToArray(sig, cJSON_CreateString(slo_verdict_name(signals[k].verdict)));
		cJSON_AddItemToArray(sig, cJSON_CreateString(signals[k].unit));
		cJSON_AddItemToArray(sigs, sig);
		s->verdicts[k] = signals[k].verdict;
	}
	cJSON *dev = cJSON_AddObjectToObject(rec, "devices");
	for (int path = 0; path < HISTORY_PATHS; path++) {
		cJSON *pair = cJSON_AddArrayToObject(dev, history_path_name((history_path_t)path));
		cJSON_AddItemToArray(pair, cJSON_CreateNumber((double)devices[path][0]));
		cJSON_AddItemToArray(pair, cJSON_CreateNumber((double)devices[path][1]));
	}
	ph_record(p, rec, true);
	s->known = true;
	s->last_ms = now_ms;
}

/* ---- the comparison ---------------------------------------------------------------- */

static cJSON *ph_object(cJSON *parent, const char *key)
{
	cJSON *o = cJSON_GetObjectItemCaseSensitive(parent, key);
	return cJSON_IsObject(o) ? o : cJSON_AddObjectToObject(parent, key);
}

static void ph_count(cJSON *obj, const char *key, double add, bool max)
{
	cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (!cJSON_IsNumber(v)) {
		cJSON_AddNumberToObject(obj, key, add);
		return;
	}
	cJSON_SetNumberValue(v, !max ? v->valuedouble + add : add > v->valuedouble ? add : v->valuedouble);
}

static void ph_latency(cJSON *counters, const char *what, int64_t from_s, int64_t to_s)
{
	if (from_s <= 0 || to_s < from_s)
		return;
	char sum[32], count[32], max[32];
	snprintf(sum, sizeof(sum), "%sMsSum", what);
	snprintf(count, sizeof(count), "%sCount", what);
	snprintf(max, sizeof(max), "%sMsMax", what);
	double ms = (double)(to_s - from_s) * 1000;
	ph_count(counters, sum, ms, false);
	ph_count(counters, count, 1, false);
	ph_count(counters, max, ms, true);
}

static void ph_pod_view(const projection_pod_t *pod, history_pod_view_t *v)
{
	memset(v, 0, sizeof(*v));
	if (pod == NULL)
		return;
	v->present = true;
	v->on_node = pod->node_name != NULL;
	v->ready = pod->ready;
	v->succeeded = pod->phase == PROJECTION_POD_SUCCEEDED;
	v->gone = pod->meta.deleting || pod->phase == PROJECTION_POD_FAILED;
	v->unschedulable = pod->phase == PROJECTION_POD_PENDING && !pod->meta.deleting && pod->unschedulable;
}

void plan_history_pod(plan_history_t *h, const char *plan, const char *pool, history_path_t path,
		      const projection_pod_t *old, const projection_pod_t *new)
{
	const projection_pod_t *pod = new ? new : old;
	ph_plan_t *p = ph_ready_plan(h, plan);
	if (p == NULL || pod == NULL || pod->meta.uid == NULL)
		return;
	uintptr_t flags = (uintptr_t)strmap_get(&h->pods, pod->meta.uid);
	history_pod_view_t ov, nv;
	ph_pod_view(old, &ov);
	ph_pod_view(new, &nv);
	history_pod_outcome_t outcome =
		history_pod_outcome(&ov, &nv, (flags & PH_POD_SETTLED) != 0, (flags & PH_POD_RETRIED) != 0);
	if (outcome == HISTORY_POD_NOTHING)
		return;
	if (outcome == HISTORY_POD_RETRIED) {
		strmap_put(&h->pods, pod->meta.uid, (void *)(flags | PH_POD_KNOWN | PH_POD_RETRIED));
		return;
	}
	strmap_put(&h->pods, pod->meta.uid, (void *)(flags | PH_POD_KNOWN | PH_POD_SETTLED));
	if (outcome == HISTORY_POD_SETTLED)
		return;
	if (p->comparison == NULL)
		p->comparison = cJSON_CreateObject();
	const char *path_name = history_path_name(path);
	if (outcome == HISTORY_POD_UNPLACED) {
		ph_count(ph_object(p->comparison, "unplaced"), path_name, 1, false);
	} else if (pool != NULL) {
		cJSON *counters = ph_object(ph_object(ph_object(p->comparison, "pools"), pool), path_name);
		if (outcome == HISTORY_POD_FAILED) {
			ph_count(counters, "failed", 1, false);
		} else {
			ph_count(counters, "placed", 1, false);
			ph_count(counters, "retries", (flags & PH_POD_RETRIED) ? 1 : 0, false);
			ph_latency(counters, "alloc", pod->meta.created, pod->scheduled_time);
			if (pod->ready)
				ph_latency(counters, "ready", pod->scheduled_time, pod->ready_time);
		}
	}
	ph_dirty(p, PH_COUNTERS);
}

void plan_history_pod_gone(plan_history_t *h, const projection_pod_t *old)
{
	if (old && old->meta.uid)
		strmap_remove(&h->pods, old->meta.uid);
}

/* ---- writing ---------------------------------------------------------------------- */

/* The bytes s takes inside a JSON string, its escapes as cJSON prints them. */
static size_t ph_escaped_len(const char *s)
{
	size_t n = 0;
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '"' || *c == '\\' || *c == '\b' || *c == '\f' || *c == '\n' || *c == '\r' || *c == '\t')
			n += 2;
		else
			n += *c < 32 ? 6 : 1;
	}
	return n;
}

static char *ph_join(const ph_lines_t *l)
{
	char *out = xmalloc(l->bytes + 1), *w = out;
	for (size_t i = 0; i < l->n; i++) {
		size_t len = strlen(l->lines[i]);
		memcpy(w, l->lines[i], len);
		w += len;
		*w++ = '\n';
	}
	*w = '\0';
	return out;
}

static void ph_on_write(const kube_http_response_t *resp, void *data)
{
	ph_request_t *req = data;
	plan_history_t *h = req->h;
	h->in_flight--;
	ph_plan_t *p = strmap_get(&h->plans, req->plan);
	if (p != NULL) {
		p->writing = false;
		if (resp->error) {
			log_warn("history not written; trying again later", "plan", req->plan, "error", resp->error);
			ph_dirty(p, req->level);
		}
	}
	ph_request_free(req);
}

static void ph_write(plan_history_t *h, ph_plan_t *p, int64_t now_ms)
{
	char *name = plan_child_name(HISTORY_NAME_PREFIX, p->name);
	cJSON *md, *labels;
	cJSON *cm = plan_object_child_new("v1", "ConfigMap", name, HISTORY_NAMESPACE, p->name, p->uid, &md, &labels);
	free(name);
	cJSON_AddStringToObject(labels, PLAN_HISTORY_LABEL, "true");
	cJSON *data = cJSON_AddObjectToObject(cm, "data");
	cJSON_AddStringToObject(data, "format", HISTORY_FORMAT);
	/*
	 * Up to 640 KiB of records: referenced rather than copied, and printed
	 * into one buffer of the size they take once escaped, where printing
	 * would have grown it by doubling, a copy at each step.
	 */
	char *transitions = ph_join(&p->transitions), *samples = ph_join(&p->samples), *cmp = NULL;
	cJSON_AddItemToObject(data, "transitions", cJSON_CreateStringReference(transitions));
	cJSON_AddItemToObject(data, "samples", cJSON_CreateStringReference(samples));
	size_t size = ph_escaped_len(transitions) + ph_escaped_len(samples) + 4096;
	if (p->comparison) {
		cmp = ph_print(p->comparison);
		if (strlen(cmp) <= HISTORY_COMPARISON_MAX) {
			cJSON_AddItemToObject(data, "comparison", cJSON_CreateStringReference(cmp));
			size += ph_escaped_len(cmp);
		} else {
			log_warn("history comparison too large; not written", "plan", p->name);
		}
	}
	char *json = cJSON_PrintBuffered(cm, size < INT_MAX ? (int)size : INT_MAX, false);
	if (json == NULL)
		abort(); /* cJSON fails only when out of memory; see xalloc.h */
	cJSON_Delete(cm);
	free(transitions);
	free(samples);
	free(cmp);
	char *path = ph_path(p->name);
	ph_request_t *req = ph_request_new(h, p->name, false);
	p->flushed_ms = now_ms;
	req->level = (int)p->dirty;
	if (kube_apply(h->http, path, json, true, ph_on_write, req) == 0) {
		h->in_flight++;
		p->writing = true;
		p->dirty = PH_CLEAN;
	} else {
		ph_request_free(req);
	}
	free(path);
	free(json);
}

void plan_history_flush(plan_history_t *h, int64_t now_ms)
{
	size_t it = 0;
	void *v;
	while (strmap_next(&h->plans, &it, NULL, &v)) {
		ph_plan_t *p = v;
		if (p->state != PH_READ || p->dirty == PH_CLEAN || p->writing)
			continue;
		int64_t wait = p->dirty == PH_TRANSITIONS ? PLAN_HISTORY_FLUSH_SOON_MS
			       : p->dirty == PH_SAMPLES	  ? PLAN_HISTORY_FLUSH_MS
							  : PLAN_HISTORY_FLUSH_COMPARISON_MS;
		if (p->flushed_ms == 0 || now_ms - p->flushed_ms >= wait || now_ms < p->flushed_ms)
			ph_write(h, p, now_ms);
	}
}
