/*
 * Decoders from the API's JSON to projections; see projection.h.
 *
 * Every read goes through a json_decode scope (json_decode.h): the readers
 * there (string, object, array, bool, integer) and the few below that only
 * projections need (time, quantity, label map, condition) check the JSON type
 * and, when it is wrong, write "PATH.KEY: problem" and return -1, so a decoder
 * is a straight sequence of reads that bails out at the first failure. Keys
 * taken from the document (labels, resource names) appear in paths quoted with
 * control bytes escaped: an error must stay one log line whatever the peer sent.
 *
 * Decoders fill *out directly, from a zeroed start, keeping every array's
 * count equal to its allocated length (elements start zeroed). On failure the
 * matching free function can therefore release a half-built projection, which
 * is how "nothing leaks, *out zeroed" is kept on every error path.
 *
 * Names are borrowed from the cJSON tree while sets are merged and copied
 * once at the end, so each kept string is exactly one allocation of its own
 * length and each array exactly its final size: the per-object cost that
 * projection_size_* reports is what the caches pay.
 */
#include "projection.h"

#include "json_decode.h"
#include "xalloc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An integer member in [min, max]; 0 when absent and optional. */
static int proj__int(const json_decode_scope_t *s, const char *key, bool required, int64_t min,
		     int64_t max, int64_t *out)
{
	bool present;
	if (json_decode_int(s, key, required, out, &present) != 0)
		return -1;
	if (present && (*out < min || *out > max))
		return json_decode_fail(s, key, "out of range (%lld)", (long long)*out);
	return 0;
}

/* ---- quantities ---- */

/*
 * The integer forms of a resource.Quantity string: digits with an optional
 * decimal SI suffix (k M G T P E), binary SI suffix (Ki .. Ei) or decimal
 * exponent (e3). The API server writes quantities canonically, which for an
 * integer amount of 1000 is "1k", so plain digits alone are not enough.
 * Fractions and milli ("500m") are not whole devices and are refused, as are
 * negative amounts and amounts beyond int64. Returns NULL or the problem.
 */
static const char *proj__parse_count(const char *s, int64_t *out)
{
	const char *p = s;
	int64_t v = 0;
	if (*p == '+')
		p++;
	else if (*p == '-')
		return "negative quantity";
	if (*p < '0' || *p > '9')
		return "not a quantity";
	for (; *p >= '0' && *p <= '9'; p++) {
		if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *p - '0', &v))
			return "quantity out of range";
	}
	int64_t mult = 1;
	int exp10 = 0;
	if (*p == '\0') {
		/* plain integer */
	} else if (*p == '.' || (*p == 'm' && p[1] == '\0') || (*p == 'u' && p[1] == '\0') ||
		   (*p == 'n' && p[1] == '\0')) {
		return "not a whole number";
	} else if (p[1] == 'i' && p[2] == '\0' && p[0] != '\0' && strchr("KMGTPE", p[0]) != NULL) {
		/* Ki = 2^10 .. Ei = 2^60: the multiplier itself always fits. */
		mult = (int64_t)1 << (10 * (int)(strchr("KMGTPE", p[0]) - "KMGTPE" + 1));
	} else if (p[1] == '\0' && strchr("kMGTPE", p[0]) != NULL) {
		exp10 = 3 * (int)(strchr("kMGTPE", p[0]) - "kMGTPE" + 1);
	} else if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+')
			p++;
		else if (*p == '-')
			return "not a whole number";
		if (*p < '0' || *p > '9')
			return "not a quantity";
		for (; *p >= '0' && *p <= '9'; p++) {
			if (exp10 < 1000)
				exp10 = exp10 * 10 + (*p - '0');
		}
		if (*p != '\0')
			return "not a quantity";
	} else {
		return "not a quantity";
	}
	for (int i = 0; i < exp10 && v != 0; i++) {
		if (__builtin_mul_overflow(v, 10, &v))
			return "quantity out of range";
	}
	if (__builtin_mul_overflow(v, mult, &v))
		return "quantity out of range";
	*out = v;
	return NULL;
}

/*
 * The first metadata.ownerReferences[] entry that is the controller
 * (want_kind NULL) or has kind want_kind. kind_out may be NULL.
 */
static int proj__owner(const json_decode_scope_t *top, const char *want_kind, char **kind_out,
		       char **name_out)
{
	char mpath[JSON_DECODE_PATH_MAX], epath[JSON_DECODE_PATH_MAX];
	json_decode_scope_t md, ref;
	const cJSON *refs, *item;
	size_t i = 0;
	if (json_decode_obj(top, "metadata", false, &md, mpath, sizeof(mpath)) != 0 ||
	    json_decode_arr(&md, "ownerReferences", SIZE_MAX, &refs, NULL) != 0)
		return -1;
	cJSON_ArrayForEach(item, refs)
	{
		const char *kind;
		bool controller;
		if (json_decode_elem(&md, "ownerReferences", i++, item, &ref, epath,
				     sizeof(epath)) != 0 ||
		    json_decode_str(&ref, "kind", true, &kind) != 0 ||
		    json_decode_bool(&ref, "controller", &controller) != 0)
			return -1;
		if (want_kind != NULL ? strcmp(kind, want_kind) != 0 : !controller)
			continue;
		if (json_decode_dup(&ref, "name", true, name_out) != 0)
			return -1;
		if (kind_out != NULL)
			*kind_out = xstrdup(kind);
		return 0;
	}
	return 0;
}

/* ---- string sets (borrowed names, merged, then copied once) ---- */

typedef struct {
	const char *v[PROJECTION_MAX_SET];
	size_t n;
} proj__names_t;

/* Add name unless present. Returns -1 when the set is full. */
static int proj__names_add(proj__names_t *set, const char *name)
{
	for (size_t i = 0; i < set->n; i++) {
		if (strcmp(set->v[i], name) == 0)
			return 0;
	}
	if (set->n == PROJECTION_MAX_SET)
		return -1;
	set->v[set->n++] = name;
	return 0;
}

static void proj__names_copy(const proj__names_t *set, char ***out, size_t *n)
{
	if (set->n == 0)
		return;
	*out = xcalloc(set->n, sizeof(**out));
	*n = set->n;
	for (size_t i = 0; i < set->n; i++)
		(*out)[i] = xstrdup(set->v[i]);
}

/* Read an optional string member into a set; absent, null and empty are skipped. */
static int proj__names_add_member(const json_decode_scope_t *s, const char *key,
				  proj__names_t *set, const char *what)
{
	const char *v;
	if (json_decode_str(s, key, false, &v) != 0)
		return -1;
	if (v == NULL || v[0] == '\0')
		return 0;
	if (proj__names_add(set, v) != 0)
		return json_decode_fail(s, key, "more than %d %s", PROJECTION_MAX_SET, what);
	return 0;
}

/* ---- label maps ---- */

/*
 * Copy the string-valued members of map (optional object member key of s)
 * whose key starts with prefix (NULL: all). Members that are not kept are
 * not looked at.
 */
static int proj__labels(const json_decode_scope_t *s, const char *key, const char *prefix,
			projection_label_t **out, size_t *n)
{
	char path[JSON_DECODE_PATH_MAX];
	json_decode_scope_t map;
	const cJSON *e;
	size_t count = 0, prefix_len = prefix != NULL ? strlen(prefix) : 0;
	if (json_decode_obj(s, key, false, &map, path, sizeof(path)) != 0)
		return -1;
	cJSON_ArrayForEach(e, map.obj)
	{
		if (e->string == NULL || (prefix != NULL && strncmp(e->string, prefix, prefix_len) != 0))
			continue;
		if (!cJSON_IsString(e) || e->valuestring == NULL) {
			char comp[JSON_DECODE_KEY_BUF];
			json_decode_key_component(comp, sizeof(comp), e->string);
			return json_decode_fail(&map, comp, "not a string");
		}
		count++;
	}
	if (count == 0)
		return 0;
	*out = xcalloc(count, sizeof(**out));
	*n = count;
	size_t i = 0;
	cJSON_ArrayForEach(e, map.obj)
	{
		if (e->string == NULL || (prefix != NULL && strncmp(e->string, prefix, prefix_len) != 0))
			continue;
		(*out)[i].key = xstrdup(e->string);
		(*out)[i].value = xstrdup(e->valuestring);
		i++;
	}
	return 0;
}

/* ---- quantity sets (extended resources) ---- */

typedef struct {
	const char *name; /* borrowed from the cJSON tree */
	int64_t count;
} proj__q_t;

typedef struct {
	proj__q_t v[PROJECTION_MAX_SET];
	size_t n;
} proj__qset_t;

static proj__q_t *proj__qset_find(proj__qset_t *set, const char *name)
{
	for (size_t i = 0; i < set->n; i++) {
		if (strcmp(set->v[i].name, name) == 0)
			return &set->v[i];
	}
	return NULL;
}

/* The entry for name, created at 0 when absent; NULL when the set is full. */
static proj__q_t *proj__qset_slot(proj__qset_t *set, const char *name)
{
	proj__q_t *q = proj__qset_find(set, name);
	if (q != NULL || set->n == PROJECTION_MAX_SET)
		return q;
	q = &set->v[set->n++];
	q->name = name;
	q->count = 0;
	return q;
}

/* Which sets go wrong while merging: the set is full, or a total left int64. */
typedef enum { PROJ_QSET_OK, PROJ_QSET_FULL, PROJ_QSET_OVERFLOW } proj__qset_rc_t;

/* dst[name] += src[name] for every name of src. */
static proj__qset_rc_t proj__qset_add(proj__qset_t *dst, const proj__qset_t *src)
{
	for (size_t i = 0; i < src->n; i++) {
		proj__q_t *q = proj__qset_slot(dst, src->v[i].name);
		if (q == NULL)
			return PROJ_QSET_FULL;
		if (__builtin_add_overflow(q->count, src->v[i].count, &q->count))
			return PROJ_QSET_OVERFLOW;
	}
	return PROJ_QSET_OK;
}

/* dst[name] = max(dst[name], src[name]) for every name of src. */
static proj__qset_rc_t proj__qset_max(proj__qset_t *dst, const proj__qset_t *src)
{
	for (size_t i = 0; i < src->n; i++) {
		proj__q_t *q = proj__qset_slot(dst, src->v[i].name);
		if (q == NULL)
			return PROJ_QSET_FULL;
		if (src->v[i].count > q->count)
			q->count = src->v[i].count;
	}
	return PROJ_QSET_OK;
}

static int proj__qset_fail(const json_decode_scope_t *s, const char *key, proj__qset_rc_t rc)
{
	if (rc == PROJ_QSET_FULL)
		return json_decode_fail(s, key, "more than %d extended resources",
					PROJECTION_MAX_SET);
	return json_decode_fail(s, key, "extended resource total out of range");
}

/* A node's extended resources are those whose name has a domain. */
static bool proj__node_extended(const char *name)
{
	return strchr(name, '/') != NULL;
}

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

/*
 * Read the quantity map map (an object scope) into set, keeping names that
 * pass keep. With only_new, names already in the set are left alone (limits
 * stand in for requests only where requests are silent).
 */
static int proj__qset_read(const json_decode_scope_t *map, proj__qset_t *set,
			   bool (*keep)(const char *), bool only_new)
{
	const cJSON *e;
	cJSON_ArrayForEach(e, map->obj)
	{
		if (e->string == NULL || !keep(e->string))
			continue;
		if (only_new && proj__qset_find(set, e->string) != NULL)
			continue;
		char comp[JSON_DECODE_KEY_BUF];
		json_decode_key_component(comp, sizeof(comp), e->string);
		if (!cJSON_IsString(e) || e->valuestring == NULL)
			return json_decode_fail(map, comp, "not a quantity string");
		int64_t count;
		const char *problem = proj__parse_count(e->valuestring, &count);
		if (problem != NULL) {
			char q[JSON_DECODE_QUOTE_BUF];
			json_decode_quote(q, sizeof(q), e->valuestring);
			return json_decode_fail(map, comp, "%s %s", problem, q);
		}
		proj__q_t *slot = proj__qset_slot(set, e->string);
		if (slot == NULL)
			return json_decode_fail(map, NULL, "more than %d extended resources",
						PROJECTION_MAX_SET);
		slot->count = count;
	}
	return 0;
}

/* Copy a set into owned quantities; with positive_only, zero counts are dropped. */
static void proj__qset_copy(const proj__qset_t *set, bool positive_only,
			    projection_quantity_t **out, size_t *n)
{
	size_t count = 0;
	for (size_t i = 0; i < set->n; i++)
		count += !positive_only || set->v[i].count > 0;
	if (count == 0)
		return;
	*out = xcalloc(count, sizeof(**out));
	*n = count;
	size_t o = 0;
	for (size_t i = 0; i < set->n; i++) {
		if (positive_only && set->v[i].count <= 0)
			continue;
		(*out)[o].name = xstrdup(set->v[i].name);
		(*out)[o].count = set->v[i].count;
		o++;
	}
}

/* ---- conditions ---- */

static projection_condition_t proj__condition_status(const char *s)
{
	if (strcmp(s, "True") == 0)
		return PROJECTION_CONDITION_TRUE;
	if (strcmp(s, "False") == 0)
		return PROJECTION_CONDITION_FALSE;
	return PROJECTION_CONDITION_UNKNOWN;
}

bool projection_quantity_find(const projection_quantity_t *q, size_t n, const char *name,
			      int64_t *count)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(q[i].name, name) == 0) {
			if (count != NULL)
				*count = q[i].count;
			return true;
		}
	}
	return false;
}

/*
 * Find condition type in status.conditions[]. *cond is the condition's scope
 * (obj NULL when absent) and *status its status. Every entry's type must be a
 * string; the found one's status too.
 */
static int proj__condition(const json_decode_scope_t *status, const char *type,
			   json_decode_scope_t *cond, char *pathbuf, size_t pathlen,
			   projection_condition_t *out)
{
	const cJSON *conds, *item;
	size_t i = 0;
	*out = PROJECTION_CONDITION_NONE;
	*cond = (json_decode_scope_t){.path = pathbuf, .err = status->err,
				      .errlen = status->errlen};
	pathbuf[0] = '\0';
	if (json_decode_arr(status, "conditions", SIZE_MAX, &conds, NULL) != 0)
		return -1;
	cJSON_ArrayForEach(item, conds)
	{
		const char *t, *st;
		if (json_decode_elem(status, "conditions", i++, item, cond, pathbuf, pathlen) !=
			    0 ||
		    json_decode_str(cond, "type", true, &t) != 0)
			return -1;
		if (strcmp(t, type) != 0)
			continue;
		if (json_decode_str(cond, "status", true, &st) != 0)
			return -1;
		*out = proj__condition_status(st);
		return 0;
	}
	cond->obj = NULL;
	return 0;
}

/* ---- Node ---- */

int projection_decode_node(const cJSON *obj, projection_node_t *out, char *err, size_t errlen)
{
	char mpath[JSON_DECODE_PATH_MAX], spath[JSON_DECODE_PATH_MAX];
	char stpath[JSON_DECODE_PATH_MAX], apath[JSON_DECODE_PATH_MAX];
	char cpath[JSON_DECODE_PATH_MAX], condpath[JSON_DECODE_PATH_MAX];
	json_decode_scope_t top, md, spec, status, alloc, cap, cond;
	proj__qset_t *set = NULL;
	memset(out, 0, sizeof(*out));
	if (json_decode_top(obj, &top, err, errlen) != 0)
		return -1;
	if (kube_object_decode_meta(&top, &out->meta) != 0 ||
	    json_decode_obj(&top, "metadata", true, &md, mpath, sizeof(mpath)) != 0 ||
	    proj__labels(&md, "labels", NULL, &out->labels, &out->n_labels) != 0 ||
	    proj__labels(&md, "annotations", "drashift.io/", &out->annotations,
			 &out->n_annotations) != 0 ||
	    json_decode_obj(&top, "spec", false, &spec, spath, sizeof(spath)) != 0 ||
	    json_decode_bool(&spec, "unschedulable", &out->unschedulable) != 0 ||
	    json_decode_obj(&top, "status", false, &status, stpath, sizeof(stpath)) != 0 ||
	    json_decode_obj(&status, "allocatable", false, &alloc, apath, sizeof(apath)) != 0 ||
	    json_decode_obj(&status, "capacity", false, &cap, cpath, sizeof(cpath)) != 0 ||
	    proj__condition(&status, "Ready", &cond, condpath, sizeof(condpath), &out->ready) != 0)
		goto fail;

	set = xmalloc(sizeof(*set));
	set->n = 0;
	if (proj__qset_read(&alloc, set, proj__node_extended, false) != 0)
		goto fail;
	proj__qset_copy(set, false, &out->allocatable, &out->n_allocatable);
	set->n = 0;
	if (proj__qset_read(&cap, set, proj__node_extended, false) != 0)
		goto fail;
	proj__qset_copy(set, false, &out->capacity, &out->n_capacity);
	free(set);
	return 0;
fail:
	free(set);
	projection_free_node(out);
	return -1;
}

/* ---- Pod ---- */

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
	out->n = 0;
	if (json_decode_obj(c, "resources", false, &res, rpath, sizeof(rpath)) != 0 ||
	    json_decode_obj(&res, "requests", false, &req, qpath, sizeof(qpath)) != 0 ||
	    json_decode_obj(&res, "limits", false, &lim, lpath, sizeof(lpath)) != 0 ||
	    proj__qset_read(&req, out, proj__pod_extended, false) != 0 ||
	    proj__qset_read(&lim, out, proj__pod_extended, true) != 0)
		return -1;
	return 0;
}

/* Working sets for the pod's request arithmetic; too large for comfort on the stack. */
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
	proj__qset_rc_t rc;
	size_t i;
	proj__pod_sets_t *w = xmalloc(sizeof(*w));
	w->total.n = w->sidecars.n = w->init_max.n = 0;

	if (json_decode_arr(spec, "containers", SIZE_MAX, &containers, NULL) != 0 ||
	    json_decode_arr(spec, "initContainers", SIZE_MAX, &inits, NULL) != 0)
		goto fail;
	i = 0;
	cJSON_ArrayForEach(item, containers)
	{
		if (json_decode_elem(spec, "containers", i++, item, &c, cpath, sizeof(cpath)) !=
			    0 ||
		    proj__container_requests(&c, &w->container) != 0)
			goto fail;
		if ((rc = proj__qset_add(&w->total, &w->container)) != PROJ_QSET_OK) {
			proj__qset_fail(&c, "resources", rc);
			goto fail;
		}
	}
	i = 0;
	cJSON_ArrayForEach(item, inits)
	{
		const char *restart;
		if (json_decode_elem(spec, "initContainers", i++, item, &c, cpath,
				     sizeof(cpath)) != 0 ||
		    json_decode_str(&c, "restartPolicy", false, &restart) != 0 ||
		    proj__container_requests(&c, &w->container) != 0)
			goto fail;
		if (restart != NULL && strcmp(restart, "Always") == 0) {
			if ((rc = proj__qset_add(&w->total, &w->container)) != PROJ_QSET_OK ||
			    (rc = proj__qset_add(&w->sidecars, &w->container)) != PROJ_QSET_OK) {
				proj__qset_fail(&c, "resources", rc);
				goto fail;
			}
			w->step = w->sidecars;
		} else {
			w->step = w->container;
			if ((rc = proj__qset_add(&w->step, &w->sidecars)) != PROJ_QSET_OK) {
				proj__qset_fail(&c, "resources", rc);
				goto fail;
			}
		}
		if ((rc = proj__qset_max(&w->init_max, &w->step)) != PROJ_QSET_OK) {
			proj__qset_fail(&c, "resources", rc);
			goto fail;
		}
	}
	if ((rc = proj__qset_max(&w->total, &w->init_max)) != PROJ_QSET_OK) {
		proj__qset_fail(spec, NULL, rc);
		goto fail;
	}
	proj__qset_copy(&w->total, true, &out->requests, &out->n_requests);
	free(w);
	return 0;
fail:
	free(w);
	return -1;
}

/* The claims the pod uses, from its spec and from what the controllers recorded in status. */
static int proj__pod_claims(const json_decode_scope_t *spec, const json_decode_scope_t *status,
			    projection_pod_t *out)
{
	char epath[JSON_DECODE_PATH_MAX], xpath[JSON_DECODE_PATH_MAX];
	json_decode_scope_t e, ext;
	const cJSON *arr, *item;
	size_t i;
	proj__names_t *set = xmalloc(sizeof(*set));
	set->n = 0;

	if (json_decode_arr(spec, "resourceClaims", SIZE_MAX, &arr, NULL) != 0)
		goto fail;
	i = 0;
	cJSON_ArrayForEach(item, arr)
	{
		if (json_decode_elem(spec, "resourceClaims", i++, item, &e, epath,
				     sizeof(epath)) != 0 ||
		    proj__names_add_member(&e, "resourceClaimName", set, "claims") != 0)
			goto fail;
	}
	if (json_decode_arr(status, "resourceClaimStatuses", SIZE_MAX, &arr, NULL) != 0)
		goto fail;
	i = 0;
	cJSON_ArrayForEach(item, arr)
	{
		if (json_decode_elem(status, "resourceClaimStatuses", i++, item, &e, epath,
				     sizeof(epath)) != 0 ||
		    proj__names_add_member(&e, "resourceClaimName", set, "claims") != 0)
			goto fail;
	}
	if (json_decode_obj(status, "extendedResourceClaimStatus", false, &ext, xpath,
			    sizeof(xpath)) != 0 ||
	    proj__names_add_member(&ext, "resourceClaimName", set, "claims") != 0)
		goto fail;
	proj__names_copy(set, &out->claims, &out->n_claims);
	free(set);
	return 0;
fail:
	free(set);
	return -1;
}

int projection_decode_pod(const cJSON *obj, projection_pod_t *out, char *err, size_t errlen)
{
	char spath[JSON_DECODE_PATH_MAX], stpath[JSON_DECODE_PATH_MAX];
	char condpath[JSON_DECODE_PATH_MAX];
	json_decode_scope_t top, spec, status, cond;
	const char *phase;
	projection_condition_t ready;
	memset(out, 0, sizeof(*out));
	if (json_decode_top(obj, &top, err, errlen) != 0)
		return -1;
	if (kube_object_decode_meta(&top, &out->meta) != 0 ||
	    proj__owner(&top, NULL, &out->owner_kind, &out->owner_name) != 0 ||
	    json_decode_obj(&top, "spec", false, &spec, spath, sizeof(spath)) != 0 ||
	    json_decode_obj(&top, "status", false, &status, stpath, sizeof(stpath)) != 0 ||
	    json_decode_dup(&spec, "nodeName", false, &out->node_name) != 0 ||
	    json_decode_str(&status, "phase", false, &phase) != 0)
		goto fail;
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
	    json_decode_dup(&cond, "reason", false, &out->scheduled_reason) != 0 ||
	    json_decode_time(&cond, "lastTransitionTime", &out->scheduled_time, NULL) != 0)
		goto fail;

	if (proj__pod_claims(&spec, &status, out) != 0 || proj__pod_requests(&spec, out) != 0)
		goto fail;
	return 0;
fail:
	projection_free_pod(out);
	return -1;
}

/* ---- ResourceClaim ---- */

static int proj__claim_classes(const json_decode_scope_t *spec, projection_claim_t *out)
{
	char dpath[JSON_DECODE_PATH_MAX], rpath[JSON_DECODE_PATH_MAX];
	char xpath[JSON_DECODE_PATH_MAX], fpath[JSON_DECODE_PATH_MAX];
	json_decode_scope_t devices, req, exactly, sub;
	const cJSON *reqs, *subs, *item, *s;
	size_t i = 0;
	proj__names_t *set = xmalloc(sizeof(*set));
	set->n = 0;
	if (json_decode_obj(spec, "devices", false, &devices, dpath, sizeof(dpath)) != 0 ||
	    json_decode_arr(&devices, "requests", SIZE_MAX, &reqs, NULL) != 0)
		goto fail;
	cJSON_ArrayForEach(item, reqs)
	{
		if (json_decode_elem(&devices, "requests", i++, item, &req, rpath,
				     sizeof(rpath)) != 0 ||
		    json_decode_obj(&req, "exactly", false, &exactly, xpath, sizeof(xpath)) != 0 ||
		    proj__names_add_member(&exactly, "deviceClassName", set, "device classes") !=
			    0 ||
		    json_decode_arr(&req, "firstAvailable", SIZE_MAX, &subs, NULL) != 0)
			goto fail;
		size_t j = 0;
		cJSON_ArrayForEach(s, subs)
		{
			if (json_decode_elem(&req, "firstAvailable", j++, s, &sub, fpath,
					     sizeof(fpath)) != 0 ||
			    proj__names_add_member(&sub, "deviceClassName", set, "device classes") !=
				    0)
				goto fail;
		}
	}
	proj__names_copy(set, &out->device_classes, &out->n_device_classes);
	free(set);
	return 0;
fail:
	free(set);
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

int projection_decode_claim(const cJSON *obj, projection_claim_t *out, char *err, size_t errlen)
{
	char spath[JSON_DECODE_PATH_MAX], stpath[JSON_DECODE_PATH_MAX];
	json_decode_scope_t top, spec, status;
	memset(out, 0, sizeof(*out));
	if (json_decode_top(obj, &top, err, errlen) != 0)
		return -1;
	if (kube_object_decode_meta(&top, &out->meta) != 0 ||
	    proj__owner(&top, "Pod", NULL, &out->owner_pod) != 0 ||
	    json_decode_obj(&top, "spec", false, &spec, spath, sizeof(spath)) != 0 ||
	    json_decode_obj(&top, "status", false, &status, stpath, sizeof(stpath)) != 0 ||
	    proj__claim_classes(&spec, out) != 0 || proj__claim_status(&status, out) != 0)
		goto fail;
	return 0;
fail:
	projection_free_claim(out);
	return -1;
}

/* ---- ResourceSlice ---- */

int projection_decode_slice(const cJSON *obj, projection_slice_t *out, char *err, size_t errlen)
{
	char spath[JSON_DECODE_PATH_MAX], ppath[JSON_DECODE_PATH_MAX], dpath[JSON_DECODE_PATH_MAX];
	json_decode_scope_t top, spec, pool, dev;
	const cJSON *devices, *item;
	size_t n;
	memset(out, 0, sizeof(*out));
	if (json_decode_top(obj, &top, err, errlen) != 0)
		return -1;
	if (kube_object_decode_meta(&top, &out->meta) != 0 ||
	    json_decode_obj(&top, "spec", true, &spec, spath, sizeof(spath)) != 0 ||
	    json_decode_dup(&spec, "driver", true, &out->driver) != 0 ||
	    json_decode_dup(&spec, "nodeName", false, &out->node_name) != 0 ||
	    json_decode_obj(&spec, "pool", true, &pool, ppath, sizeof(ppath)) != 0 ||
	    json_decode_dup(&pool, "name", true, &out->pool) != 0 ||
	    proj__int(&pool, "generation", true, 0, INT64_MAX, &out->pool_generation) != 0 ||
	    proj__int(&pool, "resourceSliceCount", true, 1, INT64_MAX,
		      &out->resource_slice_count) != 0 ||
	    json_decode_arr(&spec, "devices", SIZE_MAX, &devices, &n) != 0)
		goto fail;
	if (out->node_name != NULL && out->node_name[0] == '\0') {
		free(out->node_name);
		out->node_name = NULL;
	}
	if (n > 0) {
		out->devices = xcalloc(n, sizeof(*out->devices));
		out->n_devices = n;
	}
	size_t i = 0;
	cJSON_ArrayForEach(item, devices)
	{
		if (json_decode_elem(&spec, "devices", i, item, &dev, dpath, sizeof(dpath)) != 0 ||
		    json_decode_dup(&dev, "name", true, &out->devices[i]) != 0)
			goto fail;
		i++;
	}
	return 0;
fail:
	projection_free_slice(out);
	return -1;
}

/* ---- DeviceClass ---- */

int projection_decode_device_class(const cJSON *obj, projection_device_class_t *out, char *err,
				   size_t errlen)
{
	char spath[JSON_DECODE_PATH_MAX];
	json_decode_scope_t top, spec;
	memset(out, 0, sizeof(*out));
	if (json_decode_top(obj, &top, err, errlen) != 0)
		return -1;
	if (kube_object_decode_meta(&top, &out->meta) != 0 ||
	    json_decode_obj(&top, "spec", false, &spec, spath, sizeof(spath)) != 0 ||
	    json_decode_dup(&spec, "extendedResourceName", false,
			    &out->extended_resource_name) != 0)
		goto fail;
	return 0;
fail:
	projection_free_device_class(out);
	return -1;
}

/* ---- freeing ---- */

static void proj__free_labels(projection_label_t *l, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(l[i].key);
		free(l[i].value);
	}
	free(l);
}

static void proj__free_quantities(projection_quantity_t *q, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(q[i].name);
	free(q);
}

static void proj__free_strings(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void projection_free_node(projection_node_t *p)
{
	kube_object_meta_free(&p->meta);
	proj__free_labels(p->labels, p->n_labels);
	proj__free_labels(p->annotations, p->n_annotations);
	proj__free_quantities(p->allocatable, p->n_allocatable);
	proj__free_quantities(p->capacity, p->n_capacity);
	memset(p, 0, sizeof(*p));
}

void projection_free_pod(projection_pod_t *p)
{
	kube_object_meta_free(&p->meta);
	free(p->node_name);
	free(p->scheduled_reason);
	proj__free_strings(p->claims, p->n_claims);
	proj__free_quantities(p->requests, p->n_requests);
	free(p->owner_kind);
	free(p->owner_name);
	memset(p, 0, sizeof(*p));
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

void projection_free_slice(projection_slice_t *p)
{
	kube_object_meta_free(&p->meta);
	free(p->driver);
	free(p->node_name);
	free(p->pool);
	proj__free_strings(p->devices, p->n_devices);
	memset(p, 0, sizeof(*p));
}

void projection_free_device_class(projection_device_class_t *p)
{
	kube_object_meta_free(&p->meta);
	free(p->extended_resource_name);
	memset(p, 0, sizeof(*p));
}

/* ---- size accounting ---- */

static size_t proj__size_labels(const projection_label_t *l, size_t n)
{
	size_t s = kube_object_usable(l);
	for (size_t i = 0; i < n; i++)
		s += kube_object_usable(l[i].key) + kube_object_usable(l[i].value);
	return s;
}

static size_t proj__size_quantities(const projection_quantity_t *q, size_t n)
{
	size_t s = kube_object_usable(q);
	for (size_t i = 0; i < n; i++)
		s += kube_object_usable(q[i].name);
	return s;
}

static size_t proj__size_strings(char *const *v, size_t n)
{
	size_t s = kube_object_usable(v);
	for (size_t i = 0; i < n; i++)
		s += kube_object_usable(v[i]);
	return s;
}

size_t projection_size_node(const projection_node_t *p)
{
	return sizeof(*p) + kube_object_meta_size(&p->meta) + proj__size_labels(p->labels, p->n_labels) +
	       proj__size_labels(p->annotations, p->n_annotations) +
	       proj__size_quantities(p->allocatable, p->n_allocatable) +
	       proj__size_quantities(p->capacity, p->n_capacity);
}

size_t projection_size_pod(const projection_pod_t *p)
{
	return sizeof(*p) + kube_object_meta_size(&p->meta) + kube_object_usable(p->node_name) +
	       kube_object_usable(p->scheduled_reason) + proj__size_strings(p->claims, p->n_claims) +
	       proj__size_quantities(p->requests, p->n_requests) + kube_object_usable(p->owner_kind) +
	       kube_object_usable(p->owner_name);
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

size_t projection_size_slice(const projection_slice_t *p)
{
	return sizeof(*p) + kube_object_meta_size(&p->meta) + kube_object_usable(p->driver) +
	       kube_object_usable(p->node_name) + kube_object_usable(p->pool) +
	       proj__size_strings(p->devices, p->n_devices);
}

size_t projection_size_device_class(const projection_device_class_t *p)
{
	return sizeof(*p) + kube_object_meta_size(&p->meta) + kube_object_usable(p->extended_resource_name);
}
