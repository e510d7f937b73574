#include "capacity.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

/* ---- the DRA side ---- */

/* The newest generation of a pool among the slices, and how many slices it should have. */
static int64_t capacity_newest(const projection_slice_t *const *slices, size_t n, const char *pool, int64_t *expected)
{
	int64_t generation = -1;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(slices[i]->pool, pool) != 0 || slices[i]->pool_generation <= generation)
			continue;
		generation = slices[i]->pool_generation;
		*expected = slices[i]->resource_slice_count;
	}
	return generation;
}

static int capacity_cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void capacity_count_slices(const projection_slice_t *const *slices, size_t n, capacity_slices_t *out)
{
	*out = (capacity_slices_t){ .present = n > 0, .complete = n > 0 };
	for (size_t i = 0; i < n; i++) {
		/* Each pool once: at its first slice. */
		size_t first = 0;
		while (strcmp(slices[first]->pool, slices[i]->pool) != 0)
			first++;
		if (first != i)
			continue;
		int64_t expected = 0, seen = 0;
		int64_t generation = capacity_newest(slices, n, slices[i]->pool, &expected);
		size_t n_sets = 0, cap = 0;
		const char **sets = NULL;
		for (size_t j = i; j < n; j++) {
			const projection_slice_t *s = slices[j];
			if (strcmp(s->pool, slices[i]->pool) != 0 || s->pool_generation != generation)
				continue;
			seen++;
			out->listed += (int64_t)s->n_devices;
			for (size_t d = 0; d < s->n_devices; d++) {
				if (s->counter_sets == NULL || s->counter_sets[d] == NULL) {
					out->physical++;
					continue;
				}
				if (n_sets == cap) {
					cap = cap ? 2 * cap : 16;
					sets = xrealloc(sets, cap * sizeof(*sets));
				}
				sets[n_sets++] = s->counter_sets[d];
			}
		}
		if (n_sets > 1)
			qsort(sets, n_sets, sizeof(*sets), capacity_cmp_str);
		for (size_t k = 0; k < n_sets; k++)
			out->physical += k == 0 || strcmp(sets[k], sets[k - 1]) != 0;
		free(sets);
		if (seen != expected)
			out->complete = false;
	}
}

const char *capacity_physical_key(const projection_slice_t *const *slices, size_t n, const char *pool,
				  const char *device)
{
	int64_t expected = 0;
	int64_t generation = capacity_newest(slices, n, pool, &expected);
	for (size_t i = 0; i < n; i++) {
		const projection_slice_t *s = slices[i];
		if (strcmp(s->pool, pool) != 0 || s->pool_generation != generation)
			continue;
		for (size_t d = 0; d < s->n_devices; d++)
			if (strcmp(s->devices[d], device) == 0)
				return s->counter_sets && s->counter_sets[d] ? s->counter_sets[d] : s->devices[d];
	}
	return NULL;
}

/* ---- the device-plugin side ---- */

size_t capacity_legacy_count(const plan_pool_t *pool)
{
	return 1 + pool->n_legacy_resources;
}

const char *capacity_legacy_name(const plan_t *plan, const plan_pool_t *pool, size_t i)
{
	return i == 0 ? plan->extended_resource : pool->legacy_resources[i - 1];
}

int64_t capacity_legacy_sum(const plan_t *plan, const plan_pool_t *pool, const projection_quantity_t *q, size_t n,
			    bool *known)
{
	int64_t sum = 0;
	*known = false;
	for (size_t i = 0; i < capacity_legacy_count(pool); i++) {
		int64_t count = 0;
		if (projection_quantity_find(q, n, capacity_legacy_name(plan, pool, i), &count)) {
			*known = true;
			sum += count;
		}
	}
	return sum;
}

static const char *capacity_label(const projection_node_t *node, const char *key)
{
	return projection_label_find(node->labels, node->n_labels, key);
}

/* A label <base><suffix> as a non-negative integer; -1 when absent, -2 when unreadable. */
static int64_t capacity_label_int(const projection_node_t *node, const char *base, const char *suffix)
{
	char *key = xasprintf("%s%s", base, suffix);
	const char *v = capacity_label(node, key);
	free(key);
	if (v == NULL)
		return -1;
	char *end;
	errno = 0;
	long long n = strtoll(v, &end, 10);
	return errno != 0 || *end != '\0' || end == v || n < 0 ? -2 : n;
}

/*
 * GPU Feature Discovery names its labels after the resource
 * (nvidia.com/gpu.replicas, nvidia.com/gpu.count) and keeps them under the
 * plain name when the plugin renames a shared resource to <name>.shared.
 */
static char *capacity_label_base(const char *resource)
{
	size_t n = strlen(resource);
	static const char shared[] = ".shared";
	if (n > sizeof(shared) - 1 && strcmp(resource + n - (sizeof(shared) - 1), shared) == 0)
		n -= sizeof(shared) - 1;
	return xstrndup(resource, n);
}

/* Units of the pool's legacy resources named <domain>/mig-*: MIG profiles of the mixed strategy. */
static int64_t capacity_mig_units(const plan_t *plan, const plan_pool_t *pool, const projection_node_t *node,
				  bool use_allocatable)
{
	const char *slash = strchr(plan->extended_resource, '/');
	size_t domain = (size_t)(slash - plan->extended_resource);
	int64_t units = 0;
	for (size_t i = 0; i < capacity_legacy_count(pool); i++) {
		const char *name = capacity_legacy_name(plan, pool, i);
		int64_t count = 0;
		if (strncmp(name, plan->extended_resource, domain + 1) != 0 || strncmp(name + domain + 1, "mig-", 4) != 0)
			continue;
		if (use_allocatable)
			projection_quantity_find(node->allocatable, node->n_allocatable, name, &count);
		else
			projection_quantity_find(node->capacity, node->n_capacity, name, &count);
		units += count;
	}
	return units;
}

/* The mapping read from the node's labels, when the plan gives none. */
static void capacity_from_labels(const plan_t *plan, const plan_pool_t *pool, const projection_node_t *node,
				 bool use_allocatable, capacity_legacy_t *out)
{
	char *base = capacity_label_base(plan->extended_resource);
	const char *slash = strchr(base, '/');
	char *strategy_key = xasprintf("%.*s/mig.strategy", (int)(slash - base), base);
	char *product_key = xasprintf("%s.product", base);
	char *sharing_key = xasprintf("%s.sharing-strategy", base);
	const char *strategy = capacity_label(node, strategy_key);
	const char *product = capacity_label(node, product_key);
	const char *sharing = capacity_label(node, sharing_key);
	int64_t replicas = capacity_label_int(node, base, ".replicas");
	int64_t count = capacity_label_int(node, base, ".count");
	int64_t mig = capacity_mig_units(plan, pool, node, use_allocatable);
	const char *fix = "set spec.pools[].capacity.replicasPerDevice";
	if (mig > 0) {
		out->source = "MIG profiles on the GPUs the node's .count label names";
		if (count > 0)
			out->devices = count;
		else
			out->problem = xasprintf(
				"the device plugin advertises %lld MIG instances (%s), but the node has no readable %s.count "
				"label saying on how many GPUs; %s (MIG instances per GPU) or let GPU Feature Discovery label the node",
				(long long)mig, strategy_key, base, fix);
	} else if (strategy && strcmp(strategy, "single") == 0 && product && strstr(product, "-MIG-")) {
		out->problem = xasprintf("the device plugin advertises %lld %s that are MIG instances (%s=single, %s=%s), "
					 "and the node does not say how many share a GPU; %s (MIG instances per GPU)",
					 (long long)out->units, plan->extended_resource, strategy_key, product_key,
					 product, fix);
	} else if (replicas == -2 || (replicas <= 1 && sharing && strcmp(sharing, "none") != 0)) {
		out->problem = xasprintf("the node shares its devices (%s=%s) but its %s.replicas label is %s; %s "
					 "(the plugin's replicas per device)",
					 sharing_key, sharing ? sharing : "(absent)", base,
					 replicas == -2 ? "unreadable" : "missing or 1", fix);
	} else if (replicas > 1) {
		out->source = "the node's .replicas label";
		if (out->units % replicas == 0)
			out->devices = out->units / replicas;
		else
			out->problem = xasprintf("the device plugin advertises %lld %s, not a multiple of the node's "
						 "%s.replicas=%lld; %s, or fix the plugin's sharing configuration",
						 (long long)out->units, plan->extended_resource, base,
						 (long long)replicas, fix);
	} else {
		/* No sharing: GFD writes replicas 1, or 0 for MIG-enabled parents, or nothing at all. */
		out->source = "one device per unit";
		out->devices = out->units;
	}
	free(sharing_key);
	free(product_key);
	free(strategy_key);
	free(base);
}

void capacity_legacy(const plan_t *plan, const plan_pool_t *pool, const projection_node_t *node,
		     capacity_legacy_t *out)
{
	*out = (capacity_legacy_t){ .devices = -1, .source = "" };
	bool known;
	out->units = capacity_legacy_sum(plan, pool, node->allocatable, node->n_allocatable, &known);
	if (!known)
		out->units = capacity_legacy_sum(plan, pool, node->capacity, node->n_capacity, &known);
	if (out->units <= 0) {
		out->units = 0;
		return; /* nothing advertised: unknown, not zero (the driver is then verified on its own) */
	}
	if (pool->replicas_per_device > 0) {
		out->source = "spec.pools[].capacity.replicasPerDevice";
		if (out->units % pool->replicas_per_device == 0)
			out->devices = out->units / pool->replicas_per_device;
		else
			out->problem = xasprintf("the device plugin advertises %lld units of %s, not a multiple of "
						 "spec.pools[%s].capacity.replicasPerDevice=%d; set it to the plugin's "
						 "units per physical device",
						 (long long)out->units, plan->extended_resource, pool->name,
						 pool->replicas_per_device);
		return;
	}
	capacity_from_labels(plan, pool, node, known, out);
}

void capacity_legacy_free(capacity_legacy_t *c)
{
	free(c->problem);
	c->problem = NULL;
}

/* ---- a pool's capacity view ---- */

const char *capacity_state_name(capacity_state_t s)
{
	static const char *const names[CAPACITY_STATES] = { "idle", "allocated", "unavailable", "inHandover" };
	return s < CAPACITY_STATES ? names[s] : "unknown";
}

/* n in the other unit: n * num / den, rounded up (a partly used device is in use). */
static int64_t capacity_convert(int64_t n, int64_t num, int64_t den)
{
	if (num <= 0 || den <= 0)
		return n;
	return (n * num + den - 1) / den;
}

void capacity_view_add(capacity_view_t *v, const capacity_node_t *n)
{
	int64_t up = n->units_per, dp = n->devices_per;
	/* total and allocated in both units */
	int64_t units, devices, units_alloc, devices_alloc;
	if (n->dra_owned) {
		devices = n->total;
		devices_alloc = n->allocated;
		units = capacity_convert(devices, up, dp);
		units_alloc = capacity_convert(devices_alloc, up, dp);
	} else {
		units = n->total;
		units_alloc = n->allocated;
		devices = (up > 0 && dp > 0) ? units * dp / up : units;
		devices_alloc = capacity_convert(units_alloc, dp, up);
	}
	if (devices_alloc > devices)
		devices_alloc = devices;
	if (units_alloc > units)
		units_alloc = units;
	capacity_state_t whole = n->in_handover ? CAPACITY_IN_HANDOVER : CAPACITY_UNAVAILABLE;
	if (n->in_handover || n->unavailable) {
		v->units[whole] += units;
		v->devices[whole] += devices;
		return;
	}
	v->units[CAPACITY_ALLOCATED] += units_alloc;
	v->devices[CAPACITY_ALLOCATED] += devices_alloc;
	v->units[CAPACITY_IDLE] += units - units_alloc;
	v->devices[CAPACITY_IDLE] += devices - devices_alloc;
}
