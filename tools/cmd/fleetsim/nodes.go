package main

// Node objects and what a kubelet keeps true about them: registered with the
// right labels, Ready with a fresh heartbeat, a Lease in kube-node-lease, room
// for pods, and no node.kubernetes.io/not-ready taint. The testenv control
// plane runs no node-lifecycle controller, and the TaintNodesByCondition
// admission plugin taints every new node not-ready; fleetsim lifts the taint
// as that controller would for a Ready node.
//
// Everything about one node is done by syncNode, driven by a work queue keyed
// by node name, so a node's status is never written by two goroutines at once.
// The queue is fed by the node informer (label changes arrive by watch, not
// polling), the slice informer, the heartbeat ticker and timers (AddAfter) for
// the delayed effects: capacity lag and slice removal.

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

const (
	nodeLeaseNamespace = "kube-node-lease"
	notReadyTaint      = "node.kubernetes.io/not-ready"
	simulatedLabel     = "fleetsim.drashift.io/simulated"
	nodeCPU            = "32"
	nodeMemory         = "256Gi"
	nodePods           = "110"
)

// simNode is the simulator's own memory of one node: the state of its
// simulated device plugin and DRA driver, which the API only shows indirectly.
type simNode struct {
	name, pool       string
	poolIndex, index int
	devices          int
	shape            *Shape
	internalIP       string

	mu          sync.Mutex
	initialized bool
	// device plugin (deviceplugin.go)
	pluginRunning    bool
	pluginRegistered bool      // ever registered: kubelet keeps the resource in status (at 0) after a stop
	capacityDropAt   time.Time // when capacity follows allocatable down to 0; zero: no drop pending
	// DRA driver (driver.go)
	driverRegistered bool
	sliceDeleteAt    time.Time // when an unregistered driver's slices go; zero: none pending
	nicPublished     bool      // the NIC driver's slice exists (shapes.go)
	// kubelet
	lastHeartbeat time.Time // the Lease's last renewal (and the last status computed)
	lastReport    time.Time // the node status's last write
	unregistered  bool      // its Node was deleted: a running kubelet does not register it again
	lease         *coordinationv1.Lease
	nextPodIP     int
}

func newSimNode(p PoolSpec, poolIndex, index int) *simNode {
	return &simNode{
		name:      fmt.Sprintf("%s-%d", p.Name, index),
		pool:      p.Name,
		poolIndex: poolIndex,
		index:     index,
		devices:   p.GPUs,
		shape:     &Shape{},
		// Addresses only need to be unique and valid: nothing connects to them.
		internalIP: fmt.Sprintf("172.%d.%d.%d", 16+poolIndex%16, poolIndex/16, index+1),
	}
}

// podIP hands out the next address of the node's (notional) pod range.
func (n *simNode) podIP() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.nextPodIP++
	return fmt.Sprintf("10.%d.%d.%d", (n.poolIndex+1)%256, n.index, 2+n.nextPodIP%252)
}

func (s *Sim) dpEnabled(n *v1.Node) bool {
	return n.Labels[s.cfg.DevicePluginLabel] == s.cfg.EnabledValue
}

func (s *Sim) draEnabled(n *v1.Node) bool {
	return n.Labels[s.cfg.DRALabel] == s.cfg.EnabledValue
}

// nodeLabels are the labels a kubelet registers its node with (--node-labels),
// with the feature-discovery labels (--feature-labels) as if NFD and GFD had
// already run.
func (s *Sim) nodeLabels(sn *simNode) map[string]string {
	l := featureLabels(s.cfg.FeatureLabels, s.cfg.GPUModel, s.cfg.GPUMemory, sn.devices)
	for k, v := range s.gfdLabels(sn) {
		l[k] = v
	}
	for k, v := range map[string]string{
		s.cfg.PoolLabel:          sn.pool,
		"kubernetes.io/hostname": sn.name,
		"kubernetes.io/os":       "linux",
		"kubernetes.io/arch":     "amd64",
		s.cfg.ModelLabel:         s.cfg.GPUModel,
		simulatedLabel:           "true",
	} {
		l[k] = v
	}
	switch s.cfg.InitialOwner {
	case "device-plugin":
		l[s.cfg.DevicePluginLabel] = s.cfg.EnabledValue
		l[s.cfg.DRALabel] = s.cfg.DisabledValue
	case "dra":
		l[s.cfg.DevicePluginLabel] = s.cfg.DisabledValue
		l[s.cfg.DRALabel] = s.cfg.EnabledValue
	}
	return l
}

func (s *Sim) createNode(ctx context.Context, sn *simNode) error {
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: sn.name, Labels: s.nodeLabels(sn)}}
	_, err := s.client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create node %s: %w", sn.name, err)
	}
	if err == nil {
		log.Printf("node %s registered (pool %s, %d GPUs)", sn.name, sn.pool, sn.devices)
	}
	return nil
}

// registerNodes creates the fleet's nodes. A node that already exists (a
// restarted simulator, a demo left running) is adopted with the labels it has:
// they may have been changed by the operator, and overwriting them would undo
// a migration.
func (s *Sim) registerNodes(ctx context.Context) error {
	created, adopted := 0, 0
	for _, name := range s.nodeOrder {
		sn := s.nodes[name]
		_, err := s.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		switch {
		case err == nil:
			adopted++
		case apierrors.IsNotFound(err):
			if err := s.createNode(ctx, sn); err != nil {
				return err
			}
			created++
		default:
			return fmt.Errorf("get node %s: %w", name, err)
		}
	}
	log.Printf("%d nodes created, %d adopted", created, adopted)
	return nil
}

func (s *Sim) nodeWorker(ctx context.Context) {
	for {
		name, shutdown := s.nodeQueue.Get()
		if shutdown {
			return
		}
		if err := s.syncNode(ctx, name); err != nil {
			if ctx.Err() == nil {
				s.metrics.apiErrors.Add(1)
				log.Printf("node %s: %v (retrying)", name, err)
			}
			s.nodeQueue.AddRateLimited(name)
		} else {
			s.nodeQueue.Forget(name)
		}
		s.nodeQueue.Done(name)
	}
}

// heartbeatLoop asks every node to renew its heartbeat, spread over the
// period as kubelets started at different times are: every 100 ms one slot's
// nodes, so a 1,000-node fleet never queues 1,000 syncs at once ahead of a
// node with news. syncNode decides whether one is due, so a node synced for
// another reason a moment ago does not heartbeat twice.
func (s *Sim) heartbeatLoop(ctx context.Context) {
	slots := heartbeatSlots(s.cfg.Heartbeat)
	t := time.NewTicker(s.cfg.Heartbeat / time.Duration(slots))
	defer t.Stop()
	for slot := 0; ; slot = (slot + 1) % slots {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			for _, name := range slotNodes(s.nodeOrder, slot, slots) {
				s.nodeQueue.Add(name)
			}
		}
	}
}

// slotNodes is the nodes whose heartbeat falls in the slot: every slots-th.
func slotNodes(order []string, slot, slots int) []string {
	var names []string
	for i := slot; i < len(order); i += slots {
		names = append(names, order[i])
	}
	return names
}

// heartbeatSlots is how many parts a heartbeat period is cut into: one per
// 100 ms, at least one.
func heartbeatSlots(period time.Duration) int {
	return max(1, int(period/(100*time.Millisecond)))
}

func (s *Sim) syncNode(ctx context.Context, name string) error {
	sn := s.nodes[name]
	if sn == nil {
		return nil
	}
	node, err := s.nodeLister.Get(name)
	if apierrors.IsNotFound(err) {
		// Someone deleted the Node. A running kubelet does not register it
		// again (1.37.2: registrationCompleted is never reset; kubernetes
		// issue 71398, the fix in pull 123535 was not merged): it keeps
		// running its pods, and the pod garbage collector deletes them 40 s
		// later. fleetsim registered the node again at once, with the
		// device plugin's label, beside the pods that still held its DRA
		// claims (tools/faults seed 6007); now it does as the kubelet does.
		sn.mu.Lock()
		if !sn.unregistered {
			log.Printf("node %s: deleted; not registered again (a running kubelet does not)", name)
		}
		sn.unregistered = true
		sn.mu.Unlock()
		return nil
	}
	if err != nil {
		return err
	}
	sn.mu.Lock()
	if sn.unregistered { // someone created the Node again (a person, a test): a new object
		sn.unregistered, sn.lease, sn.nicPublished = false, nil, false
	}
	sn.mu.Unlock()
	if hasTaint(node, notReadyTaint) {
		if err := s.removeNotReadyTaint(ctx, name); err != nil {
			return err
		}
	}

	now := time.Now()
	dpOn, draOn := s.dpEnabled(node), s.draEnabled(node)
	eff := s.faults.For(sn.pool, sn.name, s.cfg.PrepareDelay)

	sn.mu.Lock()
	if !sn.initialized {
		s.adoptNodeState(sn, node, now)
	}
	pluginChanged := s.observeDevicePlugin(sn, dpOn, now)
	driverChanged := s.observeDriver(sn, draOn, eff, now)
	capQ, allocQ, recheck := s.desiredExtended(sn, now)
	heartbeatDue := now.Sub(sn.lastHeartbeat) >= s.cfg.Heartbeat*9/10
	reportDue := now.Sub(sn.lastReport) >= s.cfg.StatusReport*9/10
	sn.mu.Unlock()

	if recheck > 0 {
		s.nodeQueue.AddAfter(name, recheck)
	}
	if driverChanged || pluginChanged {
		// Pods waiting for the driver (prepare) or stuck on it (unprepare)
		// look again now rather than at their next retry.
		s.enqueuePodsOnNode(name)
	}

	if patch, needed := s.nodeStatusPatch(node, sn, capQ, allocQ, heartbeatDue, reportDue, now); needed {
		if _, err := s.client.CoreV1().Nodes().PatchStatus(ctx, name, patch); err != nil {
			return fmt.Errorf("patch status: %w", err)
		}
		sn.mu.Lock()
		sn.lastReport = now
		sn.mu.Unlock()
	}
	if heartbeatDue {
		if err := s.renewLease(ctx, sn, node); err != nil {
			return fmt.Errorf("renew lease: %w", err)
		}
		sn.mu.Lock()
		sn.lastHeartbeat = now
		sn.mu.Unlock()
		s.metrics.nodeHeartbeats.Add(1)
	}
	if err := s.syncSlices(ctx, sn, node, eff, now); err != nil {
		return err
	}
	s.checkOwnership(node)
	s.markDirty()
	return nil
}

// adoptNodeState initializes the simulator's memory from what the node shows,
// so a restarted simulator continues rather than restarts the node's story.
// Called with sn.mu held.
func (s *Sim) adoptNodeState(sn *simNode, node *v1.Node, now time.Time) {
	sn.initialized = true
	for r := range s.unitsPerGPU(sn.shape) {
		if q, ok := node.Status.Capacity[r]; ok {
			sn.pluginRegistered = true
			if q.Value() > 0 && !s.dpEnabled(node) {
				// A plugin that stopped while we were away: its capacity
				// lingers for the lag from now.
				sn.capacityDropAt = now.Add(s.cfg.CapacityLag)
			}
		}
	}
	// Like a starting kubelet: slices of drivers that are not (yet)
	// registered are removed at once.
	sn.sliceDeleteAt = now
}

func hasTaint(n *v1.Node, key string) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}

// removeNotReadyTaint does what the node-lifecycle controller does for a Ready
// node. Get + Update under RetryOnConflict: other writers (drashift cordons,
// tests taint) must not lose their changes.
func (s *Sim) removeNotReadyTaint(ctx context.Context, name string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := s.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		var keep []v1.Taint
		for _, t := range n.Spec.Taints {
			if t.Key != notReadyTaint {
				keep = append(keep, t)
			}
		}
		if len(keep) == len(n.Spec.Taints) {
			return nil
		}
		n.Spec.Taints = keep
		_, err = s.client.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
		return err
	})
}

// nodeStatusPatch builds a strategic-merge patch of the node's status:
// resources (with the plugin's resources as the device plugin has them: capQ
// and allocQ count GPUs, each resource shows its units per GPU times that; nil
// means absent and deletes the key), the Ready condition and the other fields a
// kubelet reports. It says whether a write is due: the report interval
// passed (report), the extended resource changed at a status update
// (heartbeat), or a Ready condition or pod capacity differs from what the node
// shows; our own writes come back as informer updates, and must not cause
// writes again. As a real kubelet with its Lease (the default since 1.17): it
// computes the status every nodeStatusUpdateFrequency (10 s) but writes it
// only when it changed or nodeStatusReportFrequency (5 min) passed, and
// heartbeats through the Lease. fleetsim wrote every node's status every 10 s
// before: at 1,000 nodes 100 Node updates a second, 30 times what kubelets
// send, and every watcher of Nodes paid for them in the benchmarks.
func (s *Sim) nodeStatusPatch(node *v1.Node, sn *simNode, capQ, allocQ *int64, heartbeat, report bool, now time.Time) ([]byte, bool) {
	units := s.unitsPerGPU(sn.shape)
	needed := report
	differs := func(list v1.ResourceList, want *int64) bool {
		for r, per := range units {
			q, ok := list[r]
			if want == nil && ok || want != nil && (!ok || q.Value() != *want*per) {
				return true
			}
		}
		return false
	}
	// A changed extended resource alone waits for the next heartbeat, as on
	// a real kubelet, which writes it with its next node status update
	// (nodeStatusUpdateFrequency, 10 s): 5 and 9 s after its device plugin
	// stopped on tools/testenv's real node.
	extChanged := differs(node.Status.Capacity, capQ) || differs(node.Status.Allocatable, allocQ)
	if heartbeat && extChanged {
		needed = true
	}
	if q, ok := node.Status.Allocatable[v1.ResourcePods]; !ok || q.String() != nodePods {
		needed = true
	}
	ready := readyCondition(node)
	if ready == nil || ready.Status != v1.ConditionTrue {
		needed = true
	}
	if !needed {
		return nil, false
	}
	if extChanged {
		log.Printf("node %s: status reports the plugin's resources at capacity %s, allocatable %s GPUs", sn.name, quantity(capQ), quantity(allocQ))
	}
	hb := metav1.NewTime(now)
	transition := hb
	if ready != nil && ready.Status == v1.ConditionTrue {
		transition = ready.LastTransitionTime
	}
	cond := func(t v1.NodeConditionType, status v1.ConditionStatus, reason, msg string) map[string]any {
		lt := hb
		for _, c := range node.Status.Conditions {
			if c.Type == t && c.Status == status {
				lt = c.LastTransitionTime
			}
		}
		if t == v1.NodeReady {
			lt = transition
		}
		return map[string]any{"type": t, "status": status, "reason": reason, "message": msg,
			"lastHeartbeatTime": hb, "lastTransitionTime": lt}
	}
	resources := func(gpus *int64) map[string]any {
		r := map[string]any{"cpu": nodeCPU, "memory": nodeMemory, "pods": nodePods}
		for name, per := range units {
			r[string(name)] = nil
			if gpus != nil {
				r[string(name)] = fmt.Sprint(*gpus * per)
			}
		}
		return r
	}
	patch := map[string]any{"status": map[string]any{
		"capacity":    resources(capQ),
		"allocatable": resources(allocQ),
		"conditions": []any{
			cond(v1.NodeReady, v1.ConditionTrue, "KubeletReady", "kubelet is posting ready status (fleetsim)"),
			cond(v1.NodeMemoryPressure, v1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
			cond(v1.NodeDiskPressure, v1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
			cond(v1.NodePIDPressure, v1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
		},
		"addresses": []any{
			map[string]any{"type": "InternalIP", "address": sn.internalIP},
			map[string]any{"type": "Hostname", "address": sn.name},
		},
		"daemonEndpoints": map[string]any{"kubeletEndpoint": map[string]any{"Port": 10250}},
		"nodeInfo": map[string]any{
			"machineID": sn.name, "systemUUID": sn.name, "bootID": sn.name,
			"kernelVersion": "6.1.0-fleetsim", "osImage": "fleetsim", "containerRuntimeVersion": "fleetsim://1.0",
			"kubeletVersion": "v1.36.3-fleetsim", "kubeProxyVersion": "", "operatingSystem": "linux", "architecture": "amd64",
		},
	}}
	b, _ := json.Marshal(patch)
	return b, true
}

func quantity(q *int64) string {
	if q == nil {
		return "absent"
	}
	return fmt.Sprint(*q)
}

func readyCondition(n *v1.Node) *v1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == v1.NodeReady {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

// renewLease keeps the node Lease current, as the kubelet does every 10 s; the
// Lease is owned by the Node so it goes with it.
func (s *Sim) renewLease(ctx context.Context, sn *simNode, node *v1.Node) error {
	leases := s.client.CoordinationV1().Leases(nodeLeaseNamespace)
	sn.mu.Lock()
	lease := sn.lease
	sn.mu.Unlock()
	now := metav1.NewMicroTime(time.Now())
	var err error
	if lease == nil {
		lease, err = leases.Get(ctx, sn.name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			lease, err = leases.Create(ctx, &coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{Name: sn.name, OwnerReferences: []metav1.OwnerReference{nodeOwner(node)}},
				Spec: coordinationv1.LeaseSpec{
					HolderIdentity:       ptr.To(sn.name),
					LeaseDurationSeconds: ptr.To[int32](40),
					RenewTime:            &now,
				},
			}, metav1.CreateOptions{})
		}
	} else {
		lease = lease.DeepCopy()
		lease.Spec.RenewTime = &now
		lease, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
	}
	sn.mu.Lock()
	defer sn.mu.Unlock()
	if err != nil {
		sn.lease = nil // read it again next time (conflict, deleted)
		return err
	}
	sn.lease = lease
	return nil
}

func nodeOwner(node *v1.Node) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: types.UID(node.UID)}
}
