#include "node_owners.h"

#include <stdlib.h>
#include <string.h>

#include "handover.h"
#include "xalloc.h"

void node_owners_init(node_owners_t *o)
{
	o->by_node = (strmap_t)STRMAP_INIT;
	o->by_plan = (strmap_t)STRMAP_INIT;
}

static void node_owners_set_free(void *v)
{
	strmap_clear(v, NULL);
	free(v);
}

void node_owners_free(node_owners_t *o)
{
	strmap_clear(&o->by_node, free);
	strmap_clear(&o->by_plan, node_owners_set_free);
}

static void node_owners_forget(node_owners_t *o, const char *name)
{
	char *plan = strmap_remove(&o->by_node, name);
	if (plan == NULL)
		return;
	strmap_t *nodes = strmap_get(&o->by_plan, plan);
	if (nodes) {
		strmap_remove(nodes, name);
		if (strmap_size(nodes) == 0)
			node_owners_set_free(strmap_remove(&o->by_plan, plan));
	}
	free(plan);
}

void node_owners_set(node_owners_t *o, const char *name, const projection_node_t *node)
{
	node_owners_forget(o, name);
	if (node == NULL || !handover_has_record(node))
		return;
	const char *plan = "";
	for (size_t i = 0; i < node->n_annotations; i++)
		if (strcmp(node->annotations[i].key, HANDOVER_ANN_PLAN) == 0)
			plan = node->annotations[i].value;
	strmap_put(&o->by_node, name, xstrdup(plan));
	strmap_t *nodes = strmap_get(&o->by_plan, plan);
	if (nodes == NULL) {
		nodes = xcalloc(1, sizeof(*nodes));
		strmap_put(&o->by_plan, plan, nodes);
	}
	strmap_put(nodes, name, NULL);
}

const char *node_owners_of(const node_owners_t *o, const char *node)
{
	return strmap_get(&o->by_node, node);
}

const strmap_t *node_owners_nodes(const node_owners_t *o, const char *plan)
{
	return strmap_get(&o->by_plan, plan);
}
