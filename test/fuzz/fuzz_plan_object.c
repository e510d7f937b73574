/*
 * libFuzzer target for a MigrationPlan as the cache holds it: metadata
 * (finalizers, the force-delete annotation, generation), the spec (valid or
 * not: an invalid plan is still cached, with its reason) and the status
 * drashift wrote and reads back (per-pool records). Any bytes must decode or
 * fail cleanly; a decoded plan must be valid or carry one line of reason, and
 * every pool's status must be found or absent without a crash.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plan_object.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256];
	cJSON *obj = cJSON_ParseWithLength((const char *)data, size);
	plan_object_t po;
	err[0] = '\0';
	if (obj && store_kind_plans.decode(obj, &po, err, sizeof(err)) == 0) {
		if (po.meta.name == NULL || po.valid == (po.invalid_reason != NULL))
			abort();
		if (po.invalid_reason && strchr(po.invalid_reason, '\n') != NULL)
			abort();
		for (size_t i = 0; po.valid && i < po.plan.n_pools; i++)
			(void)plan_object_pool_status(&po, po.plan.pools[i].name);
		(void)plan_object_pool_status(&po, "");
		(void)store_kind_plans.bytes(&po);
		store_kind_plans.release(&po);
	} else if (obj && (err[0] == '\0' || strchr(err, '\n') != NULL)) {
		abort();
	}
	cJSON_Delete(obj);
	return 0;
}
