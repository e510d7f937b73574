#include "kube_api.h"

#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

#define KUBE_UPDATE_ATTEMPTS 5

static char *kube_escape(const char *s)
{
	char *e = curl_easy_escape(NULL, s, 0);
	char *copy = xstrdup(e);
	curl_free(e);
	return copy;
}

char *kube_path(const char *group_version, const char *resource, const char *ns, const char *name,
		const char *subresource)
{
	const char *prefix = strchr(group_version, '/') ? "/apis/" : "/api/";
	char *path = xasprintf("%s%s", prefix, group_version);
	char *next;
	if (ns) {
		char *e = kube_escape(ns);
		next = xasprintf("%s/namespaces/%s", path, e);
		free(e);
		free(path);
		path = next;
	}
	next = xasprintf("%s/%s", path, resource);
	free(path);
	path = next;
	if (name) {
		char *e = kube_escape(name);
		next = xasprintf("%s/%s", path, e);
		free(e);
		free(path);
		path = next;
	}
	if (subresource) {
		next = xasprintf("%s/%s", path, subresource);
		free(path);
		path = next;
	}
	return path;
}

static int kube_send(kube_http_t *http, const char *method, const char *path, const char *content_type,
		     const char *body, int retry, kube_http_cb cb, void *data)
{
	kube_http_req_t req = {
		.method = method,
		.path = path,
		.content_type = content_type,
		.body = body,
		.body_len = body ? strlen(body) : 0,
		.retry = retry,
	};
	return kube_http_request(http, &req, cb, data, NULL);
}

int kube_get(kube_http_t *http, const char *path, kube_http_cb cb, void *data)
{
	return kube_send(http, "GET", path, NULL, NULL, 1, cb, data);
}

int kube_create(kube_http_t *http, const char *collection_path, const char *json, kube_http_cb cb,
		void *data)
{
	return kube_send(http, "POST", collection_path, "application/json", json, 1, cb, data);
}

int kube_merge_patch(kube_http_t *http, const char *path, const char *patch, kube_http_cb cb, void *data)
{
	return kube_send(http, "PATCH", path, "application/merge-patch+json", patch, 1, cb, data);
}

cJSON *kube_merge_patch_diff(const cJSON *old, const cJSON *want)
{
	cJSON *patch = cJSON_Duplicate(want, true);
	if (patch == NULL)
		abort(); /* cJSON fails only when out of memory; see xalloc.h */
	if (!cJSON_IsObject(old) || !cJSON_IsObject(want))
		return patch;
	const cJSON *o;
	cJSON_ArrayForEach(o, old)
	{
		const cJSON *w = cJSON_GetObjectItemCaseSensitive(want, o->string);
		if (w == NULL)
			cJSON_AddNullToObject(patch, o->string);
		else if (cJSON_IsObject(o) && cJSON_IsObject(w))
			cJSON_ReplaceItemInObjectCaseSensitive(patch, o->string, kube_merge_patch_diff(o, w));
	}
	return patch;
}

int kube_json_patch(kube_http_t *http, const char *path, const char *patch, kube_http_cb cb, void *data)
{
	return kube_send(http, "PATCH", path, "application/json-patch+json", patch, 1, cb, data);
}

int kube_apply(kube_http_t *http, const char *path, const char *json, bool force, kube_http_cb cb,
	       void *data)
{
	return kube_apply_as(http, path, json, KUBE_FIELD_MANAGER, force, cb, data);
}

int kube_apply_as(kube_http_t *http, const char *path, const char *json, const char *field_manager, bool force,
		  kube_http_cb cb, void *data)
{
	char *manager = kube_escape(field_manager);
	char *full = xasprintf("%s%cfieldManager=%s%s", path, strchr(path, '?') ? '&' : '?', manager,
			       force ? "&force=true" : "");
	free(manager);
	/* YAML is a superset of JSON: the apply content type takes either. */
	int rc = kube_send(http, "PATCH", full, "application/apply-patch+yaml", json, 1, cb, data);
	free(full);
	return rc;
}

int kube_delete(kube_http_t *http, const char *path, kube_http_cb cb, void *data)
{
	return kube_send(http, "DELETE", path, NULL, NULL, 1, cb, data);
}

int kube_evict(kube_http_t *http, const char *ns, const char *pod, kube_http_cb cb, void *data)
{
	char *path = kube_path("v1", "pods", ns, pod, "eviction");
	cJSON *ev = cJSON_CreateObject();
	cJSON_AddStringToObject(ev, "apiVersion", "policy/v1");
	cJSON_AddStringToObject(ev, "kind", "Eviction");
	cJSON *md = cJSON_AddObjectToObject(ev, "metadata");
	cJSON_AddStringToObject(md, "name", pod);
	cJSON_AddStringToObject(md, "namespace", ns);
	char *body = cJSON_PrintUnformatted(ev);
	cJSON_Delete(ev);
	int rc = kube_send(http, "POST", path, "application/json", body, 0, cb, data);
	free(body);
	free(path);
	return rc;
}

/* ---- read-modify-write --------------------------------------------------- */

typedef struct {
	kube_http_t *http;
	char *path;
	kube_mutate_cb mutate;
	kube_http_cb cb;
	void *data;
	int attempts;
} kube_update_t;

static void kube_update_read(kube_update_t *u);

static void kube_update_finish(kube_update_t *u, const kube_http_response_t *resp)
{
	u->cb(resp, u->data);
	free(u->path);
	free(u);
}

static void kube_update_on_write(const kube_http_response_t *resp, void *data)
{
	kube_update_t *u = data;
	if (resp->status == 409 && u->attempts < KUBE_UPDATE_ATTEMPTS) {
		kube_update_read(u); /* someone wrote first: read their version and decide again */
		return;
	}
	kube_update_finish(u, resp);
}

static void kube_update_on_read(const kube_http_response_t *resp, void *data)
{
	kube_update_t *u = data;
	if (resp->error != NULL) {
		kube_update_finish(u, resp);
		return;
	}
	cJSON *obj = cJSON_ParseWithLength(resp->body, resp->body_len);
	if (!cJSON_IsObject(obj)) {
		cJSON_Delete(obj);
		kube_http_response_t bad = { .status = 0, .body = "", .error = "the API server's answer is not a JSON object" };
		kube_update_finish(u, &bad);
		return;
	}
	int verdict = u->mutate(obj, u->data);
	if (verdict != 0) {
		cJSON_Delete(obj);
		if (verdict > 0) {
			kube_update_finish(u, resp);
		} else {
			kube_http_response_t refused = { .status = 0, .body = "", .error = "mutation refused" };
			kube_update_finish(u, &refused);
		}
		return;
	}
	/* The read resourceVersion stays in metadata: the PUT fails with 409 if it moved. */
	char *body = cJSON_PrintUnformatted(obj);
	cJSON_Delete(obj);
	int rc = kube_send(u->http, "PUT", u->path, "application/json", body, 1, kube_update_on_write, u);
	free(body);
	if (rc != 0) {
		kube_http_response_t failed = { .status = 0, .body = "", .error = "cannot start the write" };
		kube_update_finish(u, &failed);
	}
}

static void kube_update_read(kube_update_t *u)
{
	u->attempts++;
	if (kube_get(u->http, u->path, kube_update_on_read, u) != 0) {
		kube_http_response_t failed = { .status = 0, .body = "", .error = "cannot start the read" };
		kube_update_finish(u, &failed);
	}
}

int kube_update(kube_http_t *http, const char *path, kube_mutate_cb mutate, kube_http_cb cb, void *data)
{
	kube_update_t *u = xcalloc(1, sizeof(*u));
	u->http = http;
	u->path = xstrdup(path);
	u->mutate = mutate;
	u->cb = cb;
	u->data = data;
	u->attempts = 1;
	if (kube_get(http, path, kube_update_on_read, u) != 0) {
		free(u->path);
		free(u);
		return -1;
	}
	return 0;
}
