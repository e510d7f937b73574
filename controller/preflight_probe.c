#include "preflight_probe.h"

#include <stdlib.h>
#include <string.h>

#include "kube_api.h"
#include "log.h"
#include "xalloc.h"

typedef enum { PROBE_V1, PROBE_TAINT_RULES, PROBE_CLASS, PROBE_DAEMONSETS, PROBE_ACCESS } probe_kind_t;

struct preflight_probe {
	preflight_probe_cb done;
	void *data;
	int pending;
	preflight_read_t v1, taint_rules, daemonsets_read;
	bool v1_served, taint_rules_served;
	cJSON *daemonsets; /* the list as read */
	size_t n_classes;
	cJSON **classes;
	preflight_read_t *class_reads;
	preflight_access_t access[PREFLIGHT_MAX_ACCESSES];
	size_t n_access;
	char **errors; /* every error string the reads hold (owned) */
	size_t n_errors;
};

typedef struct {
	preflight_probe_t *probe;
	probe_kind_t kind;
	size_t index;
} probe_call_t;

static const char *probe_keep_error(preflight_probe_t *p, const char *error)
{
	p->errors = xrealloc(p->errors, (p->n_errors + 1) * sizeof(char *));
	return p->errors[p->n_errors++] = xstrdup(error ? error : "no answer");
}

/* A discovery document lists these resources. */
static bool probe_lists(const cJSON *doc, const char *const *names)
{
	for (; *names; names++) {
		bool found = false;
		const cJSON *r;
		cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(doc, "resources"))
		{
			const cJSON *n = cJSON_GetObjectItemCaseSensitive(r, "name");
			found |= cJSON_IsString(n) && strcmp(n->valuestring, *names) == 0;
		}
		if (!found)
			return false;
	}
	return true;
}

/* A read: 2xx with a JSON body (*doc), or 404 (read, *doc NULL), or not read. */
static void probe_read(preflight_probe_t *p, const kube_http_response_t *resp, preflight_read_t *read, cJSON **doc)
{
	*doc = NULL;
	if (resp->status == 404) {
		read->read = true;
		return;
	}
	if (resp->error) {
		read->error = probe_keep_error(p, resp->error);
		return;
	}
	*doc = cJSON_ParseWithLength(resp->body, resp->body_len);
	if (*doc == NULL)
		read->error = probe_keep_error(p, "the answer is not JSON");
	else
		read->read = true;
}

static void probe_on_answer(const kube_http_response_t *resp, void *data)
{
	probe_call_t *c = data;
	preflight_probe_t *p = c->probe;
	cJSON *doc = NULL;
	switch (c->kind) {
	case PROBE_V1: {
		static const char *const need[] = { "resourceclaims", "resourceslices", NULL };
		probe_read(p, resp, &p->v1, &doc);
		p->v1_served = doc && probe_lists(doc, need);
		cJSON_Delete(doc);
		break;
	}
	case PROBE_TAINT_RULES: {
		static const char *const need[] = { "devicetaintrules", NULL };
		probe_read(p, resp, &p->taint_rules, &doc);
		p->taint_rules_served = doc && probe_lists(doc, need);
		cJSON_Delete(doc);
		break;
	}
	case PROBE_CLASS:
		probe_read(p, resp, &p->class_reads[c->index], &p->classes[c->index]);
		break;
	case PROBE_DAEMONSETS:
		probe_read(p, resp, &p->daemonsets_read, &p->daemonsets);
		break;
	case PROBE_ACCESS: {
		preflight_read_t r = { 0 };
		probe_read(p, resp, &r, &doc);
		const cJSON *allowed = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "status"), "allowed");
		if (doc && r.read)
			p->access[c->index].allowed = cJSON_IsTrue(allowed) ? 1 : 0;
		else
			p->access[c->index].error = r.error ? r.error : probe_keep_error(p, "no review in the answer");
		cJSON_Delete(doc);
		break;
	}
	}
	free(c);
	if (--p->pending == 0)
		p->done(p, p->data);
}

static void probe_send(kube_http_t *http, preflight_probe_t *p, probe_kind_t kind, size_t index, const char *path,
		       const char *body)
{
	probe_call_t *c = xcalloc(1, sizeof(*c));
	*c = (probe_call_t){ .probe = p, .kind = kind, .index = index };
	int rc = body ? kube_create(http, path, body, probe_on_answer, c) : kube_get(http, path, probe_on_answer, c);
	if (rc == 0) {
		p->pending++;
		return;
	}
	free(c);
	log_warn("preflight read not sent", "path", path);
}

/* A SelfSubjectAccessReview asking for one access. */
static char *probe_review(const preflight_access_t *a)
{
	cJSON *r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "apiVersion", "authorization.k8s.io/v1");
	cJSON_AddStringToObject(r, "kind", "SelfSubjectAccessReview");
	cJSON *attrs = cJSON_AddObjectToObject(cJSON_AddObjectToObject(r, "spec"), "resourceAttributes");
	cJSON_AddStringToObject(attrs, "verb", a->verb);
	cJSON_AddStringToObject(attrs, "group", a->group);
	const char *slash = strchr(a->resource, '/');
	char *resource = slash ? xstrndup(a->resource, (size_t)(slash - a->resource)) : xstrdup(a->resource);
	cJSON_AddStringToObject(attrs, "resource", resource);
	if (slash)
		cJSON_AddStringToObject(attrs, "subresource", slash + 1);
	if (a->namespace)
		cJSON_AddStringToObject(attrs, "namespace", a->namespace);
	char *body = cJSON_PrintUnformatted(r);
	cJSON_Delete(r);
	free(resource);
	return body;
}

preflight_probe_t *preflight_probe_start(kube_http_t *http, const plan_t *plan, const char *freeze_ns,
					 const char *taint_rules_version, preflight_probe_cb done, void *data)
{
	preflight_probe_t *p = xcalloc(1, sizeof(*p));
	p->done = done;
	p->data = data;
	p->n_classes = plan->n_device_classes;
	p->classes = xcalloc(p->n_classes + 1, sizeof(cJSON *));
	p->class_reads = xcalloc(p->n_classes + 1, sizeof(preflight_read_t));
	p->n_access = preflight_accesses(plan, freeze_ns, p->access);
	/* Held until every request is sent: an answer cannot finish the probe before that. */
	p->pending = 1;
	probe_send(http, p, PROBE_V1, 0, "/apis/resource.k8s.io/v1", NULL);
	if (plan_freeze_by_device_taint(plan->slo.freeze_mode) && taint_rules_version) {
		char *path = xasprintf("/apis/%s", taint_rules_version);
		probe_send(http, p, PROBE_TAINT_RULES, 0, path, NULL);
		free(path);
	}
	for (size_t i = 0; i < p->n_classes; i++) {
		char *path = kube_path("resource.k8s.io/v1", "deviceclasses", NULL, plan->device_classes[i], NULL);
		probe_send(http, p, PROBE_CLASS, i, path, NULL);
		free(path);
	}
	probe_send(http, p, PROBE_DAEMONSETS, 0, "/apis/apps/v1/daemonsets", NULL);
	for (size_t i = 0; i < p->n_access; i++) {
		char *body = probe_review(&p->access[i]);
		probe_send(http, p, PROBE_ACCESS, i, "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", body);
		free(body);
	}
	if (--p->pending == 0) {
		preflight_probe_free(p);
		return NULL;
	}
	return p;
}

void preflight_probe_fill(const preflight_probe_t *p, preflight_input_t *in)
{
	in->gathered = true;
	in->v1 = p->v1;
	in->v1_served = p->v1_served;
	in->taint_rules = p->taint_rules;
	in->taint_rules_served = p->taint_rules_served;
	in->classes = (const cJSON *const *)p->classes;
	in->class_reads = p->class_reads;
	in->daemonsets_read = p->daemonsets_read;
	in->daemonsets = cJSON_GetObjectItemCaseSensitive(p->daemonsets, "items");
	in->access = p->access;
	in->n_access = p->n_access;
}

void preflight_probe_free(preflight_probe_t *p)
{
	if (p == NULL)
		return;
	for (size_t i = 0; i < p->n_classes; i++)
		cJSON_Delete(p->classes[i]);
	free(p->classes);
	free(p->class_reads);
	cJSON_Delete(p->daemonsets);
	for (size_t i = 0; i < p->n_errors; i++)
		free(p->errors[i]);
	free(p->errors);
	free(p);
}
