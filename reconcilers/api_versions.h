/*
 * Which API versions drashift talks to, decided once at start-up from the
 * API server's discovery (controller/discovery.c gathers it), and which
 * freeze modes the cluster can therefore enforce.
 *
 * Kubernetes moved the APIs drashift uses between versions:
 *   1.34  resource.k8s.io/v1 (claims, slices, classes) GA; DeviceTaintRules
 *         only at v1alpha3 behind the alpha DRADeviceTaints gate
 *   1.35  the same, DRADeviceTaintRules split off (alpha)
 *   1.36  DeviceTaintRules at v1beta2, off by default (DRADeviceTaintRules
 *         and the resource.k8s.io/v1beta2 API)
 *   1.37  DeviceTaintRules GA at v1, on by default
 * drashift takes the newest version the cluster serves of each API, and a
 * DeviceTaintRule written at any of them has the same fields. ResourceClaims
 * are read at v1 only: without it drashift cannot work at all.
 */
#ifndef DRASHIFT_API_VERSIONS_H
#define DRASHIFT_API_VERSIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "plan.h"

/* One served resource, as discovery lists it: "resource.k8s.io/v1", "resourceclaims". */
typedef struct {
	const char *group_version;
	const char *resource;
} api_served_t;

/* What drashift uses; NULL: not served. Points to static strings. */
typedef struct {
	const char *claims;       /* the group/version of resourceclaims drashift reads: "resource.k8s.io/v1" */
	const char *taint_rules;  /* the newest served group/version of devicetaintrules */
} api_versions_t;

/* Choose from what the cluster serves (n entries, in any order). Pure. */
api_versions_t api_versions_choose(const api_served_t *served, size_t n);

/*
 * Why the cluster cannot enforce a plan's freeze mode, and what to enable,
 * as one sentence (the caller frees it); NULL when it can. kube_minor is the
 * server's minor version (36 for 1.36; 0 when unknown): it picks the advice.
 */
char *api_versions_freeze_refusal(plan_freeze_mode_t mode, const api_versions_t *apis, int kube_minor);

/*
 * Why drashift cannot run on the cluster at all (no resource.k8s.io/v1
 * ResourceClaims), as one sentence the caller frees; NULL when it can.
 */
char *api_versions_missing_required(const api_versions_t *apis, int kube_minor);

/*
 * Why pods that ask for the plan's extended resource (spec.extendedResource)
 * cannot run on DRA nodes, and what to do, as one sentence the caller frees;
 * NULL when one of the plan's DeviceClasses maps it (spec.extendedResourceName,
 * served since DRAExtendedResource: alpha and off in 1.34 and 1.35, on by
 * default from 1.36) or the plan names no extended resource. mapped[i] is the
 * extendedResourceName of the plan's i-th class (NULL: none, or no such class).
 */
char *api_versions_extended_resource_gap(const char *extended_resource, const char *const *classes,
					 const char *const *mapped, size_t n_classes, int kube_minor);

#endif
