/*
 * libFuzzer target: the Lease record comes from the API server, where any
 * replica (or a person with kubectl) may have written it. Any bytes must
 * decode or fail cleanly.
 */
#include <stdint.h>
#include <stdlib.h>

#include "leader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256];
	leader_record_t rec;
	if (leader_record_decode((const char *)data, size, &rec, err, sizeof(err)) == 0)
		leader_record_free(&rec);
	return 0;
}
