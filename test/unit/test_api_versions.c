/*
 * What drashift uses on each Kubernetes version, from discovery: the newest
 * served DeviceTaintRule version, and a freeze mode refused with what to
 * enable when the cluster cannot enforce it; Admission works everywhere.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "api_versions.h"

#define V1 "resource.k8s.io/v1"
#define V1BETA2 "resource.k8s.io/v1beta2"
#define V1ALPHA3 "resource.k8s.io/v1alpha3"

/* What each version serves by default, and with the gates its DeviceTaint freeze needs. */
static const api_served_t k134[] = { { V1, "resourceclaims" }, { V1, "resourceslices" }, { V1, "deviceclasses" } };
static const api_served_t k135_gates[] = { { V1, "resourceclaims" }, { V1ALPHA3, "devicetaintrules" } };
static const api_served_t k136_gates[] = { { V1, "resourceclaims" },
					   { V1BETA2, "resourceclaims" },
					   { V1BETA2, "devicetaintrules" },
					   { V1ALPHA3, "devicetaintrules" } };
static const api_served_t k137[] = { { V1BETA2, "devicetaintrules" },
				     { V1, "devicetaintrules" },
				     { V1, "resourceclaims" },
				     { V1, "devicetaintrules/status" } };
/* v1 serves only claims' status: not the claims. */
static const api_served_t odd[] = { { V1, "resourceclaims/status" }, { V1, "devicetaintrule" } };

static void test_newest_served_version_is_used(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		const api_served_t *served;
		size_t n;
		const char *claims, *taint_rules;
	} cases[] = {
		{ "1.34 defaults", k134, sizeof(k134) / sizeof(k134[0]), V1, NULL },
		{ "1.35 alpha gates", k135_gates, sizeof(k135_gates) / sizeof(k135_gates[0]), V1, V1ALPHA3 },
		{ "1.36 beta on", k136_gates, sizeof(k136_gates) / sizeof(k136_gates[0]), V1, V1BETA2 },
		{ "1.37 GA, v1beta2 too", k137, sizeof(k137) / sizeof(k137[0]), V1, V1 },
		{ "subresources and near names do not count", odd, sizeof(odd) / sizeof(odd[0]), NULL, NULL },
		{ "nothing served", NULL, 0, NULL, NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		api_versions_t v = api_versions_choose(cases[i].served, cases[i].n);
		if (cases[i].claims)
			assert_string_equal(v.claims, cases[i].claims);
		else
			assert_null(v.claims);
		if (cases[i].taint_rules)
			assert_string_equal(v.taint_rules, cases[i].taint_rules);
		else
			assert_null(v.taint_rules);
	}
}

static void test_freeze_mode_refused_with_what_to_enable(void **state)
{
	(void)state;
	const api_versions_t none = { .claims = V1 }, beta = { .claims = V1, .taint_rules = V1BETA2 };
	static const struct {
		plan_freeze_mode_t mode;
		bool served;
		int minor;
		const char *says; /* NULL: allowed */
	} cases[] = {
		{ PLAN_FREEZE_ADMISSION, false, 34, NULL },
		{ PLAN_FREEZE_DEVICE_TAINT, true, 36, NULL },
		{ PLAN_FREEZE_ADMISSION_AND_DEVICE_TAINT, true, 37, NULL },
		{ PLAN_FREEZE_DEVICE_TAINT, false, 34, "enable the DRADeviceTaints feature gate" },
		{ PLAN_FREEZE_DEVICE_TAINT, false, 35, "DRADeviceTaints and DRADeviceTaintRules feature gates" },
		{ PLAN_FREEZE_ADMISSION_AND_DEVICE_TAINT, false, 36, "--runtime-config=resource.k8s.io/v1beta2=true" },
		{ PLAN_FREEZE_DEVICE_TAINT, false, 37, "GA and on by default" },
		{ PLAN_FREEZE_DEVICE_TAINT, false, 0, "enable DeviceTaintRules" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *why = api_versions_freeze_refusal(cases[i].mode, cases[i].served ? &beta : &none, cases[i].minor);
		if (cases[i].says == NULL) {
			assert_null(why);
			continue;
		}
		assert_non_null(why);
		assert_non_null(strstr(why, "does not serve"));
		assert_non_null(strstr(why, "choose freezeMode Admission"));
		assert_non_null(strstr(why, cases[i].says));
		assert_non_null(strstr(why, cases[i].mode == PLAN_FREEZE_DEVICE_TAINT ? "freezeMode DeviceTaint needs"
										      : "AdmissionAndDeviceTaint needs"));
		free(why);
	}
}

static void test_claims_v1_is_required(void **state)
{
	(void)state;
	const api_versions_t ok = { .claims = V1 }, none = { 0 };
	assert_null(api_versions_missing_required(&ok, 34));
	char *why = api_versions_missing_required(&none, 33);
	assert_non_null(strstr(why, "Kubernetes 1.33"));
	assert_non_null(strstr(why, "1.34 or later"));
	free(why);
	why = api_versions_missing_required(&none, 36);
	assert_non_null(strstr(why, "resource.k8s.io/v1 API enabled"));
	free(why);
}

static void test_extended_resource_needs_a_mapping_class(void **state)
{
	(void)state;
	const char *classes[] = { "gpu.example.com", "gpu-mig.example.com" };
	const char *none[] = { NULL, NULL }, *other[] = { "example.com/other", NULL },
		   *second[] = { NULL, "example.com/gpu" };
	assert_null(api_versions_extended_resource_gap(NULL, classes, none, 2, 34));
	assert_null(api_versions_extended_resource_gap("example.com/gpu", classes, second, 2, 34));
	char *why = api_versions_extended_resource_gap("example.com/gpu", classes, none, 2, 34);
	assert_non_null(strstr(why, "pods asking for example.com/gpu cannot run on DRA nodes"));
	assert_non_null(strstr(why, "(gpu.example.com, ...)"));
	assert_non_null(strstr(why, "DRAExtendedResource feature gate is alpha and off: enable it"));
	free(why);
	why = api_versions_extended_resource_gap("example.com/gpu", classes, other, 1, 36);
	assert_null(strstr(why, "DRAExtendedResource"));
	assert_non_null(strstr(why, "set spec.extendedResourceName: example.com/gpu"));
	assert_non_null(strstr(why, "run only on device-plugin nodes"));
	free(why);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_newest_served_version_is_used),
		cmocka_unit_test(test_freeze_mode_refused_with_what_to_enable),
		cmocka_unit_test(test_claims_v1_is_required),
		cmocka_unit_test(test_extended_resource_needs_a_mapping_class),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
