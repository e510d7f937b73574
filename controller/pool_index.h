/*
 * Nodes by pool: which pools of which MigrationPlans select each node.
 *
 * A plan's reconcile reads its pools' members, and the nodes another pool
 * also selects, from here instead of matching every node against every plan
 * each time; a node change queues only the plans whose pools select the node
 * before or after it. The controller feeds the index from the node and plan
 * caches' change callbacks, after the stores hold the new state:
 *
 *   a node changed   its matches are worked out again against the valid plans
 *   a plan changed   every node is, unless the plan's pools (names,
 *                    selectors, validity) are what they were: a status
 *                    write, the most common plan change, costs nothing here
 *
 * Whether a selector matches a node is not decided here: the controller
 * hands its matcher in. The index copies plan and pool names and keeps no
 * pointer into any store, so it stays safe whatever the stores free.
 */
#ifndef DRASHIFT_POOL_INDEX_H
#define DRASHIFT_POOL_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plan.h"
#include "plan_object.h"
#include "projection.h"
#include "store.h"
#include "strmap.h"

/* One pool that selects a node. */
typedef struct {
	char *plan;
	char *pool;
} pool_index_match_t;

/* A node's matches, in the order plans are stored, then in each plan's pool order; n >= 1. */
typedef struct {
	pool_index_match_t *matches;
	size_t n;
} pool_index_node_t;

typedef bool (*pool_index_matcher_t)(const plan_selector_t *sel, const projection_node_t *node);

/* A node a pool selects, with every pool that selects it. */
typedef struct {
	const char *node;
	const pool_index_node_t *matches;
} pool_index_member_t;

typedef struct {
	pool_index_matcher_t matcher;
	strmap_t nodes; /* node name -> pool_index_node_t*; a node no pool selects is absent */
	/* "<plan>\x1f<pool>" -> the pool's members (see pool_index_members) */
	strmap_t pools;
	/* Changes whenever any node's pools do: what was read from the index before is stale. */
	uint64_t version;
} pool_index_t;

void pool_index_init(pool_index_t *idx, pool_index_matcher_t matcher);
void pool_index_free(pool_index_t *idx);

/*
 * A node was added or changed (node set) or deleted (node NULL); plans is the
 * plan store. Returns whether the pools that select it changed: most node
 * changes (status, heartbeats, a label no selector reads) leave the index as
 * it was, the member lists included.
 */
bool pool_index_set_node(pool_index_t *idx, const store_t *plans, const char *name, const projection_node_t *node);

/*
 * A plan was added, changed (old and new set) or deleted (new NULL); plans
 * and nodes are the stores, already holding the change. Returns whether the
 * index was worked out again (false: the plan's pools did not change).
 */
bool pool_index_plan_changed(pool_index_t *idx, const store_t *plans, const store_t *nodes,
			     const plan_object_t *old, const plan_object_t *new);

/* The pools that select a node; NULL when none does. */
const pool_index_node_t *pool_index_node(const pool_index_t *idx, const char *name);

/*
 * The nodes a pool of a plan selects, sorted by name (0 and NULL when none).
 * A node with matches->n > 1 is also selected by another pool (of this plan
 * or another one). The list is kept between calls and sorted again only after
 * the pool's members changed; it is valid until the index next changes.
 */
size_t pool_index_members(pool_index_t *idx, const char *plan, const char *pool, const pool_index_member_t **out);

/*
 * Whether a node selected by a pool of plan is also selected by another
 * pool: then *mine is plan's first pool that selects it and *other the first
 * other pool, the two a conflict names.
 */
bool pool_index_conflict(const pool_index_node_t *n, const char *plan, const pool_index_match_t **mine,
			 const pool_index_match_t **other);

#endif
