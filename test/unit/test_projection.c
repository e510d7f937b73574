/*
 * Projection decoders: real API objects decode to exactly the values the
 * reconcilers will read, malformed ones are refused with the field named, and
 * nothing crashes or leaks whatever is changed in an object.
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
#include "projection.h"

/* ---- helpers ---- */

typedef enum { DEC_NODE, DEC_POD, DEC_CLAIM, DEC_SLICE, DEC_CLASS, DEC_COUNT } decoder_t;

static const char *const decoder_names[DEC_COUNT] = {"node", "pod", "claim", "slice",
						     "device class"};

/*
 * Run one decoder; on failure check the promise (err set, output zeroed), on
 * success release what it built. Returns the decoder's result.
 */
static int decode_any(decoder_t d, const cJSON *obj, char *err, size_t errlen)
{
	union {
		projection_node_t node;
		projection_pod_t pod;
		projection_claim_t claim;
		projection_slice_t slice;
		projection_device_class_t cls;
	} u;
	size_t size = 0;
	int rc = -2;
	memset(&u, 0xa5, sizeof(u)); /* a decoder must not rely on a zeroed output */
	err[0] = '\0';
	switch (d) {
	case DEC_NODE:
		rc = projection_decode_node(obj, &u.node, err, errlen);
		size = sizeof(u.node);
		if (rc == 0)
			projection_free_node(&u.node);
		break;
	case DEC_POD:
		rc = projection_decode_pod(obj, &u.pod, err, errlen);
		size = sizeof(u.pod);
		if (rc == 0)
			projection_free_pod(&u.pod);
		break;
	case DEC_CLAIM:
		rc = projection_decode_claim(obj, &u.claim, err, errlen);
		size = sizeof(u.claim);
		if (rc == 0)
			projection_free_claim(&u.claim);
		break;
	case DEC_SLICE:
		rc = projection_decode_slice(obj, &u.slice, err, errlen);
		size = sizeof(u.slice);
		if (rc == 0)
			projection_free_slice(&u.slice);
		break;
	case DEC_CLASS:
		rc = projection_decode_device_class(obj, &u.cls, err, errlen);
		size = sizeof(u.cls);
		if (rc == 0)
			projection_free_device_class(&u.cls);
		break;
	case DEC_COUNT:
		break;
	}
	if (rc != 0) {
		assert_int_equal(rc, -1);
		assert_true(err[0] != '\0');
		assert_null(strchr(err, '\n'));
		fixture_assert_zeroed(&u, size);
	}
	return rc;
}

/* ---- fixtures decode to the values decisions read ---- */

static void test_node_fixture(void **state)
{
	(void)state;
	cJSON *obj = fixture_json("objects/node.json");
	projection_node_t n;
	char err[256];
	assert_int_equal(projection_decode_node(obj, &n, err, sizeof(err)), 0);

	assert_null(n.meta.namespace);
	assert_string_equal(n.meta.name, "gpu-node-1");
	assert_string_equal(n.meta.uid, "2c9d4e7f-1a3b-4c5d-8e9f-0a1b2c3d4e5f");
	assert_string_equal(n.meta.resource_version, "48077");
	assert_int_equal(n.meta.created, 1738396800); /* 2025-02-01T08:00:00Z */
	assert_false(n.meta.deleting);
	assert_int_equal(n.meta.deleted, 0);

	assert_int_equal(n.n_labels, 14);
	assert_string_equal(n.labels[0].key, "beta.kubernetes.io/arch");
	assert_string_equal(n.labels[0].value, "amd64");
	assert_string_equal(n.labels[3].key, "drashift.io/pool");
	assert_string_equal(n.labels[3].value, "a100");
	assert_string_equal(n.labels[13].key, "topology.kubernetes.io/zone");
	assert_string_equal(n.labels[13].value, "us-east-1a");

	/* Only drashift's own annotations are kept. */
	assert_int_equal(n.n_annotations, 2);
	assert_string_equal(n.annotations[0].key, "drashift.io/handover");
	assert_string_equal(n.annotations[0].value, "draining");
	assert_string_equal(n.annotations[1].key, "drashift.io/plan");
	assert_string_equal(n.annotations[1].value, "migrate-a100");

	assert_true(n.unschedulable);
	assert_true(n.tainted); /* node.kubernetes.io/unschedulable; nvidia.com/gpu alone would not be */
	assert_int_equal(n.ready, PROJECTION_CONDITION_TRUE);

	/* The plugin has stopped: allocatable 0 while capacity still says 8. */
	int64_t v = -1;
	assert_int_equal(n.n_allocatable, 3);
	assert_string_equal(n.allocatable[0].name, "example.com/gpu");
	assert_true(projection_quantity_find(n.allocatable, n.n_allocatable, "example.com/gpu", &v));
	assert_int_equal(v, 0);
	assert_true(projection_quantity_find(n.allocatable, n.n_allocatable, "nvidia.com/gpu", &v));
	assert_int_equal(v, 8);
	/* "1k" is how the API server writes 1000. */
	assert_true(projection_quantity_find(n.allocatable, n.n_allocatable,
					     "rdma/hca_shared_devices_a", &v));
	assert_int_equal(v, 1000);
	assert_false(projection_quantity_find(n.allocatable, n.n_allocatable, "cpu", NULL));
	assert_false(projection_quantity_find(n.allocatable, n.n_allocatable, "hugepages-2Mi", NULL));
	assert_int_equal(n.n_capacity, 3);
	assert_true(projection_quantity_find(n.capacity, n.n_capacity, "example.com/gpu", &v));
	assert_int_equal(v, 8);

	print_message("projection_size_node(node.json) = %zu bytes\n", projection_size_node(&n));
	projection_free_node(&n);
	fixture_assert_zeroed(&n, sizeof(n));
	cJSON_Delete(obj);
}

static void test_pod_gpu_fixture(void **state)
{
	(void)state;
	cJSON *obj = fixture_json("objects/pod_gpu.json");
	projection_pod_t p;
	char err[256];
	assert_int_equal(projection_decode_pod(obj, &p, err, sizeof(err)), 0);

	assert_string_equal(p.meta.namespace, "ml-team");
	assert_string_equal(p.meta.name, "train-1-0-x7k2p");
	assert_string_equal(p.meta.uid, "0b7c1d9e-3f52-4a86-b1d4-7e9a2c5f8e13");
	assert_string_equal(p.meta.resource_version, "48213");
	assert_int_equal(p.meta.created, 1741944413); /* 2025-03-14T09:26:53Z */
	assert_false(p.meta.deleting);
	assert_string_equal(p.node_name, "gpu-node-1");
	assert_int_equal(p.phase, PROJECTION_POD_RUNNING);
	assert_true(p.ready);
	assert_int_equal(p.ready_time, 1741944451); /* 2025-03-14T09:27:31Z */
	assert_int_equal(p.scheduled, PROJECTION_CONDITION_TRUE);
	assert_false(p.unschedulable);
	assert_int_equal(p.scheduled_time, 1741944414);

	/* The claim the scheduler created when it served example.com/gpu through DRA. */
	assert_int_equal(p.n_claims, 1);
	assert_string_equal(p.claims[0], "train-1-0-x7k2p-extended-resources-4mz8q");
	/* ... and the resource it served that way: the pod is no device-plugin user. */
	assert_int_equal(p.n_dra_resources, 1);
	assert_string_equal(p.dra_resources[0], "example.com/gpu");

	/* cpu and memory are not extended resources; the init container asks for no GPU. */
	assert_int_equal(p.n_requests, 1);
	assert_string_equal(p.requests[0].name, "example.com/gpu");
	assert_int_equal(p.requests[0].count, 2);

	/* The point of projections: hundreds of bytes instead of the object's 12 KiB. */
	size_t size = projection_size_pod(&p);
	print_message("projection_size_pod(pod_gpu.json) = %zu bytes (object JSON: 12611 bytes)\n",
		      size);
	assert_true(size > sizeof(p));
	assert_true(size < 1024);

	projection_free_pod(&p);
	cJSON_Delete(obj);
}

static void test_pod_full_fixture(void **state)
{
	(void)state;
	cJSON *obj = fixture_json("objects/pod_full.json");
	projection_pod_t p;
	char err[256];
	assert_int_equal(projection_decode_pod(obj, &p, err, sizeof(err)), 0);

	assert_string_equal(p.meta.namespace, "shop");
	assert_string_equal(p.meta.name, "web-7d4b9c8f6d-q2w9r");
	assert_int_equal(p.meta.created, 1741797605);
	/* Terminating. */
	assert_true(p.meta.deleting);
	assert_int_equal(p.meta.deleted, 1741946557); /* 2025-03-14T10:02:37Z */
	assert_string_equal(p.node_name, "cpu-node-7");
	assert_int_equal(p.phase, PROJECTION_POD_RUNNING);
	assert_false(p.ready);
	assert_int_equal(p.ready_time, 1741946529);
	assert_int_equal(p.scheduled, PROJECTION_CONDITION_TRUE);
	assert_int_equal(p.n_claims, 0);
	assert_null(p.claims);
	/* cpu, memory, ephemeral-storage, hugepages: nothing extended. */
	assert_int_equal(p.n_requests, 0);
	assert_null(p.requests);

	print_message("projection_size_pod(pod_full.json) = %zu bytes\n", projection_size_pod(&p));
	projection_free_pod(&p);
	cJSON_Delete(obj);
}

static void test_pod_claim_template_fixture(void **state)
{
	(void)state;
	cJSON *obj = fixture_json("objects/pod_claim_template.json");
	projection_pod_t p;
	char err[256];
	assert_int_equal(projection_decode_pod(obj, &p, err, sizeof(err)), 0);

	assert_string_equal(p.meta.name, "inference-0");
	assert_null(p.node_name);
	assert_int_equal(p.phase, PROJECTION_POD_PENDING);
	assert_false(p.ready);
	assert_int_equal(p.ready_time, 0);
	/* What a pod stuck on DRA allocation looks like. */
	assert_int_equal(p.scheduled, PROJECTION_CONDITION_FALSE);
	assert_true(p.unschedulable);
	assert_int_equal(p.scheduled_time, 1741950001);
	/* The named claim from the spec, then the one generated from the template. */
	assert_int_equal(p.n_claims, 2);
	assert_string_equal(p.claims[0], "shared-gpu");
	assert_string_equal(p.claims[1], "inference-0-gpu-7vm5x");
	assert_int_equal(p.n_dra_resources, 0);
	assert_int_equal(p.n_requests, 0);

	projection_free_pod(&p);
	cJSON_Delete(obj);
}

static void test_claim_fixture(void **state)
{
	(void)state;
	cJSON *obj = fixture_json("objects/claim.json");
	projection_claim_t c;
	char err[256];
	assert_int_equal(projection_decode_claim(obj, &c, err, sizeof(err)), 0);

	assert_string_equal(c.meta.namespace, "ml-team");
	assert_string_equal(c.meta.name, "inference-0-gpu-7vm5x");
	assert_string_equal(c.meta.resource_version, "52511");
	/* exactly + both firstAvailable alternatives, de-duplicated in order. */
	assert_int_equal(c.n_device_classes, 2);
	assert_string_equal(c.device_classes[0], "gpu.example.com");
	assert_string_equal(c.device_classes[1], "big-gpu.example.com");

	assert_true(c.allocated);
	assert_int_equal(c.n_results, 3);
	assert_string_equal(c.results[0].request, "gpu");
	assert_string_equal(c.results[0].driver, "gpu.example.com");
	assert_string_equal(c.results[0].pool, "gpu-node-1");
	assert_string_equal(c.results[0].device, "gpu-3");
	assert_string_equal(c.results[2].request, "extra/two-small");
	assert_string_equal(c.results[2].device, "gpu-5");
	assert_string_equal(c.node_name, "gpu-node-1");

	assert_int_equal(c.n_reserved_for, 1);
	assert_string_equal(c.reserved_for[0].resource, "pods");
	assert_string_equal(c.reserved_for[0].name, "inference-0");
	assert_string_equal(c.reserved_for[0].uid, "7f3b2a19-c4d8-4e6f-a1b2-c3d4e5f6a7b8");

	/* gpu-3 reports Healthy=False (XID 79). */
	assert_int_equal(c.device_conditions_false, 1);
	assert_string_equal(c.owner_pod, "inference-0");
	/* Made by kube-controller-manager from a template, not by the scheduler for an extended resource. */
	assert_false(c.extended);

	print_message("projection_size_claim(claim.json) = %zu bytes\n", projection_size_claim(&c));
	projection_free_claim(&c);
	cJSON_Delete(obj);
}

/* The kubelet's FailedPrepareDynamicResources Event as a core/v1 recorder writes it, and the events.k8s.io form. */
static void test_event_fixture(void **state)
{
	(void)state;
	cJSON *obj = fixture_json("objects/event_prepare_failed.json");
	projection_event_t e;
	char err[256];
	assert_int_equal(projection_decode_event(obj, &e, err, sizeof(err)), 0);
	assert_string_equal(e.object_kind, "Pod");
	assert_string_equal(e.object_namespace, "default");
	assert_string_equal(e.object_name, "train-0");
	assert_string_equal(e.host, "gpu-a-1");
	assert_non_null(strstr(e.message, "code = DeadlineExceeded"));
	assert_int_equal(e.count, 5);
	assert_int_equal(e.last_seen, 1796158800 + 250); /* lastTimestamp, not the creation */
	assert_int_equal(e.first_seen, 1796158800);
	projection_free_event(&e);
	cJSON_Delete(obj);

	/* Written through events.k8s.io: no source, no count, no lastTimestamp. */
	obj = fixture_quoted_json("{'metadata':{'name':'e','namespace':'default','creationTimestamp':'2026-12-01T21:00:00Z'},"
				  "'involvedObject':{'kind':'Pod','namespace':'default','name':'p'},"
				  "'eventTime':'2026-12-01T21:00:07.123456Z','series':{'count':3,"
				  "'lastObservedTime':'2026-12-01T21:02:00.000001Z'},'reportingInstance':'gpu-a-2'}");
	assert_int_equal(projection_decode_event(obj, &e, err, sizeof(err)), 0);
	assert_string_equal(e.host, "gpu-a-2");
	assert_int_equal(e.count, 1);
	assert_int_equal(e.last_seen, 1796158800 + 120);
	assert_int_equal(e.first_seen, 1796158800 + 7);
	assert_null(e.message);
	projection_free_event(&e);
	cJSON_Delete(obj);
}

/* The claim controller's finalizer, read from metadata.finalizers[]. */
static void test_claim_delete_protection(void **state)
{
	(void)state;
	cJSON *obj = fixture_quoted_json("{'metadata':{'name':'c','namespace':'ns','deletionTimestamp':'2026-12-01T21:00:00Z',"
					 "'finalizers':['example.com/other','resource.kubernetes.io/delete-protection']}}");
	projection_claim_t c;
	char err[256];
	assert_int_equal(projection_decode_claim(obj, &c, err, sizeof(err)), 0);
	assert_true(c.delete_protected);
	assert_true(c.meta.deleting);
	projection_free_claim(&c);
	cJSON_Delete(obj);
	obj = fixture_quoted_json("{'metadata':{'name':'c','namespace':'ns','finalizers':['example.com/other']}}");
	assert_int_equal(projection_decode_claim(obj, &c, err, sizeof(err)), 0);
	assert_false(c.delete_protected);
	projection_free_claim(&c);
	cJSON_Delete(obj);
}

static void test_claim_unallocated(void **state)
{
	(void)state;
	/* A claim nobody has allocated yet, and one allocated for a network-attached device. */
	cJSON *obj = fixture_quoted_json("{'metadata':{'name':'c','namespace':'ns'},"
			  "'spec':{'devices':{'requests':[{'name':'r','exactly':"
			  "{'deviceClassName':'gpu.example.com'}}]}},'status':{}}");
	projection_claim_t c;
	char err[256];
	assert_int_equal(projection_decode_claim(obj, &c, err, sizeof(err)), 0);
	assert_false(c.allocated);
	assert_int_equal(c.n_results, 0);
	assert_null(c.node_name);
	assert_int_equal(c.n_reserved_for, 0);
	assert_null(c.owner_pod);
	assert_false(c.extended);
	projection_free_claim(&c);
	cJSON_Delete(obj);

	obj = fixture_quoted_json("{'metadata':{'name':'c','namespace':'ns'},'status':{'allocation':{"
		   "'devices':{'results':[]},'nodeSelector':{'nodeSelectorTerms':[{"
		   "'matchExpressions':[{'key':'topology.kubernetes.io/zone','operator':'In',"
		   "'values':['a']}],'matchFields':[{'key':'metadata.name','operator':'NotIn',"
		   "'values':['x']}]}]}}}}");
	assert_int_equal(projection_decode_claim(obj, &c, err, sizeof(err)), 0);
	assert_true(c.allocated);
	assert_null(c.node_name);
	projection_free_claim(&c);
	cJSON_Delete(obj);
}

/* The claim the scheduler makes for a pod's extended resource (KEP-5004), as kube-scheduler 1.36 writes it. */
static void test_claim_extended(void **state)
{
	(void)state;
	cJSON *obj = fixture_quoted_json(
		"{'metadata':{'name':'job-x-extended-resources-k2p9z','namespace':'team',"
		"'annotations':{'resource.kubernetes.io/extended-resource-claim':'true'},"
		"'ownerReferences':[{'apiVersion':'v1','kind':'Pod','name':'job-x','uid':'u1','controller':true}]},"
		"'spec':{'devices':{'requests':[{'name':'container-0-request-0','exactly':"
		"{'deviceClassName':'gpu.example.com','allocationMode':'ExactCount','count':4}}]}},"
		"'status':{'allocation':{'devices':{'results':[{'request':'container-0-request-0',"
		"'driver':'gpu.example.com','pool':'a-0','device':'gpu-0'}]},'nodeSelector':{'nodeSelectorTerms':[{"
		"'matchFields':[{'key':'metadata.name','operator':'In','values':['a-0']}]}]}},"
		"'reservedFor':[{'resource':'pods','name':'job-x','uid':'u1'}]}}");
	projection_claim_t c;
	char err[256];
	assert_int_equal(projection_decode_claim(obj, &c, err, sizeof(err)), 0);
	assert_true(c.extended);
	assert_string_equal(c.owner_pod, "job-x");
	assert_string_equal(c.node_name, "a-0");
	assert_int_equal(c.n_reserved_for, 1);
	projection_free_claim(&c);
	cJSON_Delete(obj);

	/* Only "true" marks it; a pod's requestMappings name the resources served that way. */
	obj = fixture_quoted_json("{'metadata':{'name':'c','namespace':'ns',"
				  "'annotations':{'resource.kubernetes.io/extended-resource-claim':'false'}}}");
	assert_int_equal(projection_decode_claim(obj, &c, err, sizeof(err)), 0);
	assert_false(c.extended);
	projection_free_claim(&c);
	cJSON_Delete(obj);

	obj = fixture_quoted_json("{'metadata':{'name':'p','namespace':'ns'},'status':{'extendedResourceClaimStatus':"
				  "{'resourceClaimName':'p-extended-resources-x','requestMappings':["
				  "{'containerName':'a','requestName':'container-0-request-0','resourceName':'example.com/gpu'},"
				  "{'containerName':'b','requestName':'container-1-request-0','resourceName':'example.com/gpu'},"
				  "{'containerName':'b','requestName':'container-1-request-1','resourceName':'example.com/mig-1g.10gb'}]}}}");
	projection_pod_t p;
	assert_int_equal(projection_decode_pod(obj, &p, err, sizeof(err)), 0);
	assert_int_equal(p.n_dra_resources, 2);
	assert_string_equal(p.dra_resources[0], "example.com/gpu");
	assert_string_equal(p.dra_resources[1], "example.com/mig-1g.10gb");
	projection_free_pod(&p);
	cJSON_Delete(obj);
}

static void test_slice_fixture(void **state)
{
	(void)state;
	cJSON *obj = fixture_json("objects/slice.json");
	projection_slice_t s;
	char err[256];
	assert_int_equal(projection_decode_slice(obj, &s, err, sizeof(err)), 0);

	assert_null(s.meta.namespace);
	assert_string_equal(s.meta.name, "gpu-node-1-gpu.example.com-9kq4z");
	assert_int_equal(s.meta.created, 1741945503);
	assert_string_equal(s.driver, "gpu.example.com");
	assert_string_equal(s.node_name, "gpu-node-1");
	assert_string_equal(s.pool, "gpu-node-1");
	assert_int_equal(s.pool_generation, 3);
	assert_int_equal(s.resource_slice_count, 2);
	assert_int_equal(s.n_devices, 8);
	assert_string_equal(s.devices[0], "gpu-0");
	assert_string_equal(s.devices[7], "gpu-7");

	print_message("projection_size_slice(slice.json) = %zu bytes\n", projection_size_slice(&s));
	projection_free_slice(&s);
	cJSON_Delete(obj);
}

/*
 * Partitionable devices (DRAPartitionableDevices): each device names the
 * counter set it consumes; a slice of counter sets has no devices.
 */
static void test_slice_partitionable(void **state)
{
	(void)state;
	cJSON *obj = fixture_json("objects/slice_partitionable.json");
	projection_slice_t s;
	char err[256];
	assert_int_equal(projection_decode_slice(obj, &s, err, sizeof(err)), 0);
	assert_int_equal(s.n_devices, 7);
	assert_string_equal(s.devices[1], "gpu-0-mig-1g.5gb-0");
	assert_string_equal(s.counter_sets[0], "gpu-0-counters");
	assert_string_equal(s.counter_sets[5], "gpu-1-counters");
	assert_null(s.counter_sets[6]);
	assert_int_equal(s.n_shared_counters, 0);
	projection_free_slice(&s);
	cJSON_Delete(obj);

	obj = cJSON_Parse("{\"metadata\":{\"name\":\"c\"},\"spec\":{\"driver\":\"gpu.example.com\",\"nodeName\":\"n\","
			  "\"pool\":{\"name\":\"n\",\"generation\":1,\"resourceSliceCount\":2},\"sharedCounters\":["
			  "{\"name\":\"gpu-0-counters\",\"counters\":{\"memory\":{\"value\":\"40Gi\"}}},"
			  "{\"name\":\"gpu-1-counters\",\"counters\":{\"memory\":{\"value\":\"40Gi\"}}}]}}");
	assert_int_equal(projection_decode_slice(obj, &s, err, sizeof(err)), 0);
	assert_int_equal(s.n_devices, 0);
	assert_int_equal(s.n_shared_counters, 2);
	projection_free_slice(&s);
	cJSON_Delete(obj);
}

static void test_device_class_fixture(void **state)
{
	(void)state;
	cJSON *obj = fixture_json("objects/device_class.json");
	projection_device_class_t d;
	char err[256];
	assert_int_equal(projection_decode_device_class(obj, &d, err, sizeof(err)), 0);
	assert_null(d.meta.namespace);
	assert_string_equal(d.meta.name, "gpu.example.com");
	assert_string_equal(d.meta.resource_version, "1203");
	assert_int_equal(d.meta.created, 1740830400);
	assert_string_equal(d.extended_resource_name, "example.com/gpu");
	print_message("projection_size_device_class(device_class.json) = %zu bytes\n",
		      projection_size_device_class(&d));
	projection_free_device_class(&d);
	cJSON_Delete(obj);

	obj = fixture_quoted_json("{'metadata':{'name':'plain'},'spec':{'selectors':[]}}");
	assert_int_equal(projection_decode_device_class(obj, &d, err, sizeof(err)), 0);
	assert_null(d.extended_resource_name);
	projection_free_device_class(&d);
	cJSON_Delete(obj);
}

/* ---- the scheduler's request arithmetic ---- */

static void decode_pod_ok(const char *single_quoted, projection_pod_t *p)
{
	char err[256];
	cJSON *obj = fixture_quoted_json(single_quoted);
	if (projection_decode_pod(obj, p, err, sizeof(err)) != 0)
		fail_msg("decode failed: %s", err);
	cJSON_Delete(obj);
}

static int64_t request_of(const projection_pod_t *p, const char *name)
{
	int64_t v;
	if (!projection_quantity_find(p->requests, p->n_requests, name, &v))
		return -1;
	return v;
}

/* Who may preempt: priority admission's spec.priority > 0, unless spec.preemptionPolicy is Never. */
static void test_pod_preempts(void **state)
{
	(void)state;
	static const struct {
		const char *spec;
		bool want;
	} rows[] = {
		{ "{}", false },
		{ "{'priority':0}", false },
		{ "{'priority':-5}", false },
		{ "{'priority':100000}", true },
		{ "{'priority':100000,'preemptionPolicy':'PreemptLowerPriority'}", true },
		{ "{'priority':100000,'preemptionPolicy':'Never'}", false },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char json[256];
		snprintf(json, sizeof(json), "{'metadata':{'name':'p'},'spec':%s}", rows[i].spec);
		projection_pod_t p;
		decode_pod_ok(json, &p);
		if (p.preempts != rows[i].want)
			fail_msg("%s: preempts %d", rows[i].spec, p.preempts);
		projection_free_pod(&p);
	}
	char err[256];
	cJSON *obj = fixture_quoted_json("{'metadata':{'name':'p'},'spec':{'priority':'high'}}");
	assert_int_not_equal(projection_decode_pod(obj, &(projection_pod_t){ 0 }, err, sizeof(err)), 0);
	cJSON_Delete(obj);
}

/* Only PodScheduled False with reason Unschedulable means the scheduler found no fit. */
static void test_pod_unschedulable(void **state)
{
	(void)state;
	static const struct {
		const char *condition;
		bool want;
	} rows[] = {
		{ "{'type':'PodScheduled','status':'False','reason':'Unschedulable'}", true },
		{ "{'type':'PodScheduled','status':'False','reason':'SchedulerError'}", false },
		{ "{'type':'PodScheduled','status':'False'}", false },
		{ "{'type':'PodScheduled','status':'True','reason':'Unschedulable'}", false },
		{ "{'type':'Ready','status':'False','reason':'Unschedulable'}", false },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char json[256];
		snprintf(json, sizeof(json), "{'metadata':{'name':'p'},'status':{'conditions':[%s]}}",
			 rows[i].condition);
		projection_pod_t p;
		decode_pod_ok(json, &p);
		if (p.unschedulable != rows[i].want)
			fail_msg("%s: unschedulable %d", rows[i].condition, p.unschedulable);
		projection_free_pod(&p);
	}
	char err[256];
	cJSON *obj = fixture_quoted_json(
		"{'metadata':{'name':'p'},'status':{'conditions':[{'type':'PodScheduled','status':'False','reason':7}]}}");
	assert_int_not_equal(projection_decode_pod(obj, &(projection_pod_t){ 0 }, err, sizeof(err)), 0);
	assert_string_equal(err, "status.conditions[0].reason: not a string");
	cJSON_Delete(obj);
}

static void test_pod_requests_init_containers(void **state)
{
	(void)state;
	projection_pod_t p;
	/* Containers run together (1 + 2), the init container alone (4): the pod needs 4. */
	decode_pod_ok("{'metadata':{'name':'p'},'spec':{"
		      "'containers':[{'name':'a','resources':{'requests':{'example.com/gpu':'1'}}},"
		      "{'name':'b','resources':{'limits':{'example.com/gpu':'2','nvidia.com/gpu':'1'}}}],"
		      "'initContainers':[{'name':'i','resources':{'requests':{'example.com/gpu':'4'}}}]}}",
		      &p);
	assert_int_equal(p.n_requests, 2);
	assert_int_equal(request_of(&p, "example.com/gpu"), 4);
	/* Only limits set: limits stand in for requests. */
	assert_int_equal(request_of(&p, "nvidia.com/gpu"), 1);
	projection_free_pod(&p);

	/*
	 * A sidecar (restartPolicy Always) keeps running: it adds to the regular
	 * containers (1 + 1) and to every later init container (2 + 1 = 3).
	 */
	decode_pod_ok("{'metadata':{'name':'p'},'spec':{"
		      "'containers':[{'name':'c','resources':{'requests':{'example.com/gpu':'1'}}}],"
		      "'initContainers':[{'name':'s','restartPolicy':'Always','resources':"
		      "{'requests':{'example.com/gpu':'1'}}},"
		      "{'name':'i','resources':{'requests':{'example.com/gpu':'2'}}}]}}",
		      &p);
	assert_int_equal(request_of(&p, "example.com/gpu"), 3);
	projection_free_pod(&p);

	/* An init container that needs less than the containers does not raise the request. */
	decode_pod_ok("{'metadata':{'name':'p'},'spec':{"
		      "'containers':[{'name':'c','resources':{'requests':{'example.com/gpu':'8'}}}],"
		      "'initContainers':[{'name':'i','resources':{'requests':{'example.com/gpu':'1'}}}]}}",
		      &p);
	assert_int_equal(request_of(&p, "example.com/gpu"), 8);
	projection_free_pod(&p);
}

static void test_pod_requests_which_resources(void **state)
{
	(void)state;
	projection_pod_t p;
	decode_pod_ok("{'metadata':{'name':'p'},'spec':{'containers':[{'name':'c','resources':{"
		      "'requests':{'cpu':'2','memory':'1Gi','hugepages-2Mi':'2Mi',"
		      "'kubernetes.io/x':'1','storage.kubernetes.io/y':'1',"
		      "'notkubernetes.io/z':'1','example.com/gpu':'1','example.com/zero':'0'},"
		      "'limits':{'example.com/gpu':'3','example.com/fpga':'1k'}}}]}}",
		      &p);
	/* Requests win over limits where both are set; zero requests are dropped. */
	assert_int_equal(p.n_requests, 3);
	assert_string_equal(p.requests[0].name, "notkubernetes.io/z");
	assert_int_equal(request_of(&p, "notkubernetes.io/z"), 1);
	assert_int_equal(request_of(&p, "example.com/gpu"), 1);
	assert_int_equal(request_of(&p, "example.com/fpga"), 1000);
	assert_int_equal(request_of(&p, "kubernetes.io/x"), -1);
	assert_int_equal(request_of(&p, "storage.kubernetes.io/y"), -1);
	assert_int_equal(request_of(&p, "example.com/zero"), -1);
	projection_free_pod(&p);
}

static void test_pod_claims_deduplicated(void **state)
{
	(void)state;
	projection_pod_t p;
	decode_pod_ok("{'metadata':{'name':'p','namespace':''},'spec':{'nodeName':'','resourceClaims':["
		      "{'name':'a','resourceClaimName':'c1'},{'name':'b','resourceClaimTemplateName':'t'},"
		      "{'name':'c','resourceClaimName':null}]},"
		      "'status':{'phase':'Bogus','resourceClaimStatuses':[{'name':'a','resourceClaimName':'c1'},"
		      "{'name':'b','resourceClaimName':'p-b-xyz'},{'name':'c'}],"
		      "'extendedResourceClaimStatus':{'resourceClaimName':'p-b-xyz','requestMappings':[]}}}",
		      &p);
	assert_int_equal(p.n_claims, 2);
	assert_string_equal(p.claims[0], "c1");
	assert_string_equal(p.claims[1], "p-b-xyz");
	/* An empty namespace or node name is the same as none. */
	assert_null(p.meta.namespace);
	assert_null(p.node_name);
	/* A phase from a newer API reads as Unknown, not as an error. */
	assert_int_equal(p.phase, PROJECTION_POD_UNKNOWN);
	projection_free_pod(&p);
}

/* ---- quantities and times ---- */

static void test_quantity_forms(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		int64_t value;
	} ok[] = {
		{"0", 0},
		{"7", 7},
		{"+4", 4},
		{"1k", 1000},
		{"5M", 5000000},
		{"2Ki", 2048},
		{"3Mi", 3145728},
		{"7Ei", 8070450532247928832},
		{"9E", 9000000000000000000},
		{"3e2", 300},
		{"3E+2", 300},
		{"0e999", 0},
		{"9223372036854775807", INT64_MAX},
	};
	static const struct {
		const char *text;
		const char *err;
	} bad[] = {
		{"1.5", "not a whole number \"1.5\""},
		{"500m", "not a whole number \"500m\""},
		{"1e-3", "not a whole number \"1e-3\""},
		{"-1", "negative quantity \"-1\""},
		{"9223372036854775808", "quantity out of range \"9223372036854775808\""},
		{"8Ei", "quantity out of range \"8Ei\""},
		{"10E", "quantity out of range \"10E\""},
		{"1e19", "quantity out of range \"1e19\""},
		{"", "not a quantity \"\""},
		{"k", "not a quantity \"k\""},
		{"1 ", "not a quantity \"1 \""},
		{"1kb", "not a quantity \"1kb\""},
		{"1Ki\x01", "not a quantity \"1Ki\\x01\""},
	};
	char err[256];
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		cJSON *obj = fixture_quoted_json("{'metadata':{'name':'n'},'status':{'allocatable':{}}}");
		cJSON *alloc = cJSON_GetObjectItem(cJSON_GetObjectItem(obj, "status"), "allocatable");
		cJSON_AddStringToObject(alloc, "example.com/gpu", ok[i].text);
		projection_node_t n;
		if (projection_decode_node(obj, &n, err, sizeof(err)) != 0)
			fail_msg("%s: %s", ok[i].text, err);
		assert_int_equal(n.n_allocatable, 1);
		if (n.allocatable[0].count != ok[i].value)
			fail_msg("%s read as %lld", ok[i].text, (long long)n.allocatable[0].count);
		projection_free_node(&n);
		cJSON_Delete(obj);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cJSON *obj = fixture_quoted_json("{'metadata':{'name':'n'},'status':{'capacity':{}}}");
		cJSON *cap = cJSON_GetObjectItem(cJSON_GetObjectItem(obj, "status"), "capacity");
		cJSON_AddStringToObject(cap, "example.com/gpu", bad[i].text);
		char want[256];
		snprintf(want, sizeof(want), "status.capacity[\"example.com/gpu\"]: %s", bad[i].err);
		assert_int_equal(decode_any(DEC_NODE, obj, err, sizeof(err)), -1);
		assert_string_equal(err, want);
		cJSON_Delete(obj);
	}
}

static void test_time_forms(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		int64_t value;
	} ok[] = {
		{"1970-01-01T00:00:00Z", 0},
		{"2025-03-14T09:26:53Z", 1741944413},
		{"2025-03-14T09:26:53.123456Z", 1741944413},
		{"2024-02-29T23:59:59Z", 1709251199},
		{"2024-02-29T23:59:59+01:00", 1709251199 - 3600},
		{"2024-02-29T23:59:59-05:30", 1709251199 + 19800},
		{"1969-12-31T23:59:59Z", -1},
		{"9999-12-31T23:59:59Z", 253402300799},
	};
	static const char *const bad[] = {
		"2023-02-29T00:00:00Z", "2024-13-01T00:00:00Z", "2024-04-31T00:00:00Z",
		"2024-01-01T24:00:00Z", "2024-01-01 00:00:00Z", "2024-01-01T00:00:00",
		"2024-01-01T00:00:00.Z", "2024-01-01T00:00:00Zjunk", "2024-1-01T00:00:00Z",
		"yesterday",            "",
	};
	char err[256];
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		cJSON *obj = fixture_quoted_json("{'metadata':{'name':'n'}}");
		cJSON_AddStringToObject(cJSON_GetObjectItem(obj, "metadata"), "creationTimestamp",
					ok[i].text);
		projection_device_class_t d;
		if (projection_decode_device_class(obj, &d, err, sizeof(err)) != 0)
			fail_msg("%s: %s", ok[i].text, err);
		if (d.meta.created != ok[i].value)
			fail_msg("%s read as %lld", ok[i].text, (long long)d.meta.created);
		projection_free_device_class(&d);
		cJSON_Delete(obj);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cJSON *obj = fixture_quoted_json("{'metadata':{'name':'n'}}");
		cJSON_AddStringToObject(cJSON_GetObjectItem(obj, "metadata"), "deletionTimestamp",
					bad[i]);
		char want[256];
		snprintf(want, sizeof(want), "metadata.deletionTimestamp: not an RFC 3339 time \"%s\"",
			 bad[i]);
		assert_int_equal(decode_any(DEC_CLASS, obj, err, sizeof(err)), -1);
		assert_string_equal(err, want);
		cJSON_Delete(obj);
	}
}

/* ---- malformed objects are refused with the field named ---- */

static void test_malformed_fields(void **state)
{
	(void)state;
	static const struct {
		decoder_t dec;
		const char *json;
		const char *err;
	} cases[] = {
		/* metadata, shared by every decoder */
		{DEC_NODE, "{}", "metadata: missing"},
		{DEC_NODE, "{'metadata':[]}", "metadata: not an object"},
		{DEC_NODE, "{'metadata':{}}", "metadata.name: missing"},
		{DEC_POD, "{'metadata':{'name':null}}", "metadata.name: missing"},
		{DEC_POD, "{'metadata':{'name':5}}", "metadata.name: not a string"},
		{DEC_CLAIM, "{'metadata':{'name':''}}", "metadata.name: empty"},
		{DEC_SLICE, "{'metadata':{'name':'s','uid':{}}}", "metadata.uid: not a string"},
		{DEC_CLASS, "{'metadata':{'name':'d','namespace':['x']}}",
		 "metadata.namespace: not a string"},
		{DEC_POD, "{'metadata':{'name':'p','resourceVersion':42}}",
		 "metadata.resourceVersion: not a string"},
		{DEC_POD, "{'metadata':{'name':'p','creationTimestamp':1741944413}}",
		 "metadata.creationTimestamp: not a string"},
		{DEC_CLAIM, "{'metadata':{'name':'c','ownerReferences':{}}}",
		 "metadata.ownerReferences: not an array"},
		{DEC_CLAIM, "{'metadata':{'name':'c','ownerReferences':[{'kind':'Job','controller':'true'}]}}",
		 "metadata.ownerReferences[0].controller: not a boolean"},
		{DEC_CLAIM, "{'metadata':{'name':'c','ownerReferences':[{'kind':'A','name':'a'},{'controller':true}]}}",
		 "metadata.ownerReferences[1].kind: missing"},
		{DEC_CLAIM, "{'metadata':{'name':'c','ownerReferences':[{'kind':'Pod','name':7}]}}",
		 "metadata.ownerReferences[0].name: not a string"},
		/* Node */
		{DEC_NODE, "{'metadata':{'name':'n','labels':[]}}", "metadata.labels: not an object"},
		{DEC_NODE, "{'metadata':{'name':'n','labels':{'a':'b','pool':1}}}",
		 "metadata.labels[\"pool\"]: not a string"},
		{DEC_NODE, "{'metadata':{'name':'n','annotations':{'drashift.io/x':true}}}",
		 "metadata.annotations[\"drashift.io/x\"]: not a string"},
		{DEC_NODE, "{'metadata':{'name':'n'},'spec':[]}", "spec: not an object"},
		{DEC_NODE, "{'metadata':{'name':'n'},'spec':{'unschedulable':'true'}}",
		 "spec.unschedulable: not a boolean"},
		{DEC_NODE, "{'metadata':{'name':'n'},'status':{'allocatable':[]}}",
		 "status.allocatable: not an object"},
		{DEC_NODE, "{'metadata':{'name':'n'},'status':{'allocatable':{'example.com/gpu':8}}}",
		 "status.allocatable[\"example.com/gpu\"]: not a quantity string"},
		{DEC_NODE, "{'metadata':{'name':'n'},'status':{'conditions':{}}}",
		 "status.conditions: not an array"},
		{DEC_NODE, "{'metadata':{'name':'n'},'status':{'conditions':['Ready']}}",
		 "status.conditions[0]: not an object"},
		{DEC_NODE, "{'metadata':{'name':'n'},'status':{'conditions':[{'type':'A','status':'True'},{'status':'True'}]}}",
		 "status.conditions[1].type: missing"},
		{DEC_NODE, "{'metadata':{'name':'n'},'status':{'conditions':[{'type':'Ready','status':true}]}}",
		 "status.conditions[0].status: not a string"},
		/* Pod */
		{DEC_POD, "{'metadata':{'name':'p'},'spec':{'nodeName':3}}", "spec.nodeName: not a string"},
		{DEC_POD, "{'metadata':{'name':'p'},'status':{'phase':1}}", "status.phase: not a string"},
		{DEC_POD, "{'metadata':{'name':'p'},'status':[]}", "status: not an object"},
		{DEC_POD, "{'metadata':{'name':'p'},'spec':{'containers':{}}}",
		 "spec.containers: not an array"},
		{DEC_POD, "{'metadata':{'name':'p'},'spec':{'containers':[{},'c']}}",
		 "spec.containers[1]: not an object"},
		{DEC_POD, "{'metadata':{'name':'p'},'spec':{'containers':[{'resources':[]}]}}",
		 "spec.containers[0].resources: not an object"},
		{DEC_POD, "{'metadata':{'name':'p'},'spec':{'containers':[{'resources':{'limits':'1'}}]}}",
		 "spec.containers[0].resources.limits: not an object"},
		{DEC_POD, "{'metadata':{'name':'p'},'spec':{'containers':[{'resources':{'requests':{'example.com/gpu':'500m'}}}]}}",
		 "spec.containers[0].resources.requests[\"example.com/gpu\"]: not a whole number \"500m\""},
		{DEC_POD, "{'metadata':{'name':'p'},'spec':{'initContainers':[{'resources':{'requests':{'example.com/gpu':1}}}]}}",
		 "spec.initContainers[0].resources.requests[\"example.com/gpu\"]: not a quantity string"},
		{DEC_POD, "{'metadata':{'name':'p'},'spec':{'initContainers':[{'restartPolicy':1}]}}",
		 "spec.initContainers[0].restartPolicy: not a string"},
		{DEC_POD, "{'metadata':{'name':'p'},'spec':{'containers':[{'resources':{'requests':{'a.b/c':'9E'}}},{'resources':{'requests':{'a.b/c':'9E'}}}]}}",
		 "spec.containers[1].resources: extended resource total out of range"},
		{DEC_POD, "{'metadata':{'name':'p'},'spec':{'resourceClaims':[{'name':'a','resourceClaimName':5}]}}",
		 "spec.resourceClaims[0].resourceClaimName: not a string"},
		{DEC_POD, "{'metadata':{'name':'p'},'status':{'resourceClaimStatuses':'x'}}",
		 "status.resourceClaimStatuses: not an array"},
		{DEC_POD, "{'metadata':{'name':'p'},'status':{'extendedResourceClaimStatus':[]}}",
		 "status.extendedResourceClaimStatus: not an object"},
		{DEC_POD, "{'metadata':{'name':'p'},'status':{'extendedResourceClaimStatus':{'requestMappings':{}}}}",
		 "status.extendedResourceClaimStatus.requestMappings: not an array"},
		{DEC_POD, "{'metadata':{'name':'p'},'status':{'extendedResourceClaimStatus':{'requestMappings':[{'resourceName':1}]}}}",
		 "status.extendedResourceClaimStatus.requestMappings[0].resourceName: not a string"},
		{DEC_POD, "{'metadata':{'name':'p'},'status':{'conditions':[{'type':'Ready','status':'True','lastTransitionTime':5}]}}",
		 "status.conditions[0].lastTransitionTime: not a string"},
		{DEC_POD, "{'metadata':{'name':'p'},'status':{'conditions':[{'type':'PodScheduled','status':'False','reason':false}]}}",
		 "status.conditions[0].reason: not a string"},
		/* ResourceClaim */
		{DEC_CLAIM, "{'metadata':{'name':'c','annotations':{'resource.kubernetes.io/extended-resource-claim':true}}}",
		 "metadata.annotations.resource.kubernetes.io/extended-resource-claim: not a string"},
		{DEC_CLAIM, "{'metadata':{'name':'c'},'spec':{'devices':{'requests':{}}}}",
		 "spec.devices.requests: not an array"},
		{DEC_CLAIM, "{'metadata':{'name':'c'},'spec':{'devices':{'requests':[{'exactly':{'deviceClassName':[]}}]}}}",
		 "spec.devices.requests[0].exactly.deviceClassName: not a string"},
		{DEC_CLAIM, "{'metadata':{'name':'c'},'spec':{'devices':{'requests':[{'firstAvailable':[{'deviceClassName':'a'},{'deviceClassName':1}]}]}}}",
		 "spec.devices.requests[0].firstAvailable[1].deviceClassName: not a string"},
		{DEC_CLAIM, "{'metadata':{'name':'c'},'status':{'allocation':[]}}",
		 "status.allocation: not an object"},
		{DEC_CLAIM, "{'metadata':{'name':'c'},'status':{'allocation':{'devices':{'results':["
			    "{'request':'r','driver':'d','pool':'p','device':'x'},"
			    "{'request':'r','driver':'d','pool':'p','device':'y'},"
			    "{'request':'r','driver':7,'pool':'p','device':'z'}]}}}}",
		 "status.allocation.devices.results[2].driver: not a string"},
		{DEC_CLAIM, "{'metadata':{'name':'c'},'status':{'allocation':{'devices':{'results':[{'request':'r','driver':'d','pool':'p'}]}}}}",
		 "status.allocation.devices.results[0].device: missing"},
		{DEC_CLAIM, "{'metadata':{'name':'c'},'status':{'allocation':{'nodeSelector':{'nodeSelectorTerms':{}}}}}",
		 "status.allocation.nodeSelector.nodeSelectorTerms: not an array"},
		{DEC_CLAIM, "{'metadata':{'name':'c'},'status':{'allocation':{'nodeSelector':{'nodeSelectorTerms':[{'matchFields':[{'key':'metadata.name','operator':'In','values':[5]}]}]}}}}",
		 "status.allocation.nodeSelector.nodeSelectorTerms[0].matchFields[0].values[0]: not a string"},
		{DEC_CLAIM, "{'metadata':{'name':'c'},'status':{'allocation':{'nodeSelector':{'nodeSelectorTerms':[{'matchFields':[{'key':'metadata.name','values':['n']}]}]}}}}",
		 "status.allocation.nodeSelector.nodeSelectorTerms[0].matchFields[0].operator: missing"},
		{DEC_CLAIM, "{'metadata':{'name':'c'},'status':{'reservedFor':[{'resource':'pods','name':'p'}]}}",
		 "status.reservedFor[0].uid: missing"},
		{DEC_CLAIM, "{'metadata':{'name':'c'},'status':{'devices':[{'conditions':[{'type':'Ready','status':null}]}]}}",
		 "status.devices[0].conditions[0].status: missing"},
		{DEC_CLAIM, "{'metadata':{'name':'c'},'status':{'devices':[{'conditions':{}}]}}",
		 "status.devices[0].conditions: not an array"},
		/* ResourceSlice */
		{DEC_SLICE, "{'metadata':{'name':'s'}}", "spec: missing"},
		{DEC_SLICE, "{'metadata':{'name':'s'},'spec':{'driver':1}}", "spec.driver: not a string"},
		{DEC_SLICE, "{'metadata':{'name':'s'},'spec':{'driver':'d'}}", "spec.pool: missing"},
		{DEC_SLICE, "{'metadata':{'name':'s'},'spec':{'driver':'d','nodeName':{},'pool':{}}}",
		 "spec.nodeName: not a string"},
		{DEC_SLICE, "{'metadata':{'name':'s'},'spec':{'driver':'d','pool':{'name':'p','generation':'3','resourceSliceCount':1}}}",
		 "spec.pool.generation: not a number"},
		{DEC_SLICE, "{'metadata':{'name':'s'},'spec':{'driver':'d','pool':{'name':'p','generation':1.5,'resourceSliceCount':1}}}",
		 "spec.pool.generation: not an integer"},
		{DEC_SLICE, "{'metadata':{'name':'s'},'spec':{'driver':'d','pool':{'name':'p','generation':-1,'resourceSliceCount':1}}}",
		 "spec.pool.generation: out of range (-1)"},
		{DEC_SLICE, "{'metadata':{'name':'s'},'spec':{'driver':'d','pool':{'name':'p','generation':1e300,'resourceSliceCount':1}}}",
		 "spec.pool.generation: out of range"},
		{DEC_SLICE, "{'metadata':{'name':'s'},'spec':{'driver':'d','pool':{'name':'p','generation':1,'resourceSliceCount':0}}}",
		 "spec.pool.resourceSliceCount: out of range (0)"},
		{DEC_SLICE, "{'metadata':{'name':'s'},'spec':{'driver':'d','pool':{'name':'p','generation':1}}}",
		 "spec.pool.resourceSliceCount: missing"},
		{DEC_SLICE, "{'metadata':{'name':'s'},'spec':{'driver':'d','pool':{'name':'p','generation':1,'resourceSliceCount':1},'devices':[{'name':'a'},{'name':'b'},{'name':'c'},{'basic':{}}]}}",
		 "spec.devices[3].name: missing"},
		{DEC_SLICE, "{'metadata':{'name':'s'},'spec':{'driver':'d','pool':{'name':'p','generation':1,'resourceSliceCount':1},'devices':{}}}",
		 "spec.devices: not an array"},
		{DEC_SLICE, "{'metadata':{'name':'s'},'spec':{'driver':'d','pool':{'name':'p','generation':1,'resourceSliceCount':1},'devices':[{'name':'a','consumesCounters':[{'counters':{}}]}]}}",
		 "spec.devices[0].consumesCounters[0].counterSet: missing"},
		{DEC_SLICE, "{'metadata':{'name':'s'},'spec':{'driver':'d','pool':{'name':'p','generation':1,'resourceSliceCount':1},'devices':[{'name':'a','consumesCounters':{}}]}}",
		 "spec.devices[0].consumesCounters: not an array"},
		{DEC_SLICE, "{'metadata':{'name':'s'},'spec':{'driver':'d','pool':{'name':'p','generation':1,'resourceSliceCount':1},'sharedCounters':{}}}",
		 "spec.sharedCounters: not an array"},
		/* DeviceClass */
		{DEC_CLASS, "{'metadata':{'name':'d'},'spec':[]}", "spec: not an object"},
		{DEC_CLASS, "{'metadata':{'name':'d'},'spec':{'extendedResourceName':5}}",
		 "spec.extendedResourceName: not a string"},
	};
	char err[256];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *obj = fixture_quoted_json(cases[i].json);
		int rc = decode_any(cases[i].dec, obj, err, sizeof(err));
		if (rc != -1 || strcmp(err, cases[i].err) != 0)
			fail_msg("case %zu (%s): rc %d err \"%s\", want \"%s\"", i,
				 decoder_names[cases[i].dec], rc, err, cases[i].err);
		cJSON_Delete(obj);
	}
}

static void test_malformed_top_level(void **state)
{
	(void)state;
	static const char *const texts[] = {"[]", "[{\"metadata\":{\"name\":\"x\"}}]", "\"pod\"", "42",
					    "null", "true"};
	char err[256];
	for (decoder_t d = 0; d < DEC_COUNT; d++) {
		for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
			cJSON *obj = cJSON_Parse(texts[i]);
			assert_non_null(obj);
			assert_int_equal(decode_any(d, obj, err, sizeof(err)), -1);
			assert_string_equal(err, "(top level): not a JSON object");
			cJSON_Delete(obj);
		}
		assert_int_equal(decode_any(d, NULL, err, sizeof(err)), -1);
		assert_string_equal(err, "(top level): not a JSON object");
	}
}

static void test_error_text_is_bounded(void **state)
{
	(void)state;
	/* A hostile label key cannot break the log line or overflow the buffer. */
	char key[600];
	memset(key, 'k', sizeof(key) - 1);
	key[sizeof(key) - 1] = '\0';
	key[3] = '\n';
	key[4] = '"';
	cJSON *obj = fixture_quoted_json("{'metadata':{'name':'n','labels':{}}}");
	cJSON_AddNumberToObject(cJSON_GetObjectItem(cJSON_GetObjectItem(obj, "metadata"), "labels"),
				key, 1);
	char err[256];
	assert_int_equal(decode_any(DEC_NODE, obj, err, sizeof(err)), -1);
	assert_true(strncmp(err, "metadata.labels[\"kkk\\x0a\\\"kkk", 29) == 0);
	assert_non_null(strstr(err, "...\"]: not a string"));
	/* A tiny buffer truncates; no buffer at all is allowed. */
	char small[8];
	assert_int_equal(decode_any(DEC_NODE, obj, small, sizeof(small)), -1);
	assert_string_equal(small, "metadat");
	projection_node_t n;
	assert_int_equal(projection_decode_node(obj, &n, NULL, 0), -1);
	cJSON_Delete(obj);
}

/*
 * The API puts no count limit on a pod's claims or on the extended resources
 * a pod or a node lists: sets of any size decode in full, de-duplicated in
 * order, and the request arithmetic holds across them. A pod that failed to
 * decode would be missing from the cache, and its devices with it.
 */
#define MANY 1000

static void test_sets_of_any_size(void **state)
{
	(void)state;
	char err[256];
	char name[32];
	cJSON *obj = fixture_quoted_json("{'metadata':{'name':'p'},'spec':{'resourceClaims':[],"
			  "'containers':[{'resources':{'requests':{}}},{'resources':{'limits':{}}}],"
			  "'initContainers':[{'resources':{'requests':{}}}]}}");
	cJSON *spec = cJSON_GetObjectItem(obj, "spec");
	cJSON *claims = cJSON_GetObjectItem(spec, "resourceClaims");
	cJSON *containers = cJSON_GetObjectItem(spec, "containers");
	cJSON *requests = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetArrayItem(containers, 0), "resources"), "requests");
	cJSON *limits = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetArrayItem(containers, 1), "resources"), "limits");
	cJSON *init = cJSON_GetObjectItem(
		cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(spec, "initContainers"), 0), "resources"),
		"requests");
	for (int i = 0; i < MANY; i++) {
		cJSON *c = cJSON_CreateObject();
		snprintf(name, sizeof(name), "claim-%d", i);
		cJSON_AddStringToObject(c, "resourceClaimName", name);
		cJSON_AddItemToArray(claims, c);
		cJSON_AddItemToArray(claims, cJSON_Duplicate(c, 1)); /* named twice, listed once */
		snprintf(name, sizeof(name), "example.com/r%d", i);
		cJSON_AddStringToObject(requests, name, "1");
		cJSON_AddStringToObject(limits, name, "2");
		/* The init container needs more than the containers together for the first half only. */
		cJSON_AddStringToObject(init, name, i < MANY / 2 ? "5" : "1");
	}
	projection_pod_t p;
	assert_int_equal(projection_decode_pod(obj, &p, err, sizeof(err)), 0);
	assert_int_equal(p.n_claims, MANY);
	assert_string_equal(p.claims[0], "claim-0");
	assert_string_equal(p.claims[MANY - 1], "claim-999");
	assert_int_equal(p.n_requests, MANY);
	for (int i = 0; i < MANY; i++) {
		snprintf(name, sizeof(name), "example.com/r%d", i);
		int64_t count = 0;
		assert_true(projection_quantity_find(p.requests, p.n_requests, name, &count));
		if (count != (i < MANY / 2 ? 5 : 3))
			fail_msg("%s: %lld", name, (long long)count);
	}
	projection_free_pod(&p);
	cJSON_Delete(obj);

	obj = fixture_quoted_json("{'metadata':{'name':'n'},'status':{'allocatable':{},'capacity':{}}}");
	cJSON *status = cJSON_GetObjectItem(obj, "status");
	for (int i = 0; i < MANY; i++) {
		snprintf(name, sizeof(name), "example.com/r%d", i);
		cJSON_AddStringToObject(cJSON_GetObjectItem(status, "allocatable"), name, "0");
		cJSON_AddStringToObject(cJSON_GetObjectItem(status, "capacity"), name, "8");
	}
	projection_node_t n;
	assert_int_equal(projection_decode_node(obj, &n, err, sizeof(err)), 0);
	assert_int_equal(n.n_allocatable, MANY);
	assert_int_equal(n.n_capacity, MANY);
	int64_t count = -1;
	assert_true(projection_quantity_find(n.allocatable, n.n_allocatable, "example.com/r999", &count));
	assert_int_equal(count, 0);
	assert_true(projection_quantity_find(n.capacity, n.n_capacity, "example.com/r999", &count));
	assert_int_equal(count, 8);
	projection_free_node(&n);
	cJSON_Delete(obj);
}

/* ---- arbitrary changes to real objects: never a crash or a leak ---- */

static size_t count_nodes(const cJSON *item)
{
	size_t n = 1;
	for (const cJSON *c = item->child; c != NULL; c = c->next)
		n += count_nodes(c);
	return n;
}

/* The k-th node in depth-first order below root (root itself is 0), and its parent. */
static cJSON *nth_node(cJSON *item, size_t *k, cJSON **parent)
{
	for (cJSON *c = item->child; c != NULL; c = c->next) {
		if (--*k == 0) {
			*parent = item;
			return c;
		}
		cJSON *found = nth_node(c, k, parent);
		if (found != NULL)
			return found;
	}
	return NULL;
}

static cJSON *wrong_value(int kind)
{
	switch (kind) {
	case 0:
		return cJSON_CreateNumber(7);
	case 1:
		return cJSON_CreateString("x");
	case 2:
		return cJSON_CreateArray();
	case 3:
		return cJSON_CreateObject();
	case 4:
		return cJSON_CreateNull();
	default:
		return cJSON_CreateTrue();
	}
}

/*
 * Replace every node of every fixture, one at a time, by each JSON type and
 * run every decoder on the result: each must succeed or fail cleanly (err set,
 * output zeroed), and the sanitizer/valgrind build proves nothing leaks.
 * managedFields is dropped first: no decoder reads it, and it triples the run.
 */
static void test_every_field_replaced(void **state)
{
	(void)state;
	static const char *const files[] = {"objects/node.json",  "objects/pod_gpu.json",
					    "objects/pod_claim_template.json", "objects/claim.json",
					    "objects/slice.json", "objects/device_class.json"};
	char err[256];
	size_t runs = 0, failures = 0;
	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		cJSON *base = fixture_json(files[f]);
		cJSON_DeleteItemFromObject(cJSON_GetObjectItem(base, "metadata"), "managedFields");
		/* Trim the slice's device list: eight identical devices teach nothing new. */
		cJSON *devices = cJSON_GetObjectItem(cJSON_GetObjectItem(base, "spec"), "devices");
		while (cJSON_IsArray(devices) && cJSON_GetArraySize(devices) > 2)
			cJSON_DeleteItemFromArray(devices, 2);
		size_t nodes = count_nodes(base);
		for (size_t k = 1; k < nodes; k++) {
			for (int kind = 0; kind < 6; kind++) {
				cJSON *doc = cJSON_Duplicate(base, 1);
				size_t left = k;
				cJSON *parent = NULL;
				cJSON *target = nth_node(doc, &left, &parent);
				assert_non_null(target);
				cJSON *wrong = wrong_value(kind);
				/* ReplaceItemViaPointer keeps the position but not the key. */
				if (target->string != NULL) {
					wrong->string = strdup(target->string);
					assert_non_null(wrong->string);
				}
				assert_true(cJSON_ReplaceItemViaPointer(parent, target, wrong));
				for (decoder_t d = 0; d < DEC_COUNT; d++) {
					failures += decode_any(d, doc, err, sizeof(err)) != 0;
					runs++;
				}
				cJSON_Delete(doc);
			}
		}
		cJSON_Delete(base);
	}
	print_message("%zu decodes of altered fixtures, %zu refused\n", runs, failures);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_node_fixture),
		cmocka_unit_test(test_pod_gpu_fixture),
		cmocka_unit_test(test_pod_full_fixture),
		cmocka_unit_test(test_pod_claim_template_fixture),
		cmocka_unit_test(test_claim_fixture),
		cmocka_unit_test(test_claim_unallocated),
		cmocka_unit_test(test_event_fixture),
		cmocka_unit_test(test_claim_delete_protection),
		cmocka_unit_test(test_claim_extended),
		cmocka_unit_test(test_slice_fixture),
		cmocka_unit_test(test_slice_partitionable),
		cmocka_unit_test(test_device_class_fixture),
		cmocka_unit_test(test_pod_requests_init_containers),
		cmocka_unit_test(test_pod_preempts),
		cmocka_unit_test(test_pod_unschedulable),
		cmocka_unit_test(test_pod_requests_which_resources),
		cmocka_unit_test(test_pod_claims_deduplicated),
		cmocka_unit_test(test_quantity_forms),
		cmocka_unit_test(test_time_forms),
		cmocka_unit_test(test_malformed_fields),
		cmocka_unit_test(test_malformed_top_level),
		cmocka_unit_test(test_error_text_is_bounded),
		cmocka_unit_test(test_sets_of_any_size),
		cmocka_unit_test(test_every_field_replaced),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
