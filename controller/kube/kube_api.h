/*
 * The Kubernetes verbs drashift uses, on top of kube_http: paths, content
 * types, and the read-modify-write loop that survives conflicting writers.
 *
 * Every function follows kube_http's promise: when it returns non-zero the
 * callback is never called; otherwise it is called exactly once from the loop.
 */
#ifndef DRASHIFT_KUBE_API_H
#define DRASHIFT_KUBE_API_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "kube_http.h"

#define KUBE_FIELD_MANAGER "drashift"

/*
 * The path of a resource: group_version is "v1" for the core group or
 * "group/version"; ns NULL for cluster-scoped; name NULL for the collection;
 * subresource NULL or "status", "eviction", ... Names are escaped.
 */
char *kube_path(const char *group_version, const char *resource, const char *ns, const char *name,
		const char *subresource);

int kube_get(kube_http_t *http, const char *path, kube_http_cb cb, void *data);
int kube_create(kube_http_t *http, const char *collection_path, const char *json, kube_http_cb cb,
		void *data);
/* RFC 7386 JSON merge patch. */
int kube_merge_patch(kube_http_t *http, const char *path, const char *patch, kube_http_cb cb, void *data);

/*
 * The RFC 7386 merge patch that turns old into want: want's members, plus a
 * null for every member of old that want lacks, at every depth where both
 * are objects (a merge patch leaves members it does not name alone, so a
 * key dropped from want would otherwise stay on the server). Arrays and
 * other values are replaced whole. old may be NULL. The caller frees it.
 */
cJSON *kube_merge_patch_diff(const cJSON *old, const cJSON *want);
/* RFC 6902 JSON patch (lets a "test" operation guard the change). */
int kube_json_patch(kube_http_t *http, const char *path, const char *patch, kube_http_cb cb, void *data);
/* Server-side apply as field manager "drashift"; force takes fields from other managers. */
int kube_apply(kube_http_t *http, const char *path, const char *json, bool force, kube_http_cb cb,
	       void *data);
/* Server-side apply as field_manager (kubectl-drashift writes as a person, not as the operator). */
int kube_apply_as(kube_http_t *http, const char *path, const char *json, const char *field_manager, bool force,
		  kube_http_cb cb, void *data);
int kube_delete(kube_http_t *http, const char *path, kube_http_cb cb, void *data);
/*
 * Ask the Eviction API to evict a pod, so PodDisruptionBudgets hold. Not
 * retried: 429 means a budget forbids it now, and only the caller knows
 * whether to try again later.
 */
int kube_evict(kube_http_t *http, const char *ns, const char *pod, kube_http_cb cb, void *data);

/*
 * Read-modify-write. mutate gets the object as just read and changes it in
 * place; it returns 0 to write it back, 1 when nothing needs writing (the
 * callback then sees the read object with status 200), -1 to give up (the
 * callback sees status 0 and error "mutation refused"). The write carries the
 * read resourceVersion; on 409 Conflict the object is read again and mutate
 * runs again on the fresh copy, up to 5 attempts.
 */
typedef int (*kube_mutate_cb)(cJSON *obj, void *data);
int kube_update(kube_http_t *http, const char *path, kube_mutate_cb mutate, kube_http_cb cb, void *data);

#endif
