/*
 * libFuzzer target: an exec credential plugin's stdout is bytes drashift did
 * not write. Any bytes must give either a credential or one error line, and
 * never a crash or a leak.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "exec_credential.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256];
	exec_credential_t c;
	if (exec_credential_decode((const char *)data, size, "client.authentication.k8s.io/v1", &c, err,
				   sizeof(err)) == 0)
		exec_credential_free(&c);
	else if (strchr(err, '\n') != NULL)
		abort();
	return 0;
}
