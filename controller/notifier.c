#include "notifier.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube_http.h"
#include "log.h"
#include "strmap.h"
#include "xalloc.h"

typedef struct {
	char *event;
	char *body;
} nt_msg_t;

typedef struct nt_hook nt_hook_t;

struct notifier {
	uv_loop_t *loop;
	strmap_t hooks; /* "<plan>\x1f<webhook>" -> nt_hook_t* */
	int open;       /* hooks whose timer is not closed yet (retired ones included) */
	bool closing;
	metrics_counter_t *m_sent, *m_attempts;
	metrics_gauge_t *m_queue;
};

struct nt_hook {
	notifier_t *n;
	char *plan, *name;
	char *url, *host; /* the URL from the spec now, and its host for logs */
	uint64_t timeout_ms;
	kube_http_t *http; /* made for http_url; another URL gets another client */
	char *http_url;
	nt_msg_t queue[NOTIFIER_QUEUE_MAX]; /* a ring: head, len */
	size_t head, len;
	nt_msg_t *sending; /* in flight */
	bool retired;
	uv_timer_t kick; /* sends the next one on a later turn of the loop, outside any curl callback */
};

notifier_t *notifier_new(uv_loop_t *loop)
{
	notifier_t *n = xcalloc(1, sizeof(*n));
	n->loop = loop;
	n->hooks = (strmap_t)STRMAP_INIT;
	return n;
}

void notifier_set_metrics(notifier_t *n, metrics_registry_t *r)
{
	n->m_sent = metrics_counter_new(r, "drashift_notifications_total",
					"Notifications of a plan's webhooks by event and result: delivered, failed (no "
					"2xx within the webhook's timeout, retries included) or dropped (queue full, "
					"plan deleted, or drashift stopping).",
					"plan", "webhook", "event", "result", NULL);
	n->m_attempts = metrics_counter_new(r, "drashift_notification_attempts_total",
					    "POSTs to a plan's webhooks by HTTP status (error: no answer); attempts "
					    "beyond the notifications are retries.",
					    "plan", "webhook", "code", NULL);
	n->m_queue = metrics_gauge_new(r, "drashift_notification_queue",
				       "Notifications waiting for a plan's webhook.", "plan", "webhook",
				       NULL);
}

static void nt_msg_free(nt_msg_t *m)
{
	free(m->event);
	free(m->body);
	m->event = m->body = NULL;
}

static void nt_count(nt_hook_t *h, const char *event, const char *result)
{
	if (h->n->m_sent)
		metrics_counter_inc(h->n->m_sent, h->plan, h->name, event, result, NULL);
}

static void nt_queue_gauge(nt_hook_t *h)
{
	if (h->n->m_queue)
		metrics_gauge_set(h->n->m_queue, (double)h->len, h->plan, h->name, NULL);
}

/* The URL's host (and port), without user, path or query: what a log may show of a URL that carries a token. */
static char *nt_host(const char *url)
{
	const char *s = strstr(url, "://");
	s = s ? s + 3 : url;
	size_t end = strcspn(s, "/?#");
	const char *at = memchr(s, '@', end);
	if (at) {
		end -= (size_t)(at + 1 - s);
		s = at + 1;
	}
	return xstrndup(s, end);
}

static void nt_on_attempt(const char *method, long status, double seconds, void *data)
{
	(void)method;
	(void)seconds;
	nt_hook_t *h = data;
	char code[24];
	snprintf(code, sizeof(code), "%ld", status);
	if (h->n->m_attempts)
		metrics_counter_inc(h->n->m_attempts, h->plan, h->name, status ? code : "error", NULL);
}

static void nt_on_kick(uv_timer_t *t);

static void nt_kick_soon(nt_hook_t *h)
{
	if (!h->retired)
		uv_timer_start(&h->kick, nt_on_kick, 0, 0);
}

static void nt_drop_oldest(nt_hook_t *h)
{
	nt_msg_t *m = &h->queue[h->head];
	nt_count(h, m->event, "dropped");
	nt_msg_free(m);
	h->head = (h->head + 1) % NOTIFIER_QUEUE_MAX;
	h->len--;
}

static void nt_on_done(const kube_http_response_t *resp, void *data)
{
	nt_hook_t *h = data;
	nt_msg_t *m = h->sending;
	h->sending = NULL;
	if (resp->error == NULL) {
		log_info("notification delivered", "plan", h->plan, "webhook", h->name, "event", m->event);
		nt_count(h, m->event, "delivered");
	} else if (h->retired) {
		nt_count(h, m->event, "dropped");
	} else {
		char code[24];
		snprintf(code, sizeof(code), "%ld", resp->status);
		log_warn("notification not delivered", "plan", h->plan, "webhook", h->name, "host", h->host, "event",
			 m->event, "status", code, "error", resp->error);
		nt_count(h, m->event, "failed");
	}
	nt_msg_free(m);
	free(m);
	if (h->len > 0)
		nt_kick_soon(h);
}

/* A client for the URL the spec names now (the previous one, idle, goes). */
static int nt_client(nt_hook_t *h)
{
	if (h->http && strcmp(h->http_url, h->url) == 0)
		return 0;
	if (h->http)
		kube_http_close(h->http);
	h->http = NULL;
	free(h->http_url);
	h->http_url = NULL;
	kubeconfig_t cfg = { .source = "spec.notifications", .server = h->url };
	char err[256];
	if (kube_http_init(h->n->loop, &cfg, &h->http, err, sizeof(err)) != 0) {
		log_warn("notification client not created", "plan", h->plan, "webhook", h->name, "host", h->host, "error",
			 err);
		return -1;
	}
	kube_http_set_observer(h->http, nt_on_attempt, h);
	h->http_url = xstrdup(h->url);
	return 0;
}

/* Send the oldest queued notification, if none is in flight. */
static void nt_on_kick(uv_timer_t *t)
{
	nt_hook_t *h = t->data;
	if (h->retired || h->sending || h->len == 0)
		return;
	nt_msg_t *m = xmalloc(sizeof(*m));
	*m = h->queue[h->head];
	h->head = (h->head + 1) % NOTIFIER_QUEUE_MAX;
	h->len--;
	nt_queue_gauge(h);
	kube_http_req_t req = { .method = "POST", .path = "", .content_type = "application/json", .body = m->body,
				.body_len = strlen(m->body), .timeout_ms = (long)h->timeout_ms,
				.max_body = NOTIFIER_MAX_ANSWER, .retry = 1 };
	h->sending = m;
	if (nt_client(h) != 0 || kube_http_request(h->http, &req, nt_on_done, h, NULL) != 0) {
		h->sending = NULL;
		log_warn("notification not sent: the request could not start", "plan", h->plan, "webhook", h->name, "host",
			 h->host, "event", m->event);
		nt_count(h, m->event, "failed");
		nt_msg_free(m);
		free(m);
		if (h->len > 0)
			nt_kick_soon(h);
	}
}

static char *nt_key(const char *plan, const char *name)
{
	return xjoin(plan, '\x1f', name);
}

static void nt_replace(char **field, const char *value)
{
	if (*field && strcmp(*field, value) == 0)
		return;
	free(*field);
	*field = xstrdup(value);
}

/* Queue body (copied) for hook of plan; event names it in logs and metrics. */
static void nt_queue(notifier_t *n, const char *plan, const plan_webhook_t *hook, const char *event, const char *body)
{
	char *key = nt_key(plan, hook->name);
	nt_hook_t *h = strmap_get(&n->hooks, key);
	if (h == NULL) {
		h = xcalloc(1, sizeof(*h));
		h->n = n;
		h->plan = xstrdup(plan);
		h->name = xstrdup(hook->name);
		uv_timer_init(n->loop, &h->kick);
		h->kick.data = h;
		n->open++;
		strmap_put(&n->hooks, key, h);
	}
	free(key);
	if (h->url == NULL || strcmp(h->url, hook->url) != 0) {
		nt_replace(&h->url, hook->url);
		free(h->host);
		h->host = nt_host(hook->url);
	}
	h->timeout_ms = hook->timeout_ms;
	if (h->len == NOTIFIER_QUEUE_MAX) {
		nt_msg_t *oldest = &h->queue[h->head];
		log_warn("notification queue full: the oldest notification is dropped", "plan", plan, "webhook", h->name,
			 "event", oldest->event);
		nt_drop_oldest(h);
	}
	h->queue[(h->head + h->len) % NOTIFIER_QUEUE_MAX] = (nt_msg_t){ xstrdup(event), xstrdup(body) };
	h->len++;
	nt_queue_gauge(h);
	nt_kick_soon(h);
}

static void nt_hook_closed(uv_handle_t *handle)
{
	nt_hook_t *h = handle->data;
	h->n->open--;
	free(h->plan);
	free(h->name);
	free(h->url);
	free(h->host);
	free(h->http_url);
	free(h);
}

/* Drop what it holds, abort what is in flight (its callback runs now), free it once its timer is closed. */
static void nt_hook_retire(nt_hook_t *h)
{
	h->retired = true;
	while (h->len > 0)
		nt_drop_oldest(h);
	if (h->n->m_queue)
		metrics_gauge_remove(h->n->m_queue, h->plan, h->name, NULL);
	if (h->http)
		kube_http_close(h->http);
	h->http = NULL;
	uv_timer_stop(&h->kick);
	uv_close((uv_handle_t *)&h->kick, nt_hook_closed);
}

void notifier_forget(notifier_t *n, const char *plan)
{
	size_t it = 0, count = 0, len = strlen(plan);
	const char *key;
	void *v;
	char **keys = xcalloc(strmap_size(&n->hooks) + 1, sizeof(*keys));
	while (strmap_next(&n->hooks, &it, &key, &v))
		if (strncmp(key, plan, len) == 0 && key[len] == '\x1f')
			keys[count++] = xstrdup(key);
	for (size_t i = 0; i < count; i++) {
		nt_hook_retire(strmap_remove(&n->hooks, keys[i]));
		free(keys[i]);
	}
	free(keys);
}

void notifier_close(notifier_t *n)
{
	n->closing = true;
	size_t it = 0;
	void *v;
	while (strmap_next(&n->hooks, &it, NULL, &v))
		nt_hook_retire(v);
	strmap_clear(&n->hooks, NULL);
}

bool notifier_busy(const notifier_t *n)
{
	return n->open > 0;
}

void notifier_free(notifier_t *n)
{
	if (n == NULL)
		return;
	strmap_clear(&n->hooks, NULL);
	free(n);
}

/* ---- deciding ---- */

typedef struct {
	plan_webhook_t hook; /* name and url owned */
	char *event;
	char *body;
} nt_note_t;

struct notifier_batch {
	char *plan;
	nt_note_t *notes;
	size_t n;
};

static const char *nt_str(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool nt_true(const cJSON *obj, const char *key)
{
	return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(obj, key));
}

/* A pool's status.pools[].nodes.failed; 0 when not recorded. */
static int64_t nt_failed(const cJSON *pool)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(pool, "nodes"), "failed");
	return cJSON_IsNumber(v) && v->valuedouble > 0 ? (int64_t)v->valuedouble : 0;
}

/* A pool's entry in status.pools by name; NULL when none. */
static const cJSON *nt_pool_status(const cJSON *status, const char *pool)
{
	const cJSON *p;
	cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(status, "pools"))
	{
		const char *name = nt_str(p, "name");
		if (name && strcmp(name, pool) == 0)
			return p;
	}
	return NULL;
}

notifier_batch_t *notifier_decide(const plan_t *plan, const cJSON *old_status, const cJSON *new_status, int64_t now_ms,
				  const char *now_s)
{
	if (plan->n_webhooks == 0)
		return NULL;
	notify_pool_t *pools = xcalloc(plan->n_pools + 1, sizeof(*pools));
	for (size_t i = 0; i < plan->n_pools; i++) {
		const cJSON *was = nt_pool_status(old_status, plan->pools[i].name);
		const cJSON *is = nt_pool_status(new_status, plan->pools[i].name);
		pools[i] = (notify_pool_t){ plan->pools[i].name,
					    nt_str(was, "phase"),
					    nt_str(is, "phase"),
					    nt_true(was, "awaitingApproval"),
					    nt_true(is, "awaitingApproval"),
					    nt_str(is, "message"),
					    nt_failed(was),
					    nt_failed(is) };
	}
	const cJSON *breach = cJSON_GetObjectItemCaseSensitive(new_status, "breach");
	notify_input_t in = {
		.plan = plan->name,
		.now_ms = now_ms,
		.time = now_s,
		.frozen_was = nt_true(old_status, "frozen"),
		.frozen = nt_true(new_status, "frozen"),
		.breach_id_was = nt_str(cJSON_GetObjectItemCaseSensitive(old_status, "breach"), "id"),
		.breach = { nt_str(breach, "id"), nt_str(breach, "pool"), nt_str(breach, "signal"), nt_str(breach, "value"),
			    nt_str(breach, "threshold") },
		.pools = pools,
		.n_pools = plan->n_pools,
	};
	notify_t *found = xcalloc(NOTIFY_EVENTS + 3 * plan->n_pools, sizeof(*found));
	size_t n_found = notify_decide(&in, found);
	notifier_batch_t *b = NULL;
	for (size_t i = 0; i < n_found; i++) {
		for (size_t w = 0; w < plan->n_webhooks; w++) {
			const plan_webhook_t *hook = &plan->webhooks[w];
			if (!notify_wanted(hook->events, found[i].event))
				continue;
			if (b == NULL) {
				b = xcalloc(1, sizeof(*b));
				b->plan = xstrdup(plan->name);
				b->notes = xcalloc(n_found * plan->n_webhooks, sizeof(*b->notes));
			}
			cJSON *payload = notify_payload(&in, &found[i], hook->format);
			char *body = cJSON_PrintUnformatted(payload);
			cJSON_Delete(payload);
			if (body == NULL)
				abort(); /* cJSON fails only when out of memory; see xalloc.h */
			nt_note_t *note = &b->notes[b->n++];
			note->hook = *hook;
			note->hook.name = xstrdup(hook->name);
			note->hook.url = xstrdup(hook->url);
			note->event = xstrdup(notify_event_name(found[i].event));
			note->body = body;
		}
	}
	free(found);
	free(pools);
	return b;
}

void notifier_batch_free(notifier_batch_t *b)
{
	if (b == NULL)
		return;
	for (size_t i = 0; i < b->n; i++) {
		free(b->notes[i].hook.name);
		free(b->notes[i].hook.url);
		free(b->notes[i].event);
		free(b->notes[i].body);
	}
	free(b->notes);
	free(b->plan);
	free(b);
}

void notifier_send(notifier_t *n, notifier_batch_t *b)
{
	for (size_t i = 0; b && !n->closing && i < b->n; i++)
		nt_queue(n, b->plan, &b->notes[i].hook, b->notes[i].event, b->notes[i].body);
	notifier_batch_free(b);
}
