/*
 * MigrationPlan decoding and validation; see plan.h.
 *
 * The rules are those of crds/drashift.io_migrationplans.yaml (schema and CEL),
 * checked again here with the same field paths and, where the schema words
 * them, the same messages, plus what the schema cannot say cheaply (prefix
 * lengths of label keys, durations that overflow). The CRD and this file
 * must change together.
 *
 * Reading goes through controller/base/json_decode.h, as the projections in
 * controller/kinds/ do: every read goes through a scope (the JSON object and
 * its path from the top of the document); the readers check the JSON type
 * and, when it is wrong, write "PATH.KEY: problem" and return -1, so the
 * decoder is a straight sequence of reads that stops at the first failure.
 * Values from the document are quoted with control bytes escaped, so an
 * error is always one line. The readers below (durations, enumerations,
 * string lists, known members) add what only a plan needs.
 *
 * The spec is read strictly: a member this version does not know is an error,
 * not ignored. The API server prunes unknown fields on write, so a stored plan
 * carries one only when a newer CRD declared it; this drashift then does not
 * fully understand the plan and must not act on it.
 *
 * The plan is built directly in *out from a zeroed start with every array's
 * count equal to its allocated length, so plan_free() releases a half-built
 * plan and every error path ends with *out zeroed and nothing leaked.
 */
#include "plan.h"

#include "json_decode.h"
#include "slo.h"
#include "xalloc.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Limits, as in the CRD (maxItems, maxProperties, maxLength). */
#define PLAN_MAX_DEVICE_CLASSES 16
#define PLAN_MAX_POOLS 32
#define PLAN_MAX_MATCH_LABELS 16
#define PLAN_MAX_MATCH_EXPRESSIONS 16
#define PLAN_MAX_SELECTOR_VALUES 32
#define PLAN_MAX_CANARY_NAMESPACES 64
#define PLAN_MAX_NAMED_POOLS 32
#define PLAN_MAX_DURATION_LEN 32
#define PLAN_MAX_BREACH_ID_LEN 253
#define PLAN_MAX_LEGACY_RESOURCES 32
#define PLAN_MAX_WINDOWS 16
#define PLAN_MAX_WEBHOOKS 8
#define PLAN_MAX_URL_LEN 2048
#define PLAN_WEBHOOK_TIMEOUT_MAX_MS (10 * 60 * 1000)
#define PLAN_MAX_PROM_ADDRESS_LEN 2048
#define PLAN_MAX_PROM_QUERY_LEN 4096
#define PLAN_MAX_PROM_NAME_LEN 63

/*
 * The longest duration accepted: what Go's time.Duration holds (int64
 * nanoseconds, about 106751 days), so any duration Kubernetes' own tooling
 * parses is accepted here and nothing beyond it.
 */
#define PLAN_DURATION_MAX_MS UINT64_C(9223372036854)

#define PLAN_MSG_DURATION "must be a duration such as 30s, 10m or 1h30m (units ms, s, m, h)"
#define PLAN_MSG_LABEL_KEY "must be a label key such as example.com/name"
#define PLAN_MSG_LABEL_VALUE "must be a label value"

/* ---- syntax of Kubernetes names (k8s.io/apimachinery/pkg/util/validation) ---- */

static bool plan__is_lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool plan__is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* [a-z0-9]([-a-z0-9]*[a-z0-9])? over s[0..n), n >= 1. */
static bool plan__dns_label_n(const char *s, size_t n)
{
	if (n == 0 || !plan__is_lower_alnum(s[0]) || !plan__is_lower_alnum(s[n - 1]))
		return false;
	for (size_t i = 1; i + 1 < n; i++) {
		if (!plan__is_lower_alnum(s[i]) && s[i] != '-')
			return false;
	}
	return true;
}

/* RFC 1123 label: a pool or namespace name. */
static bool plan__is_dns_label(const char *s)
{
	size_t n = strlen(s);
	return n <= 63 && plan__dns_label_n(s, n);
}

/* RFC 1123 subdomain of s[0..n): dot-separated labels, at most max bytes. */
static bool plan__dns_subdomain_n(const char *s, size_t n, size_t max)
{
	if (n == 0 || n > max)
		return false;
	size_t start = 0;
	for (size_t i = 0; i <= n; i++) {
		if (i == n || s[i] == '.') {
			if (!plan__dns_label_n(s + start, i - start))
				return false;
			start = i + 1;
		}
	}
	return true;
}

static bool plan__is_dns_subdomain(const char *s, size_t max)
{
	return plan__dns_subdomain_n(s, strlen(s), max);
}

/* ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9] over s[0..n), at most 63 bytes; empty when allow_empty. */
static bool plan__name_part_n(const char *s, size_t n, bool allow_empty)
{
	if (n == 0)
		return allow_empty;
	if (n > 63 || !plan__is_alnum(s[0]) || !plan__is_alnum(s[n - 1]))
		return false;
	for (size_t i = 1; i + 1 < n; i++) {
		if (!plan__is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
			return false;
	}
	return true;
}

/* A label key (a "qualified name"): an optional DNS subdomain prefix and '/', then a name. */
static bool plan__is_label_key(const char *s)
{
	const char *slash = strchr(s, '/');
	if (slash == NULL)
		return plan__name_part_n(s, strlen(s), false);
	if (strchr(slash + 1, '/') != NULL)
		return false;
	return plan__dns_subdomain_n(s, (size_t)(slash - s), 253) &&
	       plan__name_part_n(slash + 1, strlen(slash + 1), false);
}

static bool plan__is_label_value(const char *s)
{
	return plan__name_part_n(s, strlen(s), true);
}

/* ---- durations ---- */

/*
 * Go-style durations without sign or fraction: one or more <digits><unit>
 * with units ms, s, m, h ("500ms", "10m", "1h30m"), the form the CRD's
 * pattern admits. Returns NULL and *out_ms, or the problem.
 */
static const char *plan__parse_duration(const char *s, uint64_t *out_ms)
{
	const char *p = s;
	uint64_t total = 0;
	if (*p == '-')
		return "must not be negative";
	if (*p == '\0')
		return PLAN_MSG_DURATION;
	while (*p != '\0') {
		uint64_t v = 0;
		bool overflow = false;
		if (*p < '0' || *p > '9')
			return PLAN_MSG_DURATION;
		for (; *p >= '0' && *p <= '9'; p++) {
			if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, (uint64_t)(*p - '0'), &v))
				overflow = true;
		}
		uint64_t unit;
		if (p[0] == 'm' && p[1] == 's') {
			unit = 1;
			p += 2;
		} else if (*p == 's') {
			unit = 1000;
			p++;
		} else if (*p == 'm') {
			unit = 60 * 1000;
			p++;
		} else if (*p == 'h') {
			unit = 60 * 60 * 1000;
			p++;
		} else {
			return PLAN_MSG_DURATION;
		}
		if (overflow || __builtin_mul_overflow(v, unit, &v) || __builtin_add_overflow(total, v, &total) ||
		    total > PLAN_DURATION_MAX_MS)
			return "out of range (at most 2562047h)";
	}
	*out_ms = total;
	return NULL;
}

/* ---- readers ---- */

/* A member name from the document: as is when it looks like a field name, else quoted like a map key. */
static void plan__member_component(char *buf, size_t n, const char *key)
{
	size_t len = strlen(key);
	bool plain = len > 0 && len <= JSON_DECODE_QUOTE_MAX;
	for (size_t i = 0; plain && i < len; i++)
		plain = plan__is_alnum(key[i]) || key[i] == '_' || key[i] == '-';
	if (plain)
		json_decode_bprintf(buf, n, "%s", key);
	else
		json_decode_key_component(buf, n, key);
}

/*
 * Every member of s must be one of known (NULL-terminated) and appear once.
 * cJSON keeps repeated keys and lookups see only the first, so a repeat
 * would be a member nobody reads.
 */
static int plan__known(const json_decode_scope_t *s, const char *const *known)
{
	const cJSON *m;
	if (s->obj == NULL)
		return 0;
	cJSON_ArrayForEach(m, s->obj)
	{
		char comp[JSON_DECODE_KEY_BUF];
		bool found = false;
		for (size_t i = 0; known[i] != NULL && m->string != NULL; i++) {
			if (strcmp(m->string, known[i]) == 0) {
				found = true;
				break;
			}
		}
		if (!found) {
			plan__member_component(comp, sizeof(comp), m->string != NULL ? m->string : "");
			return json_decode_fail(s, comp, "unknown field (this drashift does not know it)");
		}
		for (const cJSON *o = s->obj->child; o != m; o = o->next) {
			if (o->string != NULL && strcmp(o->string, m->string) == 0)
				return json_decode_fail(s, m->string, "duplicate field");
		}
	}
	return 0;
}

/*
 * An int32 member in [min, max], def when absent. Doubles beyond 2^53 are not
 * exact and are refused; so are fractions.
 */
static int plan__int32(const json_decode_scope_t *s, const char *key, int32_t def, int32_t min, int32_t max,
		       int32_t *out)
{
	int64_t i;
	bool present;
	*out = def;
	if (json_decode_int(s, key, false, &i, &present) != 0)
		return -1;
	if (!present)
		return 0;
	if (i < min || i > max) {
		if (max != INT32_MAX)
			return json_decode_fail(s, key, "must be %d..%d", (int)min, (int)max);
		if (i < min)
			return json_decode_fail(s, key, "must be at least %d", (int)min);
		return json_decode_fail(s, key, "out of range (at most %d)", (int)max);
	}
	*out = (int32_t)i;
	return 0;
}

typedef enum { PLAN_DUR_ZERO_OK, PLAN_DUR_POSITIVE } plan__dur_kind_t;

/* A duration member in milliseconds; def_ms when absent. */
static int plan__duration(const json_decode_scope_t *s, const char *key, uint64_t def_ms, plan__dur_kind_t kind,
			  uint64_t *out)
{
	const char *v;
	*out = def_ms;
	if (json_decode_str(s, key, false, &v) != 0)
		return -1;
	if (v == NULL)
		return 0;
	if (strlen(v) > PLAN_MAX_DURATION_LEN)
		return json_decode_fail(s, key, "longer than %d characters", PLAN_MAX_DURATION_LEN);
	const char *why = plan__parse_duration(v, out);
	if (why != NULL) {
		*out = 0;
		return json_decode_fail(s, key, "%s", why);
	}
	if (kind == PLAN_DUR_POSITIVE && *out == 0)
		return json_decode_fail(s, key, "must be greater than zero");
	return 0;
}

/* A string member that must be one of names (NULL-terminated); its index, def when absent. */
static int plan__enum(const json_decode_scope_t *s, const char *key, const char *const *names, int def, int *out)
{
	const char *v;
	*out = def;
	if (json_decode_str(s, key, false, &v) != 0)
		return -1;
	if (v == NULL)
		return 0;
	for (int i = 0; names[i] != NULL; i++) {
		if (strcmp(v, names[i]) == 0) {
			*out = i;
			return 0;
		}
	}
	char q[JSON_DECODE_QUOTE_BUF];
	char supported[128] = "";
	size_t o = 0;
	json_decode_quote(q, sizeof(q), v);
	for (int i = 0; names[i] != NULL; i++) {
		int w = snprintf(supported + o, sizeof(supported) - o, "%s%s", i > 0 ? ", " : "", names[i]);
		if (w < 0 || (size_t)w >= sizeof(supported) - o)
			break;
		o += (size_t)w;
	}
	return json_decode_fail(s, key, "unsupported value %s: supported values: %s", q, supported);
}

/*
 * A string array member into a fresh array of copies, each checked by valid
 * (failing with invalid_msg) and, for list-type sets, unique. Absent: *out
 * NULL, *n 0.
 */
static int plan__str_list(const json_decode_scope_t *s, const char *key, size_t max, bool unique,
			  bool (*valid)(const char *), const char *invalid_msg, char ***out, size_t *n)
{
	const cJSON *arr, *e;
	size_t count;
	char where[JSON_DECODE_PATH_MAX];
	*out = NULL;
	*n = 0;
	if (json_decode_arr(s, key, max, &arr, &count) != 0)
		return -1;
	if (count == 0)
		return 0;
	*out = xcalloc(count, sizeof(**out));
	*n = count;
	json_decode_join(where, sizeof(where), s->path, key);
	size_t i = 0;
	cJSON_ArrayForEach(e, arr)
	{
		char elem[JSON_DECODE_PATH_MAX + 32], q[JSON_DECODE_QUOTE_BUF];
		json_decode_bprintf(elem, sizeof(elem), "%s[%zu]", where, i);
		if (!cJSON_IsString(e) || e->valuestring == NULL)
			return json_decode_fail_at(s->err, s->errlen, elem, "not a string");
		json_decode_quote(q, sizeof(q), e->valuestring);
		if (!valid(e->valuestring))
			return json_decode_fail_at(s->err, s->errlen, elem, "%s (%s)", invalid_msg, q);
		for (size_t j = 0; unique && j < i; j++) {
			if (strcmp((*out)[j], e->valuestring) == 0)
				return json_decode_fail_at(s->err, s->errlen, elem, "duplicate value %s", q);
		}
		(*out)[i++] = xstrdup(e->valuestring);
	}
	return 0;
}

/* ---- the plan ---- */

static void plan__free_strs(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void plan__free_selector(plan_selector_t *sel)
{
	for (size_t i = 0; i < sel->n_reqs; i++) {
		free(sel->reqs[i].key);
		plan__free_strs(sel->reqs[i].values, sel->reqs[i].n_values);
	}
	free(sel->reqs);
}

static void plan__free_label(plan_label_t *l)
{
	free(l->key);
	free(l->enabled);
	free(l->disabled);
}

void plan_free(plan_t *p)
{
	if (p == NULL)
		return;
	free(p->name);
	free(p->uid);
	free(p->driver);
	free(p->extended_resource);
	plan__free_strs(p->device_classes, p->n_device_classes);
	plan__free_label(&p->device_plugin_label);
	plan__free_label(&p->dra_label);
	for (size_t i = 0; i < p->n_pools; i++) {
		plan_pool_t *pool = &p->pools[i];
		free(pool->name);
		plan__free_selector(&pool->node_selector);
		plan__free_strs(pool->canary_namespaces, pool->n_canary_namespaces);
		plan__free_strs(pool->legacy_resources, pool->n_legacy_resources);
	}
	free(p->pools);
	free(p->acknowledged_breach);
	for (size_t i = 0; i < p->n_windows; i++) {
		free(p->windows[i].time_zone);
		tz_free(&p->windows[i].zone);
	}
	free(p->windows);
	plan__free_strs(p->tenancy_namespaces, p->n_tenancy_namespaces);
	plan__free_selector(&p->tenancy_selector);
	for (size_t i = 0; i < p->n_webhooks; i++) {
		free(p->webhooks[i].name);
		free(p->webhooks[i].url);
	}
	free(p->webhooks);
	plan_prometheus_t *prom = &p->slo.prometheus;
	free(prom->address);
	free(prom->secret_name);
	for (size_t i = 0; i < prom->n_queries; i++) {
		free(prom->queries[i].name);
		free(prom->queries[i].query);
	}
	free(prom->queries);
	memset(p, 0, sizeof(*p));
}

static bool plan__valid_device_class(const char *s)
{
	return plan__is_dns_subdomain(s, 253);
}

static bool plan__valid_namespace(const char *s)
{
	return plan__is_dns_label(s);
}

static bool plan__valid_any(const char *s)
{
	(void)s;
	return true;
}

static bool plan__valid_label_value(const char *s)
{
	return plan__is_label_value(s);
}

/* An ownership label under spec.ownership: key plus its enabled and disabled values. */
static int plan__label(const json_decode_scope_t *own, const char *member, const char *def_key, plan_label_t *out)
{
	static const char *const known[] = {"key", "enabled", "disabled", NULL};
	char path[JSON_DECODE_PATH_MAX];
	json_decode_scope_t s;
	const char *key, *enabled, *disabled;
	if (json_decode_obj(own, member, false, &s, path, sizeof(path)) != 0 || plan__known(&s, known) != 0 ||
	    json_decode_str(&s, "key", false, &key) != 0 || json_decode_str(&s, "enabled", false, &enabled) != 0 ||
	    json_decode_str(&s, "disabled", false, &disabled) != 0)
		return -1;
	key = key != NULL ? key : def_key;
	enabled = enabled != NULL ? enabled : "true";
	disabled = disabled != NULL ? disabled : "false";
	if (!plan__is_label_key(key))
		return json_decode_fail(&s, "key", PLAN_MSG_LABEL_KEY);
	if (!plan__is_label_value(enabled))
		return json_decode_fail(&s, "enabled", PLAN_MSG_LABEL_VALUE);
	if (!plan__is_label_value(disabled))
		return json_decode_fail(&s, "disabled", PLAN_MSG_LABEL_VALUE);
	if (strcmp(enabled, disabled) == 0)
		return json_decode_fail(&s, NULL, "enabled and disabled must differ");
	out->key = xstrdup(key);
	out->enabled = xstrdup(enabled);
	out->disabled = xstrdup(disabled);
	return 0;
}

static int plan__ownership(const json_decode_scope_t *spec, plan_t *p)
{
	static const char *const known[] = {"devicePlugin", "draDriver", NULL};
	char path[JSON_DECODE_PATH_MAX];
	json_decode_scope_t own;
	if (json_decode_obj(spec, "ownership", false, &own, path, sizeof(path)) != 0 ||
	    plan__known(&own, known) != 0 ||
	    plan__label(&own, "devicePlugin", "drashift.io/device-plugin", &p->device_plugin_label) != 0 ||
	    plan__label(&own, "draDriver", "drashift.io/dra-driver", &p->dra_label) != 0)
		return -1;
	if (strcmp(p->device_plugin_label.key, p->dra_label.key) == 0)
		return json_decode_fail(&own, NULL,
					"devicePlugin.key and draDriver.key must differ: one label cannot "
					"record two owners");
	return 0;
}

/*
 * A label selector at scope's member (spec.pools[i].nodeSelector,
 * spec.tenancy.namespaceSelector): matchLabels become In requirements with
 * one value, followed by matchExpressions, all ANDed. what names what an
 * empty selector would select.
 */
static int plan__selector(const json_decode_scope_t *pool, const char *member, bool required, const char *what,
			  plan_selector_t *out)
{
	static const char *const known[] = {"matchLabels", "matchExpressions", NULL};
	static const char *const known_expr[] = {"key", "operator", "values", NULL};
	static const char *const ops[] = {"In", "NotIn", "Exists", "DoesNotExist", NULL};
	char path[JSON_DECODE_PATH_MAX], lpath[JSON_DECODE_PATH_MAX], epath[JSON_DECODE_PATH_MAX];
	json_decode_scope_t sel, labels, expr;
	const cJSON *exprs, *e;
	size_t n_labels = 0, n_exprs;
	if (json_decode_obj(pool, member, required, &sel, path, sizeof(path)) != 0)
		return -1;
	if (sel.obj == NULL)
		return 0;
	if (plan__known(&sel, known) != 0 ||
	    json_decode_obj(&sel, "matchLabels", false, &labels, lpath, sizeof(lpath)) != 0 ||
	    json_decode_arr(&sel, "matchExpressions", PLAN_MAX_MATCH_EXPRESSIONS, &exprs, &n_exprs) != 0)
		return -1;
	cJSON_ArrayForEach(e, labels.obj)
	{
		char comp[JSON_DECODE_KEY_BUF];
		const char *key = e->string != NULL ? e->string : "";
		json_decode_key_component(comp, sizeof(comp), key);
		if (++n_labels > PLAN_MAX_MATCH_LABELS)
			return json_decode_fail(&sel, "matchLabels", "more than %d labels", PLAN_MAX_MATCH_LABELS);
		if (!plan__is_label_key(key))
			return json_decode_fail(&labels, comp, PLAN_MSG_LABEL_KEY);
		if (!cJSON_IsString(e) || e->valuestring == NULL)
			return json_decode_fail(&labels, comp, "not a string");
		if (!plan__is_label_value(e->valuestring))
			return json_decode_fail(&labels, comp, PLAN_MSG_LABEL_VALUE);
		for (const cJSON *o = labels.obj->child; o != e; o = o->next) {
			if (strcmp(o->string, key) == 0)
				return json_decode_fail(&labels, comp, "duplicate key");
		}
	}
	if (n_labels + n_exprs == 0)
		return json_decode_fail(pool, member, "must not be empty (an empty selector would select every %s)", what);
	out->reqs = xcalloc(n_labels + n_exprs, sizeof(*out->reqs));
	out->n_reqs = n_labels + n_exprs;
	size_t r = 0;
	cJSON_ArrayForEach(e, labels.obj)
	{
		plan_requirement_t *req = &out->reqs[r++];
		req->key = xstrdup(e->string);
		req->op = PLAN_SELECTOR_IN;
		req->values = xcalloc(1, sizeof(*req->values));
		req->n_values = 1;
		req->values[0] = xstrdup(e->valuestring);
	}
	size_t i = 0;
	cJSON_ArrayForEach(e, exprs)
	{
		plan_requirement_t *req = &out->reqs[r++];
		const char *key;
		int op;
		if (json_decode_elem(&sel, "matchExpressions", i++, e, &expr, epath, sizeof(epath)) != 0 ||
		    plan__known(&expr, known_expr) != 0 || json_decode_str(&expr, "key", true, &key) != 0)
			return -1;
		if (!plan__is_label_key(key))
			return json_decode_fail(&expr, "key", PLAN_MSG_LABEL_KEY);
		if (json_decode_get(&expr, "operator") == NULL)
			return json_decode_fail(&expr, "operator", "missing");
		if (plan__enum(&expr, "operator", ops, 0, &op) != 0)
			return -1;
		req->key = xstrdup(key);
		req->op = (plan_selector_op_t)op;
		if (plan__str_list(&expr, "values", PLAN_MAX_SELECTOR_VALUES, false, plan__valid_label_value,
				   PLAN_MSG_LABEL_VALUE, &req->values, &req->n_values) != 0)
			return -1;
		bool wants_values = req->op == PLAN_SELECTOR_IN || req->op == PLAN_SELECTOR_NOT_IN;
		if (wants_values != (req->n_values > 0))
			return json_decode_fail(&expr, NULL,
						"values must be non-empty for In and NotIn, and empty for Exists and "
						"DoesNotExist");
	}
	return 0;
}

/* spec.pools[i].canary: exactly one of nodes or percent; absent means one node. */
static int plan__canary(const json_decode_scope_t *pool, plan_pool_t *out)
{
	static const char *const known[] = {"nodes", "percent", "namespaces", NULL};
	char path[JSON_DECODE_PATH_MAX];
	json_decode_scope_t c;
	if (json_decode_obj(pool, "canary", false, &c, path, sizeof(path)) != 0 || plan__known(&c, known) != 0)
		return -1;
	if (c.obj == NULL) {
		out->canary_nodes = 1;
		return 0;
	}
	bool has_nodes = json_decode_get(&c, "nodes") != NULL, has_percent = json_decode_get(&c, "percent") != NULL;
	if (has_nodes == has_percent)
		return json_decode_fail(&c, NULL, "set exactly one of nodes or percent");
	if (plan__int32(&c, "nodes", 0, 1, INT32_MAX, &out->canary_nodes) != 0 ||
	    plan__int32(&c, "percent", 0, 1, 100, &out->canary_percent) != 0)
		return -1;
	return plan__str_list(&c, "namespaces", PLAN_MAX_CANARY_NAMESPACES, true, plan__valid_namespace,
			      "must be a namespace name", &out->canary_namespaces, &out->n_canary_namespaces);
}

static bool plan__valid_resource(const char *s)
{
	return strchr(s, '/') != NULL && plan__is_label_key(s);
}

/* pools[].capacity: replicasPerDevice and legacyResources. */
static int plan__capacity(const json_decode_scope_t *pool, plan_pool_t *out)
{
	static const char *const known[] = {"replicasPerDevice", "legacyResources", NULL};
	char path[JSON_DECODE_PATH_MAX];
	json_decode_scope_t c;
	if (json_decode_obj(pool, "capacity", false, &c, path, sizeof(path)) != 0 || plan__known(&c, known) != 0 ||
	    plan__int32(&c, "replicasPerDevice", 0, 1, INT32_MAX, &out->replicas_per_device) != 0)
		return -1;
	return plan__str_list(&c, "legacyResources", PLAN_MAX_LEGACY_RESOURCES, true, plan__valid_resource,
			      "must be a domain-prefixed resource name such as nvidia.com/mig-1g.10gb",
			      &out->legacy_resources, &out->n_legacy_resources);
}

static int plan__pool(const json_decode_scope_t *pool, plan_pool_t *out)
{
	static const char *const known[] = {"name",	"nodeSelector", "canary", "maxUnavailable",
					    "bakeTime", "deadlines",	"drain",  "capacity", "promotion", NULL};
	static const char *const promotions[] = {"Automatic", "Manual", NULL};
	static const char *const known_deadlines[] = {"drain", "handover", NULL};
	static const char *const known_drain[] = {"policy", "evictionDeadline", NULL};
	static const char *const policies[] = {"Wait", "Evict", NULL};
	char dpath[JSON_DECODE_PATH_MAX], rpath[JSON_DECODE_PATH_MAX];
	json_decode_scope_t deadlines, drain;
	const char *name;
	int policy, promotion;
	if (plan__known(pool, known) != 0 || json_decode_str(pool, "name", true, &name) != 0)
		return -1;
	if (!plan__is_dns_label(name))
		return json_decode_fail(pool, "name",
					"must be a DNS label (lowercase alphanumerics and '-', at most 63 characters)");
	out->name = xstrdup(name);
	if (plan__selector(pool, "nodeSelector", true, "node", &out->node_selector) != 0 || plan__canary(pool, out) != 0 ||
	    plan__capacity(pool, out) != 0 ||
	    plan__int32(pool, "maxUnavailable", 1, 1, INT32_MAX, &out->max_unavailable) != 0 ||
	    plan__duration(pool, "bakeTime", 10 * 60 * 1000, PLAN_DUR_ZERO_OK, &out->bake_ms) != 0 ||
	    json_decode_obj(pool, "deadlines", false, &deadlines, dpath, sizeof(dpath)) != 0 ||
	    plan__known(&deadlines, known_deadlines) != 0 ||
	    plan__duration(&deadlines, "drain", 60 * 60 * 1000, PLAN_DUR_POSITIVE, &out->drain_deadline_ms) != 0 ||
	    plan__duration(&deadlines, "handover", 10 * 60 * 1000, PLAN_DUR_POSITIVE, &out->handover_deadline_ms) !=
		    0 ||
	    json_decode_obj(pool, "drain", false, &drain, rpath, sizeof(rpath)) != 0 ||
	    plan__known(&drain, known_drain) != 0 ||
	    plan__enum(&drain, "policy", policies, PLAN_DRAIN_WAIT, &policy) != 0 ||
	    plan__duration(&drain, "evictionDeadline", 30 * 60 * 1000, PLAN_DUR_POSITIVE, &out->eviction_deadline_ms) !=
		    0 ||
	    plan__enum(pool, "promotion", promotions, 0, &promotion) != 0)
		return -1;
	out->drain_policy = (plan_drain_policy_t)policy;
	out->manual_promotion = promotion == 1;
	return 0;
}

static int plan__pools(const json_decode_scope_t *spec, plan_t *p)
{
	char path[JSON_DECODE_PATH_MAX];
	json_decode_scope_t pool;
	const cJSON *arr, *e;
	size_t n;
	if (json_decode_get(spec, "pools") == NULL)
		return json_decode_fail(spec, "pools", "missing");
	if (json_decode_arr(spec, "pools", PLAN_MAX_POOLS, &arr, &n) != 0)
		return -1;
	if (n == 0)
		return json_decode_fail(spec, "pools", "must list at least one pool");
	p->pools = xcalloc(n, sizeof(*p->pools));
	p->n_pools = n;
	size_t i = 0;
	cJSON_ArrayForEach(e, arr)
	{
		if (json_decode_elem(spec, "pools", i, e, &pool, path, sizeof(path)) != 0 ||
		    plan__pool(&pool, &p->pools[i]) != 0)
			return -1;
		for (size_t j = 0; j < i; j++) {
			if (strcmp(p->pools[j].name, p->pools[i].name) == 0)
				return json_decode_fail(&pool, "name",
							"pool names must be unique (\"%s\" is also spec.pools[%zu])",
							p->pools[i].name, j);
		}
		i++;
	}
	return 0;
}

/*
 * A pool selected by an ownership label would lose its nodes as drashift
 * flips that label, half-way through a handover: refused.
 */
static int plan__selectors_avoid_ownership(const json_decode_scope_t *spec, const plan_t *p)
{
	for (size_t i = 0; i < p->n_pools; i++) {
		const plan_selector_t *sel = &p->pools[i].node_selector;
		for (size_t r = 0; r < sel->n_reqs; r++) {
			const char *key = sel->reqs[r].key;
			if (strcmp(key, p->device_plugin_label.key) != 0 && strcmp(key, p->dra_label.key) != 0)
				continue;
			char where[JSON_DECODE_PATH_MAX], q[JSON_DECODE_QUOTE_BUF];
			json_decode_bprintf(where, sizeof(where), "%s.pools[%zu].nodeSelector", spec->path, i);
			json_decode_quote(q, sizeof(q), key);
			return json_decode_fail_at(spec->err, spec->errlen, where,
						   "must not use the ownership label %s: nodes would leave the pool "
						   "as drashift flips it",
						   q);
		}
	}
	return 0;
}

/* A pool's capacity.legacyResources must not repeat spec.extendedResource: its units would count twice. */
static int plan__legacy_distinct(const json_decode_scope_t *spec, const plan_t *p)
{
	for (size_t i = 0; i < p->n_pools; i++) {
		const plan_pool_t *pool = &p->pools[i];
		for (size_t r = 0; r < pool->n_legacy_resources; r++) {
			if (strcmp(pool->legacy_resources[r], p->extended_resource) != 0)
				continue;
			char where[JSON_DECODE_PATH_MAX];
			json_decode_bprintf(where, sizeof(where), "%s.pools[%zu].capacity.legacyResources[%zu]",
					    spec->path, i, r);
			return json_decode_fail_at(spec->err, spec->errlen, where,
						   "must not repeat spec.extendedResource: its units would count twice");
		}
	}
	return 0;
}

/*
 * scope's "pools": names from spec.pools, each marking its pool (flag is the
 * offset of a bool in plan_pool_t).
 */
static int plan__named_pools(const json_decode_scope_t *scope, plan_t *p, size_t flag)
{
	char **names = NULL;
	size_t n = 0;
	if (plan__str_list(scope, "pools", PLAN_MAX_NAMED_POOLS, true, plan__valid_any, "", &names, &n) != 0) {
		plan__free_strs(names, n);
		return -1;
	}
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		size_t j = 0;
		while (j < p->n_pools && strcmp(p->pools[j].name, names[i]) != 0)
			j++;
		if (j == p->n_pools) {
			char comp[32], q[JSON_DECODE_QUOTE_BUF];
			json_decode_bprintf(comp, sizeof(comp), "pools[%zu]", i);
			json_decode_quote(q, sizeof(q), names[i]);
			rc = json_decode_fail(scope, comp, "must name pools listed in spec.pools (%s is not one)", q);
		} else {
			*(bool *)((char *)&p->pools[j] + flag) = true;
		}
	}
	plan__free_strs(names, n);
	return rc;
}

/* spec.rollback: all, or pools named in spec.pools (marked on each pool). */
static int plan__rollback(const json_decode_scope_t *spec, plan_t *p)
{
	static const char *const known[] = {"all", "pools", NULL};
	char path[JSON_DECODE_PATH_MAX];
	json_decode_scope_t rb;
	if (json_decode_obj(spec, "rollback", false, &rb, path, sizeof(path)) != 0 || plan__known(&rb, known) != 0 ||
	    json_decode_bool(&rb, "all", &p->rollback_all) != 0)
		return -1;
	return plan__named_pools(&rb, p, offsetof(plan_pool_t, rollback));
}

/* spec.promote: pools whose canary expands without waiting out the rest of its bake. */
static int plan__promote(const json_decode_scope_t *spec, plan_t *p)
{
	static const char *const known[] = {"pools", NULL};
	char path[JSON_DECODE_PATH_MAX];
	json_decode_scope_t pr;
	if (json_decode_obj(spec, "promote", false, &pr, path, sizeof(path)) != 0 || plan__known(&pr, known) != 0)
		return -1;
	return plan__named_pools(&pr, p, offsetof(plan_pool_t, promote));
}

/* "HH:MM" or "HH:MM:SS", 00:00 to 23:59:59, in seconds after midnight. */
static int plan__time_of_day(const json_decode_scope_t *s, const char *key, int32_t *out)
{
	const char *v;
	if (json_decode_str(s, key, true, &v) != 0)
		return -1;
	size_t n = strlen(v);
	int part[3] = { 0, 0, 0 };
	bool ok = n == 5 || n == 8;
	for (size_t i = 0; ok && i < n; i++) {
		if (i % 3 == 2)
			ok = v[i] == ':';
		else if ((ok = v[i] >= '0' && v[i] <= '9'))
			part[i / 3] = part[i / 3] * 10 + (v[i] - '0');
	}
	if (!ok || part[0] > 23 || part[1] > 59 || part[2] > 59) {
		char q[JSON_DECODE_QUOTE_BUF];
		json_decode_quote(q, sizeof(q), v);
		return json_decode_fail(s, key, "must be a time of day HH:MM or HH:MM:SS from 00:00 to 23:59:59 (%s)", q);
	}
	*out = part[0] * 3600 + part[1] * 60 + part[2];
	return 0;
}

static const char *const plan__weekdays[7] = {"Sunday",   "Monday", "Tuesday", "Wednesday",
					       "Thursday", "Friday", "Saturday"};

static bool plan__valid_weekday(const char *s)
{
	for (size_t i = 0; i < 7; i++)
		if (strcmp(s, plan__weekdays[i]) == 0)
			return true;
	return false;
}

static int plan__window(const json_decode_scope_t *ws, void *out)
{
	window_t *w = out;
	static const char *const known[] = {"days", "start", "end", "timeZone", NULL};
	char **names = NULL;
	size_t n = 0;
	const char *zone;
	if (plan__known(ws, known) != 0 ||
	    plan__str_list(ws, "days", 7, true, plan__valid_weekday, "must be a day of the week (Monday .. Sunday)",
			   &names, &n) != 0) {
		plan__free_strs(names, n);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		for (int d = 0; d < 7; d++)
			if (strcmp(names[i], plan__weekdays[d]) == 0)
				w->days |= (uint8_t)(1u << d);
	plan__free_strs(names, n);
	if (n == 0)
		return json_decode_fail(ws, "days", "must list at least one day");
	if (plan__time_of_day(ws, "start", &w->start_s) != 0 || plan__time_of_day(ws, "end", &w->end_s) != 0 ||
	    json_decode_str(ws, "timeZone", true, &zone) != 0)
		return -1;
	if (w->start_s == w->end_s)
		return json_decode_fail(ws, "end", "must differ from start");
	if (!tz_valid_name(zone)) {
		char q[JSON_DECODE_QUOTE_BUF];
		json_decode_quote(q, sizeof(q), zone);
		return json_decode_fail(ws, "timeZone", "must be an IANA time zone name such as Europe/Berlin (%s)", q);
	}
	w->time_zone = xstrdup(zone);
	return 0;
}

/*
 * An array member of objects into a fresh zeroed array of *n elements of
 * size bytes (allocated whole first, so plan_free() releases a half-decoded
 * one), each decoded by one. Absent: *out NULL, *n 0.
 */
static int plan__objects(const json_decode_scope_t *s, const char *key, size_t max, size_t size,
			 int (*one)(const json_decode_scope_t *elem, void *out), void **out, size_t *n)
{
	char path[JSON_DECODE_PATH_MAX];
	json_decode_scope_t es;
	const cJSON *arr, *e;
	size_t count;
	*out = NULL;
	*n = 0;
	if (json_decode_arr(s, key, max, &arr, &count) != 0)
		return -1;
	if (count == 0)
		return 0;
	*out = xcalloc(count, size);
	*n = count;
	size_t i = 0;
	cJSON_ArrayForEach(e, arr)
	{
		if (json_decode_elem(s, key, i, e, &es, path, sizeof(path)) != 0 || one(&es, (char *)*out + i * size) != 0)
			return -1;
		i++;
	}
	return 0;
}

/* spec.windows: maintenance windows, each decoded; their zones are loaded by the controller. */
static int plan__windows(const json_decode_scope_t *spec, plan_t *p)
{
	void *windows;
	int rc = plan__objects(spec, "windows", PLAN_MAX_WINDOWS, sizeof(window_t), plan__window, &windows, &p->n_windows);
	p->windows = windows;
	return rc;
}

/* A finite JSON number member; required. */
static int plan__number(const json_decode_scope_t *s, const char *key, double *out)
{
	const cJSON *v = json_decode_get(s, key);
	*out = 0;
	if (v == NULL)
		return json_decode_fail(s, key, "missing");
	if (!cJSON_IsNumber(v))
		return json_decode_fail(s, key, "not a number");
	*out = v->valuedouble;
	return 0;
}

/* A query's name: a signal name such as dra_prepare_p95 or nodePrepareP95, never a built-in signal's. */
static bool plan__valid_signal_name(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > PLAN_MAX_PROM_NAME_LEN || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!plan__is_alnum(s[i]) && s[i] != '_')
			return false;
	return true;
}

static int plan__prom_query(const json_decode_scope_t *qs, uint64_t default_window_ms, plan_prom_query_t *q,
			    const plan_prom_query_t *before, size_t n_before)
{
	static const char *const known[] = {"name", "query", "threshold", "breachWhen", "window", "onNoData", "onError", NULL};
	static const char *const directions[] = {"Above", "Below", NULL};
	static const char *const rules[] = {"Inconclusive", "Pass", "Breach", NULL};
	static const char *const error_rules[] = {"Inconclusive", "Breach", NULL};
	const char *name, *query;
	int direction, no_data, on_error;
	char quoted[JSON_DECODE_QUOTE_BUF];
	if (plan__known(qs, known) != 0 || json_decode_str(qs, "name", true, &name) != 0)
		return -1;
	json_decode_quote(quoted, sizeof(quoted), name);
	if (!plan__valid_signal_name(name))
		return json_decode_fail(qs, "name",
					"must be a signal name: a letter, then letters, digits or '_', at most %d (%s)",
					PLAN_MAX_PROM_NAME_LEN, quoted);
	for (int k = 0; k < SLO_SIGNALS; k++)
		if (strcmp(name, slo_signal_name((slo_signal_id_t)k)) == 0)
			return json_decode_fail(qs, "name", "%s is a built-in signal's name", quoted);
	for (size_t i = 0; i < n_before; i++)
		if (strcmp(name, before[i].name) == 0)
			return json_decode_fail(qs, "name", "query names must be unique (%s is also queries[%zu])", quoted, i);
	q->name = xstrdup(name);
	if (json_decode_str(qs, "query", true, &query) != 0)
		return -1;
	if (query[0] == '\0')
		return json_decode_fail(qs, "query", "empty");
	if (strlen(query) > PLAN_MAX_PROM_QUERY_LEN)
		return json_decode_fail(qs, "query", "longer than %d characters", PLAN_MAX_PROM_QUERY_LEN);
	q->query = xstrdup(query);
	if (plan__number(qs, "threshold", &q->threshold) != 0 ||
	    plan__enum(qs, "breachWhen", directions, PLAN_PROM_BREACH_ABOVE, &direction) != 0 ||
	    plan__duration(qs, "window", default_window_ms, PLAN_DUR_POSITIVE, &q->window_ms) != 0 ||
	    plan__enum(qs, "onNoData", rules, PLAN_PROM_INCONCLUSIVE, &no_data) != 0 ||
	    plan__enum(qs, "onError", error_rules, 0, &on_error) != 0)
		return -1;
	q->breach_when = (plan_prom_direction_t)direction;
	q->on_no_data = (plan_prom_rule_t)no_data;
	q->on_error = on_error == 0 ? PLAN_PROM_INCONCLUSIVE : PLAN_PROM_BREACH;
	return 0;
}

/* http:// or https://, a host, no query, fragment, whitespace or trailing slash. */
static bool plan__valid_prom_address(const char *s)
{
	size_t n = strlen(s);
	const char *rest = strncmp(s, "http://", 7) == 0 ? s + 7 : strncmp(s, "https://", 8) == 0 ? s + 8 : NULL;
	if (rest == NULL || rest[0] == '\0' || rest[0] == '/' || n > PLAN_MAX_PROM_ADDRESS_LEN || s[n - 1] == '/')
		return false;
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f || *p == '?' || *p == '#')
			return false;
	return true;
}

/* spec.slo.prometheus: where to ask, how, and the queries judged beside the built-in signals. */
static int plan__prometheus(const json_decode_scope_t *slo_scope, uint64_t default_window_ms, plan_prometheus_t *prom)
{
	static const char *const known[] = {"address", "secretName", "insecureSkipVerify", "interval", "timeout",
					    "queries", NULL};
	char path[JSON_DECODE_PATH_MAX], qpath[JSON_DECODE_PATH_MAX];
	json_decode_scope_t s, qs;
	const char *address, *secret;
	const cJSON *arr, *e;
	size_t n;
	if (json_decode_obj(slo_scope, "prometheus", false, &s, path, sizeof(path)) != 0)
		return -1;
	if (s.obj == NULL)
		return 0;
	if (plan__known(&s, known) != 0 || json_decode_str(&s, "address", true, &address) != 0)
		return -1;
	if (!plan__valid_prom_address(address))
		return json_decode_fail(&s, "address",
					"must be an http:// or https:// URL without query, fragment or trailing slash");
	prom->address = xstrdup(address);
	if (json_decode_str(&s, "secretName", false, &secret) != 0)
		return -1;
	if (secret != NULL && !plan__is_dns_subdomain(secret, 253))
		return json_decode_fail(&s, "secretName", "must be a Secret name (a DNS subdomain)");
	prom->secret_name = secret != NULL ? xstrdup(secret) : NULL;
	if (json_decode_bool(&s, "insecureSkipVerify", &prom->insecure_skip_verify) != 0 ||
	    plan__duration(&s, "interval", 30 * 1000, PLAN_DUR_POSITIVE, &prom->interval_ms) != 0 ||
	    plan__duration(&s, "timeout", 10 * 1000, PLAN_DUR_POSITIVE, &prom->timeout_ms) != 0 ||
	    json_decode_arr(&s, "queries", PLAN_MAX_PROM_QUERIES, &arr, &n) != 0)
		return -1;
	if (n == 0)
		return json_decode_fail(&s, "queries", "must list at least one query");
	prom->queries = xcalloc(n, sizeof(*prom->queries));
	size_t i = 0;
	cJSON_ArrayForEach(e, arr)
	{
		prom->n_queries = i + 1;
		if (json_decode_elem(&s, "queries", i, e, &qs, qpath, sizeof(qpath)) != 0 ||
		    plan__prom_query(&qs, default_window_ms, &prom->queries[i], prom->queries, i) != 0)
			return -1;
		i++;
	}
	return 0;
}

static int plan__slo(const json_decode_scope_t *spec, plan_slo_t *slo)
{
	static const char *const known[] = {"window",
					    "minSamples",
					    "allocationLatencyP95",
					    "readyLatencyP95",
					    "maxAllocationFailurePercent",
					    "maxDriverErrors",
					    "maxCapacityDrift",
					    "stuckThreshold",
					    "breachPolicy",
					    "freezeMode",
					    "prometheus",
					    NULL};
	static const char *const policies[] = {"Freeze", "FreezeAndRollback", NULL};
	static const char *const modes[] = {"Admission", "DeviceTaint", "AdmissionAndDeviceTaint", NULL};
	char path[JSON_DECODE_PATH_MAX];
	json_decode_scope_t s;
	int32_t min_samples, failure_pct, driver_errors, drift;
	int policy, mode;
	if (json_decode_obj(spec, "slo", false, &s, path, sizeof(path)) != 0 || plan__known(&s, known) != 0 ||
	    plan__duration(&s, "window", 10 * 60 * 1000, PLAN_DUR_POSITIVE, &slo->window_ms) != 0 ||
	    plan__int32(&s, "minSamples", 20, 1, INT32_MAX, &min_samples) != 0 ||
	    plan__duration(&s, "allocationLatencyP95", 0, PLAN_DUR_ZERO_OK, &slo->allocation_latency_p95_ms) != 0 ||
	    plan__duration(&s, "readyLatencyP95", 0, PLAN_DUR_ZERO_OK, &slo->ready_latency_p95_ms) != 0 ||
	    plan__int32(&s, "maxAllocationFailurePercent", 5, 0, 100, &failure_pct) != 0 ||
	    plan__int32(&s, "maxDriverErrors", 0, 0, INT32_MAX, &driver_errors) != 0 ||
	    plan__int32(&s, "maxCapacityDrift", 0, 0, INT32_MAX, &drift) != 0 ||
	    plan__duration(&s, "stuckThreshold", 5 * 60 * 1000, PLAN_DUR_POSITIVE, &slo->stuck_threshold_ms) != 0 ||
	    plan__enum(&s, "breachPolicy", policies, PLAN_BREACH_FREEZE, &policy) != 0 ||
	    plan__enum(&s, "freezeMode", modes, PLAN_FREEZE_ADMISSION, &mode) != 0 ||
	    plan__prometheus(&s, slo->window_ms, &slo->prometheus) != 0)
		return -1;
	slo->min_samples = (uint32_t)min_samples;
	slo->max_allocation_failure_percent = (uint32_t)failure_pct;
	slo->max_driver_errors = (uint32_t)driver_errors;
	slo->max_capacity_drift = (uint32_t)drift;
	slo->breach_policy = (plan_breach_policy_t)policy;
	slo->freeze_mode = (plan_freeze_mode_t)mode;
	return 0;
}

bool plan_freeze_by_admission(plan_freeze_mode_t mode)
{
	return mode == PLAN_FREEZE_ADMISSION || mode == PLAN_FREEZE_ADMISSION_AND_DEVICE_TAINT;
}

bool plan_freeze_by_device_taint(plan_freeze_mode_t mode)
{
	return mode == PLAN_FREEZE_DEVICE_TAINT || mode == PLAN_FREEZE_ADMISSION_AND_DEVICE_TAINT;
}

/* spec.tenancy: namespaces allowed by name and by a label selector (both optional). */
static int plan__tenancy(const json_decode_scope_t *spec, plan_t *p)
{
	static const char *const known[] = {"allowedNamespaces", "namespaceSelector", NULL};
	char path[JSON_DECODE_PATH_MAX];
	json_decode_scope_t t;
	if (json_decode_obj(spec, "tenancy", false, &t, path, sizeof(path)) != 0 || plan__known(&t, known) != 0)
		return -1;
	return plan__str_list(&t, "allowedNamespaces", PLAN_MAX_CANARY_NAMESPACES, true, plan__valid_namespace,
			      "must be a namespace name", &p->tenancy_namespaces, &p->n_tenancy_namespaces) != 0 ||
			       plan__selector(&t, "namespaceSelector", false, "namespace", &p->tenancy_selector) != 0
		       ? -1
		       : 0;
}

static bool plan__valid_event(const char *s)
{
	return notify_event_parse(s) >= 0;
}

/*
 * A webhook's URL: http:// or https://, a host, nothing a request line cannot
 * carry (no space, no control byte). Never quoted in an error: it may carry a
 * token.
 */
static bool plan__valid_url(const char *s)
{
	size_t scheme = strncmp(s, "https://", 8) == 0 ? 8 : strncmp(s, "http://", 7) == 0 ? 7 : 0;
	if (scheme == 0 || strlen(s) > PLAN_MAX_URL_LEN || s[scheme] == '\0' || s[scheme] == '/')
		return false;
	for (const unsigned char *c = (const unsigned char *)s; *c; c++)
		if (*c <= ' ' || *c == 0x7f)
			return false;
	return true;
}

static int plan__webhook(const json_decode_scope_t *ws, void *out)
{
	plan_webhook_t *w = out;
	static const char *const known[] = {"name", "url", "format", "events", "timeout", NULL};
	static const char *const formats[] = {"JSON", "Slack", NULL};
	const char *name, *url;
	char **events = NULL;
	size_t n = 0;
	int format;
	if (plan__known(ws, known) != 0 || json_decode_str(ws, "name", true, &name) != 0)
		return -1;
	if (!plan__is_dns_label(name))
		return json_decode_fail(ws, "name", "must be a DNS label (lowercase letters, digits and '-', at most 63)");
	w->name = xstrdup(name);
	if (json_decode_str(ws, "url", true, &url) != 0)
		return -1;
	if (!plan__valid_url(url))
		return json_decode_fail(ws, "url",
					"must be an http:// or https:// URL with a host, at most %d characters, without "
					"spaces (not shown: it may carry a token)",
					PLAN_MAX_URL_LEN);
	w->url = xstrdup(url);
	if (plan__enum(ws, "format", formats, NOTIFY_FORMAT_JSON, &format) != 0 ||
	    plan__duration(ws, "timeout", 30 * 1000, PLAN_DUR_POSITIVE, &w->timeout_ms) != 0 ||
	    plan__str_list(ws, "events", NOTIFY_EVENTS, true, plan__valid_event,
			   "must be breach, freeze, poolDone, failure or awaitingApproval", &events, &n) != 0) {
		plan__free_strs(events, n);
		return -1;
	}
	w->format = (notify_format_t)format;
	w->events = n == 0 ? NOTIFY_ALL_EVENTS : 0;
	for (size_t i = 0; i < n; i++)
		w->events |= 1u << notify_event_parse(events[i]);
	plan__free_strs(events, n);
	if (w->timeout_ms > PLAN_WEBHOOK_TIMEOUT_MAX_MS)
		return json_decode_fail(ws, "timeout", "must be at most 10m");
	return 0;
}

/* spec.notifications: webhooks, each decoded, their names unique. */
static int plan__notifications(const json_decode_scope_t *spec, plan_t *p)
{
	static const char *const known[] = {"webhooks", NULL};
	char path[JSON_DECODE_PATH_MAX], where[JSON_DECODE_PATH_MAX + 32];
	json_decode_scope_t ns;
	void *webhooks = NULL;
	if (json_decode_obj(spec, "notifications", false, &ns, path, sizeof(path)) != 0 || plan__known(&ns, known) != 0)
		return -1;
	int rc = plan__objects(&ns, "webhooks", PLAN_MAX_WEBHOOKS, sizeof(plan_webhook_t), plan__webhook, &webhooks,
			       &p->n_webhooks);
	p->webhooks = webhooks;
	if (rc != 0)
		return -1;
	for (size_t i = 0; i < p->n_webhooks; i++)
		for (size_t j = 0; j < i; j++)
			if (strcmp(p->webhooks[j].name, p->webhooks[i].name) == 0) {
				json_decode_bprintf(where, sizeof(where), "%s.webhooks[%zu].name", ns.path, i);
				return json_decode_fail_at(ns.err, ns.errlen, where, "duplicate webhook name");
			}
	return 0;
}

static int plan__meta(const json_decode_scope_t *top, plan_t *p)
{
	char path[JSON_DECODE_PATH_MAX];
	json_decode_scope_t md;
	const char *name, *uid;
	const cJSON *gen;
	if (json_decode_obj(top, "metadata", true, &md, path, sizeof(path)) != 0 ||
	    json_decode_str(&md, "name", true, &name) != 0 || json_decode_str(&md, "uid", false, &uid) != 0)
		return -1;
	if (name[0] == '\0')
		return json_decode_fail(&md, "name", "empty");
	gen = json_decode_get(&md, "generation");
	if (gen != NULL) {
		if (!cJSON_IsNumber(gen))
			return json_decode_fail(&md, "generation", "not a number");
		if (!json_number_int(gen, &p->generation) || p->generation < 0)
			return json_decode_fail(&md, "generation", "not a non-negative integer");
	}
	p->name = xstrdup(name);
	p->uid = uid != NULL && uid[0] != '\0' ? xstrdup(uid) : NULL;
	return 0;
}

/* apiVersion and kind, when present (list items and watch events carry them), must be ours. */
static int plan__type(const json_decode_scope_t *top)
{
	const char *api_version, *kind;
	if (json_decode_str(top, "apiVersion", false, &api_version) != 0 ||
	    json_decode_str(top, "kind", false, &kind) != 0)
		return -1;
	if (api_version != NULL && strcmp(api_version, "drashift.io/v1alpha1") != 0) {
		char q[JSON_DECODE_QUOTE_BUF];
		json_decode_quote(q, sizeof(q), api_version);
		return json_decode_fail(top, "apiVersion", "%s is not drashift.io/v1alpha1", q);
	}
	if (kind != NULL && strcmp(kind, "MigrationPlan") != 0) {
		char q[JSON_DECODE_QUOTE_BUF];
		json_decode_quote(q, sizeof(q), kind);
		return json_decode_fail(top, "kind", "%s is not MigrationPlan", q);
	}
	return 0;
}

static int plan__decode(const json_decode_scope_t *top, plan_t *p)
{
	static const char *const known[] = {"driver",	   "extendedResource", "deviceClassNames",
					    "ownership",   "pools",	       "maxConcurrentPools",
					    "paused",	   "rollback",	       "promote",
					    "slo",	   "acknowledgedBreach", "preflight", "windows",
					    "tenancy",	   "notifications", NULL};
	static const char *const preflight_modes[] = {"Enforce", "Warn", NULL};
	char path[JSON_DECODE_PATH_MAX];
	json_decode_scope_t spec;
	const char *driver, *resource, *ack;
	int preflight;
	if (plan__type(top) != 0 || plan__meta(top, p) != 0 ||
	    json_decode_obj(top, "spec", true, &spec, path, sizeof(path)) != 0 || plan__known(&spec, known) != 0 ||
	    json_decode_str(&spec, "driver", true, &driver) != 0)
		return -1;
	if (strlen(driver) > 63 || !plan__is_dns_subdomain(driver, 63))
		return json_decode_fail(&spec, "driver",
					"must be a DRA driver name (a DNS subdomain of at most 63 characters)");
	p->driver = xstrdup(driver);
	if (json_decode_str(&spec, "extendedResource", true, &resource) != 0)
		return -1;
	if (!plan__valid_resource(resource))
		return json_decode_fail(&spec, "extendedResource",
					"must be a domain-prefixed resource name such as example.com/gpu");
	p->extended_resource = xstrdup(resource);
	if (json_decode_get(&spec, "deviceClassNames") == NULL)
		return json_decode_fail(&spec, "deviceClassNames", "missing");
	if (plan__str_list(&spec, "deviceClassNames", PLAN_MAX_DEVICE_CLASSES, true, plan__valid_device_class,
			   "must be a DeviceClass name (a DNS subdomain)", &p->device_classes, &p->n_device_classes) != 0)
		return -1;
	if (p->n_device_classes == 0)
		return json_decode_fail(&spec, "deviceClassNames", "must list at least one DeviceClass");
	if (plan__ownership(&spec, p) != 0 || plan__pools(&spec, p) != 0 ||
	    plan__selectors_avoid_ownership(&spec, p) != 0 || plan__legacy_distinct(&spec, p) != 0 ||
	    plan__int32(&spec, "maxConcurrentPools", 1, 1, INT32_MAX, &p->max_concurrent_pools) != 0 ||
	    json_decode_bool(&spec, "paused", &p->paused) != 0 || plan__rollback(&spec, p) != 0 ||
	    plan__promote(&spec, p) != 0 ||
	    plan__slo(&spec, &p->slo) != 0 || json_decode_str(&spec, "acknowledgedBreach", false, &ack) != 0 ||
	    plan__enum(&spec, "preflight", preflight_modes, PLAN_PREFLIGHT_ENFORCE, &preflight) != 0 ||
	    plan__windows(&spec, p) != 0 || plan__tenancy(&spec, p) != 0 || plan__notifications(&spec, p) != 0)
		return -1;
	p->preflight = (plan_preflight_t)preflight;
	if (ack != NULL && strlen(ack) > PLAN_MAX_BREACH_ID_LEN)
		return json_decode_fail(&spec, "acknowledgedBreach", "longer than %d characters",
					PLAN_MAX_BREACH_ID_LEN);
	p->acknowledged_breach = ack != NULL && ack[0] != '\0' ? xstrdup(ack) : NULL;
	return 0;
}

int plan_decode(const cJSON *obj, plan_t *out, char *err, size_t errlen)
{
	json_decode_scope_t top;
	memset(out, 0, sizeof(*out));
	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (json_decode_top(obj, &top, err, errlen) != 0)
		return -1;
	if (plan__decode(&top, out) != 0) {
		plan_free(out);
		return -1;
	}
	return 0;
}

/* ---- selectors and canaries ---- */

/* The value of label key on the node, or NULL when the node does not carry it. */
static const char *plan__label_of(const char *key, const projection_label_t *labels, size_t n_labels)
{
	for (size_t i = 0; i < n_labels; i++) {
		if (labels[i].key != NULL && strcmp(labels[i].key, key) == 0)
			return labels[i].value != NULL ? labels[i].value : "";
	}
	return NULL;
}

static bool plan__in(const plan_requirement_t *req, const char *value)
{
	for (size_t i = 0; i < req->n_values; i++) {
		if (strcmp(req->values[i], value) == 0)
			return true;
	}
	return false;
}

/*
 * metav1.LabelSelector semantics: every requirement holds. NotIn also holds
 * when the label is absent, as in Kubernetes. Unlike Kubernetes, an empty
 * selector matches nothing: a pool with no selector must never take a fleet.
 */
bool plan_selector_matches(const plan_selector_t *sel, const projection_node_t *node)
{
	return plan_selector_matches_labels(sel, node->labels, node->n_labels);
}

bool plan_selector_matches_labels(const plan_selector_t *sel, const projection_label_t *labels, size_t n_labels)
{
	if (sel == NULL || sel->n_reqs == 0)
		return false;
	for (size_t r = 0; r < sel->n_reqs; r++) {
		const plan_requirement_t *req = &sel->reqs[r];
		const char *v = plan__label_of(req->key, labels, n_labels);
		bool ok;
		switch (req->op) {
		case PLAN_SELECTOR_IN:
			ok = v != NULL && plan__in(req, v);
			break;
		case PLAN_SELECTOR_NOT_IN:
			ok = v == NULL || !plan__in(req, v);
			break;
		case PLAN_SELECTOR_EXISTS:
			ok = v != NULL;
			break;
		case PLAN_SELECTOR_DOES_NOT_EXIST:
			ok = v == NULL;
			break;
		default:
			ok = false;
			break;
		}
		if (!ok)
			return false;
	}
	return true;
}

/*
 * nodes, or ceil(percent * n / 100) computed without overflow, then clamped
 * to [1, n]. A pool of no nodes has no canary.
 */
size_t plan_canary_size(const plan_pool_t *pool, size_t n_nodes)
{
	size_t size;
	if (n_nodes == 0)
		return 0;
	if (pool->canary_percent > 0) {
		size_t pct = (size_t)pool->canary_percent;
		size = n_nodes / 100 * pct + ((n_nodes % 100) * pct + 99) / 100;
	} else if (pool->canary_nodes > 0) {
		size = (size_t)pool->canary_nodes;
	} else {
		size = 1;
	}
	if (size < 1)
		size = 1;
	return size > n_nodes ? n_nodes : size;
}

/* The API's limit: object names are DNS subdomains. */
#define PLAN_NAME_MAX 253
/* "-" and 16 hex digits of the hash. */
#define PLAN_HASH_SUFFIX_LEN 17

static uint64_t plan_fnv1a64(const char *s)
{
	uint64_t h = UINT64_C(14695981039346656037);
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= UINT64_C(1099511628211);
	}
	return h;
}

/*
 * Plan names are DNS subdomains of up to 253 characters, so the prefix can
 * push an object's name past the limit. Those names keep as much of the
 * plan name as fits and end in a hash of the whole name: still one object per
 * plan, still recognisable in kubectl get. The cut must not leave a '-' or
 * '.' just before the hash's '-' ("a.-x" is not a DNS subdomain).
 */
char *plan_child_name(const char *prefix, const char *plan)
{
	if (plan == NULL || plan[0] == '\0')
		return NULL;
	size_t len = strlen(plan);
	if (strlen(prefix) + len <= PLAN_NAME_MAX)
		return xasprintf("%s%s", prefix, plan);
	size_t keep = PLAN_NAME_MAX - strlen(prefix) - PLAN_HASH_SUFFIX_LEN;
	while (keep > 0 && (plan[keep - 1] == '-' || plan[keep - 1] == '.'))
		keep--;
	return xasprintf("%s%.*s-%016" PRIx64, prefix, (int)keep, plan, plan_fnv1a64(plan));
}
