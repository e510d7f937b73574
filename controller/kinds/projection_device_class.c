/* The DeviceClass projection: its decoder, free and size; see projection.h. */
#include "projection_decode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

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

void projection_free_device_class(projection_device_class_t *p)
{
	kube_object_meta_free(&p->meta);
	free(p->extended_resource_name);
	memset(p, 0, sizeof(*p));
}


size_t projection_size_device_class(const projection_device_class_t *p)
{
	return sizeof(*p) + kube_object_meta_size(&p->meta) + kube_object_usable(p->extended_resource_name);
}
