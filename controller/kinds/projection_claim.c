/* The ResourceClaim projection: its decoder, free and size; see projection.h. */
#include "projection_decode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

static int proj__claim_classes(const json_decode_scope_t *spec, projection_claim_t *out)
{
	char dpath[JSON_DECODE_PATH_MAX], rpath[JSON_DECODE_PATH_MAX];
	char xpath[JSON_DECODE_PATH_MAX], fpath[JSON_DECODE_PATH_MAX];
	json_decode_scope_t devices, req, exactly, sub;
	const cJSON *reqs, *subs, *item, *s;
	size_t i = 0;
	proj__names_t set = PROJ__NAMES_INIT;
	if (json_decode_obj(spec, "devices", false, &devices, dpath, sizeof(dpath)) != 0 ||
	    json_decode_arr(&devices, "requests", SIZE_MAX, &reqs, NULL) != 0)
		goto fail;
	cJSON_ArrayForEach(item, reqs)
	{
		if (json_decode_elem(&devices, "requests", i++, item, &req, rpath,
				     sizeof(rpath)) != 0 ||
		    json_decode_obj(&req, "exactly", false, &exactly, xpath, sizeof(xpath)) != 0 ||
		    proj__names_add_member(&exactly, "deviceClassName", &set) !=
			    0 ||
		    json_decode_arr(&req, "firstAvailable", SIZE_MAX, &subs, NULL) != 0)
			goto fail;
		size_t j = 0;
		cJSON_ArrayForEach(s, subs)
		{
			if (json_decode_elem(&req, "firstAvailable", j++, s, &sub, fpath,
					     sizeof(fpath)) != 0 ||
			    proj__names_add_member(&sub, "deviceClassName", &set) !=
				    0)
				goto fail;
		}
	}
	proj__names_copy(&set, &out->device_classes, &out->n_device_classes);
	proj__names_free(&set);
	return 0;
fail:
	proj__names_free(&set);
	return -1;
}

/* nodeSelectorTerms[0].matchFields[]: metadata.name In [node] pins the allocation to node. */
static int proj__claim_node(const json_decode_scope_t *alloc, char **out)
{
	char npath[JSON_DECODE_PATH_MAX], tpath[JSON_DECODE_PATH_MAX], fpath[JSON_DECODE_PATH_MAX];
	json_decode_scope_t sel, term, field;
	const cJSON *terms, *fields, *item, *values;
	size_t i = 0;
	if (json_decode_obj(alloc, "nodeSelector", false, &sel, npath, sizeof(npath)) != 0 ||
	    json_decode_arr(&sel, "nodeSelectorTerms", SIZE_MAX, &terms, NULL) != 0)
		return -1;
	if (cJSON_GetArraySize(terms) == 0)
		return 0;
	if (json_decode_elem(&sel, "nodeSelectorTerms", 0, cJSON_GetArrayItem(terms, 0), &term,
			     tpath, sizeof(tpath)) != 0 ||
	    json_decode_arr(&term, "matchFields", SIZE_MAX, &fields, NULL) != 0)
		return -1;
	cJSON_ArrayForEach(item, fields)
	{
		const char *key, *op;
		if (json_decode_elem(&term, "matchFields", i++, item, &field, fpath,
				     sizeof(fpath)) != 0 ||
		    json_decode_str(&field, "key", true, &key) != 0 ||
		    json_decode_str(&field, "operator", true, &op) != 0 ||
		    json_decode_arr(&field, "values", SIZE_MAX, &values, NULL) != 0)
			return -1;
		if (strcmp(key, "metadata.name") != 0 || strcmp(op, "In") != 0)
			continue;
		const cJSON *v = cJSON_GetArrayItem(values, 0);
		if (v == NULL)
			continue;
		if (!cJSON_IsString(v) || v->valuestring == NULL)
			return json_decode_fail(&field, "values[0]", "not a string");
		*out = xstrdup(v->valuestring);
		return 0;
	}
	return 0;
}

static int proj__claim_status(const json_decode_scope_t *status, projection_claim_t *out)
{
	char apath[JSON_DECODE_PATH_MAX], dpath[JSON_DECODE_PATH_MAX], epath[JSON_DECODE_PATH_MAX];
	char cpath[JSON_DECODE_PATH_MAX];
	json_decode_scope_t alloc, devs, e, c;
	const cJSON *arr, *conds, *item, *ci;
	size_t i, n;

	if (json_decode_obj(status, "allocation", false, &alloc, apath, sizeof(apath)) != 0 ||
	    json_decode_obj(&alloc, "devices", false, &devs, dpath, sizeof(dpath)) != 0 ||
	    json_decode_arr(&devs, "results", SIZE_MAX, &arr, &n) != 0)
		return -1;
	out->allocated = alloc.obj != NULL;
	if (n > 0) {
		out->results = xcalloc(n, sizeof(*out->results));
		out->n_results = n;
	}
	i = 0;
	cJSON_ArrayForEach(item, arr)
	{
		projection_device_result_t *r = &out->results[i];
		if (json_decode_elem(&devs, "results", i, item, &e, epath, sizeof(epath)) != 0 ||
		    json_decode_dup(&e, "request", true, &r->request) != 0 ||
		    json_decode_dup(&e, "driver", true, &r->driver) != 0 ||
		    json_decode_dup(&e, "pool", true, &r->pool) != 0 ||
		    json_decode_dup(&e, "device", true, &r->device) != 0)
			return -1;
		i++;
	}
	if (proj__claim_node(&alloc, &out->node_name) != 0)
		return -1;

	if (json_decode_arr(status, "reservedFor", SIZE_MAX, &arr, &n) != 0)
		return -1;
	if (n > 0) {
		out->reserved_for = xcalloc(n, sizeof(*out->reserved_for));
		out->n_reserved_for = n;
	}
	i = 0;
	cJSON_ArrayForEach(item, arr)
	{
		projection_consumer_t *r = &out->reserved_for[i];
		if (json_decode_elem(status, "reservedFor", i, item, &e, epath, sizeof(epath)) !=
			    0 ||
		    json_decode_dup(&e, "resource", true, &r->resource) != 0 ||
		    json_decode_dup(&e, "name", true, &r->name) != 0 ||
		    json_decode_dup(&e, "uid", true, &r->uid) != 0)
			return -1;
		i++;
	}

	if (json_decode_arr(status, "devices", SIZE_MAX, &arr, NULL) != 0)
		return -1;
	i = 0;
	cJSON_ArrayForEach(item, arr)
	{
		if (json_decode_elem(status, "devices", i++, item, &e, epath, sizeof(epath)) != 0 ||
		    json_decode_arr(&e, "conditions", SIZE_MAX, &conds, NULL) != 0)
			return -1;
		size_t j = 0;
		cJSON_ArrayForEach(ci, conds)
		{
			const char *st;
			if (json_decode_elem(&e, "conditions", j++, ci, &c, cpath, sizeof(cpath)) !=
				    0 ||
			    json_decode_str(&c, "status", true, &st) != 0)
				return -1;
			out->device_conditions_false += strcmp(st, "False") == 0;
		}
	}
	return 0;
}

/* The scheduler's mark on a claim it made for a pod's extended resource (KEP-5004). */
static int proj__claim_extended(const json_decode_scope_t *top, bool *out)
{
	char mpath[JSON_DECODE_PATH_MAX], apath[JSON_DECODE_PATH_MAX];
	json_decode_scope_t md, ann;
	const char *v;
	if (json_decode_obj(top, "metadata", false, &md, mpath, sizeof(mpath)) != 0 ||
	    json_decode_obj(&md, "annotations", false, &ann, apath, sizeof(apath)) != 0 ||
	    json_decode_str(&ann, "resource.kubernetes.io/extended-resource-claim", false, &v) != 0)
		return -1;
	*out = v != NULL && strcmp(v, "true") == 0;
	return 0;
}

/* metadata.finalizers[] holds the claim controller's delete-protection. */
static int proj__claim_finalizer(const json_decode_scope_t *top, projection_claim_t *out)
{
	char path[JSON_DECODE_PATH_MAX];
	json_decode_scope_t md;
	const cJSON *finalizers, *f;
	if (json_decode_obj(top, "metadata", true, &md, path, sizeof(path)) != 0 ||
	    json_decode_arr(&md, "finalizers", SIZE_MAX, &finalizers, NULL) != 0)
		return -1;
	cJSON_ArrayForEach(f, finalizers)
		if (cJSON_IsString(f) && strcmp(f->valuestring, PROJECTION_CLAIM_FINALIZER) == 0)
			out->delete_protected = true;
	return 0;
}

int projection_decode_claim(const cJSON *obj, projection_claim_t *out, char *err, size_t errlen)
{
	char spath[JSON_DECODE_PATH_MAX], stpath[JSON_DECODE_PATH_MAX];
	json_decode_scope_t top, spec, status;
	memset(out, 0, sizeof(*out));
	if (json_decode_top(obj, &top, err, errlen) != 0)
		return -1;
	if (kube_object_decode_meta(&top, &out->meta) != 0 ||
	    proj__owner(&top, "Pod", NULL, &out->owner_pod) != 0 || proj__claim_finalizer(&top, out) != 0 ||
	    proj__claim_extended(&top, &out->extended) != 0 ||
	    json_decode_obj(&top, "spec", false, &spec, spath, sizeof(spath)) != 0 ||
	    json_decode_obj(&top, "status", false, &status, stpath, sizeof(stpath)) != 0 ||
	    proj__claim_classes(&spec, out) != 0 || proj__claim_status(&status, out) != 0)
		goto fail;
	return 0;
fail:
	projection_free_claim(out);
	return -1;
}

void projection_free_claim(projection_claim_t *p)
{
	kube_object_meta_free(&p->meta);
	proj__free_strings(p->device_classes, p->n_device_classes);
	for (size_t i = 0; i < p->n_results; i++) {
		free(p->results[i].request);
		free(p->results[i].driver);
		free(p->results[i].pool);
		free(p->results[i].device);
	}
	free(p->results);
	free(p->node_name);
	for (size_t i = 0; i < p->n_reserved_for; i++) {
		free(p->reserved_for[i].resource);
		free(p->reserved_for[i].name);
		free(p->reserved_for[i].uid);
	}
	free(p->reserved_for);
	free(p->owner_pod);
	memset(p, 0, sizeof(*p));
}


size_t projection_size_claim(const projection_claim_t *p)
{
	size_t s = sizeof(*p) + kube_object_meta_size(&p->meta) +
		   proj__size_strings(p->device_classes, p->n_device_classes) +
		   kube_object_usable(p->results) + kube_object_usable(p->node_name) +
		   kube_object_usable(p->reserved_for) + kube_object_usable(p->owner_pod);
	for (size_t i = 0; i < p->n_results; i++) {
		s += kube_object_usable(p->results[i].request) + kube_object_usable(p->results[i].driver) +
		     kube_object_usable(p->results[i].pool) + kube_object_usable(p->results[i].device);
	}
	for (size_t i = 0; i < p->n_reserved_for; i++) {
		s += kube_object_usable(p->reserved_for[i].resource) +
		     kube_object_usable(p->reserved_for[i].name) + kube_object_usable(p->reserved_for[i].uid);
	}
	return s;
}

static void proj__claim_pack_walk(proj__pack_t *k, const void *from, void *to)
{
	const projection_claim_t *src = from;
	projection_claim_t *dst = to;
	proj__pack_meta(k, &src->meta, &dst->meta);
	dst->device_classes = proj__pack_strings(k, src->device_classes, src->n_device_classes, true);
	dst->results = proj__pack_array(k, src->n_results, sizeof(*dst->results));
	for (size_t i = 0; i < src->n_results; i++) {
		const projection_device_result_t *r = &src->results[i];
		projection_device_result_t packed = {
			.request = proj__pack_shared(k, r->request),
			.driver = proj__pack_shared(k, r->driver),
			.pool = proj__pack_shared(k, r->pool),
			.device = proj__pack_shared(k, r->device),
		};
		if (dst->results != NULL)
			dst->results[i] = packed;
	}
	dst->node_name = proj__pack_shared(k, src->node_name);
	dst->reserved_for = proj__pack_array(k, src->n_reserved_for, sizeof(*dst->reserved_for));
	for (size_t i = 0; i < src->n_reserved_for; i++) {
		const projection_consumer_t *c = &src->reserved_for[i];
		projection_consumer_t packed = {
			.resource = proj__pack_shared(k, c->resource),
			.name = proj__pack_str(k, c->name),
			.uid = proj__pack_str(k, c->uid),
		};
		if (dst->reserved_for != NULL)
			dst->reserved_for[i] = packed;
	}
	dst->owner_pod = proj__pack_str(k, src->owner_pod);
}

projection_claim_t *projection_pack_claim(projection_claim_t *p, strmap_t *shared)
{
	projection_claim_t *packed = proj__pack(p, sizeof(*p), shared, proj__claim_pack_walk);
	projection_free_claim(p);
	return packed;
}

void projection_free_packed_claim(projection_claim_t *p, strmap_t *shared)
{
	proj__unshare_meta(shared, &p->meta);
	proj__unshare_strings(shared, p->device_classes, p->n_device_classes);
	for (size_t i = 0; i < p->n_results; i++) {
		proj__unshare(shared, p->results[i].request);
		proj__unshare(shared, p->results[i].driver);
		proj__unshare(shared, p->results[i].pool);
		proj__unshare(shared, p->results[i].device);
	}
	proj__unshare(shared, p->node_name);
	for (size_t i = 0; i < p->n_reserved_for; i++)
		proj__unshare(shared, p->reserved_for[i].resource);
	free(p);
}
