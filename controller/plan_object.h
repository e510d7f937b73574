/*
 * A MigrationPlan as the cache holds it: the decoded spec (or why it could
 * not be decoded) and the status drashift wrote last, which carries each
 * pool's durable record (canary set, bake start).
 */
#ifndef DRASHIFT_PLAN_OBJECT_H
#define DRASHIFT_PLAN_OBJECT_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "plan.h"
#include "projection.h"
#include "store.h"

typedef struct {
	kube_object_meta_t meta;
	int64_t generation;
	bool valid;
	char *invalid_reason; /* when !valid: the decoder's one line */
	plan_t plan;          /* zeroed when !valid */
	cJSON *status;        /* .status as last written (owned), or NULL */
	cJSON *finalizers;    /* metadata.finalizers (owned), or NULL */
	bool releases_nodes;  /* PLAN_FINALIZER is among them */
	bool force_delete;    /* annotation PLAN_ANN_FORCE_DELETE is "true" */
} plan_object_t;

/* On every plan that holds nodes: deleting it first releases them. */
#define PLAN_FINALIZER "drashift.io/release-nodes"
/* A person's escape hatch: drop the finalizer at once, leaving a record on each node. */
#define PLAN_ANN_FORCE_DELETE "drashift.io/force-delete"

extern const store_kind_t store_kind_plans;

/* The status record of pool_name, or NULL. */
const cJSON *plan_object_pool_status(const plan_object_t *p, const char *pool_name);

/*
 * Whether status.preflight records a pass for the plan's current generation:
 * pools that have not started may start without waiting for the checks
 * again (a restart or an upgrade does not re-block a plan).
 */
bool plan_object_preflight_recorded(const plan_object_t *p);

#endif
