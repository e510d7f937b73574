#include "preflight.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

/* Nodes named in one line at most; the line gives the count of all of them. */
#define PREFLIGHT_NAMED_NODES 5

/*
 * What every plan needs. The list and watch grants are asked too, though
 * without one the caches never sync and no plan is reconciled at all (the
 * log and /readyz say so then): the line keeps the whole need in one place.
 */
static const preflight_access_t preflight_always[] = {
	{ "list", "", "nodes", NULL, "watching the pools' nodes", -1, NULL },
	{ "watch", "", "nodes", NULL, "watching the pools' nodes", -1, NULL },
	{ "patch", "", "nodes", NULL, "flipping ownership labels and cordoning", -1, NULL },
	{ "list", "", "pods", NULL, "seeing who uses a node's devices", -1, NULL },
	{ "watch", "", "pods", NULL, "seeing who uses a node's devices", -1, NULL },
	{ "list", "resource.k8s.io", "resourceclaims", NULL, "the SLO gate and drains", -1, NULL },
	{ "watch", "resource.k8s.io", "resourceclaims", NULL, "the SLO gate and drains", -1, NULL },
	{ "list", "resource.k8s.io", "resourceslices", NULL, "verifying the driver's devices", -1, NULL },
	{ "watch", "resource.k8s.io", "resourceslices", NULL, "verifying the driver's devices", -1, NULL },
	{ "get", "resource.k8s.io", "deviceclasses", NULL, "preflight's DeviceClass check", -1, NULL },
	{ "list", "apps", "daemonsets", NULL, "preflight's DaemonSet check", -1, NULL },
	{ "patch", "drashift.io", "migrationplans/status", NULL, "recording the plan's progress", -1, NULL },
	{ "patch", "drashift.io", "migrationplans", NULL, "the plan's finalizer", -1, NULL },
	{ "create", "", "events", "default", "Events on nodes and the plan", -1, NULL },
	{ "list", "", "events", NULL, "the kubelet's driver failure Events", -1, NULL },
	{ "watch", "", "events", NULL, "the kubelet's driver failure Events", -1, NULL },
};
static const preflight_access_t preflight_evict[] = {
	{ "create", "", "pods/eviction", NULL, "a pool's drain policy Evict", -1, NULL },
};
static const preflight_access_t preflight_parameter[] = {
	{ "create", "", "configmaps", NULL, "the freeze parameter (freezeMode Admission)", -1, NULL },
	{ "patch", "", "configmaps", NULL, "the freeze parameter (freezeMode Admission)", -1, NULL },
};
static const preflight_access_t preflight_taint[] = {
	{ "create", "resource.k8s.io", "devicetaintrules", NULL, "the freeze's DeviceTaintRule", -1, NULL },
	{ "patch", "resource.k8s.io", "devicetaintrules", NULL, "the freeze's DeviceTaintRule", -1, NULL },
	{ "delete", "resource.k8s.io", "devicetaintrules", NULL, "lifting the freeze's DeviceTaintRule", -1, NULL },
};

static size_t preflight_add(preflight_access_t *out, size_t n, const preflight_access_t *from, size_t count,
			    const char *ns)
{
	for (size_t i = 0; i < count; i++) {
		out[n] = from[i];
		if (ns)
			out[n].namespace = ns;
		n++;
	}
	return n;
}

#define PREFLIGHT_COUNT(a) (sizeof(a) / sizeof((a)[0]))

size_t preflight_accesses(const plan_t *plan, const char *freeze_ns, preflight_access_t *out)
{
	size_t n = preflight_add(out, 0, preflight_always, PREFLIGHT_COUNT(preflight_always), NULL);
	bool evict = false;
	for (size_t i = 0; i < plan->n_pools; i++)
		evict |= plan->pools[i].drain_policy == PLAN_DRAIN_EVICT;
	if (evict)
		n = preflight_add(out, n, preflight_evict, PREFLIGHT_COUNT(preflight_evict), NULL);
	if (plan_freeze_by_admission(plan->slo.freeze_mode))
		n = preflight_add(out, n, preflight_parameter, PREFLIGHT_COUNT(preflight_parameter), freeze_ns);
	if (plan_freeze_by_device_taint(plan->slo.freeze_mode))
		n = preflight_add(out, n, preflight_taint, PREFLIGHT_COUNT(preflight_taint), NULL);
	return n;
}

/* ---- CEL text -------------------------------------------------------------- */

static const char *preflight_skip_space(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

/* A quoted literal without escapes at p: its contents in [*from, *to); returns the end, or NULL. */
static const char *preflight_literal(const char *p, const char *end, const char **from, const char **to)
{
	if (p >= end || (*p != '"' && *p != '\''))
		return NULL;
	char q = *p++;
	*from = p;
	while (p < end && *p != q) {
		if (*p == '\\')
			return NULL;
		p++;
	}
	if (p >= end)
		return NULL;
	*to = p;
	return p + 1;
}

/* Exactly `device.driver == "x"` or `"x" == device.driver` in [p, end), outer parentheses allowed. */
static char *preflight_driver_term(const char *p, const char *end)
{
	p = preflight_skip_space(p, end);
	while (end > p && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\n' || end[-1] == '\r'))
		end--;
	while (end - p >= 2 && *p == '(' && end[-1] == ')') {
		p = preflight_skip_space(p + 1, end - 1);
		end--;
		while (end > p && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\n' || end[-1] == '\r'))
			end--;
	}
	static const char field[] = "device.driver";
	const char *from, *to, *q;
	size_t flen = sizeof(field) - 1;
	if ((size_t)(end - p) > flen && memcmp(p, field, flen) == 0) {
		q = preflight_skip_space(p + flen, end);
		if (end - q < 2 || q[0] != '=' || q[1] != '=')
			return NULL;
		q = preflight_literal(preflight_skip_space(q + 2, end), end, &from, &to);
		return q && preflight_skip_space(q, end) == end ? xstrndup(from, (size_t)(to - from)) : NULL;
	}
	q = preflight_literal(p, end, &from, &to);
	if (q == NULL)
		return NULL;
	q = preflight_skip_space(q, end);
	if (end - q < 2 || q[0] != '=' || q[1] != '=')
		return NULL;
	q = preflight_skip_space(q + 2, end);
	if ((size_t)(end - q) != flen || memcmp(q, field, flen) != 0)
		return NULL;
	return xstrndup(from, (size_t)(to - from));
}

/*
 * Walk the expression outside literals. With split false: whether it holds
 * no || and no ?: (and no literal drashift cannot read). With split true:
 * the first top-level && conjunct that is a driver term, in *driver.
 */
static bool preflight_cel_walk(const char *s, const char *end, bool split, char **driver)
{
	int depth = 0;
	const char *term = s;
	for (const char *p = s; p <= end; p++) {
		if (p < end && (*p == '"' || *p == '\'')) {
			const char *from, *to, *after = preflight_literal(p, end, &from, &to);
			if (after == NULL)
				return false; /* an escape or an open literal */
			p = after - 1;
			continue;
		}
		if (!split) {
			if (p < end && (*p == '?' || (*p == '|' && p + 1 < end && p[1] == '|')))
				return false;
			continue;
		}
		if (p < end && *p == '(')
			depth++;
		else if (p < end && *p == ')')
			depth--;
		if (p < end && !(depth == 0 && *p == '&' && p + 1 < end && p[1] == '&'))
			continue;
		if ((*driver = preflight_driver_term(term, p)) != NULL)
			return true;
		if (p == end)
			break;
		term = ++p + 1;
	}
	return !split;
}

preflight_cel_t preflight_cel_driver(const char *expression, char **driver)
{
	*driver = NULL;
	const char *end = expression + strlen(expression);
	if (preflight_cel_walk(expression, end, false, driver) && preflight_cel_walk(expression, end, true, driver))
		return PREFLIGHT_CEL_DRIVER;
	return PREFLIGHT_CEL_UNDECIDED;
}

/* ---- DaemonSets --------------------------------------------------------------- */

static const cJSON *preflight_path(const cJSON *obj, const char *const *keys)
{
	for (; *keys && obj; keys++)
		obj = cJSON_GetObjectItemCaseSensitive(obj, *keys);
	return obj;
}

/* A required term's verdict on key=value: SELECTS when it has key In [value] (only that value). */
static preflight_ds_t preflight_term(const cJSON *term, const char *key, const char *value)
{
	preflight_ds_t v = PREFLIGHT_DS_NO;
	const cJSON *e;
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(term, "matchExpressions"))
	{
		const cJSON *k = cJSON_GetObjectItemCaseSensitive(e, "key");
		const cJSON *op = cJSON_GetObjectItemCaseSensitive(e, "operator");
		const cJSON *values = cJSON_GetObjectItemCaseSensitive(e, "values");
		if (!cJSON_IsString(k) || strcmp(k->valuestring, key) != 0)
			continue;
		v = PREFLIGHT_DS_MENTIONS;
		if (!cJSON_IsString(op) || strcmp(op->valuestring, "In") != 0 || cJSON_GetArraySize(values) == 0)
			continue;
		bool only = true;
		const cJSON *x;
		cJSON_ArrayForEach(x, values)
		{
			only &= cJSON_IsString(x) && strcmp(x->valuestring, value) == 0;
		}
		if (only)
			return PREFLIGHT_DS_SELECTS;
	}
	return v;
}

preflight_ds_t preflight_daemonset_selects(const cJSON *daemonset, const char *key, const char *value)
{
	static const char *const pod_spec[] = { "spec", "template", "spec", NULL };
	static const char *const terms_path[] = { "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution",
						  "nodeSelectorTerms", NULL };
	const cJSON *spec = preflight_path(daemonset, pod_spec);
	const cJSON *sel = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(spec, "nodeSelector"), key);
	if (cJSON_IsString(sel) && strcmp(sel->valuestring, value) == 0)
		return PREFLIGHT_DS_SELECTS;
	preflight_ds_t v = sel ? PREFLIGHT_DS_MENTIONS : PREFLIGHT_DS_NO;
	const cJSON *terms = preflight_path(spec, terms_path);
	size_t n = 0, selecting = 0;
	const cJSON *t;
	cJSON_ArrayForEach(t, terms)
	{
		preflight_ds_t tv = preflight_term(t, key, value);
		n++;
		selecting += tv == PREFLIGHT_DS_SELECTS;
		if (tv != PREFLIGHT_DS_NO && v == PREFLIGHT_DS_NO)
			v = PREFLIGHT_DS_MENTIONS;
	}
	/* Terms are ORed: every one must demand the value. */
	if (n > 0 && selecting == n)
		return PREFLIGHT_DS_SELECTS;
	return v;
}

/* ---- the checks --------------------------------------------------------------- */

static void preflight_line(preflight_result_t *out, const char *check, preflight_verdict_t verdict, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void preflight_line(preflight_result_t *out, const char *check, preflight_verdict_t verdict, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int len = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *msg = xmalloc((size_t)(len > 0 ? len : 0) + 1);
	va_start(ap, fmt);
	vsnprintf(msg, (size_t)(len > 0 ? len : 0) + 1, fmt, ap);
	va_end(ap);
	out->lines = xrealloc(out->lines, (out->n_lines + 1) * sizeof(*out->lines));
	out->lines[out->n_lines++] = (preflight_line_t){ .check = check, .verdict = verdict, .message = msg };
}

static void preflight_check_api(const preflight_input_t *in, preflight_result_t *out)
{
	if (!in->v1.read)
		preflight_line(out, "api", PREFLIGHT_FAIL, "could not read the discovery of resource.k8s.io/v1: %s",
			       in->v1.error ? in->v1.error : "no answer");
	else if (!in->v1_served)
		preflight_line(out, "api", PREFLIGHT_FAIL,
			       "resource.k8s.io/v1 (ResourceClaims, ResourceSlices) is not served: drashift needs Kubernetes "
			       "1.34 or later with the resource.k8s.io/v1 API enabled on the API server (--runtime-config)");
	else
		preflight_line(out, "api", PREFLIGHT_PASS, "resource.k8s.io/v1 is served");
}

static void preflight_check_classes(const preflight_input_t *in, preflight_result_t *out)
{
	const plan_t *plan = in->plan;
	for (size_t i = 0; i < plan->n_device_classes; i++) {
		const char *name = plan->device_classes[i];
		const cJSON *dc = in->classes[i];
		if (!in->class_reads[i].read) {
			preflight_line(out, "deviceClasses", PREFLIGHT_FAIL, "DeviceClass %s could not be read: %s", name,
				       in->class_reads[i].error ? in->class_reads[i].error : "no answer");
			continue;
		}
		if (dc == NULL) {
			preflight_line(out, "deviceClasses", PREFLIGHT_FAIL,
				       "DeviceClass %s does not exist: create it with a selector device.driver == \"%s\", "
				       "or fix spec.deviceClassNames",
				       name, plan->driver);
			continue;
		}
		static const char *const sel_path[] = { "spec", "selectors", NULL };
		const cJSON *sels = preflight_path(dc, sel_path);
		char *other = NULL;
		bool requires_plan_driver = false, undecided = false;
		size_t n = 0;
		const cJSON *s;
		cJSON_ArrayForEach(s, sels)
		{
			const cJSON *expr = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(s, "cel"), "expression");
			n++;
			char *driver = NULL;
			if (!cJSON_IsString(expr) || preflight_cel_driver(expr->valuestring, &driver) == PREFLIGHT_CEL_UNDECIDED) {
				undecided = true;
				continue;
			}
			if (strcmp(driver, plan->driver) == 0)
				requires_plan_driver = true;
			else if (other == NULL)
				other = xstrdup(driver);
			free(driver);
		}
		/* Selectors are ANDed: one demanding another driver leaves none of the plan's devices. */
		if (other)
			preflight_line(out, "deviceClasses", PREFLIGHT_FAIL,
				       "DeviceClass %s selects devices of driver %s, not %s: change its selector to "
				       "device.driver == \"%s\", or fix spec.driver or spec.deviceClassNames",
				       name, other, plan->driver, plan->driver);
		else if (requires_plan_driver)
			preflight_line(out, "deviceClasses", PREFLIGHT_PASS, "DeviceClass %s selects driver %s%s", name,
				       plan->driver,
				       undecided ? " (its other selectors narrow that; drashift does not evaluate them)" : "");
		else if (n == 0)
			preflight_line(out, "deviceClasses", PREFLIGHT_WARN,
				       "DeviceClass %s has no selector, so it matches devices of every driver, not only %s: "
				       "add the selector device.driver == \"%s\"",
				       name, plan->driver, plan->driver);
		else
			preflight_line(out, "deviceClasses", PREFLIGHT_WARN,
				       "DeviceClass %s: whether its CEL selectors pick driver %s cannot be told from their "
				       "text (drashift reads only device.driver == \"...\" alone or joined by &&); check "
				       "it, or add device.driver == \"%s\"",
				       name, plan->driver, plan->driver);
		free(other);
	}
}

static void preflight_check_owner(const preflight_input_t *in, preflight_result_t *out, const char *owner,
				  const plan_label_t *label)
{
	const cJSON *ds;
	char *found = NULL, *mentions = NULL;
	cJSON_ArrayForEach(ds, in->daemonsets)
	{
		preflight_ds_t v = preflight_daemonset_selects(ds, label->key, label->enabled);
		if (v == PREFLIGHT_DS_NO)
			continue;
		static const char *const ns_path[] = { "metadata", "namespace", NULL };
		static const char *const name_path[] = { "metadata", "name", NULL };
		const cJSON *ns = preflight_path(ds, ns_path), *name = preflight_path(ds, name_path);
		char **into = v == PREFLIGHT_DS_SELECTS ? &found : &mentions;
		if (*into == NULL)
			*into = xasprintf("%s/%s", cJSON_IsString(ns) ? ns->valuestring : "",
					  cJSON_IsString(name) ? name->valuestring : "");
	}
	if (found)
		preflight_line(out, "daemonSets", PREFLIGHT_PASS, "the %s runs where %s=%s: DaemonSet %s", owner, label->key,
			       label->enabled, found);
	else if (mentions)
		preflight_line(out, "daemonSets", PREFLIGHT_FAIL,
			       "DaemonSet %s selects on %s but also runs where it is not %s: give the %s's pod template "
			       "nodeSelector {%s: \"%s\"} (or a required nodeAffinity term %s In [%s] in every term)",
			       mentions, label->key, label->enabled, owner, label->key, label->enabled, label->key,
			       label->enabled);
	else
		preflight_line(out, "daemonSets", PREFLIGHT_FAIL,
			       "no DaemonSet runs only where %s=%s, so flipping the label starts or stops no %s: give the "
			       "%s's DaemonSet nodeSelector {%s: \"%s\"} (or a required nodeAffinity term %s In [%s])",
			       label->key, label->enabled, owner, owner, label->key, label->enabled, label->key, label->enabled);
	free(found);
	free(mentions);
}

static void preflight_check_daemonsets(const preflight_input_t *in, preflight_result_t *out)
{
	if (!in->daemonsets_read.read) {
		preflight_line(out, "daemonSets", PREFLIGHT_FAIL, "could not list DaemonSets: %s",
			       in->daemonsets_read.error ? in->daemonsets_read.error : "no answer");
		return;
	}
	preflight_check_owner(in, out, "device plugin", &in->plan->device_plugin_label);
	preflight_check_owner(in, out, "DRA driver", &in->plan->dra_label);
}

static void preflight_check_taint_rules(const preflight_input_t *in, preflight_result_t *out)
{
	if (!plan_freeze_by_device_taint(in->plan->slo.freeze_mode))
		preflight_line(out, "deviceTaintRules", PREFLIGHT_PASS, "not needed: spec.slo.freezeMode is Admission");
	else if (in->taint_rules_version && !in->taint_rules.read)
		preflight_line(out, "deviceTaintRules", PREFLIGHT_FAIL, "could not read the discovery of %s: %s",
			       in->taint_rules_version, in->taint_rules.error ? in->taint_rules.error : "no answer");
	else if (!in->taint_rules_version || !in->taint_rules_served)
		preflight_line(out, "deviceTaintRules", PREFLIGHT_FAIL,
			       "spec.slo.freezeMode needs DeviceTaintRules, and %s%s serves none: enable the "
			       "DRADeviceTaintRules feature gate and its API on the API server (on 1.36 also "
			       "--runtime-config=resource.k8s.io/v1beta2=true), then restart drashift (it reads the API "
			       "versions at start-up), or set freezeMode: Admission",
			       in->taint_rules_version ? in->taint_rules_version : "the cluster",
			       in->taint_rules_version ? " no longer" : " (as drashift found it at start-up)");
	else
		preflight_line(out, "deviceTaintRules", PREFLIGHT_PASS, "%s DeviceTaintRules are served",
			       in->taint_rules_version);
}

static void preflight_check_access(const preflight_input_t *in, preflight_result_t *out)
{
	size_t bad = 0;
	for (size_t i = 0; i < in->n_access; i++) {
		const preflight_access_t *a = &in->access[i];
		if (a->allowed == 1)
			continue;
		bad++;
		char where[300];
		snprintf(where, sizeof(where), "%s%s%s", a->resource, a->group[0] ? "." : "", a->group);
		if (a->allowed == 0)
			preflight_line(out, "access", PREFLIGHT_FAIL,
				       "the ServiceAccount may not %s %s%s%s (needed for %s): grant it in drashift's "
				       "ClusterRole (manifests/rbac.yaml, or the Helm chart)",
				       a->verb, where, a->namespace ? " in namespace " : "", a->namespace ? a->namespace : "",
				       a->why);
		else
			preflight_line(out, "access", PREFLIGHT_FAIL, "could not ask whether the ServiceAccount may %s %s: %s",
				       a->verb, where, a->error ? a->error : "no answer");
	}
	if (bad == 0)
		preflight_line(out, "access", PREFLIGHT_PASS, "the ServiceAccount may do all %zu things the plan needs",
			       in->n_access);
}

/* "a-1, a-2, ... (and 3 more)" of the names picked by want, into a fresh string. */
static char *preflight_node_list(const preflight_pool_t *p, size_t count, bool (*want)(const preflight_pool_t *, size_t))
{
	size_t cap = 64, len = 0, named = 0;
	char *s = xmalloc(cap);
	s[0] = '\0';
	for (size_t m = 0; m < p->n_members && named < PREFLIGHT_NAMED_NODES; m++) {
		if (!want(p, m))
			continue;
		const char *name = p->members[m].node->meta.name;
		size_t need = len + strlen(name) + 3;
		if (need > cap) {
			cap = need * 2;
			s = xrealloc(s, cap);
		}
		len += (size_t)snprintf(s + len, cap - len, "%s%s", named ? ", " : "", name);
		named++;
	}
	if (count > named) {
		char more[48];
		snprintf(more, sizeof(more), " and %zu more", count - named);
		s = xrealloc(s, len + strlen(more) + 1);
		memcpy(s + len, more, strlen(more) + 1);
	}
	return s;
}

/* At rest on the device plugin's side without its label; a node in a handover is checked by its handover. */
static bool preflight_unlabelled(const preflight_pool_t *p, size_t m)
{
	return p->members[m].state.step == HANDOVER_LEGACY && !p->members[m].state.plugin_enabled;
}

/* The device plugin advertises none of the extended resource: its count is unknown (see handover.c). */
static bool preflight_no_devices(const preflight_pool_t *p, size_t m)
{
	const handover_ads_t *a = &p->ads[m];
	return (a->allocatable_known ? a->allocatable : a->capacity) <= 0;
}

static size_t preflight_count(const preflight_pool_t *p, bool (*want)(const preflight_pool_t *, size_t))
{
	size_t n = 0;
	for (size_t m = 0; m < p->n_members; m++)
		n += want(p, m);
	return n;
}

static void preflight_check_nodes(const preflight_input_t *in, preflight_result_t *out)
{
	const plan_t *plan = in->plan;
	const plan_label_t *label = &plan->device_plugin_label;
	for (size_t i = 0; i < plan->n_pools; i++) {
		const preflight_pool_t *p = &in->pools[i];
		const char *pool = plan->pools[i].name;
		if (p->started) {
			preflight_line(out, "nodes", PREFLIGHT_PASS,
				       "pool %s has started: each of its nodes is checked by its own handover", pool);
			continue;
		}
		if (plan->rollback_all || plan->pools[i].rollback) {
			preflight_line(out, "nodes", PREFLIGHT_PASS,
				       "pool %s is rolled back: its nodes go to the device plugin, not from it", pool);
			continue;
		}
		if (p->n_members == 0) {
			preflight_line(out, "nodes", PREFLIGHT_FAIL,
				       "pool %s: no node matches spec.pools[%zu].nodeSelector: label the pool's nodes, or fix "
				       "the selector",
				       pool, i);
			continue;
		}
		size_t unlabelled = preflight_count(p, preflight_unlabelled);
		size_t empty = preflight_count(p, preflight_no_devices);
		if (unlabelled > 0) {
			char *names = preflight_node_list(p, unlabelled, preflight_unlabelled);
			preflight_line(out, "nodes", PREFLIGHT_FAIL,
				       "pool %s: %zu of %zu node(s) do not carry %s=%s (%s): the device plugin must own every "
				       "node before the migration: label them (kubectl label node NAME %s=%s)",
				       pool, unlabelled, p->n_members, label->key, label->enabled, names, label->key,
				       label->enabled);
			free(names);
		}
		if (empty > 0) {
			char *names = preflight_node_list(p, empty, preflight_no_devices);
			preflight_line(out, "nodes", PREFLIGHT_WARN,
				       "pool %s: %zu node(s) advertise no %s (%s): their device plugin has not reported (or "
				       "crashed), so their device count is unknown and their handover verifies the driver's "
				       "devices on their own; check the device plugin on them",
				       pool, empty, plan->extended_resource, names);
			free(names);
		}
		if (unlabelled == 0 && empty == 0)
			preflight_line(out, "nodes", PREFLIGHT_PASS, "pool %s: all %zu node(s) are owned by the device plugin",
				       pool, p->n_members);
	}
}

static void preflight_check_preemption(const preflight_input_t *in, preflight_result_t *out)
{
	const plan_t *plan = in->plan;
	bool any = false;
	for (size_t i = 0; i < plan->n_pools; i++) {
		const preflight_pool_t *p = &in->pools[i];
		if (p->preempting_pods == 0)
			continue;
		any = true;
		preflight_line(out, "preemption", PREFLIGHT_WARN,
			       "pool %s: %zu pod(s) with a preempting priority request %s (e.g. %s): the scheduler does "
			       "not preempt for DRA devices (docs/dra-facts.md), so on migrated nodes such pods wait for "
			       "a free device instead of evicting lower-priority pods; plan capacity for them",
			       plan->pools[i].name, p->preempting_pods, plan->extended_resource,
			       p->preempting_example ? p->preempting_example : "?");
	}
	if (!any)
		preflight_line(out, "preemption", PREFLIGHT_PASS, "no pod on the pools' nodes relies on preemption for %s",
			       plan->extended_resource);
}

static const char *const preflight_verdict_names[] = {
	[PREFLIGHT_PASS] = "Pass",
	[PREFLIGHT_WARN] = "Warn",
	[PREFLIGHT_FAIL] = "Fail",
};

/* The head, then each line (all, or those that did not pass), into a fresh string of at most len bytes. */
static char *preflight_join(const preflight_result_t *out, const char *head, size_t len, bool all)
{
	char *s = xmalloc(len);
	size_t at = (size_t)snprintf(s, len, "%s", head);
	for (size_t i = 0; i < out->n_lines; i++)
		if (all || out->lines[i].verdict != PREFLIGHT_PASS)
			at += (size_t)snprintf(s + at, len - at, "\n%s %s: %s", preflight_verdict_names[out->lines[i].verdict],
					       out->lines[i].check, out->lines[i].message);
	return s;
}

void preflight_decide(const preflight_input_t *in, preflight_result_t *out)
{
	memset(out, 0, sizeof(*out));
	bool warn_only = in->plan->preflight == PLAN_PREFLIGHT_WARN;
	if (!in->gathered) {
		out->reason = "Checking";
		out->blocks = !warn_only;
		out->message = xstrdup(warn_only ? "checking the cluster (spec.preflight is Warn: pools do not wait for it)"
						 : "checking the cluster; no pool starts until the checks pass");
		return;
	}
	preflight_check_api(in, out);
	preflight_check_classes(in, out);
	preflight_check_daemonsets(in, out);
	preflight_check_taint_rules(in, out);
	preflight_check_access(in, out);
	preflight_check_nodes(in, out);
	preflight_check_preemption(in, out);

	size_t failed = 0, warned = 0, len = 0;
	for (size_t i = 0; i < out->n_lines; i++) {
		failed += out->lines[i].verdict == PREFLIGHT_FAIL;
		warned += out->lines[i].verdict == PREFLIGHT_WARN;
		len += strlen(out->lines[i].message) + strlen(out->lines[i].check) + 16;
	}
	out->passed = failed == 0;
	out->blocks = !out->passed && !warn_only;
	out->reason = out->passed ? (warned ? "PassedWithWarnings" : "Passed") : warn_only ? "FailedIgnored" : "Failed";
	char head[200];
	if (out->passed)
		snprintf(head, sizeof(head), "%zu check(s) passed%s", out->n_lines, warned ? ", with warnings" : "");
	else
		snprintf(head, sizeof(head), "%zu of %zu check(s) failed: %s", failed, out->n_lines,
			 warn_only ? "spec.preflight is Warn, so pools start anyway"
				   : "no pool starts until they pass (or spec.preflight: Warn); checked again every few seconds");
	len += strlen(head) + 1;
	out->message = preflight_join(out, head, len, true);
	out->problems = preflight_join(out, head, len, false);
}

void preflight_result_free(preflight_result_t *r)
{
	for (size_t i = 0; i < r->n_lines; i++)
		free(r->lines[i].message);
	free(r->lines);
	free(r->message);
	free(r->problems);
	memset(r, 0, sizeof(*r));
}

bool preflight_pool_may_start(const preflight_result_t *r, bool recorded_pass, bool started)
{
	return started || recorded_pass || !r->blocks;
}
