/*
 * Time zones and maintenance windows: offsets across the daylight saving
 * changes of the system zoneinfo (Debian's tzdata) in both hemispheres,
 * beyond the transitions a file lists (its footer rule), from "slim" files
 * that hold only the rule, and refusal of what is not a zone. Windows open
 * and close at their local times across those changes, overnight windows
 * belong to the day they start, and the next edge is exactly when the
 * controller must decide again.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "plan_object.h"
#include "rfc3339.h"
#include "tzif.h"
#include "window.h"
#include "xalloc.h"

#define SUN (1 << 0)
#define MON (1 << 1)
#define FRI (1 << 5)
#define SAT (1 << 6)
#define WEEKDAYS (MON | (1 << 2) | (1 << 3) | (1 << 4) | FRI)

static int64_t at(const char *s)
{
	int64_t us;
	assert_int_equal(rfc3339_parse(s, &us), 0);
	return us / 1000000;
}

static void load(const char *name, tz_zone_t *z)
{
	char path[256], err[160];
	snprintf(path, sizeof(path), "/usr/share/zoneinfo/%s", name);
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		fail_msg("%s missing: the unit tests need Debian's tzdata", path);
	uint8_t *buf = xmalloc(1 << 20);
	size_t n = fread(buf, 1, 1 << 20, f);
	fclose(f);
	if (tz_parse(buf, n, z, err, sizeof(err)) != 0)
		fail_msg("%s: %s", name, err);
	free(buf);
}

/* A "slim" TZif file: one local time type (std_off) and the footer rule, no transitions. */
static size_t slim(uint8_t *buf, int32_t std_off, const char *rule)
{
	size_t n = 0;
	for (int v = 0; v < 2; v++) {
		memset(buf + n, 0, 44);
		memcpy(buf + n, "TZif2", 5);
		buf[n + 39] = 1; /* typecnt */
		buf[n + 43] = 4; /* charcnt */
		n += 44;
		uint32_t u = (uint32_t)std_off;
		uint8_t type[6] = { (uint8_t)(u >> 24), (uint8_t)(u >> 16), (uint8_t)(u >> 8), (uint8_t)u, 0, 0 };
		memcpy(buf + n, type, 6);
		memcpy(buf + n + 6, "STD", 4);
		n += 10;
	}
	buf[n++] = '\n';
	memcpy(buf + n, rule, strlen(rule));
	n += strlen(rule);
	buf[n++] = '\n';
	return n;
}

typedef struct {
	const char *zone;
	const char *when;
	int32_t offset;
} tz_case_t;

/* Expected values from Python's zoneinfo over the same files. */
static const tz_case_t offset_cases[] = {
	{ "Europe/Berlin", "2026-03-29T00:59:59Z", 3600 },     { "Europe/Berlin", "2026-03-29T01:00:00Z", 7200 },
	{ "Europe/Berlin", "2026-10-25T00:59:59Z", 7200 },     { "Europe/Berlin", "2026-10-25T01:00:00Z", 3600 },
	{ "America/New_York", "2026-03-08T06:59:59Z", -18000 }, { "America/New_York", "2026-03-08T07:00:00Z", -14400 },
	{ "America/New_York", "2026-11-01T05:59:59Z", -14400 }, { "America/New_York", "2026-11-01T06:00:00Z", -18000 },
	/* past 2037, where the files' transitions end and the footer rule takes over */
	{ "Europe/Berlin", "2050-03-27T00:59:59Z", 3600 },     { "Europe/Berlin", "2050-03-27T01:00:00Z", 7200 },
	{ "America/New_York", "2050-11-06T05:59:59Z", -14400 }, { "America/New_York", "2050-11-06T06:00:00Z", -18000 },
	/* the southern hemisphere: summer time spans the new year */
	{ "Australia/Sydney", "2026-04-04T15:59:59Z", 39600 },  { "Australia/Sydney", "2026-04-04T16:00:00Z", 36000 },
	{ "Asia/Kolkata", "2026-06-01T00:00:00Z", 19800 },     { "UTC", "2026-06-01T00:00:00Z", 0 },
};

static void test_offsets_across_daylight_saving(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(offset_cases) / sizeof(offset_cases[0]); i++) {
		const tz_case_t *c = &offset_cases[i];
		tz_zone_t z;
		load(c->zone, &z);
		if (tz_offset(&z, at(c->when)) != c->offset)
			fail_msg("%s at %s: offset %d, want %d", c->zone, c->when, tz_offset(&z, at(c->when)), c->offset);
		tz_free(&z);
	}
}

/* The next change is the transition itself, from the file and from the rule alike. */
static void test_next_change(void **state)
{
	(void)state;
	tz_zone_t z;
	load("Europe/Berlin", &z);
	assert_int_equal(tz_next_change(&z, at("2026-03-01T00:00:00Z")), at("2026-03-29T01:00:00Z"));
	assert_int_equal(tz_next_change(&z, at("2026-03-29T01:00:00Z")), at("2026-10-25T01:00:00Z"));
	assert_int_equal(tz_next_change(&z, at("2050-01-01T00:00:00Z")), at("2050-03-27T01:00:00Z"));
	tz_free(&z);
	load("UTC", &z);
	assert_true(tz_next_change(&z, at("2026-03-01T00:00:00Z")) == INT64_MAX);
	tz_free(&z);
}

/* A slim file answers from its rule what the fat file answers from transitions. */
static void test_slim_files_follow_their_rule(void **state)
{
	(void)state;
	static const struct {
		int32_t std_off;
		const char *rule;
		const char *zone;
	} slims[] = {
		{ -18000, "EST5EDT,M3.2.0,M11.1.0", "America/New_York" },
		{ 3600, "CET-1CEST,M3.5.0,M10.5.0/3", "Europe/Berlin" },
		{ 36000, "AEST-10AEDT,M10.1.0,M4.1.0/3", "Australia/Sydney" },
		{ 19800, "IST-5:30", "Asia/Kolkata" },
		{ -10800, "<-03>3", "America/Sao_Paulo" },
	};
	uint8_t buf[256];
	char err[160];
	for (size_t i = 0; i < sizeof(slims) / sizeof(slims[0]); i++) {
		tz_zone_t s, fat;
		assert_int_equal(tz_parse(buf, slim(buf, slims[i].std_off, slims[i].rule), &s, err, sizeof(err)), 0);
		load(slims[i].zone, &fat);
		/* every hour of 2026 and 2027 */
		for (int64_t t = at("2026-01-01T00:00:00Z"); t < at("2028-01-01T00:00:00Z"); t += 3600)
			if (tz_offset(&s, t) != tz_offset(&fat, t))
				fail_msg("%s at %lld: slim %d, fat %d", slims[i].rule, (long long)t, tz_offset(&s, t),
					 tz_offset(&fat, t));
		tz_free(&s);
		tz_free(&fat);
	}
}

static void test_what_is_not_a_zone(void **state)
{
	(void)state;
	tz_zone_t z;
	char err[160];
	uint8_t buf[256];
	assert_int_equal(tz_parse((const uint8_t *)"# not a zone\n", 13, &z, err, sizeof(err)), -1);
	assert_string_equal(err, "not a TZif file");
	slim(buf, 0, "UTC0");
	assert_int_equal(tz_parse(buf, 100, &z, err, sizeof(err)), -1);
	assert_string_equal(err, "TZif data truncated");
	size_t n = slim(buf, 0, "XYZ0ABC,M3.2.0"); /* the end of summer time is missing */
	assert_int_equal(tz_parse(buf, n, &z, err, sizeof(err)), -1);
	assert_string_equal(err, "TZif footer rule not understood");
	assert_null(z.times);
	assert_int_equal(tz_parse(buf, 0, &z, err, sizeof(err)), -1);
	/* names stay inside the zoneinfo */
	assert_true(tz_valid_name("Europe/Berlin"));
	assert_true(tz_valid_name("Etc/GMT+5"));
	assert_true(tz_valid_name("America/Argentina/Buenos_Aires"));
	assert_false(tz_valid_name(""));
	assert_false(tz_valid_name("../etc/passwd"));
	assert_false(tz_valid_name("Europe/../../etc/passwd"));
	assert_false(tz_valid_name("/etc/localtime"));
	assert_false(tz_valid_name("Europe//Berlin"));
	assert_false(tz_valid_name("Europe/Berlin "));
}

typedef struct {
	const char *when;
	bool open;
	const char *edge; /* the next change */
} window_case_t;

static void check(const window_t *w, size_t n, const window_case_t *cases, size_t n_cases)
{
	for (size_t i = 0; i < n_cases; i++) {
		int64_t t = at(cases[i].when);
		if (window_open(w, n, t) != cases[i].open)
			fail_msg("at %s: open %d, want %d", cases[i].when, window_open(w, n, t), cases[i].open);
		int64_t edge = window_next_edge(w, n, t);
		if (edge != at(cases[i].edge))
			fail_msg("at %s: next edge %lld, want %s (%lld)", cases[i].when, (long long)edge, cases[i].edge,
				 (long long)at(cases[i].edge));
	}
}

/* New York office hours: the weekend between them is the one clocks fall back. */
static void test_weekday_window_across_fall_back(void **state)
{
	(void)state;
	window_t w = { .days = WEEKDAYS, .start_s = 9 * 3600, .end_s = 17 * 3600 };
	load("America/New_York", &w.zone);
	static const window_case_t cases[] = {
		{ "2026-10-30T12:59:59Z", false, "2026-10-30T13:00:00Z" }, /* Friday 08:59:59 EDT */
		{ "2026-10-30T13:00:00Z", true, "2026-10-30T21:00:00Z" },  /* Friday 09:00 EDT, closes 17:00 EDT */
		{ "2026-10-30T21:00:00Z", false, "2026-11-02T14:00:00Z" }, /* Monday 09:00 EST */
		{ "2026-10-31T15:00:00Z", false, "2026-11-02T14:00:00Z" }, /* Saturday: not listed */
		{ "2026-11-02T21:59:59Z", true, "2026-11-02T22:00:00Z" },
	};
	check(&w, 1, cases, sizeof(cases) / sizeof(cases[0]));
	tz_free(&w.zone);
}

/* An overnight window belongs to the day it starts: Friday 22:00 to Saturday 02:00 in Berlin. */
static void test_overnight_window(void **state)
{
	(void)state;
	window_t w = { .days = FRI, .start_s = 22 * 3600, .end_s = 2 * 3600 };
	load("Europe/Berlin", &w.zone);
	static const window_case_t cases[] = {
		{ "2026-06-05T19:59:59Z", false, "2026-06-05T20:00:00Z" }, /* Friday 21:59:59 CEST */
		{ "2026-06-05T20:00:00Z", true, "2026-06-06T00:00:00Z" },  /* to Saturday 02:00 CEST */
		{ "2026-06-05T23:59:59Z", true, "2026-06-06T00:00:00Z" },
		{ "2026-06-06T00:00:00Z", false, "2026-06-12T20:00:00Z" }, /* Saturday night does not open */
		{ "2026-06-04T23:30:00Z", false, "2026-06-05T20:00:00Z" }, /* Friday 01:30: Thursday is not listed */
	};
	check(&w, 1, cases, sizeof(cases) / sizeof(cases[0]));
	tz_free(&w.zone);
}

/*
 * The nights clocks change in Berlin: on 2026-03-29 02:00 CET jumps to 03:00
 * CEST (01:00Z), on 2026-10-25 03:00 CEST falls back to 02:00 CET (01:00Z).
 */
static void test_windows_on_the_nights_clocks_change(void **state)
{
	(void)state;
	window_t spring = { .days = SUN, .start_s = 2 * 3600 + 30 * 60, .end_s = 4 * 3600 };
	load("Europe/Berlin", &spring.zone);
	static const window_case_t spring_cases[] = {
		/* 02:30 does not exist: the window opens when the clock shows 03:00, closes at 04:00 CEST */
		{ "2026-03-29T00:59:59Z", false, "2026-03-29T01:00:00Z" },
		{ "2026-03-29T01:00:00Z", true, "2026-03-29T02:00:00Z" },
	};
	check(&spring, 1, spring_cases, sizeof(spring_cases) / sizeof(spring_cases[0]));
	/* a window wholly inside the skipped hour does not open that night */
	spring.start_s = 2 * 3600 + 15 * 60;
	spring.end_s = 2 * 3600 + 45 * 60;
	static const window_case_t skipped[] = {
		{ "2026-03-28T23:00:00Z", false, "2026-04-05T00:15:00Z" },
	};
	check(&spring, 1, skipped, 1);
	tz_free(&spring.zone);

	window_t fall = { .days = SUN, .start_s = 2 * 3600 + 30 * 60, .end_s = 3 * 3600 };
	load("Europe/Berlin", &fall.zone);
	static const window_case_t fall_cases[] = {
		/* 02:30 to 03:00 happens twice: in CEST, then again in CET */
		{ "2026-10-25T00:00:00Z", false, "2026-10-25T00:30:00Z" },
		{ "2026-10-25T00:30:00Z", true, "2026-10-25T01:00:00Z" },
		{ "2026-10-25T01:00:00Z", false, "2026-10-25T01:30:00Z" },
		{ "2026-10-25T01:30:00Z", true, "2026-10-25T02:00:00Z" },
		{ "2026-10-25T02:00:00Z", false, "2026-11-01T01:30:00Z" },
	};
	check(&fall, 1, fall_cases, sizeof(fall_cases) / sizeof(fall_cases[0]));
	tz_free(&fall.zone);
}

/* Several windows: open when any is; none: always open and never an edge. */
static void test_several_windows_and_none(void **state)
{
	(void)state;
	window_t w[2] = {
		{ .days = SAT, .start_s = 10 * 3600, .end_s = 12 * 3600 },
		{ .days = SAT, .start_s = 11 * 3600, .end_s = 13 * 3600 },
	};
	load("UTC", &w[0].zone);
	load("UTC", &w[1].zone);
	static const window_case_t cases[] = {
		{ "2026-06-06T09:00:00Z", false, "2026-06-06T10:00:00Z" },
		{ "2026-06-06T10:00:00Z", true, "2026-06-06T13:00:00Z" }, /* the second keeps it open past 12:00 */
	};
	check(w, 2, cases, sizeof(cases) / sizeof(cases[0]));
	/* every day, all day, from two windows: never closes */
	w[0] = (window_t){ .days = 0x7f, .start_s = 0, .end_s = 12 * 3600, .zone = w[0].zone };
	w[1] = (window_t){ .days = 0x7f, .start_s = 12 * 3600, .end_s = 0, .zone = w[1].zone };
	assert_true(window_open(w, 2, at("2026-06-06T12:00:00Z")));
	assert_int_equal(window_next_edge(w, 2, at("2026-06-06T12:00:00Z")), 0);
	tz_free(&w[0].zone);
	tz_free(&w[1].zone);
	assert_true(window_open(NULL, 0, at("2026-06-06T12:00:00Z")));
	assert_int_equal(window_next_edge(NULL, 0, at("2026-06-06T12:00:00Z")), 0);
}

/* The plan as the controller caches it: each window's zone loaded, an unknown zone a clear Invalid. */
static void decode_plan_with_zone(const char *zone, plan_object_t *po)
{
	cJSON *obj = fixture_json("plans/minimal.json");
	cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
	char *json = xasprintf("[{\"days\":[\"Saturday\"],\"start\":\"22:00\",\"end\":\"06:00\",\"timeZone\":\"%s\"}]", zone);
	cJSON_AddItemToObject(spec, "windows", cJSON_Parse(json));
	free(json);
	char err[256];
	assert_int_equal(store_kind_plans.decode(obj, po, err, sizeof(err)), 0);
	cJSON_Delete(obj);
}

static void test_plan_zones_loaded_or_invalid(void **state)
{
	(void)state;
	plan_object_t po;
	unsetenv("TZDIR");
	decode_plan_with_zone("Europe/Berlin", &po);
	assert_true(po.valid);
	assert_true(window_open(po.plan.windows, 1, at("2026-06-06T21:00:00Z")));  /* Saturday 23:00 CEST */
	assert_false(window_open(po.plan.windows, 1, at("2026-06-06T19:00:00Z"))); /* Saturday 21:00 CEST */
	store_kind_plans.release(&po);

	decode_plan_with_zone("Europe/Atlantis", &po);
	assert_false(po.valid);
	assert_string_equal(po.invalid_reason, "spec.windows[0].timeZone: unknown time zone \"Europe/Atlantis\" "
					       "(/usr/share/zoneinfo/Europe/Atlantis: not found)");
	store_kind_plans.release(&po);

	/* a directory, and a file that is not a zone, are no zones either; $TZDIR is where they are looked up */
	decode_plan_with_zone("Europe", &po);
	assert_false(po.valid);
	assert_string_equal(po.invalid_reason, "spec.windows[0].timeZone: unknown time zone \"Europe\" "
					       "(/usr/share/zoneinfo/Europe: not a TZif file)");
	store_kind_plans.release(&po);
	setenv("TZDIR", FIXTURES, 1);
	decode_plan_with_zone("plans/minimal.json", &po);
	assert_false(po.valid);
	assert_non_null(strstr(po.invalid_reason, "/plans/minimal.json: not a TZif file)"));
	store_kind_plans.release(&po);
	unsetenv("TZDIR");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_offsets_across_daylight_saving),
		cmocka_unit_test(test_next_change),
		cmocka_unit_test(test_slim_files_follow_their_rule),
		cmocka_unit_test(test_what_is_not_a_zone),
		cmocka_unit_test(test_weekday_window_across_fall_back),
		cmocka_unit_test(test_overnight_window),
		cmocka_unit_test(test_windows_on_the_nights_clocks_change),
		cmocka_unit_test(test_several_windows_and_none),
		cmocka_unit_test(test_plan_zones_loaded_or_invalid),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
