/*
 * The running operator: one libuv loop holding the API client, the caches,
 * leader election, the Event recorder and the /healthz /readyz /metrics
 * endpoint, and the shutdown that SIGTERM starts.
 *
 * Shutdown order (SIGTERM or SIGINT): stop acting, flush Events, release the
 * Lease so a successor takes over at once, stop the caches and the endpoint,
 * close the client; the loop then runs dry and the process exits 0.
 */
#ifndef DRASHIFT_MANAGER_H
#define DRASHIFT_MANAGER_H

#include <stdbool.h>
#include <stdint.h>

#include "kubeconfig.h"

typedef struct {
	const char *http_address;    /* "/healthz /readyz /metrics" listen address */
	bool leader_elect;
	const char *lease_namespace;
	const char *lease_name;
	const char *identity;        /* this replica's name (POD_NAME, or host_pid) */
	uint64_t lease_duration_ms;
	uint64_t renew_deadline_ms;
	uint64_t retry_period_ms;
	bool dry_run;                /* log the actions, change nothing */
} manager_options_t;

/* Run until a signal ends it. Returns the process exit status. */
int manager_run(const kubeconfig_t *cfg, const manager_options_t *opt);

#endif
