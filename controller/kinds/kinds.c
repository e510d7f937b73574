/*
 * drashift's cached kinds as the generic store knows them (store_kind_t):
 * where each is listed and watched, and its projection's decoder.
 */
#include "kinds.h"

#define KINDS_KIND(var, res, p, type, suffix, fields, packer, packer_free)                         \
	static int kinds_decode_##suffix(const cJSON *obj, void *out, char *err, size_t errlen)     \
	{                                                                                          \
		return projection_decode_##suffix(obj, (type *)out, err, errlen);                  \
	}                                                                                          \
	static void kinds_release_##suffix(void *proj)                                            \
	{                                                                                          \
		projection_free_##suffix((type *)proj);                                            \
	}                                                                                          \
	static size_t kinds_bytes_##suffix(const void *proj)                                      \
	{                                                                                          \
		return projection_size_##suffix((const type *)proj);                               \
	}                                                                                          \
	const store_kind_t var = {                                                                 \
		.resource = res,                                                                   \
		.path = p,                                                                         \
		.size = sizeof(type),                                                              \
		.decode = kinds_decode_##suffix,                                                   \
		.release = kinds_release_##suffix,                                                 \
		.bytes = kinds_bytes_##suffix,                                                     \
		.field_selector = fields,                                                          \
		.pack = packer,                                                                    \
		.free_packed = packer_free,                                                        \
	};

/*
 * Pods and claims come by the thousand, nodes with many labels: the stores
 * keep them packed, one block each (projection_pack_*).
 */
#define KINDS_PACKED(suffix, type)                                                                 \
	static void *kinds_pack_##suffix(void *proj, strmap_t *shared)                            \
	{                                                                                          \
		return projection_pack_##suffix((type *)proj, shared);                             \
	}                                                                                          \
	static void kinds_free_packed_##suffix(void *proj, strmap_t *shared)                      \
	{                                                                                          \
		projection_free_packed_##suffix((type *)proj, shared);                             \
	}

KINDS_PACKED(pod, projection_pod_t)
KINDS_PACKED(claim, projection_claim_t)
KINDS_PACKED(node, projection_node_t)

KINDS_KIND(kinds_nodes, "nodes", "/api/v1/nodes", projection_node_t, node, NULL, kinds_pack_node,
	   kinds_free_packed_node)
KINDS_KIND(kinds_pods, "pods", "/api/v1/pods", projection_pod_t, pod, NULL, kinds_pack_pod, kinds_free_packed_pod)
KINDS_KIND(kinds_claims, "resourceclaims", "/apis/resource.k8s.io/v1/resourceclaims",
	   projection_claim_t, claim, NULL, kinds_pack_claim, kinds_free_packed_claim)
KINDS_KIND(kinds_slices, "resourceslices", "/apis/resource.k8s.io/v1/resourceslices",
	   projection_slice_t, slice, NULL, NULL, NULL)
KINDS_KIND(kinds_device_classes, "deviceclasses", "/apis/resource.k8s.io/v1/deviceclasses",
	   projection_device_class_t, device_class, NULL, NULL, NULL)
/* The kubelet's reason (pkg/kubelet/events); the API server filters, the rest never reaches drashift. */
KINDS_KIND(kinds_prepare_failures, "events", "/api/v1/events", projection_event_t, event,
	   "reason%3DFailedPrepareDynamicResources", NULL, NULL)
