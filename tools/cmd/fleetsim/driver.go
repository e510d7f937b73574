package main

// The simulated DRA driver. A real driver's kubelet plugin runs (as a
// DaemonSet) on nodes whose DRA ownership label is enabled; it registers with
// the kubelet, publishes the node's devices as ResourceSlices and answers
// NodePrepareResources / NodeUnprepareResources for the pods of that node.
//
// Here "registered" means: the DRA label is enabled and no driver-crash fault
// is set. While registered, the node's slice is kept as it should be: one
// slice, pool name = node name, resourceSliceCount 1, gpu-0..gpu-(N-K-1) where
// K is the missing-devices fault, the pool generation bumped whenever the
// device list changes. When the driver unregisters (label off or crash), the
// kubelet deletes its slices after a grace period (~30 s; --slice-removal-delay)
// — but allocations made from them stay, and pods holding such claims cannot
// be unprepared until the driver is back (see kubelet.go).

import (
	"context"
	"fmt"
	"log"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// observeDriver registers or unregisters the node's driver after its label
// and faults. Called with sn.mu held; says whether the registration changed.
func (s *Sim) observeDriver(sn *simNode, draOn bool, eff Effective, now time.Time) bool {
	want := draOn && !eff.DriverCrash
	if want == sn.driverRegistered {
		return false
	}
	sn.driverRegistered = want
	if want {
		sn.sliceDeleteAt = time.Time{}
		log.Printf("node %s: DRA driver %s registered", sn.name, s.cfg.Driver)
	} else {
		sn.sliceDeleteAt = now.Add(s.cfg.SliceRemovalDelay)
		why := "label disabled"
		if eff.DriverCrash {
			why = "driver-crash fault"
		}
		log.Printf("node %s: DRA driver %s unregistered (%s); slices go in %v", sn.name, s.cfg.Driver, why, s.cfg.SliceRemovalDelay)
	}
	return true
}

// driverRegistered: can the kubelet of node call driver right now?
func (s *Sim) driverRegistered(node, driver string) bool {
	sn := s.nodes[node]
	if sn == nil || driver != s.cfg.Driver {
		return false // fleetsim runs one driver; any other is never registered
	}
	sn.mu.Lock()
	defer sn.mu.Unlock()
	return sn.driverRegistered
}

// sliceName is deterministic so a restarted simulator finds its slices.
func (s *Sim) sliceName(node string) string {
	return node + "-" + strings.ReplaceAll(s.cfg.Driver, "/", "-")
}

func (s *Sim) desiredDevices(sn *simNode, eff Effective) []resourcev1.Device {
	count := max(0, sn.devices-eff.MissingDevices)
	mem := resource.MustParse(s.cfg.GPUMemory)
	devs := make([]resourcev1.Device, 0, count)
	for i := range count {
		devs = append(devs, resourcev1.Device{
			Name: fmt.Sprintf("gpu-%d", i),
			Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
				"model": {StringValue: ptr.To(s.cfg.GPUModel)},
				"index": {IntValue: ptr.To(int64(i))},
				"uuid":  {StringValue: ptr.To(fmt.Sprintf("GPU-%s-%d", sn.name, i))},
			},
			Capacity: map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{
				"memory": {Value: mem},
			},
		})
	}
	return devs
}

func sameDevices(a, b []resourcev1.Device) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name {
			return false
		}
	}
	return true
}

// syncSlices makes the node's slices for the driver match the driver's state.
func (s *Sim) syncSlices(ctx context.Context, sn *simNode, node *v1.Node, eff Effective, now time.Time) error {
	objs, err := s.sliceIndex.ByIndex(nodeIndex, sn.name)
	if err != nil {
		return err
	}
	var slices []*resourcev1.ResourceSlice
	for _, o := range objs {
		if sl := o.(*resourcev1.ResourceSlice); sl.Spec.Driver == s.cfg.Driver {
			slices = append(slices, sl)
		}
	}
	sn.mu.Lock()
	registered, deleteAt := sn.driverRegistered, sn.sliceDeleteAt
	sn.mu.Unlock()
	api := s.client.ResourceV1().ResourceSlices()

	if !registered {
		if len(slices) == 0 {
			return nil
		}
		if wait := deleteAt.Sub(now); wait > 0 {
			s.nodeQueue.AddAfter(sn.name, wait)
			return nil
		}
		for _, sl := range slices {
			err := api.Delete(ctx, sl.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &sl.UID}})
			if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
				return fmt.Errorf("delete slice %s: %w", sl.Name, err)
			}
			s.metrics.sliceDeletes.Add(1)
			log.Printf("node %s: slice %s deleted", sn.name, sl.Name)
		}
		return nil
	}

	name := s.sliceName(sn.name)
	devices := s.desiredDevices(sn, eff)
	var mine *resourcev1.ResourceSlice
	var maxGen int64
	for _, sl := range slices {
		maxGen = max(maxGen, sl.Spec.Pool.Generation)
		if sl.Name == name {
			mine = sl
			continue
		}
		// The plugin owns all of its node's slices: anything else is stale.
		if err := api.Delete(ctx, sl.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete stale slice %s: %w", sl.Name, err)
		}
		s.metrics.sliceDeletes.Add(1)
	}
	spec := resourcev1.ResourceSliceSpec{
		Driver:   s.cfg.Driver,
		NodeName: ptr.To(sn.name),
		Pool:     resourcev1.ResourcePool{Name: sn.name, Generation: maxGen + 1, ResourceSliceCount: 1},
		Devices:  devices,
	}
	switch {
	case mine == nil:
		sl := &resourcev1.ResourceSlice{
			ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: []metav1.OwnerReference{nodeOwner(node)}},
			Spec:       spec,
		}
		if _, err := api.Create(ctx, sl, metav1.CreateOptions{}); err != nil {
			if apierrors.IsAlreadyExists(err) {
				return nil // the informer has not caught up; it will bring us back
			}
			return fmt.Errorf("create slice %s: %w", name, err)
		}
		log.Printf("node %s: slice %s published, %d devices, generation %d", sn.name, name, len(devices), spec.Pool.Generation)
	case !sameDevices(mine.Spec.Devices, devices) || mine.Spec.Pool.Name != sn.name || mine.Spec.Pool.ResourceSliceCount != 1:
		upd := mine.DeepCopy()
		upd.Spec = spec
		if _, err := api.Update(ctx, upd, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("update slice %s: %w", name, err) // a conflict retries from fresh cache
		}
		log.Printf("node %s: slice %s republished, %d devices, generation %d", sn.name, name, len(devices), spec.Pool.Generation)
	default:
		return nil
	}
	s.metrics.slicePublishes.Add(1)
	return nil
}
