/*
 * The generic parts of API objects; see kube_object.h. Reads go through
 * json_decode scopes (json_decode.h), so errors name the field path.
 */
#include "kube_object.h"

#include "xalloc.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kube_object_decode_meta(const json_decode_scope_t *top, kube_object_meta_t *m)
{
	char path[JSON_DECODE_PATH_MAX];
	json_decode_scope_t md;
	bool deleting;
	if (json_decode_obj(top, "metadata", true, &md, path, sizeof(path)) != 0 ||
	    json_decode_dup(&md, "name", true, &m->name) != 0)
		return -1;
	if (m->name[0] == '\0')
		return json_decode_fail(&md, "name", "empty");
	if (json_decode_dup(&md, "namespace", false, &m->namespace) != 0 ||
	    json_decode_dup(&md, "uid", false, &m->uid) != 0 ||
	    json_decode_dup(&md, "resourceVersion", false, &m->resource_version) != 0 ||
	    json_decode_time(&md, "creationTimestamp", &m->created, NULL) != 0 ||
	    json_decode_time(&md, "deletionTimestamp", &m->deleted, &deleting) != 0)
		return -1;
	if (m->namespace != NULL && m->namespace[0] == '\0') {
		free(m->namespace);
		m->namespace = NULL;
	}
	m->deleting = deleting;
	return 0;
}

void kube_object_meta_free(kube_object_meta_t *m)
{
	free(m->namespace);
	free(m->name);
	free(m->uid);
	free(m->resource_version);
}

size_t kube_object_usable(const void *p)
{
	return p != NULL ? malloc_usable_size((void *)p) : 0;
}

size_t kube_object_meta_size(const kube_object_meta_t *m)
{
	return kube_object_usable(m->namespace) + kube_object_usable(m->name) + kube_object_usable(m->uid) +
	       kube_object_usable(m->resource_version);
}

/* An ERROR event's Status code: an HTTP status, 0 when absent. */
static int kube_object_code(const json_decode_scope_t *s, int64_t *out)
{
	bool present;
	if (json_decode_int(s, "code", false, out, &present) != 0)
		return -1;
	if (present && (*out < 0 || *out > 999))
		return json_decode_fail(s, "code", "out of range (%lld)", (long long)*out);
	return 0;
}

/* ---- watch events and list pages ---- */

/*
 * Parse len bytes (not necessarily NUL-terminated) as one JSON object with
 * nothing but whitespace after it.
 */
static cJSON *kube_object_parse(const char *text, size_t len, const char *what, char *err, size_t errlen)
{
	const char *end = NULL;
	if (text == NULL || len == 0) {
		json_decode_fail_at(err, errlen, "", "empty %s", what);
		return NULL;
	}
	cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, false);
	if (root == NULL) {
		size_t at = end != NULL && end >= text && end <= text + len ? (size_t)(end - text) : 0;
		json_decode_fail_at(err, errlen, "", "%s is not valid JSON (at byte %zu of %zu)",
				    what, at, len);
		return NULL;
	}
	size_t pos = end != NULL && end >= text && end <= text + len ? (size_t)(end - text) : len;
	while (pos < len && (text[pos] == ' ' || text[pos] == '\t' || text[pos] == '\r' ||
			     text[pos] == '\n'))
		pos++;
	if (pos < len) {
		cJSON_Delete(root);
		json_decode_fail_at(err, errlen, "",
				    "unexpected bytes after the JSON %s (at byte %zu)", what, pos);
		return NULL;
	}
	if (!cJSON_IsObject(root)) {
		cJSON_Delete(root);
		json_decode_fail_at(err, errlen, "", "%s is not a JSON object", what);
		return NULL;
	}
	return root;
}

static bool kube_object_event_type(const char *s, kube_object_event_type_t *out)
{
	static const struct {
		const char *name;
		kube_object_event_type_t type;
	} types[] = {
		{"ADDED", KUBE_OBJECT_EVENT_ADDED},       {"MODIFIED", KUBE_OBJECT_EVENT_MODIFIED},
		{"DELETED", KUBE_OBJECT_EVENT_DELETED},   {"BOOKMARK", KUBE_OBJECT_EVENT_BOOKMARK},
		{"ERROR", KUBE_OBJECT_EVENT_ERROR},
	};
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		if (strcmp(s, types[i].name) == 0) {
			*out = types[i].type;
			return true;
		}
	}
	return false;
}

int kube_object_decode_event(const char *line, size_t len, kube_object_event_t *ev, char *err,
			    size_t errlen)
{
	char opath[JSON_DECODE_PATH_MAX], mpath[JSON_DECODE_PATH_MAX];
	json_decode_scope_t top, object, md;
	const char *type;
	memset(ev, 0, sizeof(*ev));
	cJSON *root = kube_object_parse(line, len, "event", err, errlen);
	if (root == NULL)
		return -1;
	if (json_decode_top(root, &top, err, errlen) != 0 ||
	    json_decode_str(&top, "type", true, &type) != 0 ||
	    json_decode_obj(&top, "object", true, &object, opath, sizeof(opath)) != 0)
		goto fail;
	if (!kube_object_event_type(type, &ev->type)) {
		char q[JSON_DECODE_QUOTE_BUF];
		json_decode_quote(q, sizeof(q), type);
		json_decode_fail(&top, "type", "unknown event type %s", q);
		goto fail;
	}
	if (ev->type == KUBE_OBJECT_EVENT_ERROR) {
		int64_t code;
		if (kube_object_code(&object, &code) != 0 ||
		    json_decode_dup(&object, "reason", false, &ev->error_reason) != 0 ||
		    json_decode_dup(&object, "message", false, &ev->error_message) != 0)
			goto fail;
		ev->error_code = (int)code;
	} else if (json_decode_obj(&object, "metadata", ev->type == KUBE_OBJECT_EVENT_BOOKMARK, &md,
				   mpath, sizeof(mpath)) != 0 ||
		   json_decode_dup(&md, "resourceVersion", ev->type == KUBE_OBJECT_EVENT_BOOKMARK,
				   &ev->resource_version) != 0) {
		goto fail;
	} else if (ev->type == KUBE_OBJECT_EVENT_BOOKMARK) {
		char apath[JSON_DECODE_PATH_MAX];
		json_decode_scope_t annotations;
		const char *end;
		if (json_decode_obj(&md, "annotations", false, &annotations, apath, sizeof(apath)) != 0 ||
		    json_decode_str(&annotations, "k8s.io/initial-events-end", false, &end) != 0)
			goto fail;
		ev->initial_events_end = end != NULL && strcmp(end, "true") == 0;
	}
	ev->object = cJSON_DetachItemViaPointer(root, (cJSON *)object.obj);
	cJSON_Delete(root);
	return 0;
fail:
	cJSON_Delete(root);
	kube_object_event_free(ev);
	return -1;
}

void kube_object_event_free(kube_object_event_t *ev)
{
	cJSON_Delete(ev->object);
	free(ev->resource_version);
	free(ev->error_reason);
	free(ev->error_message);
	memset(ev, 0, sizeof(*ev));
}

int kube_object_decode_list(const char *body, size_t len, kube_object_list_t *out, char *err,
			   size_t errlen)
{
	char mpath[JSON_DECODE_PATH_MAX];
	json_decode_scope_t top, md;
	const char *kind;
	const cJSON *items;
	memset(out, 0, sizeof(*out));
	cJSON *root = kube_object_parse(body, len, "list", err, errlen);
	if (root == NULL)
		return -1;
	if (json_decode_top(root, &top, err, errlen) != 0 ||
	    json_decode_str(&top, "kind", false, &kind) != 0)
		goto fail;
	if (kind != NULL && strcmp(kind, "Status") == 0) {
		/* A failed request answered 200 would be a server bug, but say what it said. */
		const char *msg = NULL;
		char q[JSON_DECODE_QUOTE_BUF];
		(void)json_decode_str(&top, "message", false, &msg);
		json_decode_quote(q, sizeof(q), msg != NULL ? msg : "");
		json_decode_fail(&top, "kind", "a Status, not a list: %s", q);
		goto fail;
	}
	if (json_decode_arr(&top, "items", SIZE_MAX, &items, NULL) != 0 ||
	    json_decode_obj(&top, "metadata", true, &md, mpath, sizeof(mpath)) != 0 ||
	    json_decode_dup(&md, "resourceVersion", true, &out->resource_version) != 0 ||
	    json_decode_dup(&md, "continue", false, &out->continue_token) != 0)
		goto fail;
	if (out->continue_token != NULL && out->continue_token[0] == '\0') {
		free(out->continue_token);
		out->continue_token = NULL;
	}
	if (items != NULL) {
		out->items = cJSON_DetachItemViaPointer(root, (cJSON *)items);
	} else {
		out->items = cJSON_CreateArray();
		if (out->items == NULL) {
			snprintf(err, errlen, "items: out of memory");
			goto fail;
		}
	}
	cJSON_Delete(root);
	return 0;
fail:
	cJSON_Delete(root);
	kube_object_list_free(out);
	return -1;
}

void kube_object_list_free(kube_object_list_t *l)
{
	cJSON_Delete(l->items);
	free(l->resource_version);
	free(l->continue_token);
	memset(l, 0, sizeof(*l));
}
