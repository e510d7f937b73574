/*
 * The API reads a plan's preflight needs (reconcilers/preflight.h): the
 * discovery of resource.k8s.io/v1 (and v1beta2 when the freeze mode uses
 * DeviceTaintRules), each of the plan's DeviceClasses, every DaemonSet (one
 * LIST: the operator watches no DaemonSet), and a SelfSubjectAccessReview
 * for each access the plan needs. All are sent at once; done runs once,
 * from the loop, after the last answer. Nothing is cached between probes:
 * the controller probes again while the checks fail.
 */
#ifndef DRASHIFT_PREFLIGHT_PROBE_H
#define DRASHIFT_PREFLIGHT_PROBE_H

#include "kube_http.h"
#include "plan.h"
#include "preflight.h"

typedef struct preflight_probe preflight_probe_t;
typedef void (*preflight_probe_cb)(preflight_probe_t *probe, void *data);

/*
 * Start the reads for plan (copied: the plan may change meanwhile).
 * freeze_ns: where the freeze parameters live. Returns NULL when no request
 * could be sent (done is then never called).
 */
preflight_probe_t *preflight_probe_start(kube_http_t *http, const plan_t *plan, const char *freeze_ns,
					 const char *taint_rules_version,
					 preflight_probe_cb done, void *data);

/* The answers, into in's API fields (gathered, v1, classes, ...); valid until the probe is freed. */
void preflight_probe_fill(const preflight_probe_t *p, preflight_input_t *in);

void preflight_probe_free(preflight_probe_t *p);

#endif
