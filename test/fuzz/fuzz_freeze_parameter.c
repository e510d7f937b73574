/*
 * libFuzzer target: freeze parameters are ConfigMaps read back from the API
 * server, where a person may edit them. Any bytes must decode or fail cleanly.
 */
#include <stdint.h>
#include <stdlib.h>

#include "freeze.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256];
	cJSON *obj = cJSON_ParseWithLength((const char *)data, size);
	freeze_parameter_t p;
	if (obj && store_kind_freeze_parameters.decode(obj, &p, err, sizeof(err)) == 0)
		store_kind_freeze_parameters.release(&p);
	cJSON_Delete(obj);
	return 0;
}
