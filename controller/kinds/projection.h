/*
 * Projections: the few fields of a Kubernetes object that drashift's
 * decisions read, decoded from the API's JSON into compact structs.
 *
 * Caches hold projections, not objects (docs/architecture.md). A Pod as the API
 * server returns it is tens of KiB once managedFields, env and volumes are
 * counted; its projection is a few hundred bytes. Every field below says which
 * decision needs it; a field nothing reads does not belong here.
 *
 * The decoders are the single gate for untrusted bytes from the API server.
 * Each one checks the type of every field it reads, accepts missing optional
 * fields (and JSON null as missing), and on anything it cannot trust returns
 * -1 with one line in err that names the field path, for example
 *   status.allocation.devices.results[2].driver: not a string
 * On error nothing is allocated and *out is left zeroed; on success every
 * string in *out is an owned copy, released by the matching projection_free_*
 * (or moved into one block by projection_pack_*, as the caches keep them).
 *
 * Enumerations are forgiving where the API may grow (an unknown pod phase or
 * condition status reads as Unknown) and strict about JSON types (a number
 * where a string belongs is an error): the first is version skew, the second
 * is a broken or hostile peer.
 */
#ifndef DRASHIFT_PROJECTION_H
#define DRASHIFT_PROJECTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "kube_object.h"
#include "strmap.h"

/* Status of a condition; NONE when the object does not carry the condition. */
typedef enum {
	PROJECTION_CONDITION_NONE = 0,
	PROJECTION_CONDITION_TRUE,
	PROJECTION_CONDITION_FALSE,
	PROJECTION_CONDITION_UNKNOWN,
} projection_condition_t;

/* A label or annotation. */
typedef struct {
	char *key;
	char *value;
} projection_label_t;

/* An integer amount of a named resource (extended resources are whole devices). */
typedef struct {
	char *name;
	int64_t count;
} projection_quantity_t;

/*
 * Find name in an array of quantities. Returns true and sets *count when
 * present; a resource listed with 0 is present (that difference matters for
 * allocatable, see projection_node_t).
 */
bool projection_quantity_find(const projection_quantity_t *q, size_t n, const char *name,
			      int64_t *count);

/* The value of key among labels (or annotations); NULL when absent. */
const char *projection_label_find(const projection_label_t *l, size_t n, const char *key);

/* ---- Node ---- */

typedef struct {
	kube_object_meta_t meta;
	/* All labels: pools select their nodes by label selectors. */
	projection_label_t *labels;
	size_t n_labels;
	/*
	 * Only annotations whose key starts with "drashift.io/": drashift's own
	 * per-node handover state. Other annotations can be large and are never read.
	 */
	projection_label_t *annotations;
	size_t n_annotations;
	/* spec.unschedulable: whether the node is cordoned (by drashift or someone else). */
	bool unschedulable;
	/*
	 * spec.taints has a node.kubernetes.io/ taint (not-ready, unreachable,
	 * out-of-service, a pressure) with effect NoSchedule or NoExecute: the
	 * node is failing and its devices are unavailable (the capacity view).
	 * Taints that dedicate a node to GPU pods (nvidia.com/gpu) are not this.
	 */
	bool tainted;
	/*
	 * status.allocatable, extended resources only (names containing '/'). The
	 * handover gate: the scheduler sends an extended-resource pod down the DRA
	 * path on a node only when allocatable[resource] is 0, and kubelet drops it
	 * to 0 the moment the device plugin stops. Listed even when 0.
	 */
	projection_quantity_t *allocatable;
	size_t n_allocatable;
	/*
	 * status.capacity, extended resources only. Lags allocatable by minutes
	 * after a plugin stops; kept to tell "plugin gone" from "never had one".
	 */
	projection_quantity_t *capacity;
	size_t n_capacity;
	/* The Ready condition: a NotReady node is not handed over. */
	projection_condition_t ready;
} projection_node_t;

/* ---- Pod ---- */

typedef enum {
	PROJECTION_POD_UNKNOWN = 0, /* phase absent or not one drashift knows */
	PROJECTION_POD_PENDING,
	PROJECTION_POD_RUNNING,
	PROJECTION_POD_SUCCEEDED,
	PROJECTION_POD_FAILED,
} projection_pod_phase_t;

typedef struct {
	kube_object_meta_t meta;
	/* spec.nodeName; NULL while unbound. Which node's devices the pod holds. */
	char *node_name;
	/* status.phase: Succeeded and Failed pods no longer hold devices. */
	projection_pod_phase_t phase;
	/* Condition PodScheduled. */
	projection_condition_t scheduled;
	/* Condition Ready is True: the SLO gate counts ready replicas. */
	bool ready;
	/*
	 * spec.priority > 0 and spec.preemptionPolicy not Never (both set by
	 * priority admission from the PriorityClass): the pod may preempt, which
	 * the scheduler does for extended resources but not for DRA devices
	 * (preflight's warning).
	 */
	bool preempts;
	/*
	 * PodScheduled is False with reason Unschedulable: the scheduler found no
	 * fit. A pod Pending so since some time is what a failed migration looks
	 * like. (The reason itself is not kept; nothing else reads it.)
	 */
	bool unschedulable;
	/*
	 * The lengths of claims, dra_resources and requests (below). 32 bits,
	 * and here beside the other small fields, as the pod is the kind cached
	 * by the tens of thousands: a pod's JSON (the API server's limit is a few
	 * MiB) cannot list more, and the decoder refuses a pod that would.
	 */
	uint32_t n_claims, n_dra_resources, n_requests;
	/* Ready's lastTransitionTime, unix seconds (0 when absent): time to ready. */
	int64_t ready_time;
	int64_t scheduled_time;     /* PodScheduled's lastTransitionTime, unix seconds; 0 when absent */
	/*
	 * Names of the ResourceClaims the pod uses: spec.resourceClaims[] that
	 * name a claim, status.resourceClaimStatuses[] (claims generated from
	 * templates), and status.extendedResourceClaimStatus (the claim the
	 * scheduler created for an extended resource served by DRA). De-duplicated,
	 * in that order. A node may lose its driver only when no pod on it holds claims.
	 */
	char **claims;
	/*
	 * The extended resources the scheduler served through DRA, in a claim it
	 * made for the pod (status.extendedResourceClaimStatus.requestMappings[]
	 * .resourceName, de-duplicated; KEP-5004). The pod's other extended
	 * resources come from the device plugin.
	 */
	char **dra_resources;
	/*
	 * Effective extended-resource requests, as the scheduler computes them:
	 * per resource, max(sum over containers and sidecars, each init
	 * container's need). Only names with a '/' outside the kubernetes.io
	 * domains; only counts > 0. Which pods a device-plugin node still serves.
	 */
	projection_quantity_t *requests;
} projection_pod_t;

/* ---- ResourceClaim (resource.k8s.io/v1) ---- */

/* One entry of status.allocation.devices.results[]: which device serves which request. */
typedef struct {
	char *request;
	char *driver;
	char *pool;
	char *device;
} projection_device_result_t;

/* One entry of status.reservedFor[]: a consumer (normally a pod) of the claim. */
typedef struct {
	char *resource; /* "pods" */
	char *name;
	char *uid;
} projection_consumer_t;

typedef struct {
	kube_object_meta_t meta;
	/*
	 * Device classes the claim asks for (exactly.deviceClassName and each
	 * firstAvailable[].deviceClassName), de-duplicated: which pool the claim
	 * belongs to and which driver it needs.
	 */
	char **device_classes;
	size_t n_device_classes;
	/* status.allocation is set: the scheduler has picked devices. */
	bool allocated;
	/* status.allocation.devices.results[]: the devices a driver must keep serving. */
	projection_device_result_t *results;
	size_t n_results;
	/*
	 * The node the allocation is pinned to (nodeSelector term 0, matchFields
	 * metadata.name In [node]); NULL when not node-local. Blocks that node's
	 * driver removal while the claim is in use.
	 */
	char *node_name;
	/* status.reservedFor[]: the claim is in use while this is non-empty. */
	projection_consumer_t *reserved_for;
	size_t n_reserved_for;
	/* Conditions with status "False" across status.devices[]: driver-reported trouble. */
	size_t device_conditions_false;
	/* Name of the Pod in ownerReferences (template-generated claims); NULL when none. */
	char *owner_pod;
	/*
	 * metadata.finalizers[] holds PROJECTION_CLAIM_FINALIZER: with
	 * meta.deleting, a claim the claim controller still protects (something
	 * holds it, or its devices were never unprepared).
	 */
	bool delete_protected;
	/*
	 * Annotation resource.kubernetes.io/extended-resource-claim is "true":
	 * the scheduler made the claim for a pod's extended resource (KEP-5004).
	 */
	bool extended;
} projection_claim_t;

/* The claim controller's finalizer (kubernetes pkg/apis/resource: resource.Finalizer). */
#define PROJECTION_CLAIM_FINALIZER "resource.kubernetes.io/delete-protection"

/* ---- Event (v1), only those the kubelet writes about failed DRA prepares ---- */

typedef struct {
	kube_object_meta_t meta;
	/* involvedObject: the pod the kubelet could not prepare devices for. */
	char *object_kind;
	char *object_namespace;
	char *object_name;
	/* source.host (core/v1 recorders, the kubelet's), else reportingInstance: the node; NULL when neither. */
	char *host;
	char *message;
	/* count: how often the kubelet said it (1 when absent; the recorder folds repeats into one Event). */
	int64_t count;
	/* lastTimestamp, else series.lastObservedTime, else eventTime, else creation: unix seconds. */
	int64_t last_seen;
	/* firstTimestamp, else eventTime, else creation: unix seconds. */
	int64_t first_seen;
} projection_event_t;

/* ---- ResourceSlice (resource.k8s.io/v1) ---- */

typedef struct {
	kube_object_meta_t meta;
	/* spec.driver: whose devices these are. */
	char *driver;
	/* spec.nodeName; NULL when the slice is not node-local. */
	char *node_name;
	/*
	 * spec.pool: a node's driver is ready only when resource_slice_count
	 * slices of the pool's highest generation are present.
	 */
	char *pool;
	int64_t pool_generation;
	int64_t resource_slice_count;
	/* spec.devices[].name: capacity of the DRA side after the handover. */
	char **devices;
	size_t n_devices;
	/*
	 * Per device (n_devices entries): the counter set its first
	 * spec.devices[].consumesCounters[] entry names, NULL when it consumes
	 * none. Partitionable devices (a whole GPU and its MIG profiles) all
	 * consume the counter set of the physical device they carve up, so the
	 * physical devices of a pool are its devices without counters plus the
	 * distinct counter sets its devices name (reconcilers/capacity.h).
	 */
	char **counter_sets;
	/*
	 * Counter sets the slice defines (spec.sharedCounters[]); such a slice
	 * has no devices but counts towards resourceSliceCount.
	 */
	size_t n_shared_counters;
} projection_slice_t;

/* ---- DeviceClass (resource.k8s.io/v1) ---- */

typedef struct {
	kube_object_meta_t meta;
	/*
	 * spec.extendedResourceName: the extended resource (e.g. example.com/gpu)
	 * this class serves through DRA; NULL when none. Links a pool's device
	 * plugin resource to its DRA class.
	 */
	char *extended_resource_name;
} projection_device_class_t;

/*
 * Decoders. obj is one API object (a list item or a watch event's object).
 * Return 0, or -1 with err set and *out zeroed.
 */
int projection_decode_node(const cJSON *obj, projection_node_t *out, char *err, size_t errlen);
int projection_decode_pod(const cJSON *obj, projection_pod_t *out, char *err, size_t errlen);
int projection_decode_claim(const cJSON *obj, projection_claim_t *out, char *err, size_t errlen);
int projection_decode_slice(const cJSON *obj, projection_slice_t *out, char *err, size_t errlen);
int projection_decode_event(const cJSON *obj, projection_event_t *out, char *err, size_t errlen);
int projection_decode_device_class(const cJSON *obj, projection_device_class_t *out, char *err,
				   size_t errlen);

/* Release what a projection owns and zero it; safe on a zeroed projection. */
void projection_free_node(projection_node_t *p);
void projection_free_pod(projection_pod_t *p);
void projection_free_claim(projection_claim_t *p);
void projection_free_slice(projection_slice_t *p);
void projection_free_event(projection_event_t *p);
void projection_free_device_class(projection_device_class_t *p);

/*
 * Packing, for what a cache holds by the thousand (store_kind_t.pack): move
 * the decoded *p into one heap block and leave *p zeroed; every field reads
 * as it did in *p. The block is the struct, then the strings and arrays the
 * projection owns, except the strings that thousands of objects repeat:
 * namespaces, node names, resource and device class names, drivers, pools,
 * devices, label keys. Those point into shared (a pool, strmap_intern), which
 * holds each once with a reference count; with shared NULL they are copied
 * into the block too. Release a packed projection only with
 * projection_free_packed_* and the same pool, never with projection_free_*.
 *
 * Per string this saves a malloc chunk header and the rounding to 16 bytes,
 * and a repeated string costs its pool entry once: a cached pod is one block
 * of about 250 bytes instead of ten allocations. Its cost is
 * malloc_usable_size() of the block, plus its share of the pool's bytes
 * (strmap_bytes), which the store counts once.
 */
projection_pod_t *projection_pack_pod(projection_pod_t *p, strmap_t *shared);
projection_claim_t *projection_pack_claim(projection_claim_t *p, strmap_t *shared);
projection_node_t *projection_pack_node(projection_node_t *p, strmap_t *shared);
void projection_free_packed_pod(projection_pod_t *p, strmap_t *shared);
void projection_free_packed_claim(projection_claim_t *p, strmap_t *shared);
void projection_free_packed_node(projection_node_t *p, strmap_t *shared);

/*
 * Bytes a decoded (not packed) projection costs: sizeof the struct plus the
 * usable size of every allocation it owns (malloc_usable_size), so allocator
 * rounding is counted. A store counts what it holds with store_object_bytes().
 */
size_t projection_size_node(const projection_node_t *p);
size_t projection_size_pod(const projection_pod_t *p);
size_t projection_size_claim(const projection_claim_t *p);
size_t projection_size_slice(const projection_slice_t *p);
size_t projection_size_event(const projection_event_t *p);
size_t projection_size_device_class(const projection_device_class_t *p);

#endif
