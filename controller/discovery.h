/*
 * What the cluster serves, asked once at start-up: the server's version
 * (/version) and the resources of every served version of resource.k8s.io
 * (/apis/resource.k8s.io, then /apis/resource.k8s.io/VERSION). The choice of
 * versions and freeze modes is made in reconcilers/api_versions.c.
 */
#ifndef DRASHIFT_DISCOVERY_H
#define DRASHIFT_DISCOVERY_H

#include "api_versions.h"
#include "kube_http.h"

typedef struct {
	api_versions_t apis;
	int kube_minor;      /* 36 for 1.36; 0 when /version did not say */
	const char *error;   /* why discovery failed (the API's answer); NULL on success */
} discovery_result_t;

typedef void (*discovery_cb)(const discovery_result_t *result, void *data);

/*
 * Start discovery; cb runs once from the loop with the result (valid only
 * during the call). A group the server does not serve at all (404) is not
 * an error: its APIs are simply absent. Returns 0, or negative when no
 * request could be started (cb is then never called).
 */
int discovery_start(kube_http_t *http, discovery_cb cb, void *data);

#endif
