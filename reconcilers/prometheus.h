/*
 * Prometheus signals: what an answer of the HTTP API's instant query
 * (GET /api/v1/query) says, and the verdict a plan's query gets from it
 * (spec.slo.prometheus.queries, plan.h). The controller asks
 * (controller/prom_query.h); this decides.
 *
 * Pure: no I/O, no clock. prom_decode() reads one answer (the HTTP status,
 * the transport's error when no answer came, the body) into one outcome:
 *
 *   Value   a number to judge. A vector of several series is judged by its
 *           worst series (the highest when the query breaches above its
 *           threshold, the lowest when below), so a per-node query breaches
 *           when one node does; NaN series (a histogram_quantile over no
 *           observations) are skipped; +Inf and -Inf are values.
 *   NoData  an empty vector, or only NaN: nothing was measured.
 *   Error   anything else: no answer, a status other than 2xx, a body that is
 *           not the API's JSON, "status":"error" (bad PromQL, a timeout in
 *           the server), a matrix or string result, a native histogram
 *           sample, a value that is not a number. The message says which.
 *
 * prom_judge() turns the last outcome into a signal beside the built-in ones
 * (slo.h): Breach when the value is beyond the threshold (strictly), Pass
 * otherwise; NoData and Error follow the query's onNoData and onError rules,
 * and an Error is never a Pass (onError is Inconclusive or Breach). An
 * outcome older than stale_ms, or none yet, is Inconclusive: a query that
 * stopped answering never keeps an old Pass.
 */
#ifndef DRASHIFT_PROMETHEUS_H
#define DRASHIFT_PROMETHEUS_H

#include <stddef.h>
#include <stdint.h>

#include "plan.h"
#include "slo.h"

typedef enum { PROM_VALUE, PROM_NO_DATA, PROM_ERROR } prom_kind_t;

typedef struct {
	prom_kind_t kind;
	double value;  /* PROM_VALUE: the worst series' value */
	size_t series; /* series in the answer, NaN ones included */
	char *error;   /* PROM_ERROR: one line a person can act on (owned) */
} prom_outcome_t;

/*
 * Decode one answer. http_status 0 with transport_error set: no answer came.
 * body need not be NUL-terminated. out is overwritten (free it first).
 */
void prom_decode(long http_status, const char *transport_error, const char *body, size_t len,
		 plan_prom_direction_t breach_when, prom_outcome_t *out);
void prom_outcome_free(prom_outcome_t *o);

/*
 * The query's expression with every "$window" replaced by its window as a
 * Prometheus duration ("5m", "90s", "1500ms"). Owned.
 */
char *prom_expand(const plan_prom_query_t *q);

/*
 * Judge a query: last NULL (never answered) or older than stale_ms
 * (now_ms - at_ms) is Inconclusive. out->name borrows q->name, out->detail
 * borrows last->error (or a static text); out->id is SLO_PROMETHEUS, the
 * unit "" and samples 0 (1 when a value was judged).
 */
void prom_judge(const plan_prom_query_t *q, const prom_outcome_t *last, int64_t at_ms, int64_t now_ms,
		int64_t stale_ms, slo_result_t *out);

#endif
