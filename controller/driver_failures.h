/*
 * Driver failure evidence (reconcilers/driver_failure.h) gathered from the
 * cache for a plan's nodes: the kubelet's FailedPrepareDynamicResources
 * Events (the only Events drashift watches, by field selector) and the
 * claims pinned to each node by the plan's driver.
 *
 * An Event counts for the node the kubelet that wrote it runs on
 * (source.host, or reportingInstance), else the node its pod is bound to,
 * while its last occurrence is inside the window and its pod still waits
 * (cached, Pending): once the pod runs or is gone, the failure is over. A
 * NodePrepareResources message does not name the driver: it counts against
 * the plan's driver only when the pod holds a claim allocated from it.
 */
#ifndef DRASHIFT_DRIVER_FAILURES_H
#define DRASHIFT_DRIVER_FAILURES_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "driver_failure.h"

/*
 * Add what the cache shows to evidence[0..n) (their .node set, distinct):
 * the report counts from Events last seen at or after since_ms, and the
 * claims deleted at least stuck_ms before now_ms that the claim controller
 * still protects. The other fields are the caller's.
 */
void driver_failures_gather(const cache_t *cache, const char *driver, int64_t since_ms, uint64_t stuck_ms,
			    int64_t now_ms, driver_failure_node_t *evidence, size_t n);

#endif
