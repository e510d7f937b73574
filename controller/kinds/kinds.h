/*
 * The kinds drashift caches, for store_init() and the reflector: Nodes, Pods,
 * ResourceClaims, ResourceSlices, DeviceClasses and the kubelet's
 * FailedPrepareDynamicResources Events, each decoded into its
 * projection (projection.h).
 */
#ifndef DRASHIFT_KINDS_H
#define DRASHIFT_KINDS_H

#include "projection.h"
#include "store.h"

extern const store_kind_t kinds_nodes;
extern const store_kind_t kinds_pods;
extern const store_kind_t kinds_claims;
extern const store_kind_t kinds_slices;
extern const store_kind_t kinds_device_classes;
/* Events with reason FailedPrepareDynamicResources only (a field selector): driver failures. */
extern const store_kind_t kinds_prepare_failures;

#endif
