/* Shared by the reflector integration tests: a node cache and how to compare it with the cluster. */
#ifndef DRASHIFT_TEST_REFLECTOR_COMMON_H
#define DRASHIFT_TEST_REFLECTOR_COMMON_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "kube_http.h"
#include "kinds.h"
#include "reflector.h"
#include "testenv.h"
#include "xalloc.h"

typedef struct {
	testenv_t env;
	uv_loop_t loop;
	kube_http_t *http;
	reflector_t *nodes;
	unsigned gets;    /* GET attempts seen by the client's observer */
	unsigned refused; /* of them answered 422 */
	unsigned changes;
} fixture_t;

static void fixture_observe(const char *method, long status, double seconds, void *data)
{
	(void)seconds;
	fixture_t *f = data;
	if (strcmp(method, "GET") == 0) {
		f->gets++;
		f->refused += status == 422;
	}
}

static void fixture_on_change(const void *old, const void *new, void *data)
{
	(void)old;
	(void)new;
	((fixture_t *)data)->changes++;
}

/* A control plane (extra API server flags may be NULL) with 60 nodes in pool a: more than a page of 25. */
static inline int fixture_up_with_nodes(fixture_t *f, const char *name, const char *apiserver_flags)
{
	testenv_up(&f->env, name, apiserver_flags);
	return testenv_sh(&f->env, "for i in $(seq 1 60); do printf -- '---\\napiVersion: v1\\nkind: Node\\n"
				   "metadata:\\n  name: node-%%02d\\n  labels: {pool: a}\\n' $i; done | kubectl create -f - >/dev/null");
}

/* Connect a client with the given kubeconfig and start a node reflector. */
static void fixture_start(fixture_t *f, const char *kubeconfig, const reflector_options_t *opt)
{
	f->http = testenv_client_open(&f->loop, kubeconfig);
	kube_http_set_observer(f->http, fixture_observe, f);
	reflector_start(&f->loop, f->http, &kinds_nodes, opt, fixture_on_change, f, &f->nodes);
}

static void fixture_stop(fixture_t *f)
{
	reflector_stop(f->nodes, NULL, NULL);
	if (testenv_client_close(&f->loop, f->http) != 0) {
		fprintf(stderr, "handles left open on the loop\n");
		abort();
	}
}

static bool fixture_synced(void *data)
{
	return reflector_synced(((fixture_t *)data)->nodes);
}

static int fixture_cmp_lines(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "name=resourceVersion" lines of the cache, sorted, one string. */
static char *fixture_cache_lines(reflector_t *r)
{
	const store_t *s = reflector_store(r);
	size_t n = store_size(s), i = 0, it = 0;
	char **lines = xcalloc(n ? n : 1, sizeof(char *));
	const void *proj;
	while (store_next(s, &it, &proj)) {
		const kube_object_meta_t *m = proj;
		lines[i++] = xasprintf("%s=%s\n", m->name, m->resource_version);
	}
	qsort(lines, n, sizeof(char *), fixture_cmp_lines);
	char *all = xstrdup("");
	for (i = 0; i < n; i++) {
		char *next = xasprintf("%s%s", all, lines[i]);
		free(all);
		free(lines[i]);
		all = next;
	}
	free(lines);
	return all;
}

/* The same lines from a fresh LIST by kubectl. */
static char *fixture_fresh_lines(fixture_t *f)
{
	char *out;
	testenv_sh_output(&f->env, &out,
			  "kubectl get nodes -o jsonpath='{range .items[*]}{.metadata.name}={.metadata.resourceVersion}{\"\\n\"}{end}' | LC_ALL=C sort");
	return out;
}

typedef struct {
	fixture_t *f;
	char *fresh;
} fixture_match_t;

static bool fixture_cache_is(void *data)
{
	fixture_match_t *m = data;
	char *cache = fixture_cache_lines(m->f->nodes);
	bool same = strcmp(cache, m->fresh) == 0;
	free(cache);
	return same;
}

/* Run the loop until the cache equals a fresh LIST (taken now), or timeout. */
static bool fixture_converges(fixture_t *f, unsigned timeout_ms)
{
	fixture_match_t m = { .f = f, .fresh = fixture_fresh_lines(f) };
	bool ok = testenv_run_until(&f->loop, fixture_cache_is, &m, timeout_ms);
	if (!ok) {
		char *cache = fixture_cache_lines(f->nodes);
		fprintf(stderr, "cache:\n%s\nfresh LIST:\n%s\n", cache, m.fresh);
		free(cache);
	}
	free(m.fresh);
	return ok;
}

#endif
