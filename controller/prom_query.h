/*
 * Asking Prometheus a plan's queries (spec.slo.prometheus), on the loop.
 *
 * Per plan: a timer every interval starts a round. A round reads the plan's
 * Secret first when it names one (GET through the Kubernetes client, so a
 * rotated token or CA is picked up at the next round; the Prometheus client
 * is rebuilt when they changed), then sends every query at once to
 * /api/v1/query through a kube_http client of its own pointed at the plan's
 * address (libcurl multi on the loop: nothing blocks, each query has the
 * plan's timeout and is not retried; the next round is the retry). Answers
 * are decoded by reconcilers/prometheus.h and kept, one outcome per query,
 * with when it arrived and how many errors the query had; changed(plan) is
 * called once a round has all its answers, so the plan is judged again.
 *
 * A plan whose prometheus settings change (address, Secret, queries,
 * windows, interval, timeout) starts afresh: what was asked under the old
 * settings says nothing about the new ones, and the errors shown in status
 * count from then on (drashift_prometheus_query_errors_total keeps counting).
 *
 * Memory of a plan that goes away is freed once its timer is closed and its
 * requests have called back (the libuv rule: never from inside a callback
 * that may still be on the stack).
 */
#ifndef DRASHIFT_PROM_QUERY_H
#define DRASHIFT_PROM_QUERY_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "kube_http.h"
#include "metrics.h"
#include "plan.h"
#include "slo.h"

typedef struct prom_query prom_query_t;

/*
 * kube reads Secrets in namespace (drashift's own). changed runs from the
 * loop with the plan's name after a round's answers are in.
 */
prom_query_t *prom_query_new(uv_loop_t *loop, kube_http_t *kube, const char *namespace,
			     void (*changed)(void *data, const char *plan), void *data);

/* Register drashift_prometheus_query_errors_total{plan,query} and _queries_total in r. */
void prom_query_set_metrics(prom_query_t *q, metrics_registry_t *r);

/* Ask the plan's queries from now on (none configured: forget it). */
void prom_query_sync(prom_query_t *q, const char *plan_name, const plan_prometheus_t *prom);

/* Stop asking for a plan (deleted, invalid) and drop its counters' series. */
void prom_query_forget(prom_query_t *q, const char *plan_name);

/*
 * The plan's queries judged at now_ms into out[0..n_queries), in the plan's
 * order (prom_judge, reconcilers/prometheus.h), with the errors counted: a
 * query not asked yet, answered before since_ms (an acknowledged breach:
 * only answers after it count), or whose last answer is older than three
 * intervals plus the timeout, is Inconclusive. out's strings are borrowed
 * from the plan and from q, valid until the next call into q. Returns the
 * number written.
 */
size_t prom_query_judge(const prom_query_t *q, const char *plan_name, const plan_prometheus_t *prom, int64_t since_ms,
			int64_t now_ms, slo_result_t *out);

/* Requests in flight (free waits for none). */
int prom_query_busy(const prom_query_t *q);

/*
 * Stop asking for every plan (shutdown, or leadership lost: the next
 * prom_query_sync starts a plan again); requests still out call back as the
 * loop runs.
 */
void prom_query_close(prom_query_t *q);
/* Free q once prom_query_busy() is 0 (a retired plan's own memory goes with its timer's close). */
void prom_query_free(prom_query_t *q);

#endif
