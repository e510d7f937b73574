/*
 * What every Kubernetes object has, whatever its kind: the metadata a cache
 * keeps, and the envelopes objects arrive in (a watch event, a list page).
 *
 * Kind-specific projections start with a kube_object_meta_t, so the store
 * can key and version any of them. Decoders follow json_decode.h: on error
 * they return -1 with one line in err that names the field path, nothing
 * allocated and *out zeroed.
 */
#ifndef DRASHIFT_KUBE_OBJECT_H
#define DRASHIFT_KUBE_OBJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "json_decode.h"

/* Metadata every cached object keeps. */
typedef struct {
	/* Cache key with name; NULL for cluster-scoped objects (Node, ResourceSlice, DeviceClass). */
	char *namespace;
	/* Cache key; the only metadata field a decoder requires. */
	char *name;
	/*
	 * Tells incarnations apart: a pod deleted and recreated under the same
	 * name is a different consumer for claims' reservedFor.
	 */
	char *uid;
	/* Opaque; the watch resumes from the last one seen. Never compared numerically. */
	char *resource_version;
	/* metadata.creationTimestamp, unix seconds (0 when absent): ordering and ages. */
	int64_t created;
	/*
	 * metadata.deletionTimestamp is set: the object is going away (a
	 * Terminating pod still holds its devices until kubelet unprepares them).
	 */
	bool deleting;
	/* metadata.deletionTimestamp, unix seconds; 0 unless deleting. Stuck-termination alarms. */
	int64_t deleted;
} kube_object_meta_t;

/*
 * Read top's metadata into *m (every string an owned copy): name is required
 * and must not be empty; an empty namespace reads as cluster-scoped. Returns
 * 0, or -1 with top's error set; release what was read with kube_object_meta_free().
 */
int kube_object_decode_meta(const json_decode_scope_t *top, kube_object_meta_t *m);
void kube_object_meta_free(kube_object_meta_t *m);
/* Bytes the strings of *m take (malloc_usable_size), not counting *m itself. */
size_t kube_object_meta_size(const kube_object_meta_t *m);
/* malloc_usable_size(p), 0 for NULL: what one allocation of a projection costs. */
size_t kube_object_usable(const void *p);

/* ---- Watch events and list pages ---- */

typedef enum {
	KUBE_OBJECT_EVENT_ADDED,
	KUBE_OBJECT_EVENT_MODIFIED,
	KUBE_OBJECT_EVENT_DELETED,
	KUBE_OBJECT_EVENT_BOOKMARK,
	KUBE_OBJECT_EVENT_ERROR,
} kube_object_event_type_t;

typedef struct {
	kube_object_event_type_t type;
	/* The event's object, detached from the envelope and owned by the event. */
	cJSON *object;
	/*
	 * The object's metadata.resourceVersion: required for BOOKMARK (all it
	 * carries), copied when present for the other types so the watch can
	 * resume from the last event. NULL for ERROR.
	 */
	char *resource_version;
	/*
	 * BOOKMARK only: the annotation k8s.io/initial-events-end is "true". A
	 * watch that streams the initial state (sendInitialEvents) sends this
	 * bookmark once every object present has been sent.
	 */
	bool initial_events_end;
	/* ERROR only: the Status object's code (410 means relist), reason and message. */
	int error_code;
	char *error_reason;  /* e.g. "Expired"; NULL when absent */
	char *error_message; /* e.g. "too old resource version: 1 (2)"; NULL when absent */
} kube_object_event_t;

/*
 * Decode one watch line: {"type": ..., "object": {...}}. line need not be
 * NUL-terminated. Returns 0, or -1 with err set and *ev zeroed.
 */
int kube_object_decode_event(const char *line, size_t len, kube_object_event_t *ev, char *err,
			    size_t errlen);
void kube_object_event_free(kube_object_event_t *ev);

typedef struct {
	/* The items array, detached from the page and owned by the list. */
	cJSON *items;
	/* metadata.resourceVersion: where the watch that follows the list starts. */
	char *resource_version;
	/* metadata.continue: the token for the next page; NULL on the last page. */
	char *continue_token;
} kube_object_list_t;

/*
 * Decode one page of a list response. A missing or null items array reads as
 * empty. Returns 0, or -1 with err set and *out zeroed.
 */
int kube_object_decode_list(const char *body, size_t len, kube_object_list_t *out, char *err,
			   size_t errlen);
void kube_object_list_free(kube_object_list_t *l);

#endif
