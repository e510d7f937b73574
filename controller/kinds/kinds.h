/*
 * The kinds drashift caches, for store_init() and the reflector: Nodes, Pods,
 * ResourceClaims, ResourceSlices and DeviceClasses, each decoded into its
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

#endif
