/*
 * libFuzzer target: a plan's history is a ConfigMap read back from the API
 * server, where a person may edit it. Any bytes must decode or fail cleanly,
 * and `kubectl drashift report` reads the same object.
 */
#include <stdint.h>
#include <stdlib.h>

#include "history.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256];
	cJSON *obj = cJSON_ParseWithLength((const char *)data, size);
	history_data_t d;
	if (history_decode(obj, &d, err, sizeof(err)) == 0)
		history_data_free(&d);
	cJSON_Delete(obj);
	return 0;
}
