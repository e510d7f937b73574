package main

// Device shapes per pool (--shapes): what real GPU nodes look like beyond N
// whole GPUs, on both sides of a migration.
//
//	POOL:replicas=N          time-slicing: the plugin advertises N units per GPU
//	POOL:sharing=mps         ... shared with MPS instead, as NVIDIA's device plugin
//	                         does with sharing.mps.resources[].replicas: the same
//	                         N units per GPU under the same resource name, GFD's
//	                         sharing-strategy=mps and <domain>/mps.capable=true,
//	                         whole GPUs only (no MIG), and a container asking for
//	                         more than one unit is rejected at admission (the
//	                         plugin's failRequestsGreaterThanOne, which it forces
//	                         on for MPS)
//	POOL:mig=P*C+P*C         MIG, mixed strategy: per GPU C instances of profile P
//	                         (1g.10gb, 3g.40gb, ...); the plugin advertises
//	                         <domain>/mig-P, not the extended resource
//	POOL:partitionable       the driver publishes each GPU whole and every MIG
//	                         placement, all consuming the GPU's counter set
//	                         (DRAPartitionableDevices); without it a MIG GPU's
//	                         instances are its devices
//	POOL:slices=K            the driver spreads the node's devices over K slices
//	POOL:nic=M               a second driver (nic.example.com) publishes M NICs
//	                         on each node, whoever owns the GPUs
//
// Every node carries the labels GPU Feature Discovery writes, named after the
// extended resource as GFD names them after nvidia.com/gpu: <resource>.count,
// .product, .memory, .replicas, .sharing-strategy, <domain>/mig.strategy and
// per MIG profile <domain>/mig-P.count.

import (
	"context"
	"fmt"
	"log"
	"sort"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// NICDriver is the second driver's name.
const NICDriver = "nic.example.com"

// MIGProfile is one MIG profile of a GPU: "1g.10gb" is 1 compute slice, 10 GiB.
type MIGProfile struct {
	Name     string
	Count    int // instances per GPU
	Slices   int
	MemoryGi int
}

// Shape is a pool's device shape; the zero value is N whole GPUs.
type Shape struct {
	Replicas      int
	Sharing       string
	MIG           []MIGProfile
	Partitionable bool
	Slices        int
	NICs          int
}

func parseProfile(p string) (MIGProfile, error) {
	g, mem, ok := strings.Cut(p, "g.")
	s, err1 := strconv.Atoi(g)
	m, err2 := strconv.Atoi(strings.TrimSuffix(mem, "gb"))
	if !ok || err1 != nil || err2 != nil || s < 1 || s > 7 || m < 1 || !strings.HasSuffix(mem, "gb") {
		return MIGProfile{}, fmt.Errorf("MIG profile %q: want <slices>g.<memory>gb such as 1g.10gb", p)
	}
	return MIGProfile{Name: p, Slices: s, MemoryGi: m}, nil
}

// parseShapes reads --shapes for the given pools.
func parseShapes(s string, pools []PoolSpec) (map[string]*Shape, error) {
	shapes := map[string]*Shape{}
	known := map[string]bool{}
	for _, p := range pools {
		known[p.Name] = true
		shapes[p.Name] = &Shape{}
	}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		pool, knob, ok := strings.Cut(item, ":")
		if !ok || !known[pool] {
			return nil, fmt.Errorf("shape %q: want POOL:KNOB for a pool of --pools", item)
		}
		sh := shapes[pool]
		key, val, _ := strings.Cut(knob, "=")
		n, nerr := strconv.Atoi(val)
		switch key {
		case "replicas":
			if nerr != nil || n < 1 {
				return nil, fmt.Errorf("shape %q: replicas wants a count >= 1", item)
			}
			sh.Replicas = n
		case "sharing":
			if val != "time-slicing" && val != "mps" {
				return nil, fmt.Errorf("shape %q: sharing is time-slicing or mps", item)
			}
			sh.Sharing = val
		case "mig":
			for _, pc := range strings.Split(val, "+") {
				name, count, _ := strings.Cut(pc, "*")
				prof, err := parseProfile(name)
				c, cerr := strconv.Atoi(count)
				if err != nil || cerr != nil || c < 1 {
					return nil, fmt.Errorf("shape %q: want mig=PROFILE*COUNT[+...], e.g. mig=1g.10gb*3+3g.40gb*1", item)
				}
				prof.Count = c
				sh.MIG = append(sh.MIG, prof)
			}
		case "partitionable":
			sh.Partitionable = true
		case "slices":
			if nerr != nil || n < 1 || n > 16 {
				return nil, fmt.Errorf("shape %q: slices wants 1..16", item)
			}
			sh.Slices = n
		case "nic":
			if nerr != nil || n < 1 || n > 64 {
				return nil, fmt.Errorf("shape %q: nic wants 1..64", item)
			}
			sh.NICs = n
		default:
			return nil, fmt.Errorf("shape %q: unknown knob %q (replicas, sharing, mig, partitionable, slices, nic)", item, key)
		}
	}
	for name, sh := range shapes {
		if sh.Sharing == "mps" && len(sh.MIG) > 0 {
			return nil, fmt.Errorf("pool %s: sharing=mps with MIG: NVIDIA's device plugin shares only whole GPUs with MPS", name)
		}
		if len(sh.MIG) > 0 && sh.Replicas > 1 {
			return nil, fmt.Errorf("pool %s: MIG and replicas together are not simulated", name)
		}
		if sh.Sharing != "" && sh.Replicas < 2 {
			return nil, fmt.Errorf("pool %s: sharing=%s needs replicas=N > 1", name, sh.Sharing)
		}
		if sh.Sharing == "" && sh.Replicas > 1 {
			sh.Sharing = "time-slicing"
		}
	}
	return shapes, nil
}

// domain of the extended resource ("example.com" of example.com/gpu).
func (s *Sim) domain() string {
	d, _, _ := strings.Cut(s.cfg.ExtendedResource, "/")
	return d
}

// unitsPerGPU is what the device plugin advertises per GPU of the shape.
func (s *Sim) unitsPerGPU(sh *Shape) map[v1.ResourceName]int64 {
	if len(sh.MIG) > 0 {
		u := map[v1.ResourceName]int64{}
		for _, p := range sh.MIG {
			u[v1.ResourceName(s.domain()+"/mig-"+p.Name)] += int64(p.Count)
		}
		return u
	}
	return map[v1.ResourceName]int64{v1.ResourceName(s.cfg.ExtendedResource): int64(max(1, sh.Replicas))}
}

// legacyResources are every resource any pool's plugin advertises.
func (s *Sim) legacyResources() []v1.ResourceName {
	seen := map[v1.ResourceName]bool{v1.ResourceName(s.cfg.ExtendedResource): true}
	for _, sh := range s.cfg.Shapes {
		for r := range s.unitsPerGPU(sh) {
			seen[r] = true
		}
	}
	out := make([]v1.ResourceName, 0, len(seen))
	for r := range seen {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// legacyRequest is what a pod asks of the device plugins, in units, over every legacy resource.
func (s *Sim) legacyRequest(pod *v1.Pod) int64 {
	var n int64
	for _, r := range s.legacyResources() {
		n += extendedRequest(pod, r)
	}
	return n
}

// gpusForUnits is the fewest GPUs that many plugin units occupy on a node of the shape.
func (s *Sim) gpusForUnits(sh *Shape, units int64) int64 {
	var per int64
	for _, u := range s.unitsPerGPU(sh) {
		per += u
	}
	return (units + per - 1) / per
}

// physicalDevice is the GPU a DRA device of fleetsim's driver belongs to (gpu-3-mig-1g10gb-0 is gpu-3).
func physicalDevice(device string) string {
	if i := strings.Index(device, "-mig-"); i >= 0 {
		return device[:i]
	}
	return device
}

// gfdLabels are the labels GPU Feature Discovery writes for the node's GPUs.
func (s *Sim) gfdLabels(sn *simNode) map[string]string {
	sh := sn.shape
	base := s.cfg.ExtendedResource
	mib := "0"
	if q, err := resource.ParseQuantity(s.cfg.GPUMemory); err == nil {
		mib = strconv.FormatInt(q.Value()>>20, 10)
	}
	l := map[string]string{
		base + ".count":             strconv.Itoa(sn.devices),
		base + ".product":           s.cfg.GPUModel,
		base + ".memory":            mib,
		base + ".replicas":          "1",
		base + ".sharing-strategy":  "none",
		s.domain() + "/mps.capable": "false",
	}
	switch {
	case len(sh.MIG) > 0:
		// MIG-enabled parents: GFD labels them without sharing (replicas 0).
		l[base+".replicas"] = "0"
		l[s.domain()+"/mig.strategy"] = "mixed"
		for _, p := range sh.MIG {
			l[s.domain()+"/mig-"+p.Name+".count"] = strconv.Itoa(p.Count * sn.devices)
		}
	case sh.Replicas > 1:
		l[base+".replicas"] = strconv.Itoa(sh.Replicas)
		l[base+".sharing-strategy"] = sh.Sharing
		l[base+".product"] = s.cfg.GPUModel + "-SHARED"
		if sh.Sharing == "mps" {
			l[s.domain()+"/mps.capable"] = "true"
		}
	}
	return l
}

// mpsRequestTooLarge is the device plugin's refusal of a container that asks
// for more than one MPS unit ("" when the pod may be admitted). Each replica
// is a fixed 1/N share of a GPU's memory and threads, so NVIDIA's plugin
// refuses a request for two in Allocate, and the kubelet fails the pod with
// UnexpectedAdmissionError.
func (s *Sim) mpsRequestTooLarge(sh *Shape, pod *v1.Pod) string {
	if sh.Sharing != "mps" {
		return ""
	}
	name := v1.ResourceName(s.cfg.ExtendedResource)
	for _, cs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			if n := containerRequest(&cs[i], name); n > 1 {
				return fmt.Sprintf("Allocate failed due to rpc error: code = Unknown desc = request for '%s: %d' too large: maximum request size for shared resources is 1, which is unexpected", name, n)
			}
		}
	}
	return ""
}

func counterSetName(gpu int) string { return fmt.Sprintf("gpu-%d-counters", gpu) }

// gpuDevices are the devices the GPU driver publishes for the node's first gpus GPUs.
func (s *Sim) gpuDevices(sn *simNode, gpus int) []resourcev1.Device {
	sh := sn.shape
	mem := resource.MustParse(s.cfg.GPUMemory)
	var devs []resourcev1.Device
	totalSlices := 0
	for _, p := range sh.MIG {
		totalSlices += p.Slices * p.Count
	}
	consume := func(gpu int, slices int64, m resource.Quantity) []resourcev1.DeviceCounterConsumption {
		if !sh.Partitionable {
			return nil
		}
		return []resourcev1.DeviceCounterConsumption{{CounterSet: counterSetName(gpu), Counters: map[string]resourcev1.Counter{
			"slices": {Value: *resource.NewQuantity(slices, resource.DecimalSI)},
			"memory": {Value: m},
		}}}
	}
	for i := range gpus {
		whole := len(sh.MIG) == 0 || sh.Partitionable
		if whole {
			devs = append(devs, resourcev1.Device{
				Name: fmt.Sprintf("gpu-%d", i),
				Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
					"model": {StringValue: ptr.To(s.cfg.GPUModel)},
					"index": {IntValue: ptr.To(int64(i))},
					"type":  {StringValue: ptr.To("gpu")},
					"uuid":  {StringValue: ptr.To(fmt.Sprintf("GPU-%s-%d", sn.name, i))},
				},
				Capacity:         map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{"memory": {Value: mem}},
				ConsumesCounters: consume(i, int64(totalSlices), mem),
			})
		}
		for _, p := range sh.MIG {
			pm := *resource.NewQuantity(int64(p.MemoryGi)<<30, resource.BinarySI)
			for j := range p.Count {
				devs = append(devs, resourcev1.Device{
					Name: fmt.Sprintf("gpu-%d-mig-%s-%d", i, strings.ReplaceAll(p.Name, ".", ""), j),
					Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
						"model":   {StringValue: ptr.To(s.cfg.GPUModel)},
						"index":   {IntValue: ptr.To(int64(i))},
						"type":    {StringValue: ptr.To("mig")},
						"profile": {StringValue: ptr.To(p.Name)},
					},
					Capacity:         map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{"memory": {Value: pm}},
					ConsumesCounters: consume(i, int64(p.Slices), pm),
				})
			}
		}
	}
	return devs
}

// desiredSlices are the GPU driver's slices for the node: counter sets first
// (at most 8 per slice, in slices of their own), then the devices spread over
// the shape's slices (at most 64 per slice when they consume counters).
func (s *Sim) desiredSlices(sn *simNode, gpus int) map[string]resourcev1.ResourceSliceSpec {
	sh := sn.shape
	base := s.sliceName(sn.name)
	var specs []resourcev1.ResourceSliceSpec
	var names []string
	if sh.Partitionable {
		for first := 0; first < gpus; first += 8 {
			var sets []resourcev1.CounterSet
			for i := first; i < min(gpus, first+8); i++ {
				slices := 0
				for _, p := range sh.MIG {
					slices += p.Slices * p.Count
				}
				sets = append(sets, resourcev1.CounterSet{Name: counterSetName(i), Counters: map[string]resourcev1.Counter{
					"slices": {Value: *resource.NewQuantity(int64(max(1, slices)), resource.DecimalSI)},
					"memory": {Value: resource.MustParse(s.cfg.GPUMemory)},
				}})
			}
			specs = append(specs, resourcev1.ResourceSliceSpec{SharedCounters: sets})
			names = append(names, fmt.Sprintf("%s-counters-%d", base, first/8))
		}
	}
	devs := s.gpuDevices(sn, gpus)
	per := 128
	if sh.Partitionable {
		per = 64
	}
	parts := max(1, sh.Slices, (len(devs)+per-1)/per)
	for k := range parts {
		lo, hi := k*len(devs)/parts, (k+1)*len(devs)/parts
		specs = append(specs, resourcev1.ResourceSliceSpec{Devices: devs[lo:hi]})
		if k == 0 {
			names = append(names, base)
		} else {
			names = append(names, fmt.Sprintf("%s-%d", base, k))
		}
	}
	out := map[string]resourcev1.ResourceSliceSpec{}
	for i, sp := range specs {
		sp.Driver = s.cfg.Driver
		sp.NodeName = ptr.To(sn.name)
		sp.Pool = resourcev1.ResourcePool{Name: sn.name, ResourceSliceCount: int64(len(specs))}
		out[names[i]] = sp
	}
	return out
}

// sameSlice: the published slice has the desired devices, counter sets and slice count.
func sameSlice(have, want resourcev1.ResourceSliceSpec) bool {
	if have.Pool.Name != want.Pool.Name || have.Pool.ResourceSliceCount != want.Pool.ResourceSliceCount ||
		!sameDevices(have.Devices, want.Devices) || len(have.SharedCounters) != len(want.SharedCounters) {
		return false
	}
	for i := range have.SharedCounters {
		if have.SharedCounters[i].Name != want.SharedCounters[i].Name {
			return false
		}
	}
	return true
}

// syncNICSlices publishes the NIC driver's slice for the node once: a second
// driver beside the GPU driver, whatever the ownership labels say. (The
// slice informer watches the GPU driver's slices only.)
func (s *Sim) syncNICSlices(ctx context.Context, sn *simNode, node *v1.Node) error {
	sn.mu.Lock()
	done := sn.nicPublished
	sn.mu.Unlock()
	if sn.shape.NICs == 0 || done {
		return nil
	}
	var devs []resourcev1.Device
	for i := range sn.shape.NICs {
		devs = append(devs, resourcev1.Device{Name: fmt.Sprintf("nic-%d", i), Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
			"type": {StringValue: ptr.To("rdma")},
		}})
	}
	sl := &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: sn.name + "-" + NICDriver, OwnerReferences: []metav1.OwnerReference{nodeOwner(node)}},
		Spec: resourcev1.ResourceSliceSpec{Driver: NICDriver, NodeName: ptr.To(sn.name),
			Pool: resourcev1.ResourcePool{Name: sn.name, Generation: 1, ResourceSliceCount: 1}, Devices: devs},
	}
	_, err := s.client.ResourceV1().ResourceSlices().Create(ctx, sl, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create NIC slice: %w", err)
	}
	if err == nil {
		log.Printf("node %s: NIC driver %s published %d devices", sn.name, NICDriver, len(devs))
	}
	sn.mu.Lock()
	sn.nicPublished = true
	sn.mu.Unlock()
	return nil
}
