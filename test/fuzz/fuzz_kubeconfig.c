/*
 * libFuzzer target: kubeconfig files are untrusted input (a user's file, a
 * mounted secret). Any bytes must give either a config or one error line, and
 * never a crash or a leak.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "kubeconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[64];
	if (path[0] == '\0')
		snprintf(path, sizeof(path), "/tmp/fuzz-kubeconfig-%d.yaml", (int)getpid());
	FILE *f = fopen(path, "wb");
	if (f == NULL)
		abort();
	if (size > 0 && fwrite(data, 1, size, f) != size)
		abort();
	fclose(f);

	char err[512];
	kubeconfig_t cfg;
	if (kubeconfig_load_files(path, NULL, &cfg, err, sizeof(err)) == 0)
		kubeconfig_free(&cfg);
	return 0;
}
