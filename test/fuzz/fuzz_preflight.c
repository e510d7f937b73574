/*
 * libFuzzer target: preflight reads DaemonSets and DeviceClasses as the API
 * returns them (anyone with write access shapes them) and a class's CEL text.
 * Any bytes, as an object or as CEL, must be judged or refused cleanly.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "preflight.h"
#include "xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cJSON *obj = cJSON_ParseWithLength((const char *)data, size);
	preflight_daemonset_selects(obj, "drashift.io/device-plugin", "true");
	cJSON_Delete(obj);
	char *text = xstrndup((const char *)data, size);
	char *driver;
	preflight_cel_driver(text, &driver);
	free(driver);
	free(text);
	return 0;
}
