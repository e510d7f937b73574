/*
 * Reading a plan's history back (controller/plan_history.h): what a person
 * or a bug may have left in the ConfigMap is dropped and counted, never
 * fatal, and never read past the caps.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_history.h"
#include "xalloc.h"

#define LINE "{\"t\":1764441600000,\"kind\":\"pool\",\"pool\":\"a\",\"to\":\"Canary\"}"

static cJSON *configmap(const char *format, const char *transitions, const char *comparison)
{
	cJSON *cm = cJSON_CreateObject();
	cJSON *data = cJSON_AddObjectToObject(cm, "data");
	if (format)
		cJSON_AddStringToObject(data, "format", format);
	if (transitions)
		cJSON_AddStringToObject(data, "transitions", transitions);
	if (comparison)
		cJSON_AddStringToObject(data, "comparison", comparison);
	return cm;
}

static void test_decode(void **state)
{
	(void)state;
	char *long_line = xmalloc(PLAN_HISTORY_LINE_MAX + 64);
	snprintf(long_line, PLAN_HISTORY_LINE_MAX + 64, "{\"t\":1,\"pad\":\"%0*d\"}", PLAN_HISTORY_LINE_MAX, 0);
	char *big_comparison = xmalloc(PLAN_HISTORY_COMPARISON_MAX + 64);
	snprintf(big_comparison, PLAN_HISTORY_COMPARISON_MAX + 64, "{\"pools\":{},\"x\":%0*d}", PLAN_HISTORY_COMPARISON_MAX, 1);
	const struct {
		const char *format, *transitions, *comparison;
		int rc;
		size_t transitions_read, dropped;
		bool comparison_read;
	} rows[] = {
		{ PLAN_HISTORY_FORMAT, LINE "\n" LINE "\n", "{\"pools\":{\"a\":{\"dra\":{\"placed\":3}}}}", 0, 2, 0, true },
		{ PLAN_HISTORY_FORMAT, "", NULL, 0, 0, 0, false },			  /* empty: a new history */
		{ "drashift.io/history/v9", LINE, NULL, -1, 0, 0, false },		  /* an unknown format: not ours to read */
		{ NULL, LINE, NULL, -1, 0, 0, false },					  /* no format */
		{ PLAN_HISTORY_FORMAT, LINE "\nnot json\n" LINE, NULL, 0, 2, 1, false }, /* a broken record is dropped */
		{ PLAN_HISTORY_FORMAT, "{\"kind\":\"pool\"}\n[1]\n{\"t\":-5}", NULL, 0, 0, 3, false }, /* no usable time */
		{ PLAN_HISTORY_FORMAT, long_line, NULL, 0, 0, 1, false },		  /* longer than a record may be */
		{ PLAN_HISTORY_FORMAT, NULL, "{\"pools\":{\"a\":\"many\"}}", 0, 0, 1, false }, /* counters are numbers */
		{ PLAN_HISTORY_FORMAT, NULL, "{\"a\":{\"b\":{\"c\":{\"d\":{\"e\":{\"f\":1}}}}}}", 0, 0, 1, false }, /* too deep */
		{ PLAN_HISTORY_FORMAT, NULL, "{\"placed\":-1}", 0, 0, 1, false },
		{ PLAN_HISTORY_FORMAT, NULL, big_comparison, 0, 0, 1, false },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		cJSON *cm = configmap(rows[i].format, rows[i].transitions, rows[i].comparison);
		plan_history_data_t d;
		char err[256] = "";
		int rc = plan_history_decode(cm, &d, err, sizeof(err));
		if (rc != rows[i].rc || d.n_transitions != rows[i].transitions_read || d.dropped != rows[i].dropped ||
		    (d.comparison != NULL) != rows[i].comparison_read)
			fail_msg("row %zu: rc %d (%s) transitions %zu dropped %zu comparison %d", i, rc, err, d.n_transitions,
				 d.dropped, d.comparison != NULL);
		if (rc != 0 && strstr(err, "data.format") == NULL)
			fail_msg("row %zu: error %s does not name data.format", i, err);
		if (d.dropped > 0 && d.problem[0] == '\0')
			fail_msg("row %zu: nothing says what was dropped", i);
		plan_history_data_free(&d);
		cJSON_Delete(cm);
	}
	plan_history_data_t d;
	char err[256];
	assert_int_equal(plan_history_decode(NULL, &d, err, sizeof(err)), -1); /* not an object at all */
	assert_non_null(strstr(err, "data"));
	free(long_line);
	free(big_comparison);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
