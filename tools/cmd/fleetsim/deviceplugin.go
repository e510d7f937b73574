package main

// The simulated device plugin. In a real cluster a DaemonSet runs the plugin
// only on nodes whose device-plugin ownership label is enabled; the plugin
// registers with the kubelet, and the kubelet advertises the node's devices
// as status.capacity and status.allocatable of the extended resource.
//
// What the kubelet does when the plugin stops (pkg/kubelet/cm/devicemanager,
// GetCapacity, and nodestatus.MachineInfo) is what drashift has to cope with:
//   - its devices turn unhealthy at once: allocatable drops to 0, capacity
//     stays (unhealthy devices still count in capacity), reported with the
//     kubelet's next node status update (see nodeStatusPatch);
//   - after the endpoint's grace period (~5 minutes) the resource is deleted
//     from the device manager, and the node status keeps it at capacity 0
//     ("to indicate that the resource is managed by device plugin and had been
//     registered before").
// So a handover must look at allocatable, never at capacity; --capacity-lag
// plays the grace period. A resource never registered stays absent. All of
// this was seen on tools/testenv's real node (test/e2e/real_migration.sh):
// capacity 4 with allocatable 0 for 5 minutes, then capacity 0, and the
// kubelet's checkpoint forgot the devices.

import (
	"log"
	"time"

	v1 "k8s.io/api/core/v1"
)

// observeDevicePlugin starts or stops the node's plugin after its label.
// Called with sn.mu held; says whether the plugin changed state.
func (s *Sim) observeDevicePlugin(sn *simNode, dpOn bool, now time.Time) bool {
	switch {
	case dpOn && !sn.pluginRunning:
		sn.pluginRunning = true
		sn.pluginRegistered = true
		sn.capacityDropAt = time.Time{}
		log.Printf("node %s: device plugin started, %d x %s", sn.name, sn.devices, s.cfg.ExtendedResource)
		return true
	case !dpOn && sn.pluginRunning:
		sn.pluginRunning = false
		sn.capacityDropAt = now.Add(s.cfg.CapacityLag)
		log.Printf("node %s: device plugin stopped; allocatable 0 now, capacity 0 in %v", sn.name, s.cfg.CapacityLag)
		return true
	}
	return false
}

// desiredExtended is what the kubelet reports for the extended resource:
// capacity and allocatable (nil: absent), and how long until that changes by
// itself (0: it does not).
func (s *Sim) desiredExtended(sn *simNode, now time.Time) (capQ, allocQ *int64, recheck time.Duration) {
	n := int64(sn.devices)
	zero := int64(0)
	switch {
	case sn.pluginRunning:
		return &n, &n, 0
	case !sn.pluginRegistered:
		return nil, nil, 0
	case !sn.capacityDropAt.IsZero() && now.Before(sn.capacityDropAt):
		return &n, &zero, sn.capacityDropAt.Sub(now)
	}
	sn.capacityDropAt = time.Time{}
	return &zero, &zero, 0
}

// pluginActive: the node's device plugin is registered and has healthy
// devices, so the kubelet's device manager can admit a pod that requests the
// extended resource.
func (n *simNode) pluginActive() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.pluginRunning
}

// extendedRequest is the number of extended-resource devices a pod asks for:
// the larger of the sum over its containers and the largest init container,
// as the scheduler computes it. Requests equal limits for extended resources;
// a pod may set only limits (the API defaults requests from them).
func extendedRequest(pod *v1.Pod, name v1.ResourceName) int64 {
	var sum, maxInit int64
	for i := range pod.Spec.Containers {
		sum += containerRequest(&pod.Spec.Containers[i], name)
	}
	for i := range pod.Spec.InitContainers {
		maxInit = max(maxInit, containerRequest(&pod.Spec.InitContainers[i], name))
	}
	return max(sum, maxInit)
}

// containerRequest is what one container asks of the extended resource.
func containerRequest(c *v1.Container, name v1.ResourceName) int64 {
	if q, ok := c.Resources.Requests[name]; ok {
		return q.Value()
	}
	if q, ok := c.Resources.Limits[name]; ok {
		return q.Value()
	}
	return 0
}
