/*
 * Leader election's decisions, without I/O: when a candidate may take the
 * Lease, when a leader must stop, and how the Lease's own bytes are read.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leader.h"

#define LEASE_MS 15000u
#define DEADLINE_MS 10000u

/* A Lease record as the decoder would produce it (strings not owned: never freed). */
static leader_record_t held_by(const char *holder, int64_t duration_s, const char *rv)
{
	leader_record_t r = {
		.present = true,
		.holder = (char *)holder,
		.lease_duration_s = duration_s,
		.transitions = 3,
		.resource_version = (char *)rv,
	};
	return r;
}

static leader_situation_t situation(const leader_record_t *rec, uint64_t observed_ms, bool leading,
				    uint64_t last_renew_ms, uint64_t now_ms)
{
	leader_situation_t s = {
		.record = rec,
		.observed_ms = observed_ms,
		.identity = "me",
		.leading = leading,
		.last_renew_ms = last_renew_ms,
		.now_ms = now_ms,
		.lease_duration_ms = LEASE_MS,
		.renew_deadline_ms = DEADLINE_MS,
	};
	return s;
}

static void expect_action(leader_situation_t s, leader_action_t want)
{
	leader_action_t got = leader_decide(&s);
	if (got != want)
		fail_msg("decided %s, expected %s", leader_action_name(got), leader_action_name(want));
}

/* ---- the decision table -------------------------------------------------- */

static void test_absent_lease_is_created(void **state)
{
	(void)state;
	leader_record_t absent = { .present = false };
	expect_action(situation(&absent, 0, false, 0, 100000), LEADER_CREATE);
	expect_action(situation(NULL, 0, false, 0, 100000), LEADER_CREATE);
}

static void test_leader_holding_a_fresh_lease_renews(void **state)
{
	(void)state;
	leader_record_t r = held_by("me", 15, "10");
	/* Renewed 2 s ago, 9.999 s ago: within the deadline. */
	expect_action(situation(&r, 100000, true, 98000, 100000), LEADER_RENEW);
	expect_action(situation(&r, 100000, true, 90001, 100000), LEADER_RENEW);
}

static void test_leader_past_renew_deadline_loses(void **state)
{
	(void)state;
	leader_record_t r = held_by("me", 15, "10");
	/* Exactly the deadline, and beyond it, even though the lease itself (15 s) is not over. */
	expect_action(situation(&r, 100000, true, 90000, 100000), LEADER_LOSE);
	expect_action(situation(&r, 100000, true, 80000, 100000), LEADER_LOSE);
}

static void test_leader_that_sees_another_holder_loses_at_once(void **state)
{
	(void)state;
	leader_record_t other = held_by("intruder", 15, "11");
	leader_record_t nobody = held_by("", 15, "12");
	leader_record_t absent = { .present = false };
	expect_action(situation(&other, 100000, true, 99000, 100000), LEADER_LOSE);
	expect_action(situation(&nobody, 100000, true, 99000, 100000), LEADER_LOSE);
	expect_action(situation(&absent, 100000, true, 99000, 100000), LEADER_LOSE);
}

static void test_other_holder_observed_recently_waits(void **state)
{
	(void)state;
	leader_record_t r = held_by("other", 15, "10");
	expect_action(situation(&r, 100000, false, 0, 100000), LEADER_WAIT);
	expect_action(situation(&r, 100000, false, 0, 114999), LEADER_WAIT);
}

static void test_other_holder_observed_longer_than_lease_ago_is_acquired(void **state)
{
	(void)state;
	leader_record_t r = held_by("other", 15, "10");
	expect_action(situation(&r, 100000, false, 0, 115000), LEADER_ACQUIRE);
	expect_action(situation(&r, 100000, false, 0, 200000), LEADER_ACQUIRE);
}

static void test_lease_held_by_nobody_is_acquired_at_once(void **state)
{
	(void)state;
	/* What leader_release() leaves behind: no waiting for leaseDurationSeconds. */
	leader_record_t r = held_by("", 1, "10");
	expect_action(situation(&r, 100000, false, 0, 100000), LEADER_ACQUIRE);
}

static void test_lease_still_naming_us_is_taken_back(void **state)
{
	(void)state;
	/* A restarted candidate with the same identity (client-go does the same). */
	leader_record_t r = held_by("me", 15, "10");
	expect_action(situation(&r, 100000, false, 0, 100000), LEADER_ACQUIRE);
}

static void test_holders_own_duration_governs_expiry(void **state)
{
	(void)state;
	/* Our option says 15 s; the holder wrote 60 s: at 20 s it is still theirs. */
	leader_record_t long_lease = held_by("other", 60, "10");
	expect_action(situation(&long_lease, 100000, false, 0, 120000), LEADER_WAIT);
	expect_action(situation(&long_lease, 100000, false, 0, 159999), LEADER_WAIT);
	expect_action(situation(&long_lease, 100000, false, 0, 160000), LEADER_ACQUIRE);
	/* The holder wrote 5 s: at 6 s it has expired although ours would still run. */
	leader_record_t short_lease = held_by("other", 5, "10");
	expect_action(situation(&short_lease, 100000, false, 0, 104999), LEADER_WAIT);
	expect_action(situation(&short_lease, 100000, false, 0, 106000), LEADER_ACQUIRE);
	/* No duration in the record: ours stands in (never "expired at once"). */
	leader_record_t no_duration = held_by("other", 0, "10");
	expect_action(situation(&no_duration, 100000, false, 0, 110000), LEADER_WAIT);
	expect_action(situation(&no_duration, 100000, false, 0, 115000), LEADER_ACQUIRE);
}

static void test_renew_time_in_the_record_is_not_compared_with_our_clock(void **state)
{
	(void)state;
	/*
	 * The holder's clock is an hour behind ours: its renewTime looks long
	 * expired, but we saw the record change just now, so it is live.
	 */
	leader_record_t r = held_by("other", 15, "10");
	r.renew_time_us = (int64_t)1700000000 * 1000000;
	expect_action(situation(&r, 100000, false, 0, 100001), LEADER_WAIT);
}

static void test_changed_record_resets_observation_time(void **state)
{
	(void)state;
	leader_record_t v10 = held_by("other", 15, "10");
	leader_record_t v10_again = held_by("other", 15, "10");
	leader_record_t v11 = held_by("other", 15, "11");
	leader_record_t absent = { .present = false };

	/* Nothing seen before: now. */
	assert_int_equal(leader_observed_time(NULL, 0, &v10, 5000), 5000);
	/* Same resourceVersion 20 s later: still the first sighting, so expired. */
	uint64_t seen = leader_observed_time(&v10, 5000, &v10_again, 25000);
	assert_int_equal(seen, 5000);
	expect_action(situation(&v10_again, seen, false, 0, 25000), LEADER_ACQUIRE);
	/* The holder renewed (new resourceVersion): the clock starts again, so wait. */
	seen = leader_observed_time(&v10, 5000, &v11, 25000);
	assert_int_equal(seen, 25000);
	expect_action(situation(&v11, seen, false, 0, 25000), LEADER_WAIT);
	/* Appearing or vanishing is a change too; staying absent is not. */
	assert_int_equal(leader_observed_time(&absent, 100, &v10, 900), 900);
	assert_int_equal(leader_observed_time(&v10, 100, &absent, 900), 900);
	assert_int_equal(leader_observed_time(&absent, 100, &absent, 900), 100);
}

/* ---- decoding a Lease ---------------------------------------------------- */

static void test_decode_lease(void **state)
{
	(void)state;
	const char *json = "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\","
			   "\"metadata\":{\"name\":\"drashift\",\"namespace\":\"drashift-system\",\"resourceVersion\":\"4711\"},"
			   "\"spec\":{\"holderIdentity\":\"pod-a\",\"leaseDurationSeconds\":15,"
			   "\"acquireTime\":\"2006-01-02T15:04:05.000000Z\",\"renewTime\":\"2006-01-02T15:04:07.250000Z\","
			   "\"leaseTransitions\":4}}";
	char err[256];
	leader_record_t r;
	assert_int_equal(leader_record_decode(json, strlen(json), &r, err, sizeof(err)), 0);
	assert_true(r.present);
	assert_string_equal(r.holder, "pod-a");
	assert_int_equal(r.lease_duration_s, 15);
	assert_int_equal(r.acquire_time_us, (int64_t)1136214245 * 1000000);
	assert_int_equal(r.renew_time_us, (int64_t)1136214247 * 1000000 + 250000);
	assert_int_equal(r.transitions, 4);
	assert_string_equal(r.resource_version, "4711");
	leader_record_free(&r);
}

static void test_decode_lease_without_spec_is_held_by_nobody(void **state)
{
	(void)state;
	const char *json = "{\"metadata\":{\"resourceVersion\":\"1\"},\"spec\":{}}";
	char err[256];
	leader_record_t r;
	assert_int_equal(leader_record_decode(json, strlen(json), &r, err, sizeof(err)), 0);
	assert_string_equal(r.holder, "");
	assert_int_equal(r.lease_duration_s, 0);
	assert_int_equal(r.transitions, 0);
	leader_record_free(&r);
	/* Held by nobody: taken at once. */
	const char *bare = "{\"metadata\":{\"resourceVersion\":\"1\"}}";
	leader_record_t decoded;
	assert_int_equal(leader_record_decode(bare, strlen(bare), &decoded, err, sizeof(err)), 0);
	expect_action(situation(&decoded, 0, false, 0, 0), LEADER_ACQUIRE);
	leader_record_free(&decoded);
}

static void test_decode_lease_with_wrong_types_is_an_error(void **state)
{
	(void)state;
	const char *bad[] = {
		"",
		"not json",
		"[]",
		"\"Lease\"",
		"{}",
		"{\"metadata\":[]}",
		"{\"metadata\":{\"resourceVersion\":12}}",
		"{\"metadata\":{\"resourceVersion\":\"\"}}",
		"{\"metadata\":{\"resourceVersion\":\"1\"},\"spec\":\"held\"}",
		"{\"metadata\":{\"resourceVersion\":\"1\"},\"spec\":{\"holderIdentity\":7}}",
		"{\"metadata\":{\"resourceVersion\":\"1\"},\"spec\":{\"holderIdentity\":[\"a\"]}}",
		"{\"metadata\":{\"resourceVersion\":\"1\"},\"spec\":{\"leaseDurationSeconds\":\"15\"}}",
		"{\"metadata\":{\"resourceVersion\":\"1\"},\"spec\":{\"leaseDurationSeconds\":-1}}",
		"{\"metadata\":{\"resourceVersion\":\"1\"},\"spec\":{\"leaseDurationSeconds\":1.5}}",
		"{\"metadata\":{\"resourceVersion\":\"1\"},\"spec\":{\"leaseDurationSeconds\":1e300}}",
		"{\"metadata\":{\"resourceVersion\":\"1\"},\"spec\":{\"leaseTransitions\":true}}",
		"{\"metadata\":{\"resourceVersion\":\"1\"},\"spec\":{\"renewTime\":1136214245}}",
		"{\"metadata\":{\"resourceVersion\":\"1\"},\"spec\":{\"acquireTime\":\"yesterday\"}}",
		"{\"metadata\":{\"resourceVersion\":\"1\"},\"spec\":{\"holderIdentity\":\"a\"",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char err[256] = "";
		leader_record_t r;
		memset(&r, 0xAB, sizeof(r));
		if (leader_record_decode(bad[i], strlen(bad[i]), &r, err, sizeof(err)) != -1)
			fail_msg("accepted %s", bad[i]);
		if (err[0] == '\0')
			fail_msg("no error message for %s", bad[i]);
		/* Left empty: freeing it is safe and frees nothing. */
		assert_null(r.holder);
		assert_null(r.resource_version);
		leader_record_free(&r);
	}
}

static void test_null_fields_take_their_defaults(void **state)
{
	(void)state;
	const char *json = "{\"metadata\":{\"resourceVersion\":\"9\"},\"spec\":{\"holderIdentity\":null,"
			   "\"leaseDurationSeconds\":null,\"renewTime\":null,\"leaseTransitions\":null}}";
	char err[256];
	leader_record_t r;
	assert_int_equal(leader_record_decode(json, strlen(json), &r, err, sizeof(err)), 0);
	assert_string_equal(r.holder, "");
	assert_int_equal(r.renew_time_us, 0);
	leader_record_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_absent_lease_is_created),
		cmocka_unit_test(test_leader_holding_a_fresh_lease_renews),
		cmocka_unit_test(test_leader_past_renew_deadline_loses),
		cmocka_unit_test(test_leader_that_sees_another_holder_loses_at_once),
		cmocka_unit_test(test_other_holder_observed_recently_waits),
		cmocka_unit_test(test_other_holder_observed_longer_than_lease_ago_is_acquired),
		cmocka_unit_test(test_lease_held_by_nobody_is_acquired_at_once),
		cmocka_unit_test(test_lease_still_naming_us_is_taken_back),
		cmocka_unit_test(test_holders_own_duration_governs_expiry),
		cmocka_unit_test(test_renew_time_in_the_record_is_not_compared_with_our_clock),
		cmocka_unit_test(test_changed_record_resets_observation_time),
		cmocka_unit_test(test_decode_lease),
		cmocka_unit_test(test_decode_lease_without_spec_is_held_by_nobody),
		cmocka_unit_test(test_decode_lease_with_wrong_types_is_an_error),
		cmocka_unit_test(test_null_fields_take_their_defaults),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
