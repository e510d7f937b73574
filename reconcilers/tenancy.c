/* The tenant boundary of a plan's DeviceClasses; see tenancy.h. */
#include "tenancy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

const char *tenancy_stage_name(tenancy_stage_t stage)
{
	switch (stage) {
	case TENANCY_CANARY:
		return "Canary";
	case TENANCY_MIGRATING:
		return "Migrating";
	default:
		return "Open";
	}
}

/* Expanded: its tenants may already use the classes. */
static bool tenancy_past_canary(const tenancy_pool_t *p)
{
	return p->phase == POOL_EXPANDING || p->phase == POOL_DRA || (p->n_canary > 0 && p->n_moved > p->n_canary);
}

static bool tenancy_in_canary(const tenancy_pool_t *p)
{
	return !tenancy_past_canary(p) && (p->phase == POOL_CANARY || p->n_moved > 0);
}

/* Append s to list (sized for every candidate) unless it is there already. */
static void tenancy_add(const char **list, size_t *n, const char *s)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp(list[i], s) == 0)
			return;
	list[(*n)++] = s;
}

void tenancy_decide(const plan_t *plan, const tenancy_pool_t *pools, tenancy_t *out)
{
	memset(out, 0, sizeof(*out));
	bool all_dra = plan->n_pools > 0, any_past = false;
	size_t max_ns = plan->n_tenancy_namespaces;
	for (size_t i = 0; i < plan->n_pools; i++) {
		all_dra &= pools[i].phase == POOL_DRA;
		any_past |= tenancy_past_canary(&pools[i]);
		max_ns += plan->pools[i].n_canary_namespaces;
	}
	if (all_dra)
		return;
	out->namespaces = xcalloc(max_ns + 1, sizeof(*out->namespaces));
	out->pools = xcalloc(plan->n_pools + 1, sizeof(*out->pools));
	for (size_t i = 0; i < plan->n_pools && !any_past; i++) {
		const plan_pool_t *pool = &plan->pools[i];
		if (!tenancy_in_canary(&pools[i]) || pool->n_canary_namespaces == 0)
			continue;
		out->pools[out->n_pools++] = pool->name;
		for (size_t k = 0; k < pool->n_canary_namespaces; k++)
			tenancy_add(out->namespaces, &out->n_namespaces, pool->canary_namespaces[k]);
	}
	if (out->n_pools > 0) {
		out->stage = TENANCY_CANARY;
		return;
	}
	for (size_t k = 0; k < plan->n_tenancy_namespaces; k++)
		tenancy_add(out->namespaces, &out->n_namespaces, plan->tenancy_namespaces[k]);
	bool tenancy = out->n_namespaces > 0 || plan->tenancy_selector.n_reqs > 0;
	/* Canary tenants keep their access as the pools expand. */
	for (size_t i = 0; i < plan->n_pools && tenancy; i++)
		for (size_t k = 0; k < plan->pools[i].n_canary_namespaces; k++)
			tenancy_add(out->namespaces, &out->n_namespaces, plan->pools[i].canary_namespaces[k]);
	out->selector = plan->tenancy_selector.n_reqs > 0 ? &plan->tenancy_selector : NULL;
	out->stage = tenancy ? TENANCY_MIGRATING : TENANCY_OPEN;
}

void tenancy_free(tenancy_t *t)
{
	free(t->namespaces);
	free(t->pools);
	memset(t, 0, sizeof(*t));
}

bool tenancy_restricts(const plan_t *plan)
{
	bool restricts = plan->n_tenancy_namespaces > 0 || plan->tenancy_selector.n_reqs > 0;
	for (size_t i = 0; i < plan->n_pools && !restricts; i++)
		restricts = plan->pools[i].n_canary_namespaces > 0;
	return restricts;
}

const char *tenancy_hold(const plan_t *plan, tenancy_param_t param)
{
	if (!tenancy_restricts(plan) || param == TENANCY_PARAM_WRITTEN)
		return NULL;
	return param == TENANCY_PARAM_FAILED
		       ? "the tenant boundary's parameter could not be written (the TenantBoundary condition says why)"
		       : "the tenant boundary's parameter is being written";
}

bool tenancy_admits(const tenancy_t *t, const char *ns, const projection_label_t *labels, size_t n_labels)
{
	if (t->stage == TENANCY_OPEN)
		return true;
	for (size_t i = 0; i < t->n_namespaces; i++)
		if (strcmp(t->namespaces[i], ns) == 0)
			return true;
	return t->selector != NULL && plan_selector_matches_labels(t->selector, labels, n_labels);
}

char *tenancy_selector_text(const plan_selector_t *sel)
{
	static const char *const ops[] = {
		[PLAN_SELECTOR_IN] = "In",
		[PLAN_SELECTOR_NOT_IN] = "NotIn",
		[PLAN_SELECTOR_EXISTS] = "Exists",
		[PLAN_SELECTOR_DOES_NOT_EXIST] = "DoesNotExist",
	};
	size_t len = 1;
	for (size_t r = 0; sel && r < sel->n_reqs; r++) {
		len += strlen(sel->reqs[r].key) + strlen(ops[sel->reqs[r].op]) + 3;
		for (size_t v = 0; v < sel->reqs[r].n_values; v++)
			len += strlen(sel->reqs[r].values[v]) + 1;
	}
	char *out = xmalloc(len), *p = out;
	for (size_t r = 0; sel && r < sel->n_reqs; r++) {
		const plan_requirement_t *req = &sel->reqs[r];
		p += snprintf(p, len - (size_t)(p - out), "%s%s %s", r > 0 ? ";" : "", req->key, ops[req->op]);
		for (size_t v = 0; v < req->n_values; v++)
			p += snprintf(p, len - (size_t)(p - out), "%c%s", v == 0 ? ' ' : ',', req->values[v]);
	}
	*p = '\0';
	return out;
}
