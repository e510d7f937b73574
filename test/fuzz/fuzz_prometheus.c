/*
 * libFuzzer target: answers of Prometheus' /api/v1/query, which come from
 * whatever the plan's address points at (a proxy, a wrong port, a server of
 * another version). Any bytes, with any HTTP status and either direction,
 * must give one outcome: a value that is not NaN, no data, or an error with
 * a message; and the judge must never pass an error.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "prometheus.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const long statuses[] = { 200, 400, 422, 503 };
	plan_prom_query_t q = { .name = "q", .query = "up", .threshold = 1, .on_no_data = PLAN_PROM_PASS,
				.on_error = PLAN_PROM_INCONCLUSIVE };
	for (int d = 0; d < 2; d++) {
		q.breach_when = d ? PLAN_PROM_BREACH_BELOW : PLAN_PROM_BREACH_ABOVE;
		for (size_t s = 0; s < sizeof(statuses) / sizeof(statuses[0]); s++) {
			prom_outcome_t o;
			prom_decode(statuses[s], NULL, (const char *)data, size, q.breach_when, &o);
			if ((o.kind == PROM_VALUE && isnan(o.value)) || (o.kind == PROM_ERROR) != (o.error != NULL))
				abort();
			slo_result_t r;
			prom_judge(&q, &o, 0, 0, 1, &r);
			if (o.kind == PROM_ERROR && r.verdict == SLO_PASS)
				abort();
			prom_outcome_free(&o);
		}
	}
	return 0;
}
