/* The ResourceSlice projection: its decoder, free and size; see projection.h. */
#include "projection_decode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

int projection_decode_slice(const cJSON *obj, projection_slice_t *out, char *err, size_t errlen)
{
	char spath[JSON_DECODE_PATH_MAX], ppath[JSON_DECODE_PATH_MAX], dpath[JSON_DECODE_PATH_MAX];
	char cpath[JSON_DECODE_PATH_MAX];
	json_decode_scope_t top, spec, pool, dev, consume;
	const cJSON *devices, *item, *shared, *consumes;
	size_t n, n_consumes;
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
	    json_decode_arr(&spec, "devices", SIZE_MAX, &devices, &n) != 0 ||
	    json_decode_arr(&spec, "sharedCounters", SIZE_MAX, &shared, &out->n_shared_counters) != 0)
		goto fail;
	if (out->node_name != NULL && out->node_name[0] == '\0') {
		free(out->node_name);
		out->node_name = NULL;
	}
	if (n > 0) {
		out->devices = xcalloc(n, sizeof(*out->devices));
		out->counter_sets = xcalloc(n, sizeof(*out->counter_sets));
		out->n_devices = n;
	}
	size_t i = 0;
	cJSON_ArrayForEach(item, devices)
	{
		if (json_decode_elem(&spec, "devices", i, item, &dev, dpath, sizeof(dpath)) != 0 ||
		    json_decode_dup(&dev, "name", true, &out->devices[i]) != 0 ||
		    json_decode_arr(&dev, "consumesCounters", SIZE_MAX, &consumes, &n_consumes) != 0)
			goto fail;
		if (n_consumes > 0 &&
		    (json_decode_elem(&dev, "consumesCounters", 0, cJSON_GetArrayItem(consumes, 0), &consume, cpath,
				      sizeof(cpath)) != 0 ||
		     json_decode_dup(&consume, "counterSet", true, &out->counter_sets[i]) != 0))
			goto fail;
		i++;
	}
	return 0;
fail:
	projection_free_slice(out);
	return -1;
}

void projection_free_slice(projection_slice_t *p)
{
	kube_object_meta_free(&p->meta);
	free(p->driver);
	free(p->node_name);
	free(p->pool);
	proj__free_strings(p->counter_sets, p->n_devices);
	proj__free_strings(p->devices, p->n_devices);
	memset(p, 0, sizeof(*p));
}


size_t projection_size_slice(const projection_slice_t *p)
{
	return sizeof(*p) + kube_object_meta_size(&p->meta) + kube_object_usable(p->driver) +
	       kube_object_usable(p->node_name) + kube_object_usable(p->pool) +
	       proj__size_strings(p->devices, p->n_devices) + proj__size_strings(p->counter_sets, p->n_devices);
}
