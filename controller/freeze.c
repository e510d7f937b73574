#include "freeze.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json_decode.h"
#include "kube_api.h"
#include "plan_object.h"
#include "xalloc.h"

/* The API's limit on label values. */
#define FREEZE_LABEL_VALUE_MAX 63

char *freeze_parameter_name(const char *plan)
{
	return plan_child_name(FREEZE_NAME_PREFIX, plan);
}

char *freeze_parameter_path(const char *plan)
{
	char *name = freeze_parameter_name(plan);
	if (name == NULL)
		return NULL;
	char *path = kube_path("v1", "configmaps", FREEZE_NAMESPACE, name, NULL);
	free(name);
	return path;
}

/* Items for a comma-separated list: present, and free of the separator. */
static bool freeze_list_valid(const char *const *items, size_t n)
{
	if (n > 0 && items == NULL)
		return false;
	for (size_t i = 0; i < n; i++)
		if (items[i] == NULL || items[i][0] == '\0' || strchr(items[i], ',') != NULL)
			return false;
	return true;
}

static char *freeze_join(const char *const *items, size_t n)
{
	size_t len = 1;
	for (size_t i = 0; i < n; i++)
		len += strlen(items[i]) + 1;
	char *out = xmalloc(len), *p = out;
	for (size_t i = 0; i < n; i++) {
		if (i > 0)
			*p++ = ',';
		size_t l = strlen(items[i]);
		memcpy(p, items[i], l);
		p += l;
	}
	*p = '\0';
	return out;
}

static void freeze_add_string(cJSON *obj, const char *key, const char *value)
{
	cJSON_AddStringToObject(obj, key, value ? value : "");
}

/* The object as compact JSON; the object is freed. */
static char *freeze_print(cJSON *obj)
{
	char *json = cJSON_PrintUnformatted(obj);
	cJSON_Delete(obj);
	if (json == NULL)
		abort(); /* cJSON fails only when out of memory; see xalloc.h */
	return json;
}

/* Server-side apply of json (NULL: refused by its builder) at path, force. */
static int freeze_apply(kube_http_t *http, char *path, char *json, kube_http_cb cb, void *data)
{
	int rc = json && path ? kube_apply(http, path, json, true, cb, data) : -EINVAL;
	free(path);
	free(json);
	return rc;
}

char *freeze_parameter_json(const freeze_state_t *state)
{
	if (state == NULL || !freeze_list_valid(state->device_classes, state->n_classes) ||
	    !freeze_list_valid(state->namespaces, state->n_namespaces) || (state->frozen && state->n_classes == 0))
		return NULL;
	char *name = freeze_parameter_name(state->plan);
	if (name == NULL)
		return NULL;

	cJSON *md, *labels;
	cJSON *cm = plan_object_child_new("v1", "ConfigMap", name, FREEZE_NAMESPACE, state->plan, state->plan_uid, &md,
				      &labels);
	free(name);
	cJSON_AddStringToObject(labels, FREEZE_LABEL_PARAMETER, "true");

	cJSON *data = cJSON_AddObjectToObject(cm, "data");
	cJSON_AddStringToObject(data, "frozen", state->frozen ? "true" : "false");
	freeze_add_string(data, "plan", state->plan);
	freeze_add_string(data, "pool", state->pool);
	freeze_add_string(data, "signal", state->signal);
	freeze_add_string(data, "value", state->value);
	freeze_add_string(data, "threshold", state->threshold);
	freeze_add_string(data, "breachId", state->breach_id);
	freeze_add_string(data, "time", state->time);
	char *classes = freeze_join(state->device_classes, state->n_classes);
	char *namespaces = freeze_join(state->namespaces, state->n_namespaces);
	cJSON_AddStringToObject(data, "deviceClasses", classes);
	cJSON_AddStringToObject(data, "namespaces", namespaces);
	free(classes);
	free(namespaces);
	return freeze_print(cm);
}

int freeze_set(kube_http_t *http, const freeze_state_t *state, kube_http_cb cb, void *data)
{
	char *json = freeze_parameter_json(state);
	return freeze_apply(http, json ? freeze_parameter_path(state->plan) : NULL, json, cb, data);
}

/* ---- the DeviceTaintRule ------------------------------------------------- */

char *freeze_taint_rule_path(const char *plan, const char *api_version)
{
	if (api_version == NULL || api_version[0] == '\0')
		return NULL;
	char *name = freeze_parameter_name(plan);
	if (name == NULL)
		return NULL;
	char *path = kube_path(api_version, "devicetaintrules", NULL, name, NULL);
	free(name);
	return path;
}

/* A label value (what a taint's value must be): at most 63 of [A-Za-z0-9_.-], alphanumeric at both ends. */
static bool freeze_label_value(const char *v)
{
	size_t n = v ? strlen(v) : 0;
	if (n == 0 || n > FREEZE_LABEL_VALUE_MAX || !isalnum((unsigned char)v[0]) || !isalnum((unsigned char)v[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)v[i]) && v[i] != '-' && v[i] != '_' && v[i] != '.')
			return false;
	return true;
}

char *freeze_taint_rule_json(const freeze_taint_t *t)
{
	if (t == NULL || t->plan_uid == NULL || t->plan_uid[0] == '\0' || t->driver == NULL || t->driver[0] == '\0' ||
	    t->api_version == NULL || t->api_version[0] == '\0')
		return NULL;
	char *name = freeze_parameter_name(t->plan);
	if (name == NULL)
		return NULL;
	cJSON *md, *labels;
	cJSON *rule = plan_object_child_new(t->api_version, "DeviceTaintRule", name, NULL, t->plan, t->plan_uid,
					&md, &labels);
	free(name);
	cJSON *annotations = cJSON_AddObjectToObject(md, "annotations");
	freeze_add_string(annotations, "drashift.io/breach", t->breach_id);
	cJSON *spec = cJSON_AddObjectToObject(rule, "spec");
	cJSON *sel = cJSON_AddObjectToObject(spec, "deviceSelector");
	cJSON_AddStringToObject(sel, "driver", t->driver);
	cJSON *taint = cJSON_AddObjectToObject(spec, "taint");
	cJSON_AddStringToObject(taint, "key", FREEZE_TAINT_KEY);
	cJSON_AddStringToObject(taint, "value", freeze_label_value(t->signal) ? t->signal : "");
	cJSON_AddStringToObject(taint, "effect", "NoSchedule");
	return freeze_print(rule);
}

int freeze_taint_set(kube_http_t *http, const freeze_taint_t *taint, kube_http_cb cb, void *data)
{
	char *json = freeze_taint_rule_json(taint);
	return freeze_apply(http, json ? freeze_taint_rule_path(taint->plan, taint->api_version) : NULL, json, cb, data);
}

int freeze_taint_clear(kube_http_t *http, const char *plan, const char *api_version, kube_http_cb cb, void *data)
{
	char *path = freeze_taint_rule_path(plan, api_version);
	if (path == NULL)
		return -EINVAL;
	int rc = kube_delete(http, path, cb, data);
	free(path);
	return rc;
}

/* ---- the tenant boundary ---------------------------------------------------- */

char *tenancy_parameter_json(const plan_t *plan, const char *plan_uid, const tenancy_t *t)
{
	if (plan == NULL || plan->n_device_classes == 0 ||
	    !freeze_list_valid((const char *const *)plan->device_classes, plan->n_device_classes))
		return NULL;
	char *name = plan_child_name(TENANCY_NAME_PREFIX, plan->name);
	if (name == NULL)
		return NULL;
	cJSON *md, *labels;
	cJSON *cm = plan_object_child_new("v1", "ConfigMap", name, FREEZE_NAMESPACE, plan->name, plan_uid, &md, &labels);
	free(name);
	cJSON_AddStringToObject(labels, TENANCY_LABEL_PARAMETER, "true");
	cJSON *data = cJSON_AddObjectToObject(cm, "data");
	cJSON_AddStringToObject(data, "restricted", t->stage == TENANCY_OPEN ? "false" : "true");
	cJSON_AddStringToObject(data, "plan", plan->name);
	cJSON_AddStringToObject(data, "stage", tenancy_stage_name(t->stage));
	char *pools = freeze_join(t->pools, t->n_pools);
	char *classes = freeze_join((const char *const *)plan->device_classes, plan->n_device_classes);
	char *namespaces = freeze_join(t->namespaces, t->n_namespaces);
	char *selector = tenancy_selector_text(t->selector);
	cJSON_AddStringToObject(data, "pools", pools);
	cJSON_AddStringToObject(data, "deviceClasses", classes);
	cJSON_AddStringToObject(data, "namespaces", namespaces);
	cJSON_AddStringToObject(data, "namespaceSelector", selector);
	free(pools);
	free(classes);
	free(namespaces);
	free(selector);
	return freeze_print(cm);
}

int tenancy_parameter_set(kube_http_t *http, const char *json, const char *plan, kube_http_cb cb, void *data)
{
	char *name = plan_child_name(TENANCY_NAME_PREFIX, plan);
	char *path = name ? kube_path("v1", "configmaps", FREEZE_NAMESPACE, name, NULL) : NULL;
	free(name);
	return freeze_apply(http, path, json ? xstrdup(json) : NULL, cb, data);
}

/* ---- the cached parameter ------------------------------------------------ */

/*
 * A ConfigMap from the API server: untrusted bytes like any other object.
 * Only the fields the controller compares are kept; a malformed one is a
 * decode error naming the field, and the cache keeps what it had.
 */
static void freeze_parameter_release(void *proj)
{
	freeze_parameter_t *p = proj;
	char **owned[] = { &p->meta.name, &p->meta.namespace, &p->meta.uid, &p->meta.resource_version, &p->plan,
			   &p->breach_id, &p->pool, &p->signal, &p->value, &p->threshold, &p->time, &p->owner_uid };
	for (size_t i = 0; i < sizeof(owned) / sizeof(owned[0]); i++) {
		free(*owned[i]);
		*owned[i] = NULL;
	}
}

/* The uid of the MigrationPlan that owns the parameter (the first such reference), into *uid. */
static int freeze_parameter_owner(const json_decode_scope_t *md, char **uid)
{
	const cJSON *refs, *item;
	json_decode_scope_t ref;
	char epath[JSON_DECODE_PATH_MAX];
	size_t i = 0;
	if (json_decode_arr(md, "ownerReferences", SIZE_MAX, &refs, NULL) != 0)
		return -1;
	cJSON_ArrayForEach(item, refs)
	{
		const char *kind = NULL;
		if (json_decode_elem(md, "ownerReferences", i++, item, &ref, epath, sizeof(epath)) != 0 ||
		    json_decode_str(&ref, "kind", false, &kind) != 0)
			return -1;
		if (kind && strcmp(kind, "MigrationPlan") == 0)
			return json_decode_dup(&ref, "uid", false, uid);
	}
	return 0;
}

/*
 * A ConfigMap from the API server: untrusted bytes like any other object.
 * Only the fields the controller compares or records are kept; a malformed
 * one is a decode error naming the field, and the cache keeps what it had.
 */
static int freeze_parameter_decode(const cJSON *obj, void *out, char *err, size_t errlen)
{
	freeze_parameter_t *p = out;
	memset(p, 0, sizeof(*p));
	json_decode_scope_t top, md, data;
	char mpath[JSON_DECODE_PATH_MAX], dpath[JSON_DECODE_PATH_MAX];
	const char *frozen = NULL;
	if (json_decode_top(obj, &top, err, errlen) != 0 ||
	    json_decode_obj(&top, "metadata", true, &md, mpath, sizeof(mpath)) != 0 ||
	    json_decode_dup(&md, "name", true, &p->meta.name) != 0 ||
	    json_decode_dup(&md, "namespace", false, &p->meta.namespace) != 0 ||
	    json_decode_dup(&md, "uid", false, &p->meta.uid) != 0 ||
	    json_decode_dup(&md, "resourceVersion", false, &p->meta.resource_version) != 0 ||
	    freeze_parameter_owner(&md, &p->owner_uid) != 0 ||
	    json_decode_obj(&top, "data", false, &data, dpath, sizeof(dpath)) != 0 ||
	    json_decode_dup(&data, "plan", false, &p->plan) != 0 ||
	    json_decode_str(&data, "frozen", false, &frozen) != 0 ||
	    json_decode_dup(&data, "breachId", false, &p->breach_id) != 0 ||
	    json_decode_dup(&data, "pool", false, &p->pool) != 0 ||
	    json_decode_dup(&data, "signal", false, &p->signal) != 0 ||
	    json_decode_dup(&data, "value", false, &p->value) != 0 ||
	    json_decode_dup(&data, "threshold", false, &p->threshold) != 0 ||
	    json_decode_dup(&data, "time", false, &p->time) != 0) {
		freeze_parameter_release(p);
		return -1;
	}
	p->frozen = frozen && strcmp(frozen, "true") == 0;
	return 0;
}

static size_t freeze_parameter_bytes(const void *proj)
{
	(void)proj;
	return sizeof(freeze_parameter_t);
}

const store_kind_t store_kind_freeze_parameters = {
	.resource = "freeze-parameters",
	.path = "/api/v1/namespaces/" FREEZE_NAMESPACE "/configmaps",
	.label_selector = FREEZE_LABEL_PARAMETER "%3Dtrue",
	.size = sizeof(freeze_parameter_t),
	.decode = freeze_parameter_decode,
	.release = freeze_parameter_release,
	.bytes = freeze_parameter_bytes,
};
