#include "prom_query.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>

#include "kube_api.h"
#include "kubeconfig.h"
#include "log.h"
#include "prometheus.h"
#include "strmap.h"
#include "xalloc.h"

/* A Prometheus answer larger than this is an error, not a crash (a query over far too many series). */
#define PQ_MAX_BODY (16u * 1024 * 1024)

typedef struct pq_plan pq_plan_t;

/* One query of a plan and its last answer. */
typedef struct {
	char *name;
	char *path; /* /api/v1/query?query=<expanded, escaped> */
	plan_prom_direction_t breach_when;
	bool answered;
	prom_outcome_t last;
	int64_t at_ms;
	uint64_t errors; /* failed answers under these settings */
} pq_entry_t;

/* One request in flight: which plan and query it answers (index SIZE_MAX: the Secret). */
typedef struct {
	pq_plan_t *plan;
	size_t index;
} pq_call_t;

struct pq_plan {
	prom_query_t *owner;
	char *name;
	char *settings; /* everything the queries depend on, to notice a change */
	char *address;
	char *secret;
	bool insecure;
	uint64_t interval_ms, timeout_ms;
	pq_entry_t *entries;
	size_t n;
	kube_http_t *http;   /* the Prometheus client; NULL until built */
	char *credential;    /* the Secret's token and CA the client was built with ("" none) */
	char *secret_error;  /* why the Secret could not be used this round, or NULL */
	uv_timer_t timer;
	int pending;         /* requests in flight */
	size_t round_left;   /* queries of this round not answered yet */
	bool gone, timer_closed;
};

struct prom_query {
	uv_loop_t *loop;
	kube_http_t *kube;
	char *namespace;
	void (*changed)(void *data, const char *plan);
	void *data;
	strmap_t plans; /* name -> pq_plan_t * */
	metrics_counter_t *m_errors, *m_queries;
	int busy; /* requests in flight, retired plans' included */
};

static int64_t pq_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Percent-encode everything but RFC 3986's unreserved characters. */
static char *pq_escape(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(s);
	char *out = xmalloc(n * 3 + 1), *o = out;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' ||
		    *p == '.' || *p == '_' || *p == '~') {
			*o++ = (char)*p;
		} else {
			*o++ = '%';
			*o++ = hex[*p >> 4];
			*o++ = hex[*p & 15];
		}
	}
	*o = '\0';
	return out;
}

prom_query_t *prom_query_new(uv_loop_t *loop, kube_http_t *kube, const char *namespace,
			     void (*changed)(void *data, const char *plan), void *data)
{
	prom_query_t *q = xcalloc(1, sizeof(*q));
	q->loop = loop;
	q->kube = kube;
	q->namespace = xstrdup(namespace);
	q->changed = changed;
	q->data = data;
	q->plans = (strmap_t)STRMAP_INIT;
	return q;
}

void prom_query_set_metrics(prom_query_t *q, metrics_registry_t *r)
{
	q->m_queries = metrics_counter_new(r, "drashift_prometheus_queries_total",
					   "Prometheus queries of the plans' spec.slo.prometheus that were answered or "
					   "failed, by outcome (value, noData, error).",
					   "plan", "query", "outcome", NULL);
	q->m_errors = metrics_counter_new(r, "drashift_prometheus_query_errors_total",
					  "Prometheus queries that failed (no answer, an error, a malformed answer, the "
					  "Secret unreadable); each is Inconclusive or a Breach, never a Pass.",
					  "plan", "query", NULL);
}

/* Free a plan once nothing refers to it any more: its timer closed and its requests called back. */
static void pq_plan_maybe_free(pq_plan_t *p)
{
	if (!p->gone || !p->timer_closed || p->pending > 0)
		return;
	for (size_t i = 0; i < p->n; i++) {
		free(p->entries[i].name);
		free(p->entries[i].path);
		prom_outcome_free(&p->entries[i].last);
	}
	free(p->entries);
	free(p->name);
	free(p->settings);
	free(p->address);
	free(p->secret);
	if (p->credential)
		OPENSSL_cleanse(p->credential, strlen(p->credential));
	free(p->credential);
	free(p->secret_error);
	free(p);
}

static void pq_timer_closed(uv_handle_t *h)
{
	pq_plan_t *p = h->data;
	p->timer_closed = true;
	pq_plan_maybe_free(p);
}

/* Stop asking: the client's requests call back now (as errors nobody keeps), memory goes later. */
static void pq_plan_retire(pq_plan_t *p)
{
	p->gone = true;
	uv_timer_stop(&p->timer);
	uv_close((uv_handle_t *)&p->timer, pq_timer_closed);
	if (p->http) {
		kube_http_close(p->http);
		p->http = NULL;
	}
}

/* One query's answer is in: keep it, count it, and when the round is complete let the plan be judged. */
static void pq_record(pq_plan_t *p, size_t i, prom_outcome_t *o)
{
	pq_entry_t *e = &p->entries[i];
	prom_query_t *q = p->owner;
	static const char *const outcomes[] = { [PROM_VALUE] = "value", [PROM_NO_DATA] = "noData", [PROM_ERROR] = "error" };
	if (q->m_queries)
		metrics_counter_inc(q->m_queries, p->name, e->name, outcomes[o->kind], NULL);
	if (o->kind == PROM_ERROR) {
		e->errors++;
		if (q->m_errors)
			metrics_counter_inc(q->m_errors, p->name, e->name, NULL);
		/* Once per change of message, not every round: steady failure is on /metrics and in status. */
		if (!e->answered || e->last.kind != PROM_ERROR || strcmp(e->last.error, o->error) != 0)
			log_warn("Prometheus query failed", "plan", p->name, "query", e->name, "error", o->error);
	}
	prom_outcome_free(&e->last);
	e->last = *o;
	e->answered = true;
	e->at_ms = pq_now_ms();
	if (p->round_left > 0 && --p->round_left == 0 && q->changed)
		q->changed(q->data, p->name);
}

static void pq_on_answer(const kube_http_response_t *resp, void *data)
{
	pq_call_t *call = data;
	pq_plan_t *p = call->plan;
	size_t i = call->index;
	free(call);
	p->pending--;
	p->owner->busy--;
	if (!p->gone) {
		prom_outcome_t o;
		prom_decode(resp->status, resp->error, resp->body, resp->body_len, p->entries[i].breach_when, &o);
		pq_record(p, i, &o);
	}
	pq_plan_maybe_free(p);
}

/* Every query of the round failed before it was asked (the Secret, the client): record why. */
static void pq_fail_round(pq_plan_t *p, const char *why)
{
	p->round_left = p->n;
	for (size_t i = 0; i < p->n; i++) {
		prom_outcome_t o = { .kind = PROM_ERROR, .error = xstrdup(why) };
		pq_record(p, i, &o);
	}
}

static void pq_ask(pq_plan_t *p)
{
	prom_query_t *q = p->owner;
	if (p->secret_error) {
		pq_fail_round(p, p->secret_error);
		return;
	}
	p->round_left = p->n;
	for (size_t i = 0; i < p->n; i++) {
		pq_call_t *call = xcalloc(1, sizeof(*call));
		*call = (pq_call_t){ .plan = p, .index = i };
		kube_http_req_t req = { .method = "GET", .path = p->entries[i].path, .timeout_ms = (long)p->timeout_ms,
					.max_body = PQ_MAX_BODY };
		if (p->http == NULL || kube_http_request(p->http, &req, pq_on_answer, call, NULL) != 0) {
			free(call);
			prom_outcome_t o = { .kind = PROM_ERROR, .error = xstrdup("the request could not be started") };
			pq_record(p, i, &o);
			continue;
		}
		p->pending++;
		q->busy++;
	}
}

/* (Re)build the Prometheus client for the credential read (token, CA), when it changed. */
static void pq_build_client(pq_plan_t *p, const char *token, const kubeconfig_blob_t *ca)
{
	char *credential = xasprintf("%s\x1f%.*s", token ? token : "", (int)(ca ? ca->len : 0), ca && ca->data ? ca->data : "");
	bool same = p->http != NULL && p->credential != NULL && strcmp(credential, p->credential) == 0;
	if (same) {
		OPENSSL_cleanse(credential, strlen(credential));
		free(credential);
		return;
	}
	if (p->http)
		kube_http_close(p->http);
	p->http = NULL;
	if (p->credential)
		OPENSSL_cleanse(p->credential, strlen(p->credential));
	free(p->credential);
	p->credential = credential;
	kubeconfig_t cfg = { .source = p->name, .server = p->address, .insecure_skip_tls_verify = p->insecure,
			     .token = (char *)token };
	if (ca && ca->data)
		cfg.ca = *ca;
	char err[512];
	if (kube_http_init(p->owner->loop, &cfg, &p->http, err, sizeof(err)) != 0) {
		p->http = NULL;
		free(p->secret_error);
		p->secret_error = xasprintf("cannot create the Prometheus client: %s", err);
	}
}

/* A token file's trailing newline (kubectl create secret --from-file keeps it) is no part of the token. */
static char *pq_trim(char *token)
{
	if (token == NULL)
		return NULL;
	size_t n = strlen(token);
	while (n > 0 && (token[n - 1] == '\n' || token[n - 1] == '\r' || token[n - 1] == ' ' || token[n - 1] == '\t'))
		token[--n] = '\0';
	return token;
}

/* The Secret's data member key, decoded; unset when absent. -1 when it is not base64. */
static int pq_secret_member(const cJSON *secret, const char *key, kubeconfig_blob_t *out)
{
	const cJSON *data = cJSON_GetObjectItemCaseSensitive(secret, "data");
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(data, key);
	out->data = NULL;
	out->len = 0;
	if (v == NULL)
		return 0;
	return cJSON_IsString(v) && v->valuestring ? kubeconfig_base64_decode(v->valuestring, out) : -1;
}

static void pq_on_secret(const kube_http_response_t *resp, void *data)
{
	pq_call_t *call = data;
	pq_plan_t *p = call->plan;
	free(call);
	p->pending--;
	p->owner->busy--;
	if (p->gone) {
		pq_plan_maybe_free(p);
		return;
	}
	free(p->secret_error);
	p->secret_error = NULL;
	if (resp->error) {
		p->secret_error = xasprintf("Secret %s/%s: %s", p->owner->namespace, p->secret, resp->error);
	} else {
		cJSON *secret = cJSON_ParseWithLength(resp->body, resp->body_len);
		kubeconfig_blob_t token = { 0 }, ca = { 0 };
		if (pq_secret_member(secret, "token", &token) != 0 || pq_secret_member(secret, "ca.crt", &ca) != 0)
			p->secret_error = xasprintf("Secret %s/%s: token or ca.crt is not base64", p->owner->namespace,
						    p->secret);
		else
			pq_build_client(p, pq_trim(token.data), &ca);
		if (token.data)
			OPENSSL_cleanse(token.data, token.len);
		free(token.data);
		free(ca.data);
		cJSON_Delete(secret);
	}
	pq_ask(p);
}

/* A round: the Secret first when the plan names one, then every query. Skipped while one is still out. */
static void pq_on_timer(uv_timer_t *t)
{
	pq_plan_t *p = t->data;
	if (p->gone || p->pending > 0)
		return;
	if (p->secret == NULL) {
		if (p->http == NULL) {
			free(p->secret_error);
			p->secret_error = NULL;
			pq_build_client(p, NULL, NULL);
		}
		pq_ask(p);
		return;
	}
	pq_call_t *call = xcalloc(1, sizeof(*call));
	*call = (pq_call_t){ .plan = p, .index = SIZE_MAX };
	char *path = kube_path("v1", "secrets", p->owner->namespace, p->secret, NULL);
	int rc = kube_get(p->owner->kube, path, pq_on_secret, call);
	free(path);
	if (rc != 0) {
		free(call);
		pq_fail_round(p, "the Secret could not be read (the API client is closing)");
		return;
	}
	p->pending++;
	p->owner->busy++;
}

/* Everything a plan's answers depend on, in one string: equal strings, same questions. */
static char *pq_settings(const plan_prometheus_t *prom)
{
	char *s = xasprintf("%s\x1f%s\x1f%d\x1f%" PRIu64 "\x1f%" PRIu64, prom->address,
			    prom->secret_name ? prom->secret_name : "", prom->insecure_skip_verify, prom->interval_ms,
			    prom->timeout_ms);
	for (size_t i = 0; i < prom->n_queries; i++) {
		const plan_prom_query_t *pq = &prom->queries[i];
		char *next = xasprintf("%s\x1e%s\x1f%s\x1f%" PRIu64 "\x1f%d", s, pq->name, pq->query, pq->window_ms,
				       (int)pq->breach_when);
		free(s);
		s = next;
	}
	return s;
}

void prom_query_sync(prom_query_t *q, const char *plan_name, const plan_prometheus_t *prom)
{
	if (prom == NULL || prom->address == NULL || prom->n_queries == 0) {
		prom_query_forget(q, plan_name);
		return;
	}
	char *settings = pq_settings(prom);
	pq_plan_t *had = strmap_get(&q->plans, plan_name);
	if (had && strcmp(had->settings, settings) == 0) {
		free(settings);
		return;
	}
	if (had) {
		strmap_remove(&q->plans, plan_name);
		pq_plan_retire(had);
		log_info("Prometheus settings changed; asking afresh", "plan", plan_name);
	}
	pq_plan_t *p = xcalloc(1, sizeof(*p));
	p->owner = q;
	p->name = xstrdup(plan_name);
	p->settings = settings;
	p->address = xstrdup(prom->address);
	p->secret = prom->secret_name ? xstrdup(prom->secret_name) : NULL;
	p->insecure = prom->insecure_skip_verify;
	p->interval_ms = prom->interval_ms;
	p->timeout_ms = prom->timeout_ms;
	p->n = prom->n_queries;
	p->entries = xcalloc(p->n, sizeof(*p->entries));
	for (size_t i = 0; i < p->n; i++) {
		char *expanded = prom_expand(&prom->queries[i]);
		char *escaped = pq_escape(expanded);
		p->entries[i].name = xstrdup(prom->queries[i].name);
		p->entries[i].path = xasprintf("/api/v1/query?query=%s", escaped);
		p->entries[i].breach_when = prom->queries[i].breach_when;
		free(escaped);
		free(expanded);
	}
	uv_timer_init(q->loop, &p->timer);
	p->timer.data = p;
	uv_timer_start(&p->timer, pq_on_timer, 0, p->interval_ms);
	strmap_put(&q->plans, plan_name, p);
}

void prom_query_forget(prom_query_t *q, const char *plan_name)
{
	pq_plan_t *p = strmap_remove(&q->plans, plan_name);
	if (p == NULL)
		return;
	/* The plan's series go with it (a rename of a query under a live plan keeps the old ones). */
	static const char *const outcomes[] = { "value", "noData", "error" };
	for (size_t i = 0; q->m_errors && i < p->n; i++) {
		metrics_counter_remove(q->m_errors, p->name, p->entries[i].name, NULL);
		for (size_t o = 0; o < sizeof(outcomes) / sizeof(outcomes[0]); o++)
			metrics_counter_remove(q->m_queries, p->name, p->entries[i].name, outcomes[o], NULL);
	}
	pq_plan_retire(p);
}

size_t prom_query_judge(const prom_query_t *q, const char *plan_name, const plan_prometheus_t *prom, int64_t since_ms,
			int64_t now_ms, slo_result_t *out)
{
	const pq_plan_t *p = strmap_get(&q->plans, plan_name);
	int64_t stale = (int64_t)(3 * prom->interval_ms + prom->timeout_ms);
	for (size_t i = 0; i < prom->n_queries; i++) {
		const pq_entry_t *e = p && i < p->n && strcmp(p->entries[i].name, prom->queries[i].name) == 0
					      ? &p->entries[i]
					      : NULL;
		bool usable = e && e->answered && e->at_ms >= since_ms;
		prom_judge(&prom->queries[i], usable ? &e->last : NULL, usable ? e->at_ms : 0, now_ms, stale, &out[i]);
		out[i].errors = e ? e->errors : 0;
	}
	return prom->n_queries;
}

int prom_query_busy(const prom_query_t *q)
{
	return q->busy;
}

static void pq_retire_value(void *v)
{
	pq_plan_retire(v);
}

void prom_query_close(prom_query_t *q)
{
	strmap_clear(&q->plans, pq_retire_value);
}

void prom_query_free(prom_query_t *q)
{
	if (q == NULL)
		return;
	strmap_clear(&q->plans, pq_retire_value);
	free(q->namespace);
	free(q);
}
