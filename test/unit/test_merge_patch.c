/*
 * kube_merge_patch_diff: the status write's merge patch removes what the new
 * status no longer has (a breach's acknowledgement, a signal's pool), at
 * every depth where both sides are objects, and replaces arrays and values
 * whole. Each case also applies the patch to old by RFC 7386's rules and
 * checks that the result is want.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "kube_api.h"

/* RFC 7386 MergePatch(target, patch), in place on target; returns the result. */
static cJSON *apply_merge_patch(cJSON *target, const cJSON *patch)
{
	if (!cJSON_IsObject(patch)) {
		cJSON_Delete(target);
		return cJSON_Duplicate(patch, true);
	}
	if (!cJSON_IsObject(target)) {
		cJSON_Delete(target);
		target = cJSON_CreateObject();
	}
	const cJSON *p;
	cJSON_ArrayForEach(p, patch)
	{
		if (cJSON_IsNull(p)) {
			cJSON_DeleteItemFromObjectCaseSensitive(target, p->string);
			continue;
		}
		cJSON *t = cJSON_DetachItemFromObjectCaseSensitive(target, p->string);
		cJSON_AddItemToObject(target, p->string, apply_merge_patch(t, p));
	}
	return target;
}

static void test_patch_turns_old_into_want(void **state)
{
	(void)state;
	static const struct {
		const char *old, *want, *patch;
	} cases[] = {
		/* the bug this exists for: a new breach must not inherit the last one's acknowledgement */
		{ "{\"breach\":{\"id\":\"a-1\",\"acknowledged\":true,\"acknowledgedTime\":\"t1\"},\"frozen\":false}",
		  "{\"breach\":{\"id\":\"a-2\"},\"frozen\":true}",
		  "{\"breach\":{\"id\":\"a-2\",\"acknowledged\":null,\"acknowledgedTime\":null},\"frozen\":true}" },
		/* arrays are replaced whole, never diffed */
		{ "{\"signals\":[{\"name\":\"x\",\"pool\":\"a\"}]}", "{\"signals\":[{\"name\":\"x\"}]}",
		  "{\"signals\":[{\"name\":\"x\"}]}" },
		/* a member that turns from an object into a value, and back */
		{ "{\"a\":{\"b\":1}}", "{\"a\":2}", "{\"a\":2}" },
		{ "{\"a\":2}", "{\"a\":{\"b\":1}}", "{\"a\":{\"b\":1}}" },
		/* depth: only the missing leaf goes */
		{ "{\"a\":{\"b\":{\"c\":1,\"d\":2}}}", "{\"a\":{\"b\":{\"c\":1}}}", "{\"a\":{\"b\":{\"c\":1,\"d\":null}}}" },
		/* nothing before */
		{ NULL, "{\"phase\":\"Legacy\"}", "{\"phase\":\"Legacy\"}" },
		{ "{}", "{}", "{}" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *old = cases[i].old ? cJSON_Parse(cases[i].old) : NULL;
		cJSON *want = cJSON_Parse(cases[i].want);
		cJSON *expected = cJSON_Parse(cases[i].patch);
		assert_true(want && expected && (old || !cases[i].old));
		cJSON *patch = kube_merge_patch_diff(old, want);
		if (!cJSON_Compare(patch, expected, true)) {
			char *got = cJSON_PrintUnformatted(patch);
			fail_msg("case %zu: patch %s, want %s", i, got, cases[i].patch);
		}
		cJSON *result = apply_merge_patch(old ? cJSON_Duplicate(old, true) : NULL, patch);
		assert_true(cJSON_Compare(result, want, true));
		cJSON_Delete(result);
		cJSON_Delete(patch);
		cJSON_Delete(old);
		cJSON_Delete(want);
		cJSON_Delete(expected);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_patch_turns_old_into_want),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
