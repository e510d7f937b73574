package main

// The simulated DRA driver. A real driver's kubelet plugin runs (as a
// DaemonSet) on nodes whose DRA ownership label is enabled; it registers with
// the kubelet, publishes the node's devices as ResourceSlices and answers
// NodePrepareResources / NodeUnprepareResources for the pods of that node.
//
// Here "registered" means: the DRA label is enabled and no driver-crash fault
// is set. While registered, the node's slices are kept as they should be:
// pool name = node name, the devices of the pool's shape (shapes.go: whole
// GPUs gpu-0..gpu-(N-K-1) where K is the missing-devices fault, MIG devices,
// counter sets) over resourceSliceCount slices, the pool generation bumped
// whenever any of them changes. When the driver unregisters (label off or crash), the
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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	objs, err := s.slices.ByIndex(nodeIndex, sn.name)
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
			return s.syncNICSlices(ctx, sn, node)
		}
		if wait := deleteAt.Sub(now); wait > 0 {
			s.nodeQueue.AddAfter(sn.name, wait)
			return nil
		}
		if eff.StaleSlices {
			// The kubelet's wipe of the driver's slices keeps failing: they
			// stay, and the scheduler keeps allocating devices nobody serves.
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

	if err := s.syncNICSlices(ctx, sn, node); err != nil {
		return err
	}
	want := s.desiredSlices(sn, max(0, sn.devices-eff.MissingDevices))
	var maxGen int64
	same := len(slices) == len(want)
	for _, sl := range slices {
		maxGen = max(maxGen, sl.Spec.Pool.Generation)
		w, ok := want[sl.Name]
		// One generation for all: a write the informer had not shown yet
		// can leave the pool split across two.
		same = same && ok && sameSlice(sl.Spec, w) && sl.Spec.Pool.Generation == slices[0].Spec.Pool.Generation
	}
	if same {
		return nil
	}
	// Something changed: every slice of the pool is written again under a
	// new generation, and slices the driver no longer wants go.
	have := map[string]*resourcev1.ResourceSlice{}
	for _, sl := range slices {
		if _, ok := want[sl.Name]; !ok {
			if err := api.Delete(ctx, sl.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("delete stale slice %s: %w", sl.Name, err)
			}
			s.metrics.sliceDeletes.Add(1)
			continue
		}
		have[sl.Name] = sl
	}
	devices := 0
	for name, spec := range want {
		spec.Pool.Generation = maxGen + 1
		devices += len(spec.Devices)
		if mine := have[name]; mine != nil {
			upd := mine.DeepCopy()
			upd.Spec = spec
			got, err := api.Update(ctx, upd, metav1.UpdateOptions{})
			if err != nil {
				return fmt.Errorf("update slice %s: %w", name, err) // a conflict retries from fresh cache
			}
			s.slices.Mutation(got)
			continue
		}
		sl := &resourcev1.ResourceSlice{
			ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: []metav1.OwnerReference{nodeOwner(node)}},
			Spec:       spec,
		}
		got, err := api.Create(ctx, sl, metav1.CreateOptions{})
		if err != nil {
			if apierrors.IsAlreadyExists(err) {
				// The informer has not caught up; it will bring us back,
				// and the slice gets this generation then.
				continue
			}
			return fmt.Errorf("create slice %s: %w", name, err)
		}
		s.slices.Mutation(got)
	}
	log.Printf("node %s: %d slices published, %d devices, generation %d", sn.name, len(want), devices, maxGen+1)
	s.metrics.slicePublishes.Add(1)
	return nil
}
