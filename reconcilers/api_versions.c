/* Which API versions to use, and which freeze modes they allow (api_versions.h). */
#include "api_versions.h"

#include <string.h>

#include "xalloc.h"

/* Newest first: the first one served wins. */
static const char *const claim_versions[] = { "resource.k8s.io/v1" };
static const char *const taint_rule_versions[] = { "resource.k8s.io/v1", "resource.k8s.io/v1beta2",
						   "resource.k8s.io/v1alpha3" };

static bool api_served(const api_served_t *served, size_t n, const char *group_version, const char *resource)
{
	for (size_t i = 0; i < n; i++)
		if (served[i].group_version && served[i].resource &&
		    strcmp(served[i].group_version, group_version) == 0 && strcmp(served[i].resource, resource) == 0)
			return true;
	return false;
}

static const char *api_newest(const api_served_t *served, size_t n, const char *const *versions, size_t n_versions,
			      const char *resource)
{
	for (size_t i = 0; i < n_versions; i++)
		if (api_served(served, n, versions[i], resource))
			return versions[i];
	return NULL;
}

api_versions_t api_versions_choose(const api_served_t *served, size_t n)
{
	return (api_versions_t){
		.claims = api_newest(served, n, claim_versions, sizeof(claim_versions) / sizeof(claim_versions[0]),
				     "resourceclaims"),
		.taint_rules = api_newest(served, n, taint_rule_versions,
					  sizeof(taint_rule_versions) / sizeof(taint_rule_versions[0]),
					  "devicetaintrules"),
	};
}

/* What turns DeviceTaintRules on, for the server's minor version. */
static const char *api_taint_rules_advice(int kube_minor)
{
	if (kube_minor >= 37)
		return "they are GA and on by default in Kubernetes 1.37 and later: check that kube-apiserver does not "
		       "turn off the DRADeviceTaintRules feature gate or resource.k8s.io/v1/devicetaintrules";
	switch (kube_minor) {
	case 36:
		return "on Kubernetes 1.36 enable the DRADeviceTaintRules feature gate (kube-apiserver, kube-scheduler, "
		       "kube-controller-manager) and the API with --runtime-config=resource.k8s.io/v1beta2=true";
	case 35:
		return "on Kubernetes 1.35 they are alpha: enable the DRADeviceTaints and DRADeviceTaintRules feature "
		       "gates (kube-apiserver, kube-scheduler, kube-controller-manager) and the API with "
		       "--runtime-config=resource.k8s.io/v1alpha3=true";
	case 34:
		return "on Kubernetes 1.34 they are alpha: enable the DRADeviceTaints feature gate (kube-apiserver, "
		       "kube-scheduler, kube-controller-manager) and the API with "
		       "--runtime-config=resource.k8s.io/v1alpha3=true";
	default:
		return "enable DeviceTaintRules (resource.k8s.io v1, v1beta2 or v1alpha3, with their feature gates)";
	}
}

char *api_versions_freeze_refusal(plan_freeze_mode_t mode, const api_versions_t *apis, int kube_minor)
{
	if (!plan_freeze_by_device_taint(mode) || (apis && apis->taint_rules))
		return NULL;
	return xasprintf("spec.slo.freezeMode %s needs DeviceTaintRules (resource.k8s.io devicetaintrules), which this "
			 "cluster does not serve, so a breach could not be frozen that way: %s; or choose freezeMode "
			 "Admission, which every supported cluster enforces",
			 mode == PLAN_FREEZE_DEVICE_TAINT ? "DeviceTaint" : "AdmissionAndDeviceTaint",
			 api_taint_rules_advice(kube_minor));
}

char *api_versions_missing_required(const api_versions_t *apis, int kube_minor)
{
	if (apis && apis->claims)
		return NULL;
	if (kube_minor > 0 && kube_minor < 34)
		return xasprintf("the cluster runs Kubernetes 1.%d, which does not serve resource.k8s.io/v1 "
				 "ResourceClaims: drashift needs Kubernetes 1.34 or later",
				 kube_minor);
	return xasprintf("the cluster does not serve resource.k8s.io/v1 ResourceClaims: drashift needs Kubernetes 1.34 "
			 "or later with the resource.k8s.io/v1 API enabled");
}

char *api_versions_extended_resource_gap(const char *extended_resource, const char *const *classes,
					 const char *const *mapped, size_t n_classes, int kube_minor)
{
	if (extended_resource == NULL || extended_resource[0] == '\0')
		return NULL;
	for (size_t i = 0; i < n_classes; i++)
		if (mapped[i] && strcmp(mapped[i], extended_resource) == 0)
			return NULL;
	const char *advice =
		kube_minor == 34 || kube_minor == 35
			? "on Kubernetes 1.34 and 1.35 the DRAExtendedResource feature gate is alpha and off: enable it "
			  "(kube-apiserver, kube-scheduler, kube-controller-manager), then set"
			: "set";
	return xasprintf("pods asking for %s cannot run on DRA nodes: no DeviceClass of the plan (%s%s) has "
			 "spec.extendedResourceName %s; %s spec.extendedResourceName: %s on one of them. Until then such "
			 "pods run only on device-plugin nodes: keep enough of them",
			 extended_resource, n_classes ? classes[0] : "none", n_classes > 1 ? ", ..." : "",
			 extended_resource, advice, extended_resource);
}
