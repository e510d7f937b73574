/* The Pod projection: its decoder, free and size; see projection.h. */
#include "projection_decode.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

/*
 * A pod's extended resources: a domain-prefixed name outside kubernetes.io
 * and its subdomains, which are reserved for Kubernetes' own resources.
 */
static bool proj__pod_extended(const char *name)
{
	const char *slash = strchr(name, '/');
	if (slash == NULL)
		return false;
	size_t dlen = (size_t)(slash - name);
	static const char k8s[] = "kubernetes.io";
	size_t klen = sizeof(k8s) - 1;
	if (dlen == klen && memcmp(name, k8s, klen) == 0)
		return false;
	if (dlen > klen && name[dlen - klen - 1] == '.' && memcmp(slash - klen, k8s, klen) == 0)
		return false;
	return true;
}

static projection_pod_phase_t proj__pod_phase(const char *s)
{
	if (s == NULL)
		return PROJECTION_POD_UNKNOWN;
	if (strcmp(s, "Pending") == 0)
		return PROJECTION_POD_PENDING;
	if (strcmp(s, "Running") == 0)
		return PROJECTION_POD_RUNNING;
	if (strcmp(s, "Succeeded") == 0)
		return PROJECTION_POD_SUCCEEDED;
	if (strcmp(s, "Failed") == 0)
		return PROJECTION_POD_FAILED;
	return PROJECTION_POD_UNKNOWN;
}

/* One container's extended-resource needs: requests, with limits where requests are silent. */
static int proj__container_requests(const json_decode_scope_t *c, proj__qset_t *out)
{
	char rpath[JSON_DECODE_PATH_MAX], qpath[JSON_DECODE_PATH_MAX], lpath[JSON_DECODE_PATH_MAX];
	json_decode_scope_t res, req, lim;
	proj__qset_clear(out);
	if (json_decode_obj(c, "resources", false, &res, rpath, sizeof(rpath)) != 0 ||
	    json_decode_obj(&res, "requests", false, &req, qpath, sizeof(qpath)) != 0 ||
	    json_decode_obj(&res, "limits", false, &lim, lpath, sizeof(lpath)) != 0 ||
	    proj__qset_read(&req, out, proj__pod_extended, false) != 0 ||
	    proj__qset_read(&lim, out, proj__pod_extended, true) != 0)
		return -1;
	return 0;
}

/* Working sets for the pod's request arithmetic. */
typedef struct {
	proj__qset_t total;     /* regular containers plus sidecars */
	proj__qset_t sidecars;  /* restartable init containers started so far */
	proj__qset_t init_max;  /* the largest need of any init container step */
	proj__qset_t container; /* the container being read */
	proj__qset_t step;      /* an init container's need while it runs */
} proj__pod_sets_t;

/*
 * The effective extended-resource requests, the way the scheduler's
 * resource helper computes them: regular containers run together (sum);
 * init containers run one at a time, each next to the sidecars (init
 * containers with restartPolicy Always) started before it; sidecars keep
 * running and add to the sum. The pod needs the max of the two.
 */
static int proj__pod_requests(const json_decode_scope_t *spec, projection_pod_t *out)
{
	char cpath[JSON_DECODE_PATH_MAX];
	json_decode_scope_t c;
	const cJSON *containers, *inits, *item;
	size_t i;
	int rc = -1;
	proj__pod_sets_t w = {PROJ__QSET_INIT, PROJ__QSET_INIT, PROJ__QSET_INIT, PROJ__QSET_INIT,
			      PROJ__QSET_INIT};

	if (json_decode_arr(spec, "containers", SIZE_MAX, &containers, NULL) != 0 ||
	    json_decode_arr(spec, "initContainers", SIZE_MAX, &inits, NULL) != 0)
		goto done;
	i = 0;
	cJSON_ArrayForEach(item, containers)
	{
		if (json_decode_elem(spec, "containers", i++, item, &c, cpath, sizeof(cpath)) !=
			    0 ||
		    proj__container_requests(&c, &w.container) != 0)
			goto done;
		if (proj__qset_add(&w.total, &w.container) != 0) {
			proj__qset_overflow(&c, "resources");
			goto done;
		}
	}
	i = 0;
	cJSON_ArrayForEach(item, inits)
	{
		const char *restart;
		if (json_decode_elem(spec, "initContainers", i++, item, &c, cpath,
				     sizeof(cpath)) != 0 ||
		    json_decode_str(&c, "restartPolicy", false, &restart) != 0 ||
		    proj__container_requests(&c, &w.container) != 0)
			goto done;
		if (restart != NULL && strcmp(restart, "Always") == 0) {
			if (proj__qset_add(&w.total, &w.container) != 0 ||
			    proj__qset_add(&w.sidecars, &w.container) != 0) {
				proj__qset_overflow(&c, "resources");
				goto done;
			}
			proj__qset_assign(&w.step, &w.sidecars);
		} else {
			proj__qset_assign(&w.step, &w.container);
			if (proj__qset_add(&w.step, &w.sidecars) != 0) {
				proj__qset_overflow(&c, "resources");
				goto done;
			}
		}
		proj__qset_max(&w.init_max, &w.step);
	}
	proj__qset_max(&w.total, &w.init_max);
	size_t n = 0;
	for (size_t r = 0; r < w.total.names.n; r++)
		n += w.total.count[r] > 0;
	if (n > UINT32_MAX) {
		json_decode_fail(spec, "containers", "more than %" PRIu32 " extended resources", UINT32_MAX);
		goto done;
	}
	proj__qset_copy(&w.total, true, &out->requests, &n);
	out->n_requests = (uint32_t)n;
	rc = 0;
done:
	proj__qset_free(&w.total);
	proj__qset_free(&w.sidecars);
	proj__qset_free(&w.init_max);
	proj__qset_free(&w.container);
	proj__qset_free(&w.step);
	return rc;
}

/* The claims the pod uses, from its spec and from what the controllers recorded in status. */
static int proj__pod_claims(const json_decode_scope_t *spec, const json_decode_scope_t *status,
			    projection_pod_t *out)
{
	char epath[JSON_DECODE_PATH_MAX], xpath[JSON_DECODE_PATH_MAX];
	json_decode_scope_t e, ext;
	const cJSON *arr, *item;
	size_t i;
	proj__names_t set = PROJ__NAMES_INIT, dra = PROJ__NAMES_INIT;

	if (json_decode_arr(spec, "resourceClaims", SIZE_MAX, &arr, NULL) != 0)
		goto fail;
	i = 0;
	cJSON_ArrayForEach(item, arr)
	{
		if (json_decode_elem(spec, "resourceClaims", i++, item, &e, epath,
				     sizeof(epath)) != 0 ||
		    proj__names_add_member(&e, "resourceClaimName", &set) != 0)
			goto fail;
	}
	if (json_decode_arr(status, "resourceClaimStatuses", SIZE_MAX, &arr, NULL) != 0)
		goto fail;
	i = 0;
	cJSON_ArrayForEach(item, arr)
	{
		if (json_decode_elem(status, "resourceClaimStatuses", i++, item, &e, epath,
				     sizeof(epath)) != 0 ||
		    proj__names_add_member(&e, "resourceClaimName", &set) != 0)
			goto fail;
	}
	if (json_decode_obj(status, "extendedResourceClaimStatus", false, &ext, xpath,
			    sizeof(xpath)) != 0 ||
	    proj__names_add_member(&ext, "resourceClaimName", &set) != 0 ||
	    json_decode_arr(&ext, "requestMappings", SIZE_MAX, &arr, NULL) != 0)
		goto fail;
	i = 0;
	cJSON_ArrayForEach(item, arr)
	{
		if (json_decode_elem(&ext, "requestMappings", i++, item, &e, epath, sizeof(epath)) != 0 ||
		    proj__names_add_member(&e, "resourceName", &dra) != 0)
			goto fail;
	}
	if (set.n > UINT32_MAX || dra.n > UINT32_MAX) {
		json_decode_fail(spec, "resourceClaims", "more than %" PRIu32 " claims", UINT32_MAX);
		goto fail;
	}
	size_t n = 0;
	proj__names_copy(&set, &out->claims, &n);
	out->n_claims = (uint32_t)n;
	n = 0;
	proj__names_copy(&dra, &out->dra_resources, &n);
	out->n_dra_resources = (uint32_t)n;
	proj__names_free(&set);
	proj__names_free(&dra);
	return 0;
fail:
	proj__names_free(&set);
	proj__names_free(&dra);
	return -1;
}

int projection_decode_pod(const cJSON *obj, projection_pod_t *out, char *err, size_t errlen)
{
	char spath[JSON_DECODE_PATH_MAX], stpath[JSON_DECODE_PATH_MAX];
	char condpath[JSON_DECODE_PATH_MAX];
	json_decode_scope_t top, spec, status, cond;
	const char *phase, *preemption, *reason;
	int64_t priority;
	projection_condition_t ready;
	memset(out, 0, sizeof(*out));
	if (json_decode_top(obj, &top, err, errlen) != 0)
		return -1;
	if (kube_object_decode_meta(&top, &out->meta) != 0 ||
	    json_decode_obj(&top, "spec", false, &spec, spath, sizeof(spath)) != 0 ||
	    json_decode_obj(&top, "status", false, &status, stpath, sizeof(stpath)) != 0 ||
	    json_decode_dup(&spec, "nodeName", false, &out->node_name) != 0 ||
	    json_decode_int(&spec, "priority", false, &priority, NULL) != 0 ||
	    json_decode_str(&spec, "preemptionPolicy", false, &preemption) != 0 ||
	    json_decode_str(&status, "phase", false, &phase) != 0)
		goto fail;
	out->preempts = priority > 0 && (preemption == NULL || strcmp(preemption, "Never") != 0);
	if (out->node_name != NULL && out->node_name[0] == '\0') {
		free(out->node_name);
		out->node_name = NULL;
	}
	out->phase = proj__pod_phase(phase);

	if (proj__condition(&status, "Ready", &cond, condpath, sizeof(condpath), &ready) != 0 ||
	    json_decode_time(&cond, "lastTransitionTime", &out->ready_time, NULL) != 0)
		goto fail;
	out->ready = ready == PROJECTION_CONDITION_TRUE;
	if (proj__condition(&status, "PodScheduled", &cond, condpath, sizeof(condpath),
			    &out->scheduled) != 0 ||
	    json_decode_str(&cond, "reason", false, &reason) != 0 ||
	    json_decode_time(&cond, "lastTransitionTime", &out->scheduled_time, NULL) != 0)
		goto fail;
	out->unschedulable = out->scheduled == PROJECTION_CONDITION_FALSE && reason != NULL &&
			     strcmp(reason, "Unschedulable") == 0;

	if (proj__pod_claims(&spec, &status, out) != 0 || proj__pod_requests(&spec, out) != 0)
		goto fail;
	return 0;
fail:
	projection_free_pod(out);
	return -1;
}

void projection_free_pod(projection_pod_t *p)
{
	kube_object_meta_free(&p->meta);
	free(p->node_name);
	proj__free_strings(p->claims, p->n_claims);
	proj__free_strings(p->dra_resources, p->n_dra_resources);
	proj__free_quantities(p->requests, p->n_requests);
	memset(p, 0, sizeof(*p));
}


size_t projection_size_pod(const projection_pod_t *p)
{
	return sizeof(*p) + kube_object_meta_size(&p->meta) + kube_object_usable(p->node_name) +
	       proj__size_strings(p->claims, p->n_claims) +
	       proj__size_strings(p->dra_resources, p->n_dra_resources) +
	       proj__size_quantities(p->requests, p->n_requests);
}

static void proj__pod_pack_walk(proj__pack_t *k, const void *from, void *to)
{
	const projection_pod_t *src = from;
	projection_pod_t *dst = to;
	proj__pack_meta(k, &src->meta, &dst->meta);
	dst->node_name = proj__pack_shared(k, src->node_name);
	dst->claims = proj__pack_strings(k, src->claims, src->n_claims, false);
	dst->dra_resources = proj__pack_strings(k, src->dra_resources, src->n_dra_resources, true);
	dst->requests = proj__pack_quantities(k, src->requests, src->n_requests);
}

projection_pod_t *projection_pack_pod(projection_pod_t *p, strmap_t *shared)
{
	projection_pod_t *packed = proj__pack(p, sizeof(*p), shared, proj__pod_pack_walk);
	projection_free_pod(p);
	return packed;
}

void projection_free_packed_pod(projection_pod_t *p, strmap_t *shared)
{
	proj__unshare_meta(shared, &p->meta);
	proj__unshare(shared, p->node_name);
	proj__unshare_strings(shared, p->dra_resources, p->n_dra_resources);
	proj__unshare_quantities(shared, p->requests, p->n_requests);
	free(p);
}
