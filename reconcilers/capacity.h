/*
 * Capacity equivalence: how the device plugin's units map to the DRA
 * driver's devices, and a pool's capacity seen both ways (docs/dra-facts.md,
 * "Counting devices on both sides").
 *
 * The two sides count different things. A time-sliced plugin advertises
 * replicas (nvidia.com/gpu: 32 for 8 GPUs shared 4 ways); a MIG plugin with
 * the mixed strategy advertises instances per profile (nvidia.com/mig-1g.10gb:
 * 14); a driver with partitionable devices publishes a whole GPU and every
 * MIG placement as devices that consume one counter set per GPU. Both sides
 * are therefore brought to physical devices:
 *   - the driver: its devices that consume no counters, plus the distinct
 *     counter sets its devices consume, per pool, in the newest complete
 *     generation of every pool it publishes for the node;
 *   - the plugin: its units across the pool's legacy resources divided by the
 *     units per device, from the pool's capacity.replicasPerDevice, else the
 *     node's GPU Feature Discovery labels (<resource>.replicas, and for MIG
 *     profiles <resource>.count), else one unit per device.
 * Where the labels contradict the units (30 units, 4 replicas) or cannot tell
 * (MIG with the single strategy), the mapping is a problem naming both
 * numbers and the fix, and no node is handed over on a guess.
 *
 * Pure: no I/O, no clock.
 */
#ifndef DRASHIFT_CAPACITY_H
#define DRASHIFT_CAPACITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plan.h"
#include "projection.h"

/* ---- the DRA side ---- */

typedef struct {
	bool present;     /* any slice of the driver for the node */
	bool complete;    /* every pool: resourceSliceCount slices of its newest generation present */
	int64_t listed;   /* devices listed in those slices */
	int64_t physical; /* devices without counters + distinct counter sets consumed, per pool */
} capacity_slices_t;

/* Count one driver's slices for one node (any order; other drivers' slices must not be passed). */
void capacity_count_slices(const projection_slice_t *const *slices, size_t n, capacity_slices_t *out);

/*
 * The physical device a device of a pool belongs to: the counter set it
 * consumes, or itself. NULL when no slice of the newest generation lists it.
 */
const char *capacity_physical_key(const projection_slice_t *const *slices, size_t n, const char *pool,
				  const char *device);

/* ---- the device-plugin side ---- */

typedef struct {
	int64_t units;      /* the plugin's units across the pool's legacy resources (0: none advertised) */
	int64_t devices;    /* the physical devices they stand for; -1 when units is 0 or on a problem */
	const char *source; /* how devices was derived, for messages */
	char *problem;      /* owned: why the two sides cannot be compared (numbers and fix); NULL when they can */
} capacity_legacy_t;

/*
 * The legacy resources of a pool: spec.extendedResource, then the pool's
 * capacity.legacyResources. i < 1 + pool->n_legacy_resources.
 */
size_t capacity_legacy_count(const plan_pool_t *pool);
const char *capacity_legacy_name(const plan_t *plan, const plan_pool_t *pool, size_t i);

/* Sum a pool's legacy resources in a list of quantities; *known: any of them is listed. */
int64_t capacity_legacy_sum(const plan_t *plan, const plan_pool_t *pool, const projection_quantity_t *q, size_t n,
			    bool *known);

/* What the plugin's advertisement on the node stands for. Free with capacity_legacy_free(). */
void capacity_legacy(const plan_t *plan, const plan_pool_t *pool, const projection_node_t *node,
		     capacity_legacy_t *out);
void capacity_legacy_free(capacity_legacy_t *c);

/* ---- a pool's capacity view ---- */

typedef enum {
	CAPACITY_IDLE,        /* schedulable, not allocated */
	CAPACITY_ALLOCATED,   /* held by pods (legacy) or allocated to claims (DRA) */
	CAPACITY_UNAVAILABLE, /* cordoned by someone else, tainted, not Ready, or its handover failed */
	CAPACITY_IN_HANDOVER, /* the node is between owners */
	CAPACITY_STATES,
} capacity_state_t;

/* "idle", "allocated", "unavailable", "inHandover". */
const char *capacity_state_name(capacity_state_t s);

typedef struct {
	int64_t units[CAPACITY_STATES];   /* in the device plugin's units */
	int64_t devices[CAPACITY_STATES]; /* in the DRA driver's (physical) devices */
} capacity_view_t;

/* One node, as the controller reads it. */
typedef struct {
	bool in_handover;
	bool unavailable;
	/* The node's capacity and what of it is allocated, counted by its owner: units for the plugin, devices for the driver. */
	bool dra_owned;
	int64_t total, allocated;
	/* Units per device as a ratio (units_per / devices_per); both 0 when unknown: one unit per device. */
	int64_t units_per, devices_per;
} capacity_node_t;

/* Add a node to a view: its whole capacity in one state, except idle and allocated on a usable node. */
void capacity_view_add(capacity_view_t *v, const capacity_node_t *n);

#endif
