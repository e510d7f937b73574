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

/* Label on the objects drashift keeps for a plan (its freeze parameter, its history): the plan's name. */
#define PLAN_OBJECT_LABEL_PLAN "drashift.io/plan"

/*
 * An object drashift keeps for a plan: apiVersion, kind, name, namespace
 * (NULL: cluster-scoped), drashift's labels, PLAN_OBJECT_LABEL_PLAN when the
 * plan's name fits a label value, and the plan as its owner when plan_uid is
 * set, so that deleting the plan deletes the object. *metadata and *labels
 * are for the caller to add to.
 */
cJSON *plan_object_child_new(const char *api_version, const char *kind, const char *name, const char *ns,
			     const char *plan, const char *plan_uid, cJSON **metadata, cJSON **labels);

/* The status record of pool_name, or NULL. */
const cJSON *plan_object_pool_status(const plan_object_t *p, const char *pool_name);

/*
 * Whether status.preflight records a pass for the plan's current generation:
 * pools that have not started may start without waiting for the checks
 * again (a restart or an upgrade does not re-block a plan).
 */
bool plan_object_preflight_recorded(const plan_object_t *p);

#endif
