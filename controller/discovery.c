/* Start-up discovery of the APIs drashift uses (discovery.h). */
#include "discovery.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "kube_api.h"
#include "log.h"
#include "xalloc.h"

#define DISCOVERY_GROUP "resource.k8s.io"

typedef struct {
	kube_http_t *http;
	discovery_cb cb;
	void *data;
	int kube_minor;
	char **group_versions; /* what /apis/resource.k8s.io lists, asked one after the other */
	size_t n_group_versions, next;
	api_served_t *served; /* owns both strings of each entry */
	size_t n_served;
} discovery_t;

static void discovery_finish(discovery_t *d, const char *error)
{
	discovery_result_t r = { .apis = api_versions_choose(d->served, d->n_served), .kube_minor = d->kube_minor,
				 .error = error };
	d->cb(&r, d->data);
	for (size_t i = 0; i < d->n_group_versions; i++)
		free(d->group_versions[i]);
	free(d->group_versions);
	for (size_t i = 0; i < d->n_served; i++) {
		free((char *)d->served[i].group_version);
		free((char *)d->served[i].resource);
	}
	free(d->served);
	free(d);
}

static void discovery_on_resources(const kube_http_response_t *resp, void *data);

/* Ask for the next group version's resources, or finish. */
static void discovery_next(discovery_t *d)
{
	if (d->next == d->n_group_versions) {
		discovery_finish(d, NULL);
		return;
	}
	char *path = xasprintf("/apis/%s", d->group_versions[d->next]);
	int rc = kube_get(d->http, path, discovery_on_resources, d);
	free(path);
	if (rc != 0)
		discovery_finish(d, "cannot send a discovery request");
}

/* The strings at ITEMS[].FIELD of an answer (none for a 404); the caller frees them and the array. */
static char **discovery_strings(const kube_http_response_t *resp, const char *items, const char *field, size_t *n)
{
	char **out = NULL;
	*n = 0;
	cJSON *doc = resp->error ? NULL : cJSON_ParseWithLength(resp->body, resp->body_len);
	const cJSON *item;
	cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(doc, items)) {
		const cJSON *value = cJSON_GetObjectItemCaseSensitive(item, field);
		if (!cJSON_IsString(value))
			continue;
		out = xrealloc(out, (*n + 1) * sizeof(*out));
		out[(*n)++] = xstrdup(value->valuestring);
	}
	cJSON_Delete(doc);
	return out;
}

static void discovery_on_resources(const kube_http_response_t *resp, void *data)
{
	discovery_t *d = data;
	const char *gv = d->group_versions[d->next++];
	if (resp->error && resp->status != 404) {
		discovery_finish(d, resp->error);
		return;
	}
	size_t n;
	char **names = discovery_strings(resp, "resources", "name", &n);
	d->served = xrealloc(d->served, (d->n_served + n + 1) * sizeof(*d->served));
	for (size_t i = 0; i < n; i++)
		d->served[d->n_served++] = (api_served_t){ .group_version = xstrdup(gv), .resource = names[i] };
	free(names);
	discovery_next(d);
}

static void discovery_on_group(const kube_http_response_t *resp, void *data)
{
	discovery_t *d = data;
	if (resp->error && resp->status != 404) {
		discovery_finish(d, resp->error);
		return;
	}
	d->group_versions = discovery_strings(resp, "versions", "groupVersion", &d->n_group_versions);
	discovery_next(d);
}

/* "36", "36+" (some distributions): the leading number; 0 when there is none. */
static int discovery_minor(const char *s)
{
	int minor = 0;
	for (; s && *s >= '0' && *s <= '9' && minor < 1000; s++)
		minor = minor * 10 + (*s - '0');
	return minor;
}

static void discovery_on_version(const kube_http_response_t *resp, void *data)
{
	discovery_t *d = data;
	if (resp->error == NULL) {
		cJSON *doc = cJSON_ParseWithLength(resp->body, resp->body_len);
		const cJSON *minor = cJSON_GetObjectItemCaseSensitive(doc, "minor");
		d->kube_minor = cJSON_IsString(minor) ? discovery_minor(minor->valuestring) : 0;
		cJSON_Delete(doc);
	} else {
		log_warn("cannot read the server's version; advice will not name it", "error", resp->error);
	}
	if (kube_get(d->http, "/apis/" DISCOVERY_GROUP, discovery_on_group, d) != 0)
		discovery_finish(d, "cannot send a discovery request");
}

int discovery_start(kube_http_t *http, discovery_cb cb, void *data)
{
	discovery_t *d = xcalloc(1, sizeof(*d));
	d->http = http;
	d->cb = cb;
	d->data = data;
	if (kube_get(http, "/version", discovery_on_version, d) != 0) {
		free(d);
		return -EIO;
	}
	return 0;
}
