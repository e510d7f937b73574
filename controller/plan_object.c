#include "plan_object.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_decode.h"
#include "xalloc.h"

/* The API's limit on label values. */
#define PLAN_OBJECT_LABEL_VALUE_MAX 63

cJSON *plan_object_child_new(const char *api_version, const char *kind, const char *name, const char *ns,
			     const char *plan, const char *plan_uid, cJSON **metadata, cJSON **labels)
{
	cJSON *obj = cJSON_CreateObject();
	cJSON_AddStringToObject(obj, "apiVersion", api_version);
	cJSON_AddStringToObject(obj, "kind", kind);
	cJSON *md = cJSON_AddObjectToObject(obj, "metadata");
	cJSON_AddStringToObject(md, "name", name);
	if (ns)
		cJSON_AddStringToObject(md, "namespace", ns);
	cJSON *l = cJSON_AddObjectToObject(md, "labels");
	cJSON_AddStringToObject(l, "app.kubernetes.io/managed-by", "drashift");
	cJSON_AddStringToObject(l, "app.kubernetes.io/part-of", "drashift");
	/* A plan name is a valid label value when it is short enough; the object always names it whole elsewhere. */
	if (strlen(plan) <= PLAN_OBJECT_LABEL_VALUE_MAX)
		cJSON_AddStringToObject(l, PLAN_OBJECT_LABEL_PLAN, plan);
	/* Owned by the plan: deleting the plan deletes the object with it. */
	if (plan_uid && plan_uid[0]) {
		cJSON *owner = cJSON_CreateObject();
		cJSON_AddStringToObject(owner, "apiVersion", "drashift.io/v1alpha1");
		cJSON_AddStringToObject(owner, "kind", "MigrationPlan");
		cJSON_AddStringToObject(owner, "name", plan);
		cJSON_AddStringToObject(owner, "uid", plan_uid);
		cJSON_AddItemToArray(cJSON_AddArrayToObject(md, "ownerReferences"), owner);
	}
	*metadata = md;
	*labels = l;
	return obj;
}

static char *plan_object_string(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsString(v) ? xstrdup(v->valuestring) : NULL;
}

/* The zoneinfo's largest files are a few KiB; anything past this is not one. */
#define PLAN_OBJECT_ZONE_MAX (1 << 20)

/*
 * Load each window's time zone from the system zoneinfo ($TZDIR, default
 * /usr/share/zoneinfo, which the operator image carries). An unknown zone
 * makes the plan invalid with a line naming the field: never a guess.
 */
static int plan_object_load_zones(plan_t *plan, char *err, size_t errlen)
{
	const char *dir = getenv("TZDIR");
	if (dir == NULL || dir[0] == '\0')
		dir = "/usr/share/zoneinfo";
	for (size_t i = 0; i < plan->n_windows; i++) {
		window_t *w = &plan->windows[i];
		char *path = xasprintf("%s/%s", dir, w->time_zone);
		uint8_t *data = xmalloc(PLAN_OBJECT_ZONE_MAX);
		FILE *f = fopen(path, "rb");
		size_t n = f ? fread(data, 1, PLAN_OBJECT_ZONE_MAX, f) : 0;
		char why[160] = "not found";
		int rc = f != NULL && n < PLAN_OBJECT_ZONE_MAX ? tz_parse(data, n, &w->zone, why, sizeof(why)) : -1;
		if (f != NULL && n >= PLAN_OBJECT_ZONE_MAX)
			snprintf(why, sizeof(why), "larger than %d bytes", PLAN_OBJECT_ZONE_MAX);
		if (rc != 0)
			snprintf(err, errlen, "spec.windows[%zu].timeZone: unknown time zone \"%s\" (%s: %s)", i, w->time_zone,
				 path, why);
		if (f != NULL)
			fclose(f);
		free(data);
		free(path);
		if (rc != 0)
			return -1;
	}
	return 0;
}

/*
 * A plan that fails validation is still cached (valid = false): the
 * controller must be able to say so in its status, and must never act on it.
 */
static int plan_object_decode(const cJSON *obj, void *out, char *err, size_t errlen)
{
	plan_object_t *p = out;
	memset(p, 0, sizeof(*p));
	const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	p->meta.name = plan_object_string(md, "name");
	if (p->meta.name == NULL || p->meta.name[0] == '\0') {
		free(p->meta.name);
		snprintf(err, errlen, "metadata.name: missing");
		return -1;
	}
	p->meta.uid = plan_object_string(md, "uid");
	p->meta.resource_version = plan_object_string(md, "resourceVersion");
	p->meta.deleting = cJSON_GetObjectItemCaseSensitive(md, "deletionTimestamp") != NULL;
	const cJSON *finalizers = cJSON_GetObjectItemCaseSensitive(md, "finalizers");
	const cJSON *f;
	if (cJSON_IsArray(finalizers)) {
		p->finalizers = cJSON_Duplicate(finalizers, true);
		cJSON_ArrayForEach(f, finalizers)
		{
			if (cJSON_IsString(f) && strcmp(f->valuestring, PLAN_FINALIZER) == 0)
				p->releases_nodes = true;
		}
	}
	const cJSON *force = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(md, "annotations"),
							      PLAN_ANN_FORCE_DELETE);
	p->force_delete = cJSON_IsString(force) && strcmp(force->valuestring, "true") == 0;
	const cJSON *gen = cJSON_GetObjectItemCaseSensitive(md, "generation");
	if (!json_number_int(gen, &p->generation) || p->generation < 0)
		p->generation = 0; /* plan_decode refuses it and says why */
	char why[512];
	if (plan_decode(obj, &p->plan, why, sizeof(why)) == 0 && plan_object_load_zones(&p->plan, why, sizeof(why)) == 0) {
		p->valid = true;
	} else {
		plan_free(&p->plan);
		p->invalid_reason = xstrdup(why);
	}
	const cJSON *status = cJSON_GetObjectItemCaseSensitive(obj, "status");
	if (cJSON_IsObject(status))
		p->status = cJSON_Duplicate(status, true);
	return 0;
}

static void plan_object_release(void *proj)
{
	plan_object_t *p = proj;
	free(p->meta.name);
	free(p->meta.uid);
	free(p->meta.resource_version);
	free(p->invalid_reason);
	if (p->valid)
		plan_free(&p->plan);
	cJSON_Delete(p->status);
	cJSON_Delete(p->finalizers);
}

static size_t plan_object_bytes(const void *proj)
{
	(void)proj;
	return sizeof(plan_object_t); /* a handful of plans: not worth counting their parts */
}

const store_kind_t store_kind_plans = {
	.resource = "migrationplans",
	.path = "/apis/drashift.io/v1alpha1/migrationplans",
	.size = sizeof(plan_object_t),
	.decode = plan_object_decode,
	.release = plan_object_release,
	.bytes = plan_object_bytes,
};

const cJSON *plan_object_pool_status(const plan_object_t *p, const char *pool_name)
{
	const cJSON *pools = cJSON_GetObjectItemCaseSensitive(p->status, "pools");
	const cJSON *pool;
	cJSON_ArrayForEach(pool, pools)
	{
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(pool, "name");
		if (cJSON_IsString(name) && strcmp(name->valuestring, pool_name) == 0)
			return pool;
	}
	return NULL;
}

bool plan_object_preflight_recorded(const plan_object_t *p)
{
	const cJSON *g = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(p->status, "preflight"),
							  "passedGeneration");
	return cJSON_IsNumber(g) && g->valuedouble == (double)p->generation;
}
