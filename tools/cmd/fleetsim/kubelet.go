package main

// The simulated kubelet's pod lifecycle, for pods the real scheduler bound to
// a simulated node. Per pod, one state machine driven by a work queue (keyed
// namespace/name, so one pod is never handled by two goroutines) fed by the
// pod and claim informers, driver registration changes and timers:
//
//	Pending ── DRA claims ──> wait until every claim exists, is allocated and
//	   │                      reserved for the pod (the kubelet refuses otherwise)
//	   │                      ──> driver registered? no: ContainerCreating,
//	   │                          Warning FailedPrepareDynamicResources
//	   │                          "DRA driver X is not registered", retry
//	   │                      ──> NodePrepareResources (prepare-delay; may fail
//	   │                          by prepare-fail-rate: Warning, retry) ──> Running
//	   ├── extended resource (device plugin) ──> plugin running? no: Failed,
//	   │                      UnexpectedAdmissionError (as the device manager
//	   │                      does); yes: Running after --start-delay
//	   └── neither ──> Running after --start-delay
//	Running ── fleetsim/duration elapsed ──> containers exit 0 ──> unprepare
//	   the claims ──> Succeeded
//	deleted (deletionTimestamp) ──> containers stop at once ──> unprepare the
//	   claims ──> delete with gracePeriodSeconds=0 (the kubelet's final delete
//	   that actually removes the pod object)
//
// Unprepare needs the driver that prepared the claims. Without it the pod is
// stuck, as on a real node: a deleted pod stays Terminating, a finished pod
// does not reach Succeeded, and its devices stay allocated.
//
// All status writes go to the pods/status subresource.

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
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

const (
	durationKey     = "fleetsim/duration" // label or annotation
	durationEnv     = "FLEETSIM_DURATION" // or an env var of the first container
	eventRepeat     = 10 * time.Second    // at most one event per pod and reason per this
	driverRetry     = 5 * time.Second     // retry of a prepare/unprepare blocked on a missing driver
	claimWaitRetry  = 2 * time.Second
	maxPrepareRetry = 30 * time.Second
)

type claimRef struct {
	namespace, name string
	uid             types.UID
	drivers         []string
}

// podState is the kubelet's memory of one pod. Only the worker holding the
// pod's key touches it.
type podState struct {
	uid  types.UID
	node string
	path podPath

	prepareUntil time.Time // a prepare call is running until then
	prepareStart time.Time // ... and started then (dra_operations_duration_seconds)
	attempts     int       // failed prepare attempts, for the retry backoff
	startAt      time.Time // containers start then (pods without claims)
	prepared     []claimRef
	started      bool
	startedAt    time.Time
	podIP        string
	running      bool // counted in fleetsim_pods_running
	stuck        bool // counted in fleetsim_pods_stuck_terminating
	finalizeSent bool
	lastEvent    map[string]time.Time
}

func (s *Sim) podWorker(ctx context.Context) {
	for {
		key, shutdown := s.podQueue.Get()
		if shutdown {
			return
		}
		if err := s.syncPod(ctx, key); err != nil {
			if ctx.Err() == nil {
				s.metrics.apiErrors.Add(1)
				log.Printf("pod %s: %v (retrying)", key, err)
			}
			s.podQueue.AddRateLimited(key)
		} else {
			s.podQueue.Forget(key)
		}
		s.podQueue.Done(key)
	}
}

func (s *Sim) enqueuePodsOnNode(node string) {
	objs, _ := s.podIndexer.ByIndex(nodeIndex, node)
	for _, o := range objs {
		if key, err := cache.MetaNamespaceKeyFunc(o); err == nil {
			s.podQueue.Add(key)
		}
	}
}

func (s *Sim) syncPod(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	pod, err := s.podLister.Pods(ns).Get(name)
	if apierrors.IsNotFound(err) {
		s.forgetPod(key, nil)
		return nil
	}
	if err != nil {
		return err
	}
	if s.nodes[pod.Spec.NodeName] == nil {
		return nil // not bound, or bound to a node that is not ours
	}
	st := s.podStateFor(key, pod)
	now := time.Now()
	switch {
	case pod.DeletionTimestamp != nil:
		return s.terminatePod(ctx, key, pod, st)
	case pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed:
		return s.afterExit(key, pod, st)
	case !st.started:
		return s.startPod(ctx, key, pod, st, now)
	default:
		return s.runPod(ctx, key, pod, st, now)
	}
}

// podStateFor returns the pod's state, new for a new pod (a pod recreated
// under the same name is a new pod). A pod already Running when first seen
// was started by an earlier fleetsim: adopt it as running with its claims
// prepared, so that deleting it still goes through unprepare.
func (s *Sim) podStateFor(key string, pod *v1.Pod) *podState {
	s.podsMu.Lock()
	st := s.pods[key]
	s.podsMu.Unlock()
	if st != nil && st.uid != pod.UID {
		s.forgetPod(key, st)
		st = nil
	}
	if st != nil {
		return st
	}
	st = &podState{uid: pod.UID, node: pod.Spec.NodeName, path: s.podPathOf(pod), lastEvent: map[string]time.Time{}}
	if pod.Status.Phase == v1.PodRunning {
		st.started, st.podIP = true, pod.Status.PodIP
		st.startedAt = time.Now()
		if pod.Status.StartTime != nil {
			st.startedAt = pod.Status.StartTime.Time
		}
		if claims, why := s.resolveClaims(pod); why == "" {
			st.prepared = claimRefs(claims)
		}
		if pod.DeletionTimestamp == nil {
			st.running = true
			s.metrics.podsRunning[st.path].Add(1)
		}
	}
	s.podsMu.Lock()
	s.pods[key] = st
	s.podsMu.Unlock()
	return st
}

// forgetPod drops a pod that is gone from the API. If it still had prepared
// claims (someone force-deleted it) the kubelet unprepares them in the
// background, when the driver is there.
func (s *Sim) forgetPod(key string, st *podState) {
	s.podsMu.Lock()
	if st == nil {
		st = s.pods[key]
	}
	if s.pods[key] == st {
		delete(s.pods, key)
	}
	s.podsMu.Unlock()
	if st == nil {
		return
	}
	if st.running {
		s.metrics.podsRunning[st.path].Add(-1)
	}
	if st.stuck {
		s.metrics.podsStuck.Add(-1)
	}
	if len(st.prepared) > 0 && s.claimsUnpreparable(st) == "" {
		s.metrics.unprepares.Add(int64(len(st.prepared)))
		s.metrics.draOps.observe(st.node, "NodeUnprepareResources", false, 0) // unprepare is instant here
	}
}

// podPathOf classifies a pod by how it gets its GPU: DRA if it has claims
// (its own, or the special claim the scheduler made for an extended resource
// it served through DRA), device plugin if it requests the extended resource
// otherwise.
func (s *Sim) podPathOf(pod *v1.Pod) podPath {
	if len(pod.Spec.ResourceClaims) > 0 || pod.Status.ExtendedResourceClaimStatus != nil {
		return pathDRA
	}
	if s.legacyRequest(pod) > 0 {
		return pathDevicePlugin
	}
	return pathNone
}

// resolveClaims finds the pod's claims the way the kubelet does. A non-empty
// reason means "not yet": a claim from a template not created, a claim not
// allocated or not reserved for this pod.
func (s *Sim) resolveClaims(pod *v1.Pod) ([]*resourcev1.ResourceClaim, string) {
	var names []string
	for _, pc := range pod.Spec.ResourceClaims {
		switch {
		case pc.ResourceClaimName != nil:
			names = append(names, *pc.ResourceClaimName)
		case pc.ResourceClaimTemplateName != nil:
			found := false
			for _, cs := range pod.Status.ResourceClaimStatuses {
				if cs.Name == pc.Name {
					found = true
					if cs.ResourceClaimName != nil { // nil: the claim is not needed
						names = append(names, *cs.ResourceClaimName)
					}
				}
			}
			if !found {
				return nil, fmt.Sprintf("claim %q from template %s not created yet", pc.Name, *pc.ResourceClaimTemplateName)
			}
		}
	}
	if ecs := pod.Status.ExtendedResourceClaimStatus; ecs != nil && ecs.ResourceClaimName != "" {
		names = append(names, ecs.ResourceClaimName)
	}
	claims := make([]*resourcev1.ResourceClaim, 0, len(names))
	for _, n := range names {
		c, err := s.claimLister.ResourceClaims(pod.Namespace).Get(n)
		if err != nil {
			return nil, fmt.Sprintf("claim %s not found", n)
		}
		if c.Status.Allocation == nil {
			return nil, fmt.Sprintf("claim %s not allocated", n)
		}
		reserved := false
		for _, r := range c.Status.ReservedFor {
			if r.UID == pod.UID {
				reserved = true
			}
		}
		if !reserved {
			return nil, fmt.Sprintf("claim %s not reserved for the pod", n)
		}
		claims = append(claims, c)
	}
	return claims, ""
}

func claimRefs(claims []*resourcev1.ResourceClaim) []claimRef {
	refs := make([]claimRef, 0, len(claims))
	for _, c := range claims {
		r := claimRef{namespace: c.Namespace, name: c.Name, uid: c.UID}
		seen := map[string]bool{}
		for _, res := range c.Status.Allocation.Devices.Results {
			if !seen[res.Driver] {
				seen[res.Driver] = true
				r.drivers = append(r.drivers, res.Driver)
			}
		}
		refs = append(refs, r)
	}
	return refs
}

// claimsUnpreparable names a driver of the pod's prepared claims that is not
// registered on its node ("" if all are).
func (s *Sim) claimsUnpreparable(st *podState) string {
	for _, c := range st.prepared {
		for _, d := range c.drivers {
			if !s.driverRegistered(st.node, d) {
				return d
			}
		}
	}
	return ""
}

func (s *Sim) warn(pod *v1.Pod, st *podState, reason, msg string) {
	if t, ok := st.lastEvent[reason]; ok && time.Since(t) < eventRepeat {
		return
	}
	st.lastEvent[reason] = time.Now()
	s.recorder(pod.Spec.NodeName).Event(pod, v1.EventTypeWarning, reason, msg)
}

func backoff(attempts int) time.Duration {
	d := time.Second << min(attempts, 5)
	return min(d, maxPrepareRetry)
}

func (s *Sim) startPod(ctx context.Context, key string, pod *v1.Pod, st *podState, now time.Time) error {
	sn := s.nodes[pod.Spec.NodeName]
	st.path = s.podPathOf(pod)
	switch st.path {
	case pathDRA:
		claims, why := s.resolveClaims(pod)
		if why != "" {
			// The claim informer brings us back when the claim changes;
			// the retry covers a missed event.
			s.podQueue.AddAfter(key, claimWaitRetry)
			return s.setContainerCreating(ctx, pod, st)
		}
		for _, ref := range claimRefs(claims) {
			for _, d := range ref.drivers {
				if s.driverRegistered(sn.name, d) {
					continue
				}
				st.prepareUntil = time.Time{}
				s.metrics.driverMissing.Add(1)
				s.warn(pod, st, "FailedPrepareDynamicResources",
					fmt.Sprintf("Failed to prepare dynamic resources: prepare dynamic resources: DRA driver %s is not registered", d))
				st.attempts++
				s.podQueue.AddAfter(key, min(backoff(st.attempts), driverRetry))
				return s.setContainerCreating(ctx, pod, st)
			}
		}
		eff := s.faults.For(sn.pool, sn.name, s.cfg.PrepareDelay)
		if st.prepareUntil.IsZero() {
			st.prepareStart = now
			st.prepareUntil = now.Add(eff.PrepareDelay)
			s.podQueue.AddAfter(key, eff.PrepareDelay)
			return s.setContainerCreating(ctx, pod, st)
		}
		if wait := st.prepareUntil.Sub(now); wait > 0 {
			s.podQueue.AddAfter(key, wait)
			return nil
		}
		st.prepareUntil = time.Time{}
		s.metrics.prepares.Add(1)
		took := now.Sub(st.prepareStart).Seconds()
		if eff.PrepareTimeout {
			// The kubelet's gRPC call ran out of time: the DRA manager wraps
			// the status error as "NodePrepareResources: %w".
			s.metrics.draOps.observe(sn.name, "NodePrepareResources", true, took)
			s.metrics.preparesFailed.Add(1)
			st.attempts++
			s.warn(pod, st, "FailedPrepareDynamicResources",
				"Failed to prepare dynamic resources: prepare dynamic resources: NodePrepareResources: rpc error: code = DeadlineExceeded desc = context deadline exceeded")
			s.podQueue.AddAfter(key, backoff(st.attempts))
			return nil
		}
		if eff.PrepareFailRate > 0 && s.randFloat() < eff.PrepareFailRate {
			s.metrics.draOps.observe(sn.name, "NodePrepareResources", true, took)
			s.metrics.preparesFailed.Add(1)
			st.attempts++
			c := claims[0]
			s.warn(pod, st, "FailedPrepareDynamicResources", fmt.Sprintf(
				"Failed to prepare dynamic resources: prepare dynamic resources: NodePrepareResources failed for ResourceClaim %s: simulated driver error (prepare-fail-rate %g)",
				c.Name, eff.PrepareFailRate))
			s.podQueue.AddAfter(key, backoff(st.attempts))
			return nil
		}
		s.metrics.draOps.observe(sn.name, "NodePrepareResources", false, took)
		st.prepared = claimRefs(claims)
		st.attempts = 0
	case pathDevicePlugin:
		var msg string
		if !sn.pluginActive() {
			// The device manager has no healthy device for the resource.
			msg = fmt.Sprintf("Allocate failed due to no healthy devices present; cannot allocate unhealthy devices %s, which is unexpected", s.cfg.ExtendedResource)
		} else {
			// The plugin's Allocate refuses the request.
			msg = s.mpsRequestTooLarge(sn.shape, pod)
		}
		if msg != "" {
			// Either way the kubelet rejects the pod at admission.
			s.metrics.admissionFailed.Add(1)
			s.warn(pod, st, "UnexpectedAdmissionError", msg)
			log.Printf("pod %s on %s: rejected at admission: %s", key, sn.name, msg)
			return s.updatePodStatus(ctx, pod, func(p *v1.Pod) bool {
				if p.Status.Phase == v1.PodFailed {
					return false
				}
				p.Status.Phase = v1.PodFailed
				p.Status.Reason = "UnexpectedAdmissionError"
				p.Status.Message = "Pod was rejected: " + msg
				return true
			})
		}
		fallthrough
	default:
		if st.startAt.IsZero() {
			st.startAt = now.Add(s.cfg.StartDelay)
			s.podQueue.AddAfter(key, s.cfg.StartDelay)
			return s.setContainerCreating(ctx, pod, st)
		}
		if wait := st.startAt.Sub(now); wait > 0 {
			s.podQueue.AddAfter(key, wait)
			return nil
		}
	}

	// Containers start.
	if st.podIP == "" {
		st.podIP = sn.podIP()
	}
	startedAt := now
	if err := s.setRunning(ctx, pod, st, startedAt); err != nil {
		return err
	}
	st.started, st.startedAt, st.running = true, startedAt, true
	s.metrics.podsStarted[st.path].Add(1)
	s.metrics.podsRunning[st.path].Add(1)
	if d := podDuration(pod); d > 0 {
		s.podQueue.AddAfter(key, d)
	}
	return nil
}

func (s *Sim) runPod(ctx context.Context, key string, pod *v1.Pod, st *podState, now time.Time) error {
	if pod.Status.Phase != v1.PodRunning {
		// Our Running write has not shown up, or someone overwrote it.
		if err := s.setRunning(ctx, pod, st, st.startedAt); err != nil {
			return err
		}
	}
	d := podDuration(pod)
	if d <= 0 {
		return nil
	}
	if wait := st.startedAt.Add(d).Sub(now); wait > 0 {
		s.podQueue.AddAfter(key, wait)
		return nil
	}
	// The containers exit 0. As in the kubelet, claims are unprepared after
	// the containers stopped and before the terminal phase is reported; with
	// the driver gone the pod stays Running (containers exited) and its
	// devices stay allocated until the driver is back.
	s.stopContainers(st)
	if !s.unprepare(key, st) {
		return nil
	}
	if err := s.setSucceeded(ctx, pod, st, now); err != nil {
		return err
	}
	s.metrics.podsCompleted.Add(1)
	return nil
}

// stopContainers: the simulated containers stop (at once: there is no
// process to wait for).
func (s *Sim) stopContainers(st *podState) {
	if st.running {
		st.running = false
		s.metrics.podsRunning[st.path].Add(-1)
	}
}

// unprepare calls NodeUnprepareResources for the pod's prepared claims. It
// reports false while a driver of those claims is not registered: the pod is
// stuck, and is looked at again when a driver registers (syncNode enqueues
// the node's pods) or after driverRetry.
func (s *Sim) unprepare(key string, st *podState) bool {
	if len(st.prepared) > 0 {
		if d := s.claimsUnpreparable(st); d != "" {
			if !st.stuck {
				st.stuck = true
				s.metrics.podsStuck.Add(1)
				log.Printf("pod %s on %s: cannot unprepare its claims, DRA driver %s is not registered; stuck until it is", key, st.node, d)
			}
			s.podQueue.AddAfter(key, driverRetry)
			return false
		}
		s.metrics.unprepares.Add(int64(len(st.prepared)))
		st.prepared = nil
	}
	if st.stuck {
		st.stuck = false
		s.metrics.podsStuck.Add(-1)
		log.Printf("pod %s on %s: driver back, claims unprepared", key, st.node)
	}
	return true
}

// afterExit: a pod that reached a terminal phase without us (rejected at
// admission, or adopted from an earlier fleetsim): unprepare what is left.
func (s *Sim) afterExit(key string, pod *v1.Pod, st *podState) error {
	s.stopContainers(st)
	s.unprepare(key, st)
	return nil
}

// terminatePod plays the kubelet's handling of a deleted pod: stop the
// containers, unprepare the claims (the pod stays Terminating while it
// cannot), then the final delete with grace period 0.
func (s *Sim) terminatePod(ctx context.Context, key string, pod *v1.Pod, st *podState) error {
	s.stopContainers(st)
	if !s.unprepare(key, st) {
		return nil
	}
	if st.finalizeSent && pod.DeletionGracePeriodSeconds != nil && *pod.DeletionGracePeriodSeconds == 0 {
		return nil // deleted; finalizers of others keep the object a little longer
	}
	err := s.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To[int64](0),
		Preconditions:      &metav1.Preconditions{UID: &pod.UID},
	})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("finalize deletion: %w", err)
	}
	if !st.finalizeSent {
		st.finalizeSent = true
		s.metrics.podsFinalized.Add(1)
	}
	return nil
}

// podDuration: how long the pod's containers run before exiting 0 (0: forever).
func podDuration(pod *v1.Pod) time.Duration {
	v := pod.Annotations[durationKey]
	if v == "" {
		v = pod.Labels[durationKey]
	}
	if v == "" && len(pod.Spec.Containers) > 0 {
		for _, e := range pod.Spec.Containers[0].Env {
			if e.Name == durationEnv {
				v = e.Value
			}
		}
	}
	if v == "" {
		return 0
	}
	d, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil || d < 0 {
		return 0
	}
	return d
}

// updatePodStatus applies mutate to the pod and writes pods/status. The first
// attempt uses the cached pod; on a conflict (the scheduler or the claim
// controller wrote status meanwhile) the pod is read fresh and mutate runs
// again. mutate says whether anything changed, so no-op writes are skipped.
func (s *Sim) updatePodStatus(ctx context.Context, pod *v1.Pod, mutate func(*v1.Pod) bool) error {
	cur := pod.DeepCopy()
	first := true
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		if !first {
			fresh, err := s.client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if fresh.UID != pod.UID {
				return apierrors.NewNotFound(v1.Resource("pods"), pod.Name)
			}
			cur = fresh
		}
		first = false
		if !mutate(cur) {
			return nil
		}
		_, err := s.client.CoreV1().Pods(cur.Namespace).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if apierrors.IsNotFound(err) {
		return nil // gone meanwhile; the informer tells us
	}
	return err
}

func setPodCondition(p *v1.Pod, t v1.PodConditionType, status v1.ConditionStatus, reason string, now metav1.Time) {
	for i := range p.Status.Conditions {
		c := &p.Status.Conditions[i]
		if c.Type == t {
			if c.Status != status {
				c.LastTransitionTime = now
			}
			c.Status, c.Reason = status, reason
			return
		}
	}
	p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{Type: t, Status: status, Reason: reason, LastTransitionTime: now})
}

func (s *Sim) hostIPs(p *v1.Pod, st *podState) {
	sn := s.nodes[p.Spec.NodeName]
	p.Status.HostIP = sn.internalIP
	p.Status.HostIPs = []v1.HostIP{{IP: sn.internalIP}}
	ip := st.podIP
	if p.Spec.HostNetwork {
		ip = sn.internalIP
	}
	if ip != "" {
		p.Status.PodIP = ip
		p.Status.PodIPs = []v1.PodIP{{IP: ip}}
	}
}

// containerStatuses gives every container (and init container) the same
// state, built by state; init containers have completed once the pod runs.
func containerStatuses(p *v1.Pod, state func(c *v1.Container) v1.ContainerState, ready, initDone bool) {
	mk := func(cs []v1.Container, st func(c *v1.Container) v1.ContainerState, ready bool) []v1.ContainerStatus {
		out := make([]v1.ContainerStatus, 0, len(cs))
		for i := range cs {
			c := &cs[i]
			s := v1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: "fleetsim://" + c.Image, State: st(c), Ready: ready}
			if s.State.Running != nil || s.State.Terminated != nil {
				s.ContainerID = fmt.Sprintf("fleetsim://%s-%s", p.UID, c.Name)
				s.Started = ptr.To(s.State.Running != nil)
			}
			out = append(out, s)
		}
		return out
	}
	p.Status.ContainerStatuses = mk(p.Spec.Containers, state, ready)
	if len(p.Spec.InitContainers) > 0 {
		initState := func(c *v1.Container) v1.ContainerState {
			if initDone {
				return v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}
			}
			return v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "PodInitializing"}}
		}
		p.Status.InitContainerStatuses = mk(p.Spec.InitContainers, initState, initDone)
	}
}

func (s *Sim) setContainerCreating(ctx context.Context, pod *v1.Pod, st *podState) error {
	return s.updatePodStatus(ctx, pod, func(p *v1.Pod) bool {
		if p.Status.Phase == v1.PodPending && p.Status.HostIP != "" && len(p.Status.ContainerStatuses) == len(p.Spec.Containers) {
			return false
		}
		now := metav1.Now()
		p.Status.Phase = v1.PodPending
		if p.Status.StartTime == nil {
			p.Status.StartTime = &now
		}
		s.hostIPs(p, st)
		setPodCondition(p, v1.PodReadyToStartContainers, v1.ConditionFalse, "", now)
		setPodCondition(p, v1.PodInitialized, v1.ConditionTrue, "", now)
		setPodCondition(p, v1.ContainersReady, v1.ConditionFalse, "ContainersNotReady", now)
		setPodCondition(p, v1.PodReady, v1.ConditionFalse, "ContainersNotReady", now)
		containerStatuses(p, func(*v1.Container) v1.ContainerState {
			return v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ContainerCreating"}}
		}, false, false)
		return true
	})
}

func (s *Sim) setRunning(ctx context.Context, pod *v1.Pod, st *podState, startedAt time.Time) error {
	return s.updatePodStatus(ctx, pod, func(p *v1.Pod) bool {
		if p.Status.Phase == v1.PodRunning {
			return false
		}
		now := metav1.Now()
		started := metav1.NewTime(startedAt)
		p.Status.Phase = v1.PodRunning
		p.Status.Reason, p.Status.Message = "", ""
		if p.Status.StartTime == nil {
			p.Status.StartTime = &started
		}
		s.hostIPs(p, st)
		for _, t := range []v1.PodConditionType{v1.PodReadyToStartContainers, v1.PodInitialized, v1.ContainersReady, v1.PodReady} {
			setPodCondition(p, t, v1.ConditionTrue, "", now)
		}
		containerStatuses(p, func(*v1.Container) v1.ContainerState {
			return v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: started}}
		}, true, true)
		return true
	})
}

func (s *Sim) setSucceeded(ctx context.Context, pod *v1.Pod, st *podState, finished time.Time) error {
	return s.updatePodStatus(ctx, pod, func(p *v1.Pod) bool {
		if p.Status.Phase == v1.PodSucceeded {
			return false
		}
		now := metav1.NewTime(finished)
		started := metav1.NewTime(st.startedAt)
		p.Status.Phase = v1.PodSucceeded
		s.hostIPs(p, st)
		setPodCondition(p, v1.PodReadyToStartContainers, v1.ConditionFalse, "", now)
		setPodCondition(p, v1.ContainersReady, v1.ConditionFalse, "PodCompleted", now)
		setPodCondition(p, v1.PodReady, v1.ConditionFalse, "PodCompleted", now)
		containerStatuses(p, func(*v1.Container) v1.ContainerState {
			return v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
				ExitCode: 0, Reason: "Completed", StartedAt: started, FinishedAt: now}}
		}, false, true)
		return true
	})
}
