/*
 * Nodes by the plan their records name: every node carrying drashift's
 * handover annotations, under the plan in its drashift.io/plan annotation
 * ("" when the records name none). A plan finds the nodes it holds here,
 * without its selectors: a node that left its pools, or whose pool left the
 * spec, is still found and released. Nodes under a plan the plan cache does
 * not hold are orphans.
 *
 * Fed from the node cache's change callback; copies names, keeps no pointer
 * into the store.
 */
#ifndef DRASHIFT_NODE_OWNERS_H
#define DRASHIFT_NODE_OWNERS_H

#include <stddef.h>

#include "projection.h"
#include "strmap.h"

typedef struct {
	strmap_t by_node; /* node -> owning plan (char*, "" for none) */
	strmap_t by_plan; /* plan -> strmap_t* of node names (values unused) */
} node_owners_t;

void node_owners_init(node_owners_t *o);
void node_owners_free(node_owners_t *o);

/* A node was added or changed (node set) or deleted (node NULL). */
void node_owners_set(node_owners_t *o, const char *name, const projection_node_t *node);

/* The plan a node's records name ("" for none), or NULL when it carries no records. */
const char *node_owners_of(const node_owners_t *o, const char *node);

/* The nodes whose records name plan (NULL: none); iterate with strmap_next. */
const strmap_t *node_owners_nodes(const node_owners_t *o, const char *plan);

#endif
