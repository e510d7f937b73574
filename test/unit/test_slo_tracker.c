/*
 * SLO observations from claim and pod projections, with an injected clock:
 * latency is measured from the first allocated observation, an allocation
 * already present at first sight is no latency sample, Ready counts only
 * after allocation, a pod stuck Unschedulable marks its claim, deleted claims
 * keep their history, pools filter by class and node, samples come oldest
 * first, and memory stays bounded.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slo_tracker.h"

#define NOW 1764441600000LL /* a whole second */
#define SEC 1000LL
#define MIN 60000LL

static const char *const gpu_classes[] = { "gpu.example.com" };
static const char *const pool_nodes[] = { "gpu-00", "gpu-01" };

/* A claim projection with its own storage; every string the tracker reads is borrowed from here. */
typedef struct {
	projection_claim_t c;
	char name[64], uid[64];
	char *classes[2];
	projection_device_result_t results[1];
} claim_t;

static void make_claim(claim_t *b, const char *name, int64_t created_ms, const char *cls)
{
	memset(b, 0, sizeof(*b));
	snprintf(b->name, sizeof(b->name), "%s", name);
	snprintf(b->uid, sizeof(b->uid), "uid-%s", name);
	b->c.meta.namespace = "team-a";
	b->c.meta.name = b->name;
	b->c.meta.uid = b->uid;
	b->c.meta.created = created_ms / 1000;
	b->classes[0] = (char *)cls;
	b->c.device_classes = b->classes;
	b->c.n_device_classes = 1;
}

static void allocate(claim_t *b, const char *node, const char *driver)
{
	b->c.allocated = true;
	b->c.node_name = (char *)node;
	b->results[0] = (projection_device_result_t){ .request = "gpu", .driver = (char *)driver, .pool = (char *)node,
						      .device = "gpu-0" };
	b->c.results = b->results;
	b->c.n_results = 1;
}

typedef struct {
	projection_pod_t p;
	char *claims[2];
} pod_t;

typedef enum { POD_UNSCHEDULABLE, POD_PENDING, POD_RUNNING, POD_READY, POD_SUCCEEDED, POD_FAILED, POD_DELETING } pod_is_t;

static void make_pod(pod_t *b, const char *claim, int64_t created_ms, pod_is_t is)
{
	memset(b, 0, sizeof(*b));
	b->p.meta.namespace = "team-a";
	b->p.meta.name = "worker";
	b->p.meta.uid = "pod-uid";
	b->p.meta.created = created_ms / 1000;
	b->claims[0] = (char *)claim;
	b->p.claims = b->claims;
	b->p.n_claims = 1;
	b->p.phase = PROJECTION_POD_RUNNING;
	b->p.scheduled = PROJECTION_CONDITION_TRUE;
	switch (is) {
	case POD_UNSCHEDULABLE:
		b->p.phase = PROJECTION_POD_PENDING;
		b->p.scheduled = PROJECTION_CONDITION_FALSE;
		b->p.unschedulable = true;
		break;
	case POD_PENDING:
		b->p.phase = PROJECTION_POD_PENDING;
		break;
	case POD_RUNNING:
		break;
	case POD_READY:
		b->p.ready = true;
		break;
	case POD_SUCCEEDED:
		b->p.phase = PROJECTION_POD_SUCCEEDED;
		break;
	case POD_FAILED:
		b->p.phase = PROJECTION_POD_FAILED;
		break;
	case POD_DELETING:
		b->p.meta.deleting = true;
		break;
	}
}

static void see_pod(slo_tracker_t *t, const char *claim, int64_t created_ms, pod_is_t is, int64_t now)
{
	pod_t p;
	make_pod(&p, claim, created_ms, is);
	slo_tracker_observe_pod(t, &p.p, now);
}

/* The pool's samples since the window start; exactly one expected. */
static slo_sample_t only_sample(slo_tracker_t *t, int64_t since)
{
	slo_sample_t *s;
	size_t n = slo_tracker_samples(t, "gpu.example.com", gpu_classes, 1, pool_nodes, 2, since, &s);
	if (n != 1)
		fail_msg("want 1 sample, got %zu", n);
	slo_sample_t one = s[0];
	free(s);
	return one;
}

static const plan_slo_t slo1 = {
	.window_ms = 10 * MIN,
	.min_samples = 1,
	.allocation_latency_p95_ms = 2000,
	.ready_latency_p95_ms = 30000,
	.max_allocation_failure_percent = 5,
	.stuck_threshold_ms = 5 * MIN,
};

static void judge(slo_tracker_t *t, int64_t now, slo_result_t out[SLO_SIGNALS])
{
	slo_sample_t *s;
	size_t n = slo_tracker_samples(t, "gpu.example.com", gpu_classes, 1, pool_nodes, 2, now - (int64_t)slo1.window_ms, &s);
	slo_input_t in = { .slo = &slo1, .samples = s, .n_samples = n, .now_ms = now };
	slo_judge(&in, out);
	free(s);
}

static void test_latency_from_first_allocated_observation(void **state)
{
	(void)state;
	slo_tracker_t *t = slo_tracker_new();
	claim_t c;
	make_claim(&c, "a", NOW, "gpu.example.com");
	slo_tracker_observe_claim(t, &c.c, NULL, NOW + 1 * SEC);
	allocate(&c, "gpu-00", "gpu.example.com");
	slo_tracker_observe_claim(t, &c.c, NULL, NOW + 3 * SEC);
	slo_tracker_observe_claim(t, &c.c, NULL, NOW + 9 * SEC); /* a later update moves nothing */
	slo_sample_t s = only_sample(t, NOW - MIN);
	assert_int_equal(s.created_ms, NOW);
	assert_int_equal(s.allocated_ms, NOW + 3 * SEC);
	assert_false(s.latency_unknown);

	slo_result_t out[SLO_SIGNALS];
	judge(t, NOW + 10 * SEC, out);
	assert_int_equal(out[SLO_ALLOCATION_LATENCY].samples, 1);
	assert_true(out[SLO_ALLOCATION_LATENCY].value == 3000);
	assert_int_equal(out[SLO_ALLOCATION_LATENCY].verdict, SLO_BREACH); /* 3 s > 2 s */

	/* Deallocated and allocated again: still one sample, with its first allocation. */
	c.c.allocated = false;
	slo_tracker_observe_claim(t, &c.c, NULL, NOW + 20 * SEC);
	allocate(&c, "gpu-00", "gpu.example.com");
	slo_tracker_observe_claim(t, &c.c, NULL, NOW + 30 * SEC);
	s = only_sample(t, NOW - MIN);
	assert_int_equal(s.allocated_ms, NOW + 3 * SEC);
	slo_tracker_free(t);
}

static void test_allocation_at_first_sight_is_no_latency_sample(void **state)
{
	(void)state;
	slo_tracker_t *t = slo_tracker_new();
	claim_t c;
	make_claim(&c, "found", NOW - 2 * MIN, "gpu.example.com");
	allocate(&c, "gpu-01", "gpu.example.com");
	slo_tracker_observe_claim(t, &c.c, NULL, NOW); /* e.g. the list after a restart */
	see_pod(t, "found", NOW - 2 * MIN, POD_RUNNING, NOW + SEC);
	see_pod(t, "found", NOW - 2 * MIN, POD_READY, NOW + 5 * SEC);
	slo_sample_t s = only_sample(t, NOW - 10 * MIN);
	assert_true(s.latency_unknown);

	slo_result_t out[SLO_SIGNALS];
	judge(t, NOW + 10 * SEC, out);
	/* Neither latency is measured from it: inconclusive, not a 2-minute latency and not a pass. */
	assert_int_equal(out[SLO_ALLOCATION_LATENCY].samples, 0);
	assert_int_equal(out[SLO_ALLOCATION_LATENCY].verdict, SLO_INCONCLUSIVE);
	assert_int_equal(out[SLO_READY_LATENCY].samples, 0);
	assert_int_equal(out[SLO_READY_LATENCY].verdict, SLO_INCONCLUSIVE);
	/* It still is an allocated claim the driver serves. */
	assert_int_equal(out[SLO_DRIVER_ERRORS].samples, 1);
	slo_tracker_free(t);
}

static void test_ready_after_allocation(void **state)
{
	(void)state;
	slo_tracker_t *t = slo_tracker_new();
	claim_t c;
	make_claim(&c, "r", NOW, "gpu.example.com");
	slo_tracker_observe_claim(t, &c.c, NULL, NOW);
	see_pod(t, "r", NOW, POD_PENDING, NOW + SEC);
	allocate(&c, "gpu-00", "gpu.example.com");
	slo_tracker_observe_claim(t, &c.c, NULL, NOW + 2 * SEC);
	slo_sample_t s = only_sample(t, NOW - MIN);
	assert_int_equal(s.ready_ms, 0);
	assert_true(s.not_ready_since_allocation); /* the pod seen waiting before still waits */
	see_pod(t, "r", NOW, POD_RUNNING, NOW + 4 * SEC);
	see_pod(t, "r", NOW, POD_READY, NOW + 12 * SEC);
	see_pod(t, "r", NOW, POD_RUNNING, NOW + 20 * SEC); /* flaps: the first Ready stands */
	see_pod(t, "r", NOW, POD_READY, NOW + 30 * SEC);
	s = only_sample(t, NOW - MIN);
	assert_int_equal(s.ready_ms, NOW + 12 * SEC);
	assert_false(s.not_ready_since_allocation);

	slo_result_t out[SLO_SIGNALS];
	judge(t, NOW + MIN, out);
	assert_true(out[SLO_READY_LATENCY].value == 10000);
	assert_int_equal(out[SLO_READY_LATENCY].verdict, SLO_PASS);

	/* The pod watch ran ahead: Ready seen before the allocation. No ready latency from that. */
	claim_t d;
	make_claim(&d, "ahead", NOW, "gpu.example.com");
	slo_tracker_observe_claim(t, &d.c, NULL, NOW);
	see_pod(t, "ahead", NOW, POD_READY, NOW + SEC);
	allocate(&d, "gpu-00", "gpu.example.com");
	slo_tracker_observe_claim(t, &d.c, NULL, NOW + 5 * SEC);
	see_pod(t, "ahead", NOW, POD_READY, NOW + 6 * SEC);
	slo_sample_t *ss;
	size_t n = slo_tracker_samples(t, NULL, gpu_classes, 1, pool_nodes, 2, NOW - MIN, &ss);
	assert_int_equal(n, 2);
	for (size_t i = 0; i < n; i++)
		if (ss[i].allocated_ms == NOW + 5 * SEC) {
			assert_int_equal(ss[i].ready_ms, 0);
			assert_false(ss[i].not_ready_since_allocation);
		}
	free(ss);
	slo_tracker_free(t);
}

static void test_stuck_not_ready_is_a_driver_error(void **state)
{
	(void)state;
	slo_tracker_t *t = slo_tracker_new();
	claim_t c;
	make_claim(&c, "stuck", NOW, "gpu.example.com");
	allocate(&c, "gpu-00", "gpu.example.com");
	slo_tracker_observe_claim(t, &c.c, NULL, NOW); /* first sight allocated: still judged for errors */
	see_pod(t, "stuck", NOW, POD_PENDING, NOW + SEC); /* ContainerCreating: prepare never returns */
	slo_result_t out[SLO_SIGNALS];
	judge(t, NOW + 4 * MIN, out);
	assert_true(out[SLO_DRIVER_ERRORS].value == 0);
	judge(t, NOW + 5 * MIN, out);
	assert_true(out[SLO_DRIVER_ERRORS].value == 1);
	assert_int_equal(out[SLO_DRIVER_ERRORS].verdict, SLO_BREACH);
	/* Someone deletes the stuck pod, then the claim: the error stays in the window. */
	see_pod(t, "stuck", NOW, POD_DELETING, NOW + 6 * MIN);
	slo_tracker_observe_claim(t, NULL, "uid-stuck", NOW + 7 * MIN);
	judge(t, NOW + 9 * MIN, out);
	assert_true(out[SLO_DRIVER_ERRORS].value == 1);

	/* A pod that fails 30 s after allocation was not stuck; one that succeeds never was. */
	claim_t q, ok;
	make_claim(&q, "quick", NOW, "gpu.example.com");
	slo_tracker_observe_claim(t, &q.c, NULL, NOW);
	see_pod(t, "quick", NOW, POD_PENDING, NOW);
	allocate(&q, "gpu-01", "gpu.example.com");
	slo_tracker_observe_claim(t, &q.c, NULL, NOW + SEC);
	see_pod(t, "quick", NOW, POD_FAILED, NOW + 31 * SEC);
	make_claim(&ok, "done", NOW, "gpu.example.com");
	slo_tracker_observe_claim(t, &ok.c, NULL, NOW);
	allocate(&ok, "gpu-01", "gpu.example.com");
	slo_tracker_observe_claim(t, &ok.c, NULL, NOW + SEC);
	see_pod(t, "done", NOW, POD_PENDING, NOW + 2 * SEC);
	see_pod(t, "done", NOW, POD_SUCCEEDED, NOW + 8 * MIN);
	judge(t, NOW + 9 * MIN, out);
	assert_int_equal(out[SLO_DRIVER_ERRORS].samples, 3);
	assert_true(out[SLO_DRIVER_ERRORS].value == 1);

	/* A device condition False is an error, and stays one after the driver clears it. */
	claim_t f;
	make_claim(&f, "cond", NOW, "gpu.example.com");
	allocate(&f, "gpu-00", "gpu.example.com");
	f.c.device_conditions_false = 1;
	slo_tracker_observe_claim(t, &f.c, NULL, NOW + SEC);
	f.c.device_conditions_false = 0;
	slo_tracker_observe_claim(t, &f.c, NULL, NOW + 2 * SEC);
	judge(t, NOW + 9 * MIN, out);
	assert_true(out[SLO_DRIVER_ERRORS].value == 2);
	slo_tracker_free(t);
}

static void test_unallocatable_pending_pod(void **state)
{
	(void)state;
	slo_tracker_t *t = slo_tracker_new();
	claim_t c;
	make_claim(&c, "u", NOW, "gpu.example.com");
	slo_tracker_observe_claim(t, &c.c, NULL, NOW);
	see_pod(t, "u", NOW, POD_PENDING, NOW + SEC); /* Pending, scheduled: not unallocatable */
	assert_false(only_sample(t, NOW - MIN).unallocatable);
	pod_t p;
	make_pod(&p, "u", NOW, POD_UNSCHEDULABLE);
	p.p.unschedulable = false; /* PodScheduled False for another reason (SchedulerError): not "no fit" */
	slo_tracker_observe_pod(t, &p.p, NOW + 2 * SEC);
	assert_false(only_sample(t, NOW - MIN).unallocatable);
	see_pod(t, "u", NOW, POD_UNSCHEDULABLE, NOW + 3 * SEC);
	assert_true(only_sample(t, NOW - MIN).unallocatable);

	slo_result_t out[SLO_SIGNALS];
	judge(t, NOW + 4 * MIN, out);
	assert_int_equal(out[SLO_ALLOCATION_FAILURES].samples, 0); /* too young to judge */
	judge(t, NOW + 5 * MIN, out);
	assert_int_equal(out[SLO_ALLOCATION_FAILURES].samples, 1);
	assert_true(out[SLO_ALLOCATION_FAILURES].value == 100);
	assert_int_equal(out[SLO_ALLOCATION_FAILURES].verdict, SLO_BREACH);

	/* A pod seen Unschedulable before its claim was observed: the claim adopts what the pod said. */
	see_pod(t, "early", NOW, POD_UNSCHEDULABLE, NOW + SEC);
	slo_sample_t *s;
	assert_int_equal(slo_tracker_samples(t, NULL, gpu_classes, 1, pool_nodes, 2, NOW - MIN, &s), 1); /* placeholders are no samples */
	free(s);
	claim_t e;
	make_claim(&e, "early", NOW, "gpu.example.com");
	slo_tracker_observe_claim(t, &e.c, NULL, NOW + 2 * SEC);
	assert_int_equal(slo_tracker_size(t), 2);
	judge(t, NOW + 6 * MIN, out);
	assert_int_equal(out[SLO_ALLOCATION_FAILURES].samples, 2);
	assert_true(out[SLO_ALLOCATION_FAILURES].value == 100);

	/* Pods in another namespace do not touch a claim of the same name. */
	claim_t other;
	make_claim(&other, "fresh", NOW, "gpu.example.com");
	slo_tracker_observe_claim(t, &other.c, NULL, NOW);
	make_pod(&p, "fresh", NOW, POD_UNSCHEDULABLE);
	p.p.meta.namespace = "team-b";
	slo_tracker_observe_pod(t, &p.p, NOW + SEC);
	size_t n = slo_tracker_samples(t, NULL, gpu_classes, 1, pool_nodes, 2, NOW - MIN, &s);
	assert_int_equal(n, 3);
	size_t unalloc = 0;
	for (size_t i = 0; i < n; i++)
		unalloc += s[i].unallocatable;
	assert_int_equal(unalloc, 2);
	free(s);
	slo_tracker_free(t);
}

static void test_deleted_claims_keep_their_history(void **state)
{
	(void)state;
	slo_tracker_t *t = slo_tracker_new();
	claim_t c;
	make_claim(&c, "gone", NOW, "gpu.example.com");
	slo_tracker_observe_claim(t, &c.c, NULL, NOW);
	see_pod(t, "gone", NOW, POD_UNSCHEDULABLE, NOW + SEC);
	slo_tracker_observe_claim(t, NULL, "uid-gone", NOW + 30 * SEC);
	slo_tracker_observe_claim(t, NULL, "uid-never-seen", NOW + 30 * SEC); /* no-op */
	slo_sample_t s = only_sample(t, NOW - MIN);
	assert_int_equal(s.ended_ms, NOW + 30 * SEC);
	assert_true(s.unallocatable);
	/* Deleted after 30 s of waiting: judged, but no failure. */
	slo_result_t out[SLO_SIGNALS];
	judge(t, NOW + 6 * MIN, out);
	assert_int_equal(out[SLO_ALLOCATION_FAILURES].samples, 1);
	assert_true(out[SLO_ALLOCATION_FAILURES].value == 0);

	/* A late update of the deleted incarnation is ignored. */
	allocate(&c, "gpu-00", "gpu.example.com");
	slo_tracker_observe_claim(t, &c.c, NULL, NOW + 40 * SEC);
	assert_int_equal(only_sample(t, NOW - MIN).allocated_ms, 0);

	/*
	 * The name comes back with a new uid. A pod naming it before the new claim
	 * is seen does not reach the deleted one: it leaves a placeholder, which
	 * the new incarnation adopts.
	 */
	see_pod(t, "gone", NOW + MIN, POD_PENDING, NOW + MIN);
	assert_int_equal(slo_tracker_size(t), 2);
	claim_t again;
	make_claim(&again, "gone", NOW + MIN, "gpu.example.com");
	snprintf(again.uid, sizeof(again.uid), "uid-gone-2");
	slo_tracker_observe_claim(t, &again.c, NULL, NOW + MIN + SEC);
	assert_int_equal(slo_tracker_size(t), 2);
	allocate(&again, "gpu-01", "gpu.example.com");
	slo_tracker_observe_claim(t, &again.c, NULL, NOW + MIN + 2 * SEC);
	see_pod(t, "gone", NOW + MIN, POD_READY, NOW + MIN + 7 * SEC);
	slo_sample_t *ss;
	size_t n = slo_tracker_samples(t, NULL, gpu_classes, 1, pool_nodes, 2, NOW - MIN, &ss);
	assert_int_equal(n, 2);
	/* Sorted by creation: the deleted one first, untouched. */
	assert_int_equal(ss[0].created_ms, NOW);
	assert_int_equal(ss[0].allocated_ms, 0);
	assert_int_equal(ss[0].ready_ms, 0);
	assert_int_equal(ss[1].created_ms, NOW + MIN);
	assert_int_equal(ss[1].allocated_ms, NOW + MIN + 2 * SEC);
	assert_int_equal(ss[1].ready_ms, NOW + MIN + 7 * SEC);
	assert_false(ss[1].latency_unknown);
	free(ss);
	slo_tracker_free(t);
}

static void test_pool_filtering_by_node_and_class(void **state)
{
	(void)state;
	slo_tracker_t *t = slo_tracker_new();
	struct {
		const char *name;
		const char *cls;
		const char *node; /* NULL: pending */
		const char *driver;
		int64_t created_ago;
		bool in_pool;
	} claims[] = {
		{ "on-pool-node", "gpu.example.com", "gpu-00", "gpu.example.com", MIN, true },
		{ "on-other-pool-node", "gpu.example.com", "gpu-07", "gpu.example.com", MIN, false },
		{ "pending-gpu", "gpu.example.com", NULL, NULL, MIN, true },
		{ "pending-fpga", "fpga.example.com", NULL, NULL, MIN, false },
		{ "fpga-on-pool-node", "fpga.example.com", "gpu-01", "fpga.example.com", MIN, false },
		{ "other-driver", "gpu.example.com", "gpu-01", "other.example.com", MIN, false },
		{ "before-since", "gpu.example.com", "gpu-01", "gpu.example.com", 20 * MIN, false },
		{ "at-since", "gpu.example.com", "gpu-01", "gpu.example.com", 10 * MIN, true },
	};
	claim_t b;
	for (size_t i = 0; i < sizeof(claims) / sizeof(claims[0]); i++) {
		make_claim(&b, claims[i].name, NOW - claims[i].created_ago, claims[i].cls);
		b.c.meta.created = (NOW - claims[i].created_ago) / 1000;
		if (claims[i].node)
			allocate(&b, claims[i].node, claims[i].driver);
		slo_tracker_observe_claim(t, &b.c, NULL, NOW);
	}
	see_pod(t, "placeholder-only", NOW, POD_UNSCHEDULABLE, NOW); /* no claim seen: never a sample */

	slo_sample_t *s;
	size_t n = slo_tracker_samples(t, "gpu.example.com", gpu_classes, 1, pool_nodes, 2, NOW - 10 * MIN, &s);
	size_t want = 0;
	for (size_t i = 0; i < sizeof(claims) / sizeof(claims[0]); i++)
		want += claims[i].in_pool;
	assert_int_equal(n, want);
	for (size_t i = 0; i < sizeof(claims) / sizeof(claims[0]); i++) {
		bool found = false;
		for (size_t j = 0; j < n; j++)
			found |= s[j].created_ms == NOW - claims[i].created_ago &&
				 (s[j].allocated_ms != 0) == (claims[i].node != NULL);
		if (claims[i].in_pool && !found)
			fail_msg("%s missing from the pool's samples", claims[i].name);
	}
	free(s);

	/* Without a driver filter the other driver's claim on a pool node counts. */
	n = slo_tracker_samples(t, NULL, gpu_classes, 1, pool_nodes, 2, NOW - 10 * MIN, &s);
	assert_int_equal(n, want + 1);
	free(s);
	/* A claim asking for either class belongs to a pool serving both. */
	static const char *const both[] = { "fpga.example.com", "gpu.example.com" };
	n = slo_tracker_samples(t, "gpu.example.com", both, 2, pool_nodes, 2, NOW - 10 * MIN, &s);
	assert_int_equal(n, want + 1); /* pending-fpga; fpga-on-pool-node is another driver's */
	free(s);
	/* No nodes: only pending claims. */
	n = slo_tracker_samples(t, NULL, gpu_classes, 1, NULL, 0, NOW - 10 * MIN, &s);
	assert_int_equal(n, 1);
	free(s);
	/* A large pool selects the same claims. */
	static char big_names[40][16];
	const char *big[40];
	for (size_t i = 0; i < 40; i++) {
		snprintf(big_names[i], sizeof(big_names[i]), "gpu-%02zu", 39 - i);
		big[i] = big_names[i];
	}
	n = slo_tracker_samples(t, "gpu.example.com", gpu_classes, 1, big, 40, NOW - 10 * MIN, &s);
	assert_int_equal(n, want + 1); /* on-other-pool-node (gpu-07) is in this pool */
	free(s);
	/* Nothing matches: *out is NULL. */
	static const char *const none[] = { "nic.example.com" };
	n = slo_tracker_samples(t, NULL, none, 1, pool_nodes, 2, NOW - 10 * MIN, &s);
	assert_int_equal(n, 0);
	assert_null(s);
	/* A driver no claim names: the allocated claims are another driver's; the pending one still counts. */
	n = slo_tracker_samples(t, "nic.example.com", gpu_classes, 1, pool_nodes, 2, NOW - 10 * MIN, &s);
	assert_int_equal(n, 1);
	assert_int_equal(s[0].allocated_ms, 0);
	free(s);
	slo_tracker_free(t);
}

static void test_eviction_beyond_twice_the_window(void **state)
{
	(void)state;
	slo_tracker_t *t = slo_tracker_new();
	claim_t b;
	slo_sample_t *s;
	size_t n;
	/* Before anyone asks for a window, nothing ages out however much time passes. */
	make_claim(&b, "ancient", NOW - 60 * MIN, "gpu.example.com");
	slo_tracker_observe_claim(t, &b.c, NULL, NOW);
	make_claim(&b, "old", NOW - 12 * MIN, "gpu.example.com");
	slo_tracker_observe_claim(t, &b.c, NULL, NOW);
	make_claim(&b, "new", NOW - MIN, "gpu.example.com");
	slo_tracker_observe_claim(t, &b.c, NULL, NOW);
	const int64_t T = NOW + 5 * MIN;
	make_claim(&b, "tick0", T, "gpu.example.com");
	slo_tracker_observe_claim(t, &b.c, NULL, T);
	assert_int_equal(slo_tracker_size(t), 4);

	/* Asked for a 10 min window: observations created over 20 min ago go at the next sweep. */
	n = slo_tracker_samples(t, NULL, gpu_classes, 1, pool_nodes, 2, T - 10 * MIN, &s);
	assert_int_equal(n, 2); /* new, tick0 */
	free(s);
	assert_int_equal(slo_tracker_size(t), 4); /* the query itself frees nothing */
	make_claim(&b, "tick1", T + MIN, "gpu.example.com");
	slo_tracker_observe_claim(t, &b.c, NULL, T + MIN); /* horizon NOW - 14 min */
	assert_int_equal(slo_tracker_size(t), 4);

	/* Created before the horizon: not recorded at all; nor a placeholder for an old pod. */
	make_claim(&b, "late-news", NOW - 30 * MIN, "gpu.example.com");
	slo_tracker_observe_claim(t, &b.c, NULL, T + MIN);
	see_pod(t, "old-pod-claim", NOW - 30 * MIN, POD_PENDING, T + MIN);
	assert_int_equal(slo_tracker_size(t), 4);

	/* (This query looks back 19 min, so from here on 38 min are kept.) */
	n = slo_tracker_samples(t, NULL, gpu_classes, 1, pool_nodes, 2, NOW - 13 * MIN, &s);
	assert_int_equal(n, 4); /* ancient gone; old, new, tick0, tick1 kept */
	assert_int_equal(s[0].created_ms, NOW - 12 * MIN);
	free(s);

	/* A longer window asked for keeps more from then on. */
	n = slo_tracker_samples(t, NULL, gpu_classes, 1, pool_nodes, 2, T + MIN - 60 * MIN, &s);
	free(s);
	make_claim(&b, "kept", NOW - 90 * MIN, "gpu.example.com");
	slo_tracker_observe_claim(t, &b.c, NULL, T + 2 * MIN);
	assert_int_equal(slo_tracker_size(t), 5);

	/* Hours later every record is beyond twice the longest window. */
	make_claim(&b, "fresh", NOW + 300 * MIN, "gpu.example.com");
	slo_tracker_observe_claim(t, &b.c, NULL, NOW + 300 * MIN);
	assert_int_equal(slo_tracker_size(t), 1);
	slo_tracker_free(t);
}

static void test_cap_drops_the_oldest_first(void **state)
{
	(void)state;
	const size_t max = SLO_TRACKER_MAX_CLAIMS, eighth = SLO_TRACKER_MAX_CLAIMS / 8;
	slo_tracker_t *t = slo_tracker_new();
	claim_t b;
	char name[32];
	/*
	 * Fill to the cap with ages 0 .. max-1 s in scrambled order (7919 is prime
	 * to max), so insertion order says nothing about age.
	 */
	for (size_t i = 0; i < max; i++) {
		snprintf(name, sizeof(name), "c%zu", i);
		make_claim(&b, name, NOW - (int64_t)((i * 7919) % max) * SEC, "gpu.example.com");
		slo_tracker_observe_claim(t, &b.c, NULL, NOW);
	}
	assert_int_equal(slo_tracker_size(t), max);
	/* Ten more: the first one finds the tracker full and the oldest eighth goes. */
	for (size_t i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "n%zu", i);
		make_claim(&b, name, NOW + (int64_t)i * SEC, "gpu.example.com");
		slo_tracker_observe_claim(t, &b.c, NULL, NOW);
		assert_true(slo_tracker_size(t) <= max);
	}
	assert_int_equal(slo_tracker_size(t), max - eighth + 10);
	slo_sample_t *s;
	size_t n = slo_tracker_samples(t, NULL, gpu_classes, 1, pool_nodes, 2, INT64_MIN, &s);
	assert_int_equal(n, max - eighth + 10);
	/* Exactly the oldest went: the oldest survivor is the age just below them. */
	assert_int_equal(s[0].created_ms, NOW - (int64_t)(max - eighth - 1) * SEC);
	assert_int_equal(s[n - 1].created_ms, NOW + 9 * SEC);
	free(s);
	slo_tracker_free(t);

	/* All created in the same second: still exactly an eighth goes, not all of them. */
	t = slo_tracker_new();
	for (size_t i = 0; i <= max; i++) {
		snprintf(name, sizeof(name), "same%zu", i);
		make_claim(&b, name, NOW, "gpu.example.com");
		slo_tracker_observe_claim(t, &b.c, NULL, NOW);
	}
	assert_int_equal(slo_tracker_size(t), max - eighth + 1);
	slo_tracker_free(t);
}

/*
 * Samples come out oldest first and only from the window, however the records
 * arrived, and stay so when a record's creation time changes between two
 * queries (a pod's placeholder learns its claim's own creation time).
 */
static void test_samples_in_creation_order_as_records_change(void **state)
{
	(void)state;
	slo_tracker_t *t = slo_tracker_new();
	claim_t b;
	slo_sample_t *s;
	const char *names[] = { "c", "a", "b" };
	const int64_t ages[] = { 3 * MIN, 5 * MIN, 1 * MIN };
	for (size_t i = 0; i < 3; i++) {
		make_claim(&b, names[i], NOW - ages[i], "gpu.example.com");
		slo_tracker_observe_claim(t, &b.c, NULL, NOW);
	}
	size_t n = slo_tracker_samples(t, NULL, gpu_classes, 1, pool_nodes, 2, INT64_MIN, &s);
	assert_int_equal(n, 3);
	assert_int_equal(s[0].created_ms, NOW - 5 * MIN);
	assert_int_equal(s[1].created_ms, NOW - 3 * MIN);
	assert_int_equal(s[2].created_ms, NOW - 1 * MIN);
	free(s);
	n = slo_tracker_samples(t, NULL, gpu_classes, 1, pool_nodes, 2, NOW - 4 * MIN, &s);
	assert_int_equal(n, 2);
	assert_int_equal(s[0].created_ms, NOW - 3 * MIN);
	free(s);

	/* A pod seen first makes a placeholder at the pod's creation (no sample: the claim is unseen)... */
	see_pod(t, "p", NOW - 2 * MIN, POD_PENDING, NOW);
	n = slo_tracker_samples(t, NULL, gpu_classes, 1, pool_nodes, 2, NOW - 4 * MIN, &s);
	assert_int_equal(n, 2);
	free(s);
	/* ...then the claim, created before the window: it moves out of the window, not into it. */
	make_claim(&b, "p", NOW - 6 * MIN, "gpu.example.com");
	slo_tracker_observe_claim(t, &b.c, NULL, NOW);
	n = slo_tracker_samples(t, NULL, gpu_classes, 1, pool_nodes, 2, NOW - 4 * MIN, &s);
	assert_int_equal(n, 2);
	assert_int_equal(s[0].created_ms, NOW - 3 * MIN);
	assert_int_equal(s[1].created_ms, NOW - 1 * MIN);
	free(s);
	n = slo_tracker_samples(t, NULL, gpu_classes, 1, pool_nodes, 2, INT64_MIN, &s);
	assert_int_equal(n, 4);
	assert_int_equal(s[0].created_ms, NOW - 6 * MIN);
	for (size_t i = 1; i < n; i++)
		assert_true(s[i - 1].created_ms <= s[i].created_ms);
	free(s);

	/* Many arriving at once (sorted with the rest, more than a first buffer holds), then a few (each put in its place), in any order. */
	char name[16];
	size_t total = 4;
	for (size_t round = 0; round < 2; round++) {
		size_t k = round == 0 ? 100 : 5;
		for (size_t i = 0; i < k; i++, total++) {
			snprintf(name, sizeof(name), "m%zu-%zu", round, i);
			make_claim(&b, name, NOW - (int64_t)((i * 37) % 53) * SEC - (round ? 7 * MIN : 0), "gpu.example.com");
			slo_tracker_observe_claim(t, &b.c, NULL, NOW);
		}
		n = slo_tracker_samples(t, NULL, gpu_classes, 1, pool_nodes, 2, INT64_MIN, &s);
		assert_int_equal(n, total);
		for (size_t i = 1; i < n; i++)
			assert_true(s[i - 1].created_ms <= s[i].created_ms);
		free(s);
	}
	slo_tracker_free(t);
}

/* Node "n<p>-<i>" is in pool p when i is under *data, the pools' length. */
static ptrdiff_t first_nodes_of_pools(const char *node, void *data)
{
	size_t p, i;
	return sscanf(node, "n%zu-%zu", &p, &i) == 2 && p < 3 && i < *(const size_t *)data ? (ptrdiff_t)p : -1;
}

/*
 * A view's pools give each pool what asking for it alone gives: an allocated
 * claim in the pool of its node, a pending one in every pool, with pools of
 * 2 nodes and of 20 (a new members_version: the view is built again).
 */
static void test_pools_of_one_view(void **state)
{
	(void)state;
	slo_tracker_t *t = slo_tracker_new();
	static char names[3][20][16];
	const char *lists[3][20];
	for (size_t p = 0; p < 3; p++)
		for (size_t i = 0; i < 20; i++) {
			snprintf(names[p][i], sizeof(names[p][i]), "n%zu-%02zu", p, i);
			lists[p][i] = names[p][i];
		}
	claim_t b;
	char name[32];
	/* Pool p has p + 1 claims allocated on its nodes; two are pending; one is on no pool's node. */
	for (size_t p = 0; p < 3; p++)
		for (size_t k = 0; k <= p; k++) {
			snprintf(name, sizeof(name), "c%zu-%zu", p, k);
			make_claim(&b, name, NOW - (int64_t)(p * 10 + k) * SEC, "gpu.example.com");
			allocate(&b, lists[p][k * 7], "gpu.example.com");
			slo_tracker_observe_claim(t, &b.c, NULL, NOW);
		}
	for (size_t k = 0; k < 2; k++) {
		snprintf(name, sizeof(name), "pending%zu", k);
		make_claim(&b, name, NOW - (int64_t)(40 + k) * SEC, "gpu.example.com");
		slo_tracker_observe_claim(t, &b.c, NULL, NOW);
	}
	make_claim(&b, "elsewhere", NOW - 50 * SEC, "gpu.example.com");
	allocate(&b, "other-node", "gpu.example.com");
	slo_tracker_observe_claim(t, &b.c, NULL, NOW);

	slo_tracker_view_t *v = slo_tracker_view_new(t);
	for (size_t len = 2; len <= 20; len += 18) { /* pools of 2 nodes and of 20 */
		const char *const *pools[3] = { lists[0], lists[1], lists[2] };
		const slo_sample_t *out[3];
		size_t n[3];
		slo_tracker_view_samples(v, "gpu.example.com", gpu_classes, 1, first_nodes_of_pools, &len, 3, len,
					 NOW - 10 * MIN, out, n);
		for (size_t p = 0; p < 3; p++) {
			/* With two nodes a pool holds only its claim on node 0; with twenty, all p + 1. */
			size_t allocated = len == 2 ? 1 : p + 1;
			assert_int_equal(n[p], allocated + 2);
			slo_sample_t *alone;
			size_t n_alone = slo_tracker_samples(t, "gpu.example.com", gpu_classes, 1, pools[p], len,
							     NOW - 10 * MIN, &alone);
			assert_int_equal(n_alone, n[p]);
			for (size_t i = 0; i < n[p]; i++)
				assert_int_equal(out[p][i].created_ms, alone[i].created_ms);
			free(alone);
		}
	}
	assert_int_equal(slo_tracker_view_builds(t), 2 + 6); /* the view twice, and each one-off query */
	slo_tracker_view_free(v);
	slo_tracker_free(t);
}

/* ---- a view kept up to date, against one built from scratch ---------------------------------------- */

/* Nodes "r<i>" for i < 12; node i is in pool (i + shift) % 4, pool 3 being none. */
static ptrdiff_t shifted_pools(const char *node, void *data)
{
	unsigned i;
	if (sscanf(node, "r%u", &i) != 1)
		return -1;
	size_t p = (i + *(const size_t *)data) % 4;
	return p == 3 ? -1 : (ptrdiff_t)p;
}

static int compare_samples(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(slo_sample_t));
}

/* The same samples, in creation order each, as multisets (ties may come in any order). */
static void assert_same_samples(const slo_sample_t *x, size_t nx, const slo_sample_t *y, size_t ny)
{
	assert_int_equal(nx, ny);
	for (size_t i = 1; i < nx; i++)
		assert_true(x[i - 1].created_ms <= x[i].created_ms);
	slo_sample_t *a = calloc(nx + 1, sizeof(*a)), *b = calloc(ny + 1, sizeof(*b));
	for (size_t i = 0; i < nx; i++) {
		/* Compared field by field through a zeroed copy: padding is no difference. */
		a[i] = (slo_sample_t){ 0 };
		b[i] = (slo_sample_t){ 0 };
		a[i].created_ms = x[i].created_ms, a[i].allocated_ms = x[i].allocated_ms, a[i].ready_ms = x[i].ready_ms;
		a[i].ended_ms = x[i].ended_ms, a[i].latency_unknown = x[i].latency_unknown;
		a[i].unallocatable = x[i].unallocatable, a[i].not_ready_since_allocation = x[i].not_ready_since_allocation;
		a[i].device_condition_false = x[i].device_condition_false;
		b[i].created_ms = y[i].created_ms, b[i].allocated_ms = y[i].allocated_ms, b[i].ready_ms = y[i].ready_ms;
		b[i].ended_ms = y[i].ended_ms, b[i].latency_unknown = y[i].latency_unknown;
		b[i].unallocatable = y[i].unallocatable, b[i].not_ready_since_allocation = y[i].not_ready_since_allocation;
		b[i].device_condition_false = y[i].device_condition_false;
	}
	qsort(a, nx, sizeof(*a), compare_samples);
	qsort(b, ny, sizeof(*b), compare_samples);
	for (size_t i = 0; i < nx; i++)
		assert_memory_equal(&a[i], &b[i], sizeof(*a));
	free(a);
	free(b);
}

/*
 * A view queried after every few observations gives exactly what a view
 * built from every record gives, through claims created, allocated on
 * nodes of each pool, deleted and made again under the same name; pods
 * seen before their claims, waiting, Ready, finished and gone; creation
 * times that change; nodes moving between pools; classes and drivers of the
 * query changing; and records aging out. And it is built from a walk of
 * the records only when its query or the records' set demands it.
 */
static void test_view_follows_changes(void **state)
{
	(void)state;
	slo_tracker_t *t = slo_tracker_new();
	slo_tracker_view_t *kept = slo_tracker_view_new(t);
	static const char *const classes[][2] = { { "gpu.example.com", NULL }, { "gpu.example.com", "fpga.example.com" } };
	static const char *const drivers[] = { "gpu.example.com", "other.example.com" };
	static const char *const nodes[] = { "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11" };
	unsigned seed = 20261206;
	size_t shift = 0, query = 0, queries = 0, rebuilds_expected = 0;
	uint64_t version = 1, kept_builds = 0;
	unsigned generation[97] = { 0 };
	int64_t now = NOW;
	for (int step = 0; step < 6000; step++) {
		seed = seed * 1103515245u + 12345u;
		unsigned r = seed >> 8;
		char name[32];
		unsigned c = r % 97;
		snprintf(name, sizeof(name), "c%u", c);
		claim_t b;
		char uid[64];
		snprintf(uid, sizeof(uid), "uid-%s-%u", name, generation[c]); /* made again: a new uid, the same name */
		int64_t created = now - (int64_t)(r % 300) * SEC;
		switch (r % 11) {
		case 0: case 1: case 2: /* a claim seen, pending */
			make_claim(&b, name, created, (r >> 4) % 5 ? "gpu.example.com" : "fpga.example.com");
			b.c.meta.uid = uid;
			slo_tracker_observe_claim(t, &b.c, NULL, now);
			break;
		case 3: case 4: /* seen allocated, on a node, by one driver or another */
			make_claim(&b, name, created, (r >> 4) % 5 ? "gpu.example.com" : "fpga.example.com");
			allocate(&b, nodes[(r >> 6) % 12], drivers[(r >> 10) % 4 == 0]);
			b.c.meta.uid = uid;
			slo_tracker_observe_claim(t, &b.c, NULL, now);
			break;
		case 5: /* deleted */
			slo_tracker_observe_claim(t, NULL, uid, now);
			generation[c]++;
			break;
		case 6: case 7: /* a pod, perhaps before its claim */
			see_pod(t, name, created, (pod_is_t)((r >> 4) % 7), now);
			break;
		case 8: /* time passes: records age out at the sweep once a window was asked for */
			now += (int64_t)(r % 4) * SEC;
			break;
		case 9: /* a node changes pools, now and then */
			if ((r >> 4) % 8 == 0) {
				shift++;
				version++;
				rebuilds_expected++;
			}
			break;
		case 10: /* the plan's classes or driver change, seldom */
			if ((r >> 4) % 16 == 0) {
				query = (query + 1) % 4;
				rebuilds_expected++;
			}
			break;
		}
		if (step % 3 != 0)
			continue;
		const char *driver = query & 1 ? drivers[0] : NULL;
		size_t n_classes = query & 2 ? 2 : 1;
		int64_t since = now - 4 * MIN;
		const slo_sample_t *out[3], *fresh_out[3];
		size_t n[3], fresh_n[3];
		uint64_t before = slo_tracker_view_builds(t);
		slo_tracker_view_samples(kept, driver, classes[query >> 1], n_classes, shifted_pools, &shift, 3, version,
					 since, out, n);
		uint64_t after = slo_tracker_view_builds(t);
		kept_builds += after - before;
		queries++;
		slo_tracker_view_t *fresh = slo_tracker_view_new(t);
		slo_tracker_view_samples(fresh, driver, classes[query >> 1], n_classes, shifted_pools, &shift, 3, version,
					 since, fresh_out, fresh_n);
		assert_int_equal(slo_tracker_view_builds(t), after + 1);
		for (size_t p = 0; p < 3; p++)
			assert_same_samples(out[p], n[p], fresh_out[p], fresh_n[p]);
		slo_tracker_view_free(fresh);
	}
	/* Built again only for a new query, a node moved, or records aged out (once a sweep), never per change. */
	assert_true(kept_builds >= 1);
	assert_true(kept_builds <= 1 + rebuilds_expected + (size_t)((now - NOW) / MIN) + 1);
	print_message("view: %zu queries, %llu builds, %zu new queries or moves, %lld min\n", queries,
		      (unsigned long long)kept_builds, rebuilds_expected, (long long)((now - NOW) / MIN));
	assert_true(kept_builds * 10 < queries);
	slo_tracker_view_free(kept);
	slo_tracker_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_latency_from_first_allocated_observation),
		cmocka_unit_test(test_allocation_at_first_sight_is_no_latency_sample),
		cmocka_unit_test(test_ready_after_allocation),
		cmocka_unit_test(test_stuck_not_ready_is_a_driver_error),
		cmocka_unit_test(test_unallocatable_pending_pod),
		cmocka_unit_test(test_deleted_claims_keep_their_history),
		cmocka_unit_test(test_pool_filtering_by_node_and_class),
		cmocka_unit_test(test_eviction_beyond_twice_the_window),
		cmocka_unit_test(test_cap_drops_the_oldest_first),
		cmocka_unit_test(test_samples_in_creation_order_as_records_change),
		cmocka_unit_test(test_pools_of_one_view),
		cmocka_unit_test(test_view_follows_changes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
