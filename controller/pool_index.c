#include "pool_index.h"

#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

/*
 * A pool's group: plan and pool name joined by the ASCII unit separator.
 * Plan names are DNS subdomains (the API server checks them) and pool names
 * RFC 1123 labels (plan_decode checks them), so 0x1f is in neither.
 */
static char *pool_index_group_key(const char *plan, const char *pool)
{
	return xjoin(plan, '\x1f', pool);
}

static void pool_index_node_free(pool_index_node_t *n)
{
	for (size_t i = 0; i < n->n; i++) {
		free(n->matches[i].plan);
		free(n->matches[i].pool);
	}
	free(n->matches);
	free(n);
}

/* A pool's members: the map the index changes, and the sorted list pool_index_members hands out. */
typedef struct {
	strmap_t nodes;               /* node name -> pool_index_node_t* */
	pool_index_member_t *sorted;  /* the same, by name; stale: sorted again at the next read */
	size_t n_sorted;
	bool stale;
} pool_index_group_t;

static void pool_index_group_free(void *v)
{
	pool_index_group_t *group = v;
	strmap_clear(&group->nodes, NULL);
	free(group->sorted);
	free(group);
}

void pool_index_init(pool_index_t *idx, pool_index_matcher_t matcher)
{
	*idx = (pool_index_t){ .matcher = matcher, .nodes = STRMAP_INIT, .pools = STRMAP_INIT };
}

static void pool_index_clear(pool_index_t *idx)
{
	size_t it = 0;
	void *v;
	while (strmap_next(&idx->nodes, &it, NULL, &v))
		pool_index_node_free(v);
	strmap_clear(&idx->nodes, NULL);
	strmap_clear(&idx->pools, pool_index_group_free);
}

void pool_index_free(pool_index_t *idx)
{
	pool_index_clear(idx);
}

static void pool_index_remove_node(pool_index_t *idx, const char *name)
{
	pool_index_node_t *n = strmap_remove(&idx->nodes, name);
	if (n == NULL)
		return;
	for (size_t i = 0; i < n->n; i++) {
		char *key = pool_index_group_key(n->matches[i].plan, n->matches[i].pool);
		pool_index_group_t *group = strmap_get(&idx->pools, key);
		if (group != NULL) {
			strmap_remove(&group->nodes, name);
			group->stale = true;
			if (strmap_size(&group->nodes) == 0)
				pool_index_group_free(strmap_remove(&idx->pools, key));
		}
		free(key);
	}
	pool_index_node_free(n);
}

/* Whether the pools that select a node are the ones it had (a or b may be NULL: none). */
static bool pool_index_same_matches(const pool_index_node_t *a, const pool_index_node_t *b)
{
	size_t na = a ? a->n : 0, nb = b ? b->n : 0;
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (strcmp(a->matches[i].plan, b->matches[i].plan) != 0 || strcmp(a->matches[i].pool, b->matches[i].pool) != 0)
			return false;
	return true;
}

/* The pools of the valid plans that select node (NULL: none). Plans are few: every pool of every plan is asked. */
static pool_index_node_t *pool_index_match(const pool_index_t *idx, const store_t *plans, const projection_node_t *node)
{
	pool_index_node_t *n = xcalloc(1, sizeof(*n));
	size_t it = 0;
	const void *v;
	while (store_next(plans, &it, &v)) {
		const plan_object_t *p = v;
		if (!p->valid)
			continue;
		for (size_t i = 0; i < p->plan.n_pools; i++) {
			if (!idx->matcher(&p->plan.pools[i].node_selector, node))
				continue;
			n->matches = xrealloc(n->matches, (n->n + 1) * sizeof(*n->matches));
			n->matches[n->n++] = (pool_index_match_t){ .plan = xstrdup(p->meta.name),
								   .pool = xstrdup(p->plan.pools[i].name) };
		}
	}
	if (n->n > 0)
		return n;
	pool_index_node_free(n);
	return NULL;
}

bool pool_index_set_node(pool_index_t *idx, const store_t *plans, const char *name, const projection_node_t *node)
{
	pool_index_node_t *n = node ? pool_index_match(idx, plans, node) : NULL;
	if (pool_index_same_matches(strmap_get(&idx->nodes, name), n)) {
		if (n)
			pool_index_node_free(n);
		return false;
	}
	pool_index_remove_node(idx, name);
	idx->version++;
	if (n == NULL)
		return true;
	strmap_put(&idx->nodes, name, n);
	for (size_t i = 0; i < n->n; i++) {
		char *key = pool_index_group_key(n->matches[i].plan, n->matches[i].pool);
		pool_index_group_t *group = strmap_get(&idx->pools, key);
		if (group == NULL) {
			group = xcalloc(1, sizeof(*group));
			strmap_put(&idx->pools, key, group);
		}
		strmap_put(&group->nodes, name, n);
		group->stale = true;
		free(key);
	}
	return true;
}

static bool pool_index_same_selector(const plan_selector_t *a, const plan_selector_t *b)
{
	if (a->n_reqs != b->n_reqs)
		return false;
	for (size_t r = 0; r < a->n_reqs; r++) {
		const plan_requirement_t *x = &a->reqs[r], *y = &b->reqs[r];
		if (x->op != y->op || x->n_values != y->n_values || strcmp(x->key, y->key) != 0)
			return false;
		for (size_t v = 0; v < x->n_values; v++)
			if (strcmp(x->values[v], y->values[v]) != 0)
				return false;
	}
	return true;
}

/* Whether the index would read the same from both: same validity, same pools in the same order. */
static bool pool_index_same_pools(const plan_object_t *a, const plan_object_t *b)
{
	if (a->valid != b->valid)
		return false;
	if (!a->valid)
		return true;
	if (a->plan.n_pools != b->plan.n_pools)
		return false;
	for (size_t i = 0; i < a->plan.n_pools; i++)
		if (strcmp(a->plan.pools[i].name, b->plan.pools[i].name) != 0 ||
		    !pool_index_same_selector(&a->plan.pools[i].node_selector, &b->plan.pools[i].node_selector))
			return false;
	return true;
}

/*
 * Plans are few and change rarely once status writes are set aside, so a
 * change works every node out again rather than patching the one plan in:
 * the matches of each node stay in one order (the plan store's) that way.
 */
bool pool_index_plan_changed(pool_index_t *idx, const store_t *plans, const store_t *nodes,
			     const plan_object_t *old, const plan_object_t *new)
{
	if (old != NULL && new != NULL && pool_index_same_pools(old, new))
		return false;
	if (old == NULL && new != NULL && !new->valid)
		return false;
	if (old != NULL && new == NULL && !old->valid)
		return false;
	pool_index_clear(idx);
	idx->version++;
	size_t it = 0;
	const void *v;
	while (store_next(nodes, &it, &v)) {
		const projection_node_t *node = v;
		pool_index_set_node(idx, plans, node->meta.name, node);
	}
	return true;
}

const pool_index_node_t *pool_index_node(const pool_index_t *idx, const char *name)
{
	return strmap_get(&idx->nodes, name);
}

static int pool_index_member_cmp(const void *a, const void *b)
{
	return strcmp(((const pool_index_member_t *)a)->node, ((const pool_index_member_t *)b)->node);
}

size_t pool_index_members(pool_index_t *idx, const char *plan, const char *pool, const pool_index_member_t **out)
{
	char *key = pool_index_group_key(plan, pool);
	pool_index_group_t *group = strmap_get(&idx->pools, key);
	free(key);
	*out = NULL;
	if (group == NULL)
		return 0;
	if (group->stale) {
		/* The map's own keys: they live as long as their members, and a member leaving makes the list stale. */
		group->n_sorted = 0;
		group->sorted = xrealloc(group->sorted, strmap_size(&group->nodes) * sizeof(*group->sorted));
		size_t it = 0;
		const char *node;
		void *v;
		while (strmap_next(&group->nodes, &it, &node, &v))
			group->sorted[group->n_sorted++] = (pool_index_member_t){ .node = node, .matches = v };
		qsort(group->sorted, group->n_sorted, sizeof(*group->sorted), pool_index_member_cmp);
		group->stale = false;
	}
	*out = group->sorted;
	return group->n_sorted;
}

bool pool_index_conflict(const pool_index_node_t *n, const char *plan, const pool_index_match_t **mine,
			 const pool_index_match_t **other)
{
	*mine = *other = NULL;
	for (size_t i = 0; i < n->n && *mine == NULL; i++)
		if (strcmp(n->matches[i].plan, plan) == 0)
			*mine = &n->matches[i];
	for (size_t i = 0; i < n->n && *other == NULL; i++)
		if (&n->matches[i] != *mine)
			*other = &n->matches[i];
	return *mine != NULL && *other != NULL;
}
