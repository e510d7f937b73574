#include "prometheus.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_decode.h"
#include "xalloc.h"

static void prom_fail(prom_outcome_t *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void prom_fail(prom_outcome_t *out, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	free(out->error);
	out->kind = PROM_ERROR;
	out->value = 0;
	out->error = xstrdup(msg);
}

/*
 * A sample's value: [<unix time>, "<number>"]. Prometheus writes numbers as
 * Go's strconv does: "1.5", "1e+06", "NaN", "+Inf", "-Inf". Returns 0 with
 * *v, or -1.
 */
static int prom_sample_value(const cJSON *pair, double *v)
{
	if (!cJSON_IsArray(pair) || cJSON_GetArraySize(pair) != 2)
		return -1;
	const cJSON *s = cJSON_GetArrayItem(pair, 1);
	if (!cJSON_IsString(s) || s->valuestring == NULL || s->valuestring[0] == '\0')
		return -1;
	const char *text = s->valuestring;
	if (strcmp(text, "NaN") == 0) {
		*v = NAN;
		return 0;
	}
	if (strcmp(text, "+Inf") == 0 || strcmp(text, "Inf") == 0) {
		*v = INFINITY;
		return 0;
	}
	if (strcmp(text, "-Inf") == 0) {
		*v = -INFINITY;
		return 0;
	}
	/* Plain decimal or exponent notation only: strtod would also take "nan(...)", "infinity" and hex. */
	for (const char *p = text; *p; p++)
		if (!((*p >= '0' && *p <= '9') || *p == '.' || *p == 'e' || *p == 'E' || *p == '+' || *p == '-'))
			return -1;
	char *end;
	errno = 0;
	double d = strtod(text, &end);
	if (*end != '\0' || end == text)
		return -1;
	*v = d; /* an overflow reads as +-HUGE_VAL, which is what the number says */
	return 0;
}

/* Is a worse than b for a query that breaches in this direction? */
static bool prom_worse(double a, double b, plan_prom_direction_t breach_when)
{
	return breach_when == PLAN_PROM_BREACH_BELOW ? a < b : a > b;
}

static void prom_decode_data(const cJSON *data, plan_prom_direction_t breach_when, prom_outcome_t *out)
{
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(data, "resultType");
	const cJSON *result = cJSON_GetObjectItemCaseSensitive(data, "result");
	if (!cJSON_IsString(type) || type->valuestring == NULL) {
		prom_fail(out, "the answer has no data.resultType");
		return;
	}
	double v;
	if (strcmp(type->valuestring, "scalar") == 0) {
		out->series = 1;
		if (prom_sample_value(result, &v) != 0) {
			prom_fail(out, "the scalar result is not a [time, \"number\"] pair");
			return;
		}
		out->kind = isnan(v) ? PROM_NO_DATA : PROM_VALUE;
		out->value = isnan(v) ? 0 : v;
		return;
	}
	if (strcmp(type->valuestring, "vector") != 0) {
		char q[JSON_DECODE_QUOTE_BUF];
		json_decode_quote(q, sizeof(q), type->valuestring);
		prom_fail(out, "the query gives a %s result; an instant vector or scalar is judged (a range selector "
			       "such as [5m] needs a function around it, such as rate())",
			  q);
		return;
	}
	if (!cJSON_IsArray(result)) {
		prom_fail(out, "the vector result is not an array");
		return;
	}
	bool have = false;
	double worst = 0;
	size_t i = 0;
	const cJSON *e;
	cJSON_ArrayForEach(e, result)
	{
		out->series = ++i;
		if (!cJSON_IsObject(e)) {
			prom_fail(out, "series %zu of the vector is not an object", i);
			return;
		}
		const cJSON *pair = cJSON_GetObjectItemCaseSensitive(e, "value");
		if (pair == NULL && cJSON_GetObjectItemCaseSensitive(e, "histogram") != NULL) {
			prom_fail(out, "series %zu is a native histogram, not a number (wrap the query in "
				       "histogram_quantile() or histogram_count())",
				  i);
			return;
		}
		if (prom_sample_value(pair, &v) != 0) {
			prom_fail(out, "series %zu has no [time, \"number\"] value", i);
			return;
		}
		if (isnan(v))
			continue;
		if (!have || prom_worse(v, worst, breach_when))
			worst = v;
		have = true;
	}
	out->kind = have ? PROM_VALUE : PROM_NO_DATA;
	out->value = have ? worst : 0;
}

void prom_decode(long http_status, const char *transport_error, const char *body, size_t len,
		 plan_prom_direction_t breach_when, prom_outcome_t *out)
{
	memset(out, 0, sizeof(*out));
	if (http_status == 0) {
		prom_fail(out, "no answer: %s", transport_error ? transport_error : "unknown error");
		return;
	}
	cJSON *doc = body != NULL ? cJSON_ParseWithLength(body, len) : NULL;
	const cJSON *status = cJSON_GetObjectItemCaseSensitive(doc, "status");
	if (!cJSON_IsObject(doc) || !cJSON_IsString(status) || status->valuestring == NULL) {
		prom_fail(out, "HTTP %ld: the answer is not the Prometheus API's JSON", http_status);
	} else if (strcmp(status->valuestring, "success") != 0) {
		const cJSON *kind = cJSON_GetObjectItemCaseSensitive(doc, "errorType");
		const cJSON *msg = cJSON_GetObjectItemCaseSensitive(doc, "error");
		char k[JSON_DECODE_QUOTE_BUF], m[JSON_DECODE_QUOTE_BUF * 2];
		json_decode_quote(k, sizeof(k), cJSON_IsString(kind) && kind->valuestring ? kind->valuestring : "unknown");
		/* The PromQL parser's message is what a person needs: keep more of it than a quote's cut. */
		snprintf(m, sizeof(m), "%s", cJSON_IsString(msg) && msg->valuestring ? msg->valuestring : "no message");
		for (char *p = m; *p; p++)
			if ((unsigned char)*p < ' ' || *p == 0x7f)
				*p = ' ';
		prom_fail(out, "HTTP %ld, error %s: %s", http_status, k, m);
	} else if (http_status < 200 || http_status > 299) {
		prom_fail(out, "HTTP %ld with a success body", http_status);
	} else {
		const cJSON *data = cJSON_GetObjectItemCaseSensitive(doc, "data");
		if (!cJSON_IsObject(data))
			prom_fail(out, "the answer has no data object");
		else
			prom_decode_data(data, breach_when, out);
	}
	cJSON_Delete(doc);
}

void prom_outcome_free(prom_outcome_t *o)
{
	free(o->error);
	memset(o, 0, sizeof(*o));
}

char *prom_expand(const plan_prom_query_t *q)
{
	char window[32];
	uint64_t ms = q->window_ms;
	if (ms % (60 * 60 * 1000) == 0)
		snprintf(window, sizeof(window), "%" PRIu64 "h", ms / (60 * 60 * 1000));
	else if (ms % (60 * 1000) == 0)
		snprintf(window, sizeof(window), "%" PRIu64 "m", ms / (60 * 1000));
	else if (ms % 1000 == 0)
		snprintf(window, sizeof(window), "%" PRIu64 "s", ms / 1000);
	else
		snprintf(window, sizeof(window), "%" PRIu64 "ms", ms);
	static const char var[] = "$window";
	size_t n = 0;
	for (const char *p = strstr(q->query, var); p; p = strstr(p + strlen(var), var))
		n++;
	size_t len = strlen(q->query) + n * strlen(window) + 1;
	char *out = xmalloc(len), *o = out;
	const char *p = q->query;
	for (const char *hit = strstr(p, var); hit; hit = strstr(p, var)) {
		memcpy(o, p, (size_t)(hit - p));
		o += hit - p;
		memcpy(o, window, strlen(window));
		o += strlen(window);
		p = hit + strlen(var);
	}
	memcpy(o, p, strlen(p) + 1);
	return out;
}

/* A rule's verdict: Inconclusive, Pass or Breach. */
static slo_verdict_t prom_rule(plan_prom_rule_t rule)
{
	return rule == PLAN_PROM_PASS ? SLO_PASS : rule == PLAN_PROM_BREACH ? SLO_BREACH : SLO_INCONCLUSIVE;
}

void prom_judge(const plan_prom_query_t *q, const prom_outcome_t *last, int64_t at_ms, int64_t now_ms,
		int64_t stale_ms, slo_result_t *out)
{
	*out = (slo_result_t){ .id = SLO_PROMETHEUS, .name = q->name, .threshold = q->threshold, .unit = "" };
	if (last == NULL) {
		out->verdict = SLO_INCONCLUSIVE;
		out->detail = "not queried yet";
		return;
	}
	if (now_ms - at_ms > stale_ms) {
		out->verdict = SLO_INCONCLUSIVE;
		out->detail = "the last answer is stale";
		return;
	}
	switch (last->kind) {
	case PROM_VALUE:
		out->value = out->raw_value = last->value;
		out->samples = 1;
		out->verdict = (q->breach_when == PLAN_PROM_BREACH_BELOW ? last->value < q->threshold
									 : last->value > q->threshold)
				       ? SLO_BREACH
				       : SLO_PASS;
		return;
	case PROM_NO_DATA:
		out->verdict = prom_rule(q->on_no_data);
		out->detail = "no data";
		return;
	default:
		/* An error is never a pass, whatever the plan says. */
		out->verdict = q->on_error == PLAN_PROM_BREACH ? SLO_BREACH : SLO_INCONCLUSIVE;
		out->detail = last->error ? last->error : "query error";
		return;
	}
}
