package main

// Unit tests of the parts that need no API server: flag and fault parsing, the
// device plugin's capacity/allocatable timeline and when the status shows it,
// extended-resource requests, feature-discovery labels.
// The behaviour against a real control plane is tested by
// test/integration/fleetsim.sh.

import (
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestParsePools(t *testing.T) {
	pools, err := parsePools("a:4x8, b:2x1")
	if err != nil || len(pools) != 2 || pools[0] != (PoolSpec{"a", 4, 8}) || pools[1] != (PoolSpec{"b", 2, 1}) {
		t.Fatalf("got %v, %v", pools, err)
	}
	for _, bad := range []string{"", "a", "a:4", "a:0x8", "a:4x0", "A:1x1", "a:1x1,a:2x2", "a:1x1000"} {
		if _, err := parsePools(bad); err == nil {
			t.Errorf("parsePools(%q) accepted", bad)
		}
	}
}

func TestParseRate(t *testing.T) {
	for in, want := range map[string]float64{"0.5/s": 0.5, "2": 2, "30/m": 0.5, "3600/h": 1} {
		if got, err := parseRate(in); err != nil || got != want {
			t.Errorf("parseRate(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "0/s", "-1", "1/d", "x/s"} {
		if _, err := parseRate(bad); err == nil {
			t.Errorf("parseRate(%q) accepted", bad)
		}
	}
}

func testFaults() *Faults {
	pools := []PoolSpec{{"a", 4, 8}, {"b", 1, 8}}
	nodes := map[string]*simNode{}
	for pi, p := range pools {
		for i := range p.Nodes {
			n := newSimNode(p, pi, i)
			nodes[n.name] = n
		}
	}
	return newFaults(pools, nodes)
}

func TestFaultsPrecedence(t *testing.T) {
	f := testFaults()
	spec := "pool=a:prepare-delay=5s,node=a-1:prepare-fail-rate=0.5,node=a-2:driver-crash:stale-slices,node=a-3:missing-devices=2:prepare-delay=1s:prepare-timeout"
	if err := f.Apply(spec); err != nil {
		t.Fatal(err)
	}
	def := 500 * time.Millisecond
	cases := map[string]Effective{
		"a-0": {PrepareDelay: 5 * time.Second},
		"a-1": {PrepareDelay: 5 * time.Second, PrepareFailRate: 0.5},
		"a-2": {PrepareDelay: 5 * time.Second, DriverCrash: true, StaleSlices: true},
		"a-3": {PrepareDelay: time.Second, MissingDevices: 2, PrepareTimeout: true},
	}
	for node, want := range cases {
		if got := f.For("a", node, def); got != want {
			t.Errorf("%s: got %+v, want %+v", node, got, want)
		}
	}
	if got := f.For("b", "b-0", def); got != (Effective{PrepareDelay: def}) {
		t.Errorf("b-0: got %+v, want defaults", got)
	}
	// Runtime changes: undo one knob, clear a scope, set all.
	if err := f.Apply("node=a-2:driver-crash=false\nnode=a-3:clear;all:prepare-fail-rate=0.1"); err != nil {
		t.Fatal(err)
	}
	if got := f.For("a", "a-2", def); got.DriverCrash || !got.StaleSlices || got.PrepareFailRate != 0.1 {
		t.Errorf("a-2 after changes: %+v", got)
	}
	if got := f.For("a", "a-3", def); got != (Effective{PrepareDelay: 5 * time.Second, PrepareFailRate: 0.1}) {
		t.Errorf("a-3 after clear: %+v", got)
	}
	if snap := f.Snapshot(); snap.Spec == "" || len(snap.Nodes) != 2 {
		t.Errorf("snapshot: %+v", snap)
	}
}

func TestFaultsRejectAtomically(t *testing.T) {
	f := testFaults()
	for _, bad := range []string{
		"", "node=zz-9:driver-crash", "pool=c:prepare-delay=1s", "a-1:driver-crash", "node=a-1",
		"node=a-1:prepare-fail-rate=2", "node=a-1:prepare-delay=soon", "node=a-1:missing-devices=-1",
		"node=a-1:explode", "node=a-1:driver-crash=maybe", "node=a-1:prepare-timeout=soon", "node=a-1:stale-slices=2",
	} {
		if err := f.Apply(bad); err == nil {
			t.Errorf("Apply(%q) accepted", bad)
		}
	}
	// A valid item followed by an invalid one changes nothing.
	if err := f.Apply("node=a-1:driver-crash,node=a-2:bogus"); err == nil {
		t.Fatal("accepted a bogus knob")
	}
	if f.For("a", "a-1", 0).DriverCrash {
		t.Error("a rejected spec was partly applied")
	}
}

func TestDevicePluginTimeline(t *testing.T) {
	s := &Sim{cfg: &Config{CapacityLag: 5 * time.Second, ExtendedResource: "example.com/gpu"}}
	n := newSimNode(PoolSpec{"a", 1, 4}, 0, 0)
	t0 := time.Now()
	val := func(p *int64) string {
		if p == nil {
			return "absent"
		}
		return resource.NewQuantity(*p, resource.DecimalSI).String()
	}
	check := func(at time.Time, wantCap, wantAlloc string) {
		t.Helper()
		c, a, _ := s.desiredExtended(n, at)
		if val(c) != wantCap || val(a) != wantAlloc {
			t.Errorf("at +%v: capacity %s allocatable %s; want %s %s", at.Sub(t0), val(c), val(a), wantCap, wantAlloc)
		}
	}
	check(t0, "absent", "absent") // never registered
	if !s.observeDevicePlugin(n, true, t0) {
		t.Fatal("plugin did not start")
	}
	check(t0, "4", "4")
	if !s.observeDevicePlugin(n, false, t0.Add(time.Second)) {
		t.Fatal("plugin did not stop")
	}
	check(t0.Add(2*time.Second), "4", "0") // allocatable at once, capacity lags
	check(t0.Add(7*time.Second), "0", "0") // capacity follows; the resource stays at 0
	if s.observeDevicePlugin(n, false, t0.Add(8*time.Second)) {
		t.Error("a stopped plugin stopped again")
	}
}

// As a real kubelet with its Lease: the status is computed at every status
// update (heartbeat) and written only when it changed (a changed extended
// resource, a node not Ready) or when the report interval passed.
func TestNodeStatusWrites(t *testing.T) {
	s := &Sim{cfg: &Config{ExtendedResource: "example.com/gpu"}}
	sn := newSimNode(PoolSpec{"a", 1, 4}, 0, 0)
	node := &v1.Node{Status: v1.NodeStatus{
		Capacity:    v1.ResourceList{"example.com/gpu": resource.MustParse("4")},
		Allocatable: v1.ResourceList{"example.com/gpu": resource.MustParse("4"), v1.ResourcePods: resource.MustParse(nodePods)},
		Conditions:  []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}},
	}}
	four, zero := int64(4), int64(0)
	if _, needed := s.nodeStatusPatch(node, sn, &four, &four, true, false, time.Now()); needed {
		t.Error("an unchanged status written at a status update")
	}
	patch, needed := s.nodeStatusPatch(node, sn, &four, &four, false, true, time.Now())
	if !needed || !strings.Contains(string(patch), "lastHeartbeatTime") {
		t.Errorf("the report interval passed and no status written: %v %s", needed, patch)
	}
	if _, needed := s.nodeStatusPatch(node, sn, &four, &zero, false, false, time.Now()); needed {
		t.Error("allocatable 0 written before the next status update")
	}
	patch, needed = s.nodeStatusPatch(node, sn, &four, &zero, true, false, time.Now())
	if !needed || !strings.Contains(string(patch), `"allocatable":{"cpu":"32","example.com/gpu":"0"`) {
		t.Errorf("the status update does not carry allocatable 0: %v %s", needed, patch)
	}
	node.Status.Conditions[0].Status = v1.ConditionFalse
	if _, needed := s.nodeStatusPatch(node, sn, &four, &zero, false, false, time.Now()); !needed {
		t.Error("a node not Ready waits for the next heartbeat")
	}
}

// Every node heartbeats once a period, and no slot holds more than its share.
func TestHeartbeatSpread(t *testing.T) {
	for _, c := range []struct {
		period       time.Duration
		nodes, slots int
	}{{10 * time.Second, 1000, 100}, {10 * time.Second, 7, 100}, {time.Second, 25, 10}, {50 * time.Millisecond, 3, 1}} {
		if got := heartbeatSlots(c.period); got != c.slots {
			t.Errorf("%v: %d slots, want %d", c.period, got, c.slots)
		}
		order := make([]string, c.nodes)
		for i := range order {
			order[i] = fmt.Sprintf("n-%d", i)
		}
		seen := map[string]int{}
		for slot := range c.slots {
			names := slotNodes(order, slot, c.slots)
			if most := (c.nodes + c.slots - 1) / c.slots; len(names) > most {
				t.Errorf("%v, %d nodes: slot %d holds %d, more than %d", c.period, c.nodes, slot, len(names), most)
			}
			for _, n := range names {
				seen[n]++
			}
		}
		for _, n := range order {
			if seen[n] != 1 {
				t.Errorf("%v, %d nodes: %s heartbeats %d times a period", c.period, c.nodes, n, seen[n])
			}
		}
	}
}

func TestExtendedRequest(t *testing.T) {
	gpu := v1.ResourceName("example.com/gpu")
	q := func(n string) v1.ResourceList { return v1.ResourceList{gpu: resource.MustParse(n)} }
	pod := &v1.Pod{Spec: v1.PodSpec{
		Containers: []v1.Container{
			{Resources: v1.ResourceRequirements{Limits: q("1")}},
			{Resources: v1.ResourceRequirements{Requests: q("2"), Limits: q("2")}},
			{},
		},
		InitContainers: []v1.Container{{Resources: v1.ResourceRequirements{Limits: q("2")}}},
	}}
	if got := extendedRequest(pod, gpu); got != 3 {
		t.Errorf("sum of containers: got %d, want 3", got)
	}
	pod.Spec.InitContainers[0].Resources.Limits = q("5")
	if got := extendedRequest(pod, gpu); got != 5 {
		t.Errorf("largest init container: got %d, want 5", got)
	}
}

func TestPodDuration(t *testing.T) {
	p := &v1.Pod{}
	if podDuration(p) != 0 {
		t.Error("no duration set")
	}
	p.Labels = map[string]string{durationKey: "10s"}
	if podDuration(p) != 10*time.Second {
		t.Error("label")
	}
	p.Annotations = map[string]string{durationKey: "30s"}
	if podDuration(p) != 30*time.Second {
		t.Error("annotation wins over label")
	}
	p = &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Env: []v1.EnvVar{{Name: durationEnv, Value: "1m"}}}}}}
	if podDuration(p) != time.Minute {
		t.Error("env")
	}
}

// --feature-labels: exactly N labels a real API server accepts, GFD's first,
// and the kubelet's own labels (pool, ownership) always win.
func TestFeatureLabels(t *testing.T) {
	for _, n := range []int{0, 1, 5, 200, 500} {
		l := featureLabels(n, "sim-a100", "80Gi", 8)
		if len(l) != n {
			t.Errorf("featureLabels(%d) gave %d labels", n, len(l))
		}
		for k, v := range l {
			if errs := validation.IsQualifiedName(k); len(errs) > 0 {
				t.Errorf("label key %q: %v", k, errs)
			}
			if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
				t.Errorf("label %s value %q: %v", k, v, errs)
			}
		}
	}
	l := featureLabels(200, "sim-a100", "80Gi", 8)
	for k, want := range map[string]string{"nvidia.com/gpu.product": "sim-a100", "nvidia.com/gpu.count": "8",
		"nvidia.com/gpu.memory": "81920", "nvidia.com/gpu.replicas": "1", "nvidia.com/mig.strategy": "single",
		"feature.node.kubernetes.io/cpu-cpuid.AVX512F": "true"} {
		if l[k] != want {
			t.Errorf("featureLabels(200)[%s] = %q, want %q", k, l[k], want)
		}
	}
	cfg, err := parseFlags([]string{"--pools", "a:1x8", "--feature-labels", "200"})
	if err != nil {
		t.Fatal(err)
	}
	s := &Sim{cfg: cfg}
	nl := s.nodeLabels(newSimNode(cfg.Pools[0], 0, 0))
	if len(nl) < 200 || nl[cfg.PoolLabel] != "a" || nl[cfg.DevicePluginLabel] != "true" || nl[cfg.DRALabel] != "false" {
		t.Errorf("node labels with --feature-labels 200: %d labels, pool %q, owners %q/%q", len(nl), nl[cfg.PoolLabel],
			nl[cfg.DevicePluginLabel], nl[cfg.DRALabel])
	}
	if _, err := parseFlags([]string{"--feature-labels", "-1"}); err == nil {
		t.Error("--feature-labels -1 accepted")
	}
}

func TestShapes(t *testing.T) {
	pools := []PoolSpec{{"ts", 1, 8}, {"mig", 1, 10}, {"a", 1, 2}, {"mps", 1, 2}}
	shapes, err := parseShapes("ts:replicas=4,mig:mig=1g.10gb*3+3g.40gb*1,mig:partitionable,mig:slices=2,a:nic=2,mps:replicas=3,mps:sharing=mps", pools)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"zz:replicas=2", "ts:replicas=0", "ts:mig=1g*2", "ts:sharing=mps", "ts:bogus", "ts:slices=0",
		"mig:mig=1g.10gb*7,mig:sharing=mps"} {
		if _, err := parseShapes(bad, pools); err == nil {
			t.Errorf("parseShapes(%q) accepted", bad)
		}
	}
	s := &Sim{cfg: &Config{ExtendedResource: "example.com/gpu", Driver: "gpu.example.com", GPUModel: "sim-a100",
		GPUMemory: "80Gi", Shapes: shapes}}
	node := func(p PoolSpec) *simNode {
		n := newSimNode(p, 0, 0)
		n.shape = shapes[p.Name]
		return n
	}
	ts, mig := node(pools[0]), node(pools[1])

	// The plugin's units and GFD's labels.
	if u := s.unitsPerGPU(ts.shape); u["example.com/gpu"] != 4 || len(u) != 1 {
		t.Errorf("time-sliced units per GPU %v", u)
	}
	if u := s.unitsPerGPU(mig.shape); u["example.com/mig-1g.10gb"] != 3 || u["example.com/mig-3g.40gb"] != 1 || len(u) != 2 {
		t.Errorf("MIG units per GPU %v", u)
	}
	l := s.gfdLabels(ts)
	if l["example.com/gpu.replicas"] != "4" || l["example.com/gpu.sharing-strategy"] != "time-slicing" || l["example.com/gpu.count"] != "8" {
		t.Errorf("time-sliced labels %v", l)
	}
	l = s.gfdLabels(mig)
	if l["example.com/mig.strategy"] != "mixed" || l["example.com/mig-1g.10gb.count"] != "30" || l["example.com/gpu.count"] != "10" {
		t.Errorf("MIG labels %v", l)
	}
	if l["example.com/mps.capable"] != "false" {
		t.Errorf("time-sliced node labelled mps.capable=%q", l["example.com/mps.capable"])
	}

	// MPS: the same units under the same name, GFD's MPS labels, one unit per container.
	mps := node(pools[3])
	if u := s.unitsPerGPU(mps.shape); u["example.com/gpu"] != 3 || len(u) != 1 {
		t.Errorf("MPS units per GPU %v", u)
	}
	l = s.gfdLabels(mps)
	if l["example.com/gpu.replicas"] != "3" || l["example.com/gpu.sharing-strategy"] != "mps" ||
		l["example.com/mps.capable"] != "true" || l["example.com/gpu.product"] != "sim-a100-SHARED" || l["example.com/gpu.count"] != "2" {
		t.Errorf("MPS labels %v", l)
	}
	asking := func(units ...int64) *v1.Pod {
		p := &v1.Pod{}
		for _, n := range units {
			p.Spec.Containers = append(p.Spec.Containers, v1.Container{Resources: v1.ResourceRequirements{
				Limits: v1.ResourceList{"example.com/gpu": *resource.NewQuantity(n, resource.DecimalSI)}}})
		}
		return p
	}
	if msg := s.mpsRequestTooLarge(mps.shape, asking(1, 1)); msg != "" {
		t.Errorf("two containers of one MPS unit each refused: %s", msg)
	}
	if msg := s.mpsRequestTooLarge(mps.shape, asking(2)); !strings.Contains(msg, "request for 'example.com/gpu: 2' too large: maximum request size for shared resources is 1") {
		t.Errorf("a container asking for 2 MPS units: %q", msg)
	}
	if msg := s.mpsRequestTooLarge(ts.shape, asking(2)); msg != "" {
		t.Errorf("time-slicing refused 2 units: %s", msg)
	}

	if got := s.gpusForUnits(ts.shape, 5); got != 2 {
		t.Errorf("5 units of a 4-way shared GPU fill %d GPUs, want 2", got)
	}

	// Partitionable: 10 GPUs' counter sets in two slices of at most 8, 50 devices over 2 slices.
	want := s.desiredSlices(mig, 10)
	var sets, devices, counting int
	for _, sp := range want {
		if len(sp.SharedCounters) > 8 || len(sp.Devices) > 64 || (len(sp.Devices) > 0 && len(sp.SharedCounters) > 0) {
			t.Errorf("slice breaks the API's limits: %d counter sets, %d devices", len(sp.SharedCounters), len(sp.Devices))
		}
		if sp.Pool.ResourceSliceCount != int64(len(want)) {
			t.Errorf("resourceSliceCount %d of %d slices", sp.Pool.ResourceSliceCount, len(want))
		}
		sets += len(sp.SharedCounters)
		devices += len(sp.Devices)
		for _, d := range sp.Devices {
			if len(d.ConsumesCounters) == 1 {
				counting++
			}
		}
	}
	if len(want) != 4 || sets != 10 || devices != 50 || counting != 50 {
		t.Errorf("%d slices, %d counter sets, %d devices (%d consuming counters); want 4, 10, 50, 50", len(want), sets, devices, counting)
	}
	if physicalDevice("gpu-3-mig-1g10gb-2") != "gpu-3" || physicalDevice("gpu-3") != "gpu-3" {
		t.Error("physicalDevice")
	}
}

// dra_operations_duration_seconds is a valid Prometheus histogram: cumulative
// buckets ending in +Inf equal to _count, a value on a bound counted in it.
func TestDRAOperationsHistogram(t *testing.T) {
	var h opHistogram
	h.observe("a-0", "NodePrepareResources", false, 0.5)
	h.observe("a-0", "NodePrepareResources", false, 4)
	h.observe("a-0", "NodePrepareResources", false, 100)
	h.observe("a-1", "NodePrepareResources", true, 0.05)
	var b strings.Builder
	h.write(&b)
	out := b.String()
	l := `is_error="false",node="a-0",operation_name="NodePrepareResources"`
	for _, want := range []string{
		"# TYPE dra_operations_duration_seconds histogram\n",
		"dra_operations_duration_seconds_bucket{" + l + `,le="0.3"} 0` + "\n",
		"dra_operations_duration_seconds_bucket{" + l + `,le="0.5"} 1` + "\n",
		"dra_operations_duration_seconds_bucket{" + l + `,le="5"} 2` + "\n",
		"dra_operations_duration_seconds_bucket{" + l + `,le="30"} 2` + "\n",
		"dra_operations_duration_seconds_bucket{" + l + `,le="+Inf"} 3` + "\n",
		"dra_operations_duration_seconds_sum{" + l + "} 104.5\n",
		"dra_operations_duration_seconds_count{" + l + "} 3\n",
		`dra_operations_duration_seconds_bucket{is_error="true",node="a-1",operation_name="NodePrepareResources",le="0.1"} 1` + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
}
