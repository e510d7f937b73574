/*
 * Prometheus signals: an answer of /api/v1/query becomes one outcome (a
 * value, no data, or an error that says why), and a plan's query is judged
 * from it. A malformed, failed or stale answer is never a Pass; several
 * series are judged by the worst; NaN is no data; the gate breaches on a
 * query's breach exactly as on a built-in signal's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_status.h"
#include "prometheus.h"

#define VEC(series) "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[" series "]}}"
#define SERIES(labels, v) "{\"metric\":{" labels "},\"value\":[1764441600.123,\"" v "\"]}"

typedef struct {
	const char *what;
	long status;
	const char *transport_error;
	const char *body;
	plan_prom_direction_t breach_when;
	prom_kind_t kind;
	double value;        /* PROM_VALUE */
	size_t series;
	const char *error;   /* PROM_ERROR: the exact message */
} decode_case_t;

static const decode_case_t decode_cases[] = {
	{ "one series", 200, NULL, VEC(SERIES("", "0.25")), PLAN_PROM_BREACH_ABOVE, PROM_VALUE, 0.25, 1, NULL },
	{ "exponent", 200, NULL, VEC(SERIES("", "1.5e+03")), PLAN_PROM_BREACH_ABOVE, PROM_VALUE, 1500, 1, NULL },
	{ "scalar", 200, NULL, "{\"status\":\"success\",\"data\":{\"resultType\":\"scalar\",\"result\":[1,\"7\"]}}",
	  PLAN_PROM_BREACH_ABOVE, PROM_VALUE, 7, 1, NULL },
	{ "several series: the highest when breaching above", 200, NULL,
	  VEC(SERIES("\"node\":\"a\"", "0.2") "," SERIES("\"node\":\"b\"", "3") "," SERIES("\"node\":\"c\"", "1")),
	  PLAN_PROM_BREACH_ABOVE, PROM_VALUE, 3, 3, NULL },
	{ "several series: the lowest when breaching below", 200, NULL,
	  VEC(SERIES("\"node\":\"a\"", "0.2") "," SERIES("\"node\":\"b\"", "3") "," SERIES("\"node\":\"c\"", "-1")),
	  PLAN_PROM_BREACH_BELOW, PROM_VALUE, -1, 3, NULL },
	{ "NaN series are skipped", 200, NULL, VEC(SERIES("\"node\":\"a\"", "NaN") "," SERIES("\"node\":\"b\"", "0.5")),
	  PLAN_PROM_BREACH_ABOVE, PROM_VALUE, 0.5, 2, NULL },
	{ "+Inf is a value", 200, NULL, VEC(SERIES("", "+Inf")), PLAN_PROM_BREACH_ABOVE, PROM_VALUE, INFINITY, 1, NULL },
	{ "empty vector", 200, NULL, VEC(""), PLAN_PROM_BREACH_ABOVE, PROM_NO_DATA, 0, 0, NULL },
	{ "only NaN", 200, NULL, VEC(SERIES("", "NaN")), PLAN_PROM_BREACH_ABOVE, PROM_NO_DATA, 0, 1, NULL },
	{ "NaN scalar", 200, NULL, "{\"status\":\"success\",\"data\":{\"resultType\":\"scalar\",\"result\":[1,\"NaN\"]}}",
	  PLAN_PROM_BREACH_ABOVE, PROM_NO_DATA, 0, 1, NULL },
	{ "bad PromQL", 400, NULL,
	  "{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":\"invalid parameter \\\"query\\\": 1:5: parse error: "
	  "unexpected \\\"}\\\"\"}",
	  PLAN_PROM_BREACH_ABOVE, PROM_ERROR, 0, 0,
	  "HTTP 400, error \"bad_data\": invalid parameter \"query\": 1:5: parse error: unexpected \"}\"" },
	{ "server timeout", 503, NULL, "{\"status\":\"error\",\"errorType\":\"timeout\",\"error\":\"query timed out\"}",
	  PLAN_PROM_BREACH_ABOVE, PROM_ERROR, 0, 0, "HTTP 503, error \"timeout\": query timed out" },
	{ "no answer", 0, "Failed to connect to 127.0.0.1 port 9: Connection refused", NULL, PLAN_PROM_BREACH_ABOVE,
	  PROM_ERROR, 0, 0, "no answer: Failed to connect to 127.0.0.1 port 9: Connection refused" },
	{ "not JSON (a proxy's page)", 502, NULL, "<html>Bad Gateway</html>", PLAN_PROM_BREACH_ABOVE, PROM_ERROR, 0, 0,
	  "HTTP 502: the answer is not the Prometheus API's JSON" },
	{ "truncated JSON", 200, NULL, "{\"status\":\"success\",\"data\":{\"resultType\":\"vec", PLAN_PROM_BREACH_ABOVE,
	  PROM_ERROR, 0, 0, "HTTP 200: the answer is not the Prometheus API's JSON" },
	{ "empty body", 200, NULL, "", PLAN_PROM_BREACH_ABOVE, PROM_ERROR, 0, 0,
	  "HTTP 200: the answer is not the Prometheus API's JSON" },
	{ "JSON array", 200, NULL, "[1,2]", PLAN_PROM_BREACH_ABOVE, PROM_ERROR, 0, 0,
	  "HTTP 200: the answer is not the Prometheus API's JSON" },
	{ "success with a 4xx", 404, NULL, VEC(SERIES("", "1")), PLAN_PROM_BREACH_ABOVE, PROM_ERROR, 0, 0,
	  "HTTP 404 with a success body" },
	{ "no data", 200, NULL, "{\"status\":\"success\"}", PLAN_PROM_BREACH_ABOVE, PROM_ERROR, 0, 0,
	  "the answer has no data object" },
	{ "no resultType", 200, NULL, "{\"status\":\"success\",\"data\":{\"result\":[]}}", PLAN_PROM_BREACH_ABOVE,
	  PROM_ERROR, 0, 0, "the answer has no data.resultType" },
	{ "matrix", 200, NULL, "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[]}}",
	  PLAN_PROM_BREACH_ABOVE, PROM_ERROR, 0, 0,
	  "the query gives a \"matrix\" result; an instant vector or scalar is judged (a range selector such as [5m] "
	  "needs a function around it, such as rate())" },
	{ "result not an array", 200, NULL, "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":{}}}",
	  PLAN_PROM_BREACH_ABOVE, PROM_ERROR, 0, 0, "the vector result is not an array" },
	{ "value a number, not a string", 200, NULL, VEC("{\"metric\":{},\"value\":[1,2]}"), PLAN_PROM_BREACH_ABOVE,
	  PROM_ERROR, 0, 1, "series 1 has no [time, \"number\"] value" },
	{ "value not a number", 200, NULL, VEC(SERIES("", "0.1") "," SERIES("", "fast")), PLAN_PROM_BREACH_ABOVE,
	  PROM_ERROR, 0, 2, "series 2 has no [time, \"number\"] value" },
	{ "hex is not Prometheus' notation", 200, NULL, VEC(SERIES("", "0x10")), PLAN_PROM_BREACH_ABOVE, PROM_ERROR, 0, 1,
	  "series 1 has no [time, \"number\"] value" },
	{ "value pair too short", 200, NULL, VEC("{\"metric\":{},\"value\":[1]}"), PLAN_PROM_BREACH_ABOVE, PROM_ERROR, 0,
	  1, "series 1 has no [time, \"number\"] value" },
	{ "series not an object", 200, NULL, VEC("3"), PLAN_PROM_BREACH_ABOVE, PROM_ERROR, 0, 1,
	  "series 1 of the vector is not an object" },
	{ "native histogram", 200, NULL, VEC("{\"metric\":{},\"histogram\":[1,{\"count\":\"3\"}]}"),
	  PLAN_PROM_BREACH_ABOVE, PROM_ERROR, 0, 1,
	  "series 1 is a native histogram, not a number (wrap the query in histogram_quantile() or histogram_count())" },
	{ "error status without words", 422, NULL, "{\"status\":\"error\"}", PLAN_PROM_BREACH_ABOVE, PROM_ERROR, 0, 0,
	  "HTTP 422, error \"unknown\": no message" },
};

static void test_decode_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(decode_cases) / sizeof(decode_cases[0]); i++) {
		const decode_case_t *c = &decode_cases[i];
		prom_outcome_t o;
		prom_decode(c->status, c->transport_error, c->body, c->body ? strlen(c->body) : 0, c->breach_when, &o);
		if (o.kind != c->kind || (c->kind == PROM_VALUE && o.value != c->value) || o.series != c->series ||
		    (c->error != NULL) != (o.error != NULL) || (c->error && strcmp(c->error, o.error) != 0))
			fail_msg("%s: got kind %d value %g series %zu error %s", c->what, (int)o.kind, o.value, o.series,
				 o.error ? o.error : "(none)");
		prom_outcome_free(&o);
	}
}

/* The body need not end in NUL: only len bytes are read. */
static void test_decode_reads_only_len_bytes(void **state)
{
	(void)state;
	const char body[] = VEC(SERIES("", "2")) "garbage after the answer";
	prom_outcome_t o;
	prom_decode(200, NULL, body, strlen(VEC(SERIES("", "2"))), PLAN_PROM_BREACH_ABOVE, &o);
	assert_int_equal(o.kind, PROM_VALUE);
	assert_true(o.value == 2);
	prom_outcome_free(&o);
}

static plan_prom_query_t query(plan_prom_direction_t dir, plan_prom_rule_t no_data, plan_prom_rule_t on_error)
{
	return (plan_prom_query_t){ .name = "prepareP95", .query = "q", .threshold = 0.5, .breach_when = dir,
				    .window_ms = 300000, .on_no_data = no_data, .on_error = on_error };
}

typedef struct {
	const char *what;
	plan_prom_query_t q;
	prom_outcome_t last;
	bool never_answered;
	int64_t age_ms;
	slo_verdict_t want;
	const char *detail;
} judge_case_t;

#define V(x) { .kind = PROM_VALUE, .value = (x), .series = 1 }
#define NODATA { .kind = PROM_NO_DATA }
#define ERR { .kind = PROM_ERROR, .error = "HTTP 400, error \"bad_data\": parse error" }

static void test_judge_table(void **state)
{
	(void)state;
	const plan_prom_direction_t A = PLAN_PROM_BREACH_ABOVE, B = PLAN_PROM_BREACH_BELOW;
	const plan_prom_rule_t I = PLAN_PROM_INCONCLUSIVE, P = PLAN_PROM_PASS, X = PLAN_PROM_BREACH;
	const judge_case_t cases[] = {
		{ "below the limit", query(A, I, I), V(0.4), false, 0, SLO_PASS, NULL },
		{ "at the limit is no breach", query(A, I, I), V(0.5), false, 0, SLO_PASS, NULL },
		{ "over the limit", query(A, I, I), V(0.51), false, 0, SLO_BREACH, NULL },
		{ "+Inf over the limit", query(A, I, I), V(INFINITY), false, 0, SLO_BREACH, NULL },
		{ "breachWhen Below: under it", query(B, I, I), V(0.49), false, 0, SLO_BREACH, NULL },
		{ "breachWhen Below: at it", query(B, I, I), V(0.5), false, 0, SLO_PASS, NULL },
		{ "no data: Inconclusive by default", query(A, I, I), NODATA, false, 0, SLO_INCONCLUSIVE, "no data" },
		{ "no data: Pass when the plan says", query(A, P, I), NODATA, false, 0, SLO_PASS, "no data" },
		{ "no data: Breach when the plan says", query(A, X, I), NODATA, false, 0, SLO_BREACH, "no data" },
		{ "error: Inconclusive by default", query(A, I, I), ERR, false, 0, SLO_INCONCLUSIVE,
		  "HTTP 400, error \"bad_data\": parse error" },
		{ "error: Breach when the plan says", query(A, I, X), ERR, false, 0, SLO_BREACH,
		  "HTTP 400, error \"bad_data\": parse error" },
		/* The decoder refuses onError: Pass; a plan built in memory with it still never passes on an error. */
		{ "error: never a Pass", query(A, P, P), ERR, false, 0, SLO_INCONCLUSIVE,
		  "HTTP 400, error \"bad_data\": parse error" },
		{ "never answered", query(A, P, I), V(0), true, 0, SLO_INCONCLUSIVE, "not queried yet" },
		{ "a stale Pass is no Pass", query(A, I, I), V(0.1), false, 60001, SLO_INCONCLUSIVE,
		  "the last answer is stale" },
		{ "stale no data is no Pass either", query(A, P, I), NODATA, false, 60001, SLO_INCONCLUSIVE,
		  "the last answer is stale" },
		{ "just fresh", query(A, I, I), V(0.1), false, 60000, SLO_PASS, NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const judge_case_t *c = &cases[i];
		slo_result_t r;
		int64_t now = 1764441600000LL;
		prom_judge(&c->q, c->never_answered ? NULL : &c->last, now - c->age_ms, now, 60000, &r);
		if (r.verdict != c->want || (c->detail == NULL) != (r.detail == NULL) ||
		    (c->detail && strcmp(c->detail, r.detail) != 0))
			fail_msg("%s: got %s (%s)", c->what, slo_verdict_name(r.verdict), r.detail ? r.detail : "no detail");
		assert_int_equal(r.id, SLO_PROMETHEUS);
		assert_string_equal(r.name, "prepareP95");
		assert_true(r.threshold == 0.5);
		assert_int_equal(r.samples, c->last.kind == PROM_VALUE && r.detail == NULL ? 1 : 0);
	}
}

/* A query's breach freezes like a built-in breach: the gate reports it, the status says what it measured. */
static void test_query_breach_joins_the_gate(void **state)
{
	(void)state;
	slo_result_t r[SLO_MAX_RESULTS];
	for (int i = 0; i < SLO_SIGNALS; i++)
		r[i] = (slo_result_t){ .id = (slo_signal_id_t)i, .name = slo_signal_name((slo_signal_id_t)i), .unit = "",
				       .verdict = SLO_PASS };
	plan_prom_query_t q = query(PLAN_PROM_BREACH_ABOVE, PLAN_PROM_INCONCLUSIVE, PLAN_PROM_INCONCLUSIVE);
	prom_outcome_t v = V(2.75);
	prom_judge(&q, &v, 0, 0, 60000, &r[SLO_SIGNALS]);
	const slo_result_t *first;
	assert_int_equal(slo_gate(r, SLO_SIGNALS + 1, &first), SLO_BREACH);
	assert_ptr_equal(first, &r[SLO_SIGNALS]);
	char *summary = plan_status_gate_summary(r, SLO_SIGNALS + 1, 20);
	assert_string_equal(summary, "Breach: prepareP95 2.75 over its limit 0.5");
	free(summary);

	prom_outcome_t e = ERR;
	prom_judge(&q, &e, 0, 0, 60000, &r[SLO_SIGNALS]);
	assert_int_equal(slo_gate(r, SLO_SIGNALS + 1, &first), SLO_INCONCLUSIVE);
	assert_null(first);
	summary = plan_status_gate_summary(r, SLO_SIGNALS + 1, 20);
	assert_string_equal(summary, "Inconclusive (not a pass): prepareP95: HTTP 400, error \"bad_data\": parse error");
	free(summary);

	q.on_error = PLAN_PROM_BREACH;
	prom_judge(&q, &e, 0, 0, 60000, &r[SLO_SIGNALS]);
	assert_int_equal(slo_gate(r, SLO_SIGNALS + 1, &first), SLO_BREACH);
	summary = plan_status_gate_summary(r, SLO_SIGNALS + 1, 20);
	assert_string_equal(summary, "Breach: prepareP95 none (counts as a breach) (HTTP 400, error \"bad_data\": parse "
				     "error; the plan counts that as a breach)");
	free(summary);
}

/* Sixteen failing queries with long errors keep the gate line within the CRD's 4096 characters. */
static void test_gate_line_stays_short(void **state)
{
	(void)state;
	slo_result_t r[SLO_MAX_RESULTS];
	char long_error[600];
	memset(long_error, 'x', sizeof(long_error) - 1);
	long_error[sizeof(long_error) - 1] = '\0';
	for (int i = 0; i < SLO_MAX_RESULTS; i++)
		r[i] = (slo_result_t){ .id = i < SLO_SIGNALS ? (slo_signal_id_t)i : SLO_PROMETHEUS, .name = "q", .unit = "",
				       .verdict = i < SLO_SIGNALS ? SLO_PASS : SLO_INCONCLUSIVE,
				       .detail = i < SLO_SIGNALS ? NULL : long_error };
	char *summary = plan_status_gate_summary(r, SLO_MAX_RESULTS, 20);
	assert_true(strlen(summary) <= 4096);
	assert_non_null(strstr(summary, "more (status.signals)"));
	free(summary);
}

static void test_window_is_expanded(void **state)
{
	(void)state;
	struct {
		const char *query;
		uint64_t window_ms;
		const char *want;
	} cases[] = {
		{ "rate(x[$window])", 300000, "rate(x[5m])" },
		{ "rate(x[$window]) / rate(y[$window])", 7200000, "rate(x[2h]) / rate(y[2h])" },
		{ "rate(x[$window])", 90000, "rate(x[90s])" },
		{ "rate(x[$window])", 1500, "rate(x[1500ms])" },
		{ "up", 300000, "up" },
		{ "$window$window", 60000, "1m1m" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		plan_prom_query_t q = { .query = (char *)cases[i].query, .window_ms = cases[i].window_ms };
		char *got = prom_expand(&q);
		assert_string_equal(got, cases[i].want);
		free(got);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_table),
		cmocka_unit_test(test_decode_reads_only_len_bytes),
		cmocka_unit_test(test_judge_table),
		cmocka_unit_test(test_query_breach_joins_the_gate),
		cmocka_unit_test(test_gate_line_stays_short),
		cmocka_unit_test(test_window_is_expanded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
