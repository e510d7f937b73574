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
} plan_object_t;

extern const store_kind_t store_kind_plans;

/* The status record of pool_name, or NULL. */
const cJSON *plan_object_pool_status(const plan_object_t *p, const char *pool_name);

#endif
