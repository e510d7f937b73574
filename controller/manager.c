#include "manager.h"

#include <cjson/cJSON.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "cache.h"
#include "discovery.h"
#include "events.h"
#include "http_server.h"
#include "kube_api.h"
#include "kube_http.h"
#include "leader.h"
#include "log.h"
#include "metrics.h"
#include "plan_controller.h"
#include "xalloc.h"

#define MANAGER_TRIM_MS 60000

typedef struct {
	uv_loop_t loop;
	const manager_options_t *opt;
	kube_http_t *http;
	cache_t cache;
	bool cache_started;
	leader_t *leader;
	events_recorder_t *events;
	plan_controller_t *plans;
	uv_timer_t discovery_retry; /* discovery again after a failure */
	uv_timer_t trim;            /* free heap pages back to the kernel, every MANAGER_TRIM_MS */
	http_server_t *server;
	uv_signal_t sigterm, sigint;
	bool shutting_down;
	int exit_code;

	metrics_registry_t *metrics;
	metrics_counter_t *m_requests;
	metrics_histogram_t *m_request_seconds;
	metrics_counter_t *m_watch_restarts;
	metrics_counter_t *m_relists;
	metrics_counter_t *m_decode_errors;
	metrics_gauge_t *m_cache_objects;
	metrics_gauge_t *m_cache_bytes;
	metrics_gauge_t *m_cache_synced;
	metrics_gauge_t *m_leader;
	metrics_gauge_t *m_malloc_bytes;
	metrics_counter_t *m_events_dropped;
	/* Counter values already exported, to add only what is new at each scrape. */
	reflector_stats_t exported[CACHE_KINDS];
	uint64_t exported_decode_errors[CACHE_KINDS];
	uint64_t exported_events_dropped;
} manager_t;

/* ---- metrics ------------------------------------------------------------- */

static void manager_observe_request(const char *method, long status, double seconds, void *data)
{
	manager_t *m = data;
	char code[16];
	snprintf(code, sizeof(code), "%ld", status);
	metrics_counter_inc(m->m_requests, method, status ? code : "error", NULL);
	metrics_histogram_observe(m->m_request_seconds, seconds, method, NULL);
}

static void manager_metrics_init(manager_t *m)
{
	m->metrics = metrics_registry_new();
	m->m_requests = metrics_counter_new(m->metrics, "drashift_api_requests_total",
					    "Requests to the Kubernetes API server by verb and HTTP status (error: no answer).",
					    "verb", "code", NULL);
	m->m_request_seconds = metrics_histogram_new(m->metrics, "drashift_api_request_duration_seconds",
						     "Latency of requests to the Kubernetes API server (watches: until they end).",
						     NULL, 0, "verb", NULL);
	m->m_watch_restarts = metrics_counter_new(m->metrics, "drashift_watch_restarts_total",
						  "Watches started again after the previous one ended.", "resource", NULL);
	m->m_relists = metrics_counter_new(m->metrics, "drashift_relists_total",
					   "LISTs after the first, because a watch could not resume.", "resource", NULL);
	m->m_decode_errors = metrics_counter_new(m->metrics, "drashift_decode_errors_total",
						 "Objects or watch events from the API server that could not be decoded.",
						 "resource", NULL);
	m->m_cache_objects = metrics_gauge_new(m->metrics, "drashift_cache_objects", "Objects held in a cache.",
					       "resource", NULL);
	m->m_cache_bytes = metrics_gauge_new(m->metrics, "drashift_cache_bytes",
					     "Bytes held by a cache: projections, tables and shared strings.", "resource", NULL);
	m->m_cache_synced = metrics_gauge_new(m->metrics, "drashift_cache_synced",
					      "1 once a cache has completed its first LIST.", "resource", NULL);
	m->m_leader = metrics_gauge_new(m->metrics, "drashift_leader",
					"1 while this replica holds the leader Lease.", NULL);
	m->m_malloc_bytes = metrics_gauge_new(m->metrics, "drashift_malloc_bytes",
					      "The allocator's bytes: in_use by the program, free but held in its heap, mapped on their own (part of in_use).",
					      "state", NULL);
	m->m_events_dropped = metrics_counter_new(m->metrics, "drashift_events_dropped_total",
						  "Events not written because an object had too many at once.", NULL);
	kube_http_set_observer(m->http, manager_observe_request, m);
}

/* Bring the exported counters and gauges up to date just before a scrape. */
static void manager_metrics_refresh(manager_t *m)
{
	for (int k = 0; k < CACHE_KINDS; k++) {
		const reflector_t *r = cache_reflector(&m->cache, (cache_kind_t)k);
		if (r == NULL)
			continue;
		const char *res = cache_kind_name((cache_kind_t)k);
		const reflector_stats_t *st = reflector_stats(r);
		const store_t *s = reflector_store(r);
		metrics_counter_add(m->m_watch_restarts, (double)(st->watch_restarts - m->exported[k].watch_restarts), res, NULL);
		metrics_counter_add(m->m_relists, (double)(st->relists - m->exported[k].relists), res, NULL);
		metrics_counter_add(m->m_decode_errors, (double)(s->decode_errors - m->exported_decode_errors[k]), res, NULL);
		m->exported[k] = *st;
		m->exported_decode_errors[k] = s->decode_errors;
		metrics_gauge_set(m->m_cache_objects, (double)store_size(s), res, NULL);
		metrics_gauge_set(m->m_cache_bytes, (double)store_bytes(s), res, NULL);
		metrics_gauge_set(m->m_cache_synced, reflector_synced(r) ? 1 : 0, res, NULL);
	}
	metrics_gauge_set(m->m_leader, m->leader && leader_is_leader(m->leader) ? 1 : 0, NULL);
	/* What RSS is made of: bytes the program holds, and bytes freed but kept by malloc. */
	struct mallinfo2 mi = mallinfo2();
	metrics_gauge_set(m->m_malloc_bytes, (double)(mi.uordblks + mi.hblkhd), "in_use", NULL);
	metrics_gauge_set(m->m_malloc_bytes, (double)mi.fordblks, "free", NULL);
	metrics_gauge_set(m->m_malloc_bytes, (double)mi.hblkhd, "mapped", NULL);
	if (m->events) {
		uint64_t dropped = events_dropped(m->events);
		metrics_counter_add(m->m_events_dropped, (double)(dropped - m->exported_events_dropped), NULL);
		m->exported_events_dropped = dropped;
	}
}

/* ---- /healthz /readyz /metrics ------------------------------------------- */

/*
 * Ready: every cache has listed, and we know who leads (ourselves or
 * another replica). A standby is ready: it can take over at once.
 */
static bool manager_ready(manager_t *m, const char **why)
{
	if (m->shutting_down) {
		*why = "shutting down";
		return false;
	}
	if (!cache_synced(&m->cache)) {
		*why = "caches not synced";
		return false;
	}
	if (m->leader && leader_holder(m->leader) == NULL) {
		*why = "leader not known yet";
		return false;
	}
	*why = "ok";
	return true;
}

static int manager_http(const char *path, void *data, int *status, char **body, size_t *body_len,
			const char **content_type)
{
	manager_t *m = data;
	if (strcmp(path, "/healthz") == 0 || strcmp(path, "/livez") == 0) {
		*body = xstrdup("ok\n");
	} else if (strcmp(path, "/readyz") == 0) {
		const char *why;
		if (!manager_ready(m, &why))
			*status = 503;
		*body = xasprintf("%s\n", why);
	} else if (strcmp(path, "/metrics") == 0) {
		manager_metrics_refresh(m);
		*body = metrics_render(m->metrics, body_len);
		if (*body == NULL)
			return -1;
		*content_type = METRICS_CONTENT_TYPE;
		return 0;
	} else {
		*status = 404;
		*body = xstrdup("not found\n");
	}
	*body_len = strlen(*body);
	return 0;
}

/* ---- leadership ---------------------------------------------------------- */

static void manager_lease_event(manager_t *m, const char *reason, const char *note)
{
	events_object_ref_t lease = {
		.api_version = "coordination.k8s.io/v1",
		.kind = "Lease",
		.namespace = m->opt->lease_namespace,
		.name = m->opt->lease_name,
	};
	events_emit(m->events, &lease, "Normal", reason, "LeaderElection", "%s %s", m->opt->identity, note);
}

static void manager_started_leading(void *data)
{
	manager_t *m = data;
	log_info("leading: this replica acts for the cluster", "identity", m->opt->identity);
	manager_lease_event(m, "LeaderElection", "became leader");
	plan_controller_poke(m->plans);
}

static void manager_on_cache_change(cache_kind_t kind, const void *old, const void *new, void *data)
{
	manager_t *m = data;
	/*
	 * During shutdown the plan controller is freed first, while the watches
	 * keep delivering until the Events flush and the Lease release are done
	 * and the cache stops: nobody is left to tell.
	 */
	if (m->plans)
		plan_controller_observe(m->plans, kind, old, new);
}

static void manager_stopped_leading(void *data)
{
	manager_t *m = data;
	if (!m->shutting_down)
		log_error("lost the leader Lease: writes stopped, standing by", "identity", m->opt->identity);
	if (m->plans)
		plan_controller_stopped_leading(m->plans);
}

/* ---- shutdown ------------------------------------------------------------ */

static void manager_signal_closed(uv_handle_t *h)
{
	(void)h;
}

static void manager_server_closed(void *data)
{
	(void)data;
}

static void manager_cache_stopped(void *data)
{
	manager_t *m = data;
	kube_http_close(m->http);
	m->http = NULL;
}

static void manager_leader_stopped(void *data)
{
	manager_t *m = data;
	m->leader = NULL;
	if (m->cache_started)
		cache_stop(&m->cache, manager_cache_stopped, m);
	else
		manager_cache_stopped(m);
}

static void manager_leader_released(void *data)
{
	manager_t *m = data;
	leader_stop(m->leader, manager_leader_stopped, m);
}

static void manager_events_closed(void *data)
{
	manager_t *m = data;
	m->events = NULL;
	if (m->leader == NULL || leader_release(m->leader, manager_leader_released, m) != 0) {
		if (m->leader)
			leader_stop(m->leader, manager_leader_stopped, m);
		else
			manager_leader_stopped(m);
	}
}

static void manager_plans_closed(void *data)
{
	manager_t *m = data;
	m->plans = NULL;
	events_recorder_close(m->events, manager_events_closed, m);
}

static void manager_shutdown(manager_t *m, const char *why)
{
	if (m->shutting_down)
		return;
	m->shutting_down = true;
	log_info("shutting down", "reason", why);
	uv_close((uv_handle_t *)&m->sigterm, manager_signal_closed);
	uv_close((uv_handle_t *)&m->sigint, manager_signal_closed);
	uv_close((uv_handle_t *)&m->discovery_retry, NULL);
	uv_close((uv_handle_t *)&m->trim, NULL);
	if (m->server)
		http_server_close(m->server, manager_server_closed, m);
	/* No new decision from here on; writes in flight finish, then Events flush. */
	plan_controller_close(m->plans, manager_plans_closed, m);
}

/*
 * A LIST at start and each history write need megabytes for a moment. Blocks
 * of 128 KiB and more get pages of their own, returned when freed: glibc
 * would otherwise raise this threshold to the largest block freed so far and
 * keep every later one in the heap. What smaller blocks free stays in the
 * heap between blocks still in use (several MB in the soak), where it counts
 * in RSS: malloc_trim hands those pages back every MANAGER_TRIM_MS.
 */
static void manager_on_trim(uv_timer_t *t)
{
	(void)t;
	malloc_trim(0);
}

static void manager_memory_init(manager_t *m)
{
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	uv_timer_init(&m->loop, &m->trim);
	uv_timer_start(&m->trim, manager_on_trim, MANAGER_TRIM_MS, MANAGER_TRIM_MS);
}

static void manager_on_signal(uv_signal_t *s, int signum)
{
	manager_t *m = s->data;
	manager_shutdown(m, signum == SIGTERM ? "SIGTERM" : "SIGINT");
}

/* ---- start --------------------------------------------------------------- */

static void manager_on_version(const kube_http_response_t *resp, void *data)
{
	manager_t *m = data;
	if (resp->error) {
		log_warn("cannot read the API server's version; carrying on", "error", resp->error);
		return;
	}
	cJSON *v = cJSON_ParseWithLength(resp->body, resp->body_len);
	const cJSON *git = cJSON_GetObjectItemCaseSensitive(v, "gitVersion");
	log_info("connected", "version", cJSON_IsString(git) ? git->valuestring : "?", "identity",
		 m->opt->identity);
	cJSON_Delete(v);
}

static void manager_discover(manager_t *m);

static void manager_on_discovery_retry(uv_timer_t *t)
{
	manager_discover(t->data);
}

/*
 * What the cluster serves decides the DeviceTaintRule version and which
 * freeze modes plans may use; plans wait for it. Without resource.k8s.io/v1
 * ResourceClaims drashift cannot work: it says so and asks again every 30 s.
 */
static void manager_on_discovery(const discovery_result_t *r, void *data)
{
	manager_t *m = data;
	if (m->shutting_down)
		return;
	if (r->error) {
		log_warn("cannot discover the APIs the cluster serves; trying again in 2 s", "error", r->error);
		uv_timer_start(&m->discovery_retry, manager_on_discovery_retry, 2000, 0);
		return;
	}
	char *missing = api_versions_missing_required(&r->apis, r->kube_minor);
	if (missing) {
		log_error("drashift cannot work on this cluster; asking again in 30 s", "error", missing);
		free(missing);
		uv_timer_start(&m->discovery_retry, manager_on_discovery_retry, 30000, 0);
		return;
	}
	char minor[16];
	snprintf(minor, sizeof(minor), "1.%d", r->kube_minor);
	log_info("APIs discovered", "kubernetes", r->kube_minor ? minor : "?", "resourceClaims", r->apis.claims,
		 "deviceTaintRules", r->apis.taint_rules ? r->apis.taint_rules : "not served (freezeMode Admission only)");
	plan_controller_set_apis(m->plans, &r->apis, r->kube_minor);
}

static void manager_discover(manager_t *m)
{
	if (discovery_start(m->http, manager_on_discovery, m) != 0) {
		log_warn("cannot start API discovery; trying again in 2 s");
		uv_timer_start(&m->discovery_retry, manager_on_discovery_retry, 2000, 0);
	}
}

int manager_run(const kubeconfig_t *cfg, const manager_options_t *opt)
{
	manager_t *m = xcalloc(1, sizeof(*m));
	char err[512];
	m->opt = opt;
	uv_loop_init(&m->loop);
	if (kube_http_init(&m->loop, cfg, &m->http, err, sizeof(err)) != 0) {
		log_error("cannot create the API client", "error", err);
		uv_loop_close(&m->loop);
		free(m);
		return 1;
	}
	manager_metrics_init(m);
	m->events = events_recorder_new(&m->loop, m->http, "drashift.io/controller", opt->identity);
	m->plans = plan_controller_new(&m->loop, m->http, &m->cache, m->events, opt->lease_namespace, opt->dry_run);
	plan_controller_set_metrics(m->plans, m->metrics);

	uv_timer_init(&m->loop, &m->discovery_retry);
	m->discovery_retry.data = m;
	manager_memory_init(m);
	uv_signal_init(&m->loop, &m->sigterm);
	uv_signal_init(&m->loop, &m->sigint);
	m->sigterm.data = m->sigint.data = m;
	uv_signal_start(&m->sigterm, manager_on_signal, SIGTERM);
	uv_signal_start(&m->sigint, manager_on_signal, SIGINT);

	int rc = http_server_start(&m->loop, opt->http_address, manager_http, m, &m->server, err, sizeof(err));
	if (rc != 0) {
		log_error("cannot serve /healthz /readyz /metrics", "address", opt->http_address, "error", err);
		m->server = NULL;
		m->exit_code = 1;
		manager_shutdown(m, "start-up failed");
	} else {
		kube_http_req_t version = { .method = "GET", .path = "/version", .retry = 1 };
		kube_http_request(m->http, &version, manager_on_version, m, NULL);
		manager_discover(m);
		cache_start(&m->cache, &m->loop, m->http, NULL, manager_on_cache_change, m);
		m->cache_started = true;
		if (opt->leader_elect) {
			leader_options_t lo = {
				.namespace = opt->lease_namespace,
				.name = opt->lease_name,
				.identity = opt->identity,
				.lease_duration_ms = opt->lease_duration_ms,
				.renew_deadline_ms = opt->renew_deadline_ms,
				.retry_period_ms = opt->retry_period_ms,
				.on_started_leading = manager_started_leading,
				.on_stopped_leading = manager_stopped_leading,
				.data = m,
			};
			if (leader_start(&m->loop, m->http, &lo, &m->leader) != 0) {
				m->leader = NULL;
				m->exit_code = 2;
				manager_shutdown(m, "invalid leader election settings");
			}
			plan_controller_set_leader(m->plans, m->leader);
		}
	}

	uv_run(&m->loop, UV_RUN_DEFAULT);
	metrics_registry_free(m->metrics);
	if (uv_loop_close(&m->loop) != 0)
		log_error("handles left open at exit");
	int exit_code = m->exit_code;
	free(m);
	log_info("stopped");
	return exit_code;
}
