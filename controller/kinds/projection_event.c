/* The Event projection (the kubelet's FailedPrepareDynamicResources): its decoder, free and size; see projection.h. */
#include "projection_decode.h"

#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

/* firstTimestamp, else eventTime, else the creation. */
static int proj__event_first_seen(const json_decode_scope_t *top, int64_t created, int64_t *out)
{
	bool present;
	*out = 0;
	if (json_decode_time(top, "firstTimestamp", out, &present) != 0)
		return -1;
	if (!present && json_decode_time(top, "eventTime", out, &present) != 0)
		return -1;
	if (!present)
		*out = created;
	return 0;
}

/* The first of a series of optional time members that is set; the creation when none. */
static int proj__event_last_seen(const json_decode_scope_t *top, int64_t created, int64_t *out)
{
	char path[JSON_DECODE_PATH_MAX];
	json_decode_scope_t series;
	bool present;
	*out = 0;
	if (json_decode_time(top, "lastTimestamp", out, &present) != 0)
		return -1;
	if (present)
		return 0;
	if (json_decode_obj(top, "series", false, &series, path, sizeof(path)) != 0 ||
	    json_decode_time(&series, "lastObservedTime", out, &present) != 0)
		return -1;
	if (present)
		return 0;
	if (json_decode_time(top, "eventTime", out, &present) != 0)
		return -1;
	if (!present)
		*out = created;
	return 0;
}

int projection_decode_event(const cJSON *obj, projection_event_t *out, char *err, size_t errlen)
{
	char ipath[JSON_DECODE_PATH_MAX], spath[JSON_DECODE_PATH_MAX];
	json_decode_scope_t top, involved, source;
	memset(out, 0, sizeof(*out));
	if (json_decode_top(obj, &top, err, errlen) != 0)
		return -1;
	if (kube_object_decode_meta(&top, &out->meta) != 0 ||
	    json_decode_obj(&top, "involvedObject", false, &involved, ipath, sizeof(ipath)) != 0 ||
	    json_decode_dup(&involved, "kind", false, &out->object_kind) != 0 ||
	    json_decode_dup(&involved, "namespace", false, &out->object_namespace) != 0 ||
	    json_decode_dup(&involved, "name", false, &out->object_name) != 0 ||
	    json_decode_obj(&top, "source", false, &source, spath, sizeof(spath)) != 0 ||
	    json_decode_dup(&source, "host", false, &out->host) != 0 ||
	    json_decode_dup(&top, "message", false, &out->message) != 0 ||
	    proj__int(&top, "count", false, 0, INT32_MAX, &out->count) != 0 ||
	    proj__event_last_seen(&top, out->meta.created, &out->last_seen) != 0 ||
	    proj__event_first_seen(&top, out->meta.created, &out->first_seen) != 0)
		goto fail;
	if (out->host == NULL || out->host[0] == '\0') {
		free(out->host);
		out->host = NULL;
		if (json_decode_dup(&top, "reportingInstance", false, &out->host) != 0)
			goto fail;
	}
	if (out->count < 1)
		out->count = 1;
	return 0;
fail:
	projection_free_event(out);
	return -1;
}

void projection_free_event(projection_event_t *p)
{
	kube_object_meta_free(&p->meta);
	free(p->object_kind);
	free(p->object_namespace);
	free(p->object_name);
	free(p->host);
	free(p->message);
	memset(p, 0, sizeof(*p));
}

size_t projection_size_event(const projection_event_t *p)
{
	return sizeof(*p) + kube_object_meta_size(&p->meta) + kube_object_usable(p->object_kind) +
	       kube_object_usable(p->object_namespace) + kube_object_usable(p->object_name) +
	       kube_object_usable(p->host) + kube_object_usable(p->message);
}
