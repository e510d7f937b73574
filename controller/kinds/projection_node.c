/* The Node projection: its decoder, free and size; see projection.h. */
#include "projection_decode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

/* A node's extended resources are those whose name has a domain. */
static bool proj__node_extended(const char *name)
{
	return strchr(name, '/') != NULL;
}

int projection_decode_node(const cJSON *obj, projection_node_t *out, char *err, size_t errlen)
{
	char mpath[JSON_DECODE_PATH_MAX], spath[JSON_DECODE_PATH_MAX];
	char stpath[JSON_DECODE_PATH_MAX], apath[JSON_DECODE_PATH_MAX];
	char cpath[JSON_DECODE_PATH_MAX], condpath[JSON_DECODE_PATH_MAX], tpath[JSON_DECODE_PATH_MAX];
	json_decode_scope_t top, md, spec, status, alloc, cap, cond, taint;
	const cJSON *taints, *item;
	size_t n_taints;
	proj__qset_t set = PROJ__QSET_INIT;
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
	    json_decode_arr(&spec, "taints", SIZE_MAX, &taints, &n_taints) != 0 ||
	    json_decode_obj(&top, "status", false, &status, stpath, sizeof(stpath)) != 0 ||
	    json_decode_obj(&status, "allocatable", false, &alloc, apath, sizeof(apath)) != 0 ||
	    json_decode_obj(&status, "capacity", false, &cap, cpath, sizeof(cpath)) != 0 ||
	    proj__condition(&status, "Ready", &cond, condpath, sizeof(condpath), &out->ready) != 0)
		goto fail;

	size_t i = 0;
	cJSON_ArrayForEach(item, taints)
	{
		const char *key, *effect;
		if (json_decode_elem(&spec, "taints", i++, item, &taint, tpath, sizeof(tpath)) != 0 ||
		    json_decode_str(&taint, "key", true, &key) != 0 || json_decode_str(&taint, "effect", true, &effect) != 0)
			goto fail;
		out->tainted |= strncmp(key, "node.kubernetes.io/", 19) == 0 &&
				(strcmp(effect, "NoSchedule") == 0 || strcmp(effect, "NoExecute") == 0);
	}
	if (proj__qset_read(&alloc, &set, proj__node_extended, false) != 0)
		goto fail;
	proj__qset_copy(&set, false, &out->allocatable, &out->n_allocatable);
	proj__qset_clear(&set);
	if (proj__qset_read(&cap, &set, proj__node_extended, false) != 0)
		goto fail;
	proj__qset_copy(&set, false, &out->capacity, &out->n_capacity);
	proj__qset_free(&set);
	return 0;
fail:
	proj__qset_free(&set);
	projection_free_node(out);
	return -1;
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


size_t projection_size_node(const projection_node_t *p)
{
	return sizeof(*p) + kube_object_meta_size(&p->meta) + proj__size_labels(p->labels, p->n_labels) +
	       proj__size_labels(p->annotations, p->n_annotations) +
	       proj__size_quantities(p->allocatable, p->n_allocatable) +
	       proj__size_quantities(p->capacity, p->n_capacity);
}

static void proj__node_pack_walk(proj__pack_t *k, const void *from, void *to)
{
	const projection_node_t *src = from;
	projection_node_t *dst = to;
	proj__pack_meta(k, &src->meta, &dst->meta);
	dst->labels = proj__pack_labels(k, src->labels, src->n_labels);
	dst->annotations = proj__pack_labels(k, src->annotations, src->n_annotations);
	dst->allocatable = proj__pack_quantities(k, src->allocatable, src->n_allocatable);
	dst->capacity = proj__pack_quantities(k, src->capacity, src->n_capacity);
}

projection_node_t *projection_pack_node(projection_node_t *p, strmap_t *shared)
{
	projection_node_t *packed = proj__pack(p, sizeof(*p), shared, proj__node_pack_walk);
	projection_free_node(p);
	return packed;
}

void projection_free_packed_node(projection_node_t *p, strmap_t *shared)
{
	proj__unshare_meta(shared, &p->meta);
	proj__unshare_labels(shared, p->labels, p->n_labels);
	proj__unshare_labels(shared, p->annotations, p->n_annotations);
	proj__unshare_quantities(shared, p->allocatable, p->n_allocatable);
	proj__unshare_quantities(shared, p->capacity, p->n_capacity);
	free(p);
}
