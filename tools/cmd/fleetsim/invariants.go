package main

// The two invariants a device-plugin → DRA migration must never break,
// checked all the time from the informer caches: on every relevant event
// (debounced) and every couple of seconds.
//
//  1. Double ownership: a node with both ownership labels enabled. Both the
//     device plugin and the DRA driver would then advertise the same devices,
//     each with its own books.
//  2. Double allocation: one device handed to two pods. Per node, the devices
//     in use through the device plugin (the extended-resource requests of the
//     node's non-terminal pods that the scheduler did not serve through DRA)
//     plus the distinct devices of the node allocated through DRA claims in
//     use (reservedFor not empty) must not exceed the node's N GPUs; and no
//     DRA device (driver/pool/device) may be allocated to two claims in use
//     (admin-access allocations excepted: they are meant to share).
//
// A violation is counted once when it appears, not on every check while it
// lasts; if it goes away and comes back it counts again. Every one is logged
// and kept (up to a limit) for the report.

import (
	"context"
	"fmt"
	"log"
	"sort"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
)

const (
	kindOwnership  = "double-ownership"
	kindAllocation = "double-allocation"
	maxRecords     = 1000
)

type Violation struct {
	Time   time.Time `json:"time"`
	Kind   string    `json:"kind"`
	Key    string    `json:"key"`
	Detail string    `json:"detail"`
}

type Invariants struct {
	mu      sync.Mutex
	active  map[string]Violation // by kind + "/" + key
	log     []Violation
	dropped int
}

func newInvariants() *Invariants { return &Invariants{active: map[string]Violation{}} }

func (inv *Invariants) activeCount() int {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	return len(inv.active)
}

func (inv *Invariants) records() []Violation {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	out := append([]Violation(nil), inv.log...)
	if inv.dropped > 0 {
		out = append(out, Violation{Time: time.Now(), Kind: "note", Detail: fmt.Sprintf("%d more violations not kept", inv.dropped)})
	}
	return out
}

// reconcile sets the current violations of one kind (key -> detail) and
// returns those that are new.
func (inv *Invariants) reconcile(kind string, current map[string]string) []Violation {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	var fresh []Violation
	now := time.Now()
	for key, detail := range current {
		id := kind + "/" + key
		if _, ok := inv.active[id]; ok {
			continue
		}
		v := Violation{Time: now, Kind: kind, Key: key, Detail: detail}
		inv.active[id] = v
		fresh = append(fresh, v)
		if len(inv.log) < maxRecords {
			inv.log = append(inv.log, v)
		} else {
			inv.dropped++
		}
	}
	for id, v := range inv.active {
		if _, still := current[v.Key]; v.Kind == kind && !still {
			delete(inv.active, id)
			log.Printf("resolved: %s %s (since %s)", kind, v.Key, v.Time.Format(time.RFC3339))
		}
	}
	sort.Slice(fresh, func(i, j int) bool { return fresh[i].Key < fresh[j].Key })
	return fresh
}

func (s *Sim) report(fresh []Violation) {
	for _, v := range fresh {
		switch v.Kind {
		case kindOwnership:
			s.metrics.doubleOwnership.Add(1)
		case kindAllocation:
			s.metrics.doubleAllocation.Add(1)
		}
		log.Printf("VIOLATION %s: %s", v.Kind, v.Detail)
	}
}

// checkOwnership checks one node, straight from its informer event, so even
// a short-lived double ownership is seen.
func (s *Sim) checkOwnership(n *v1.Node) {
	if s.nodes[n.Name] == nil {
		return
	}
	cur := map[string]string{}
	if s.dpEnabled(n) && s.draEnabled(n) {
		cur[n.Name] = s.ownershipDetail(n)
	}
	s.report(s.reconcileOne(kindOwnership, n.Name, cur[n.Name]))
}

func (inv *Invariants) reconcileOneLocked(kind, key, detail string) []Violation {
	id := kind + "/" + key
	if detail == "" {
		if v, ok := inv.active[id]; ok {
			delete(inv.active, id)
			log.Printf("resolved: %s %s (since %s)", kind, key, v.Time.Format(time.RFC3339))
		}
		return nil
	}
	if _, ok := inv.active[id]; ok {
		return nil
	}
	v := Violation{Time: time.Now(), Kind: kind, Key: key, Detail: detail}
	inv.active[id] = v
	if len(inv.log) < maxRecords {
		inv.log = append(inv.log, v)
	} else {
		inv.dropped++
	}
	return []Violation{v}
}

func (s *Sim) reconcileOne(kind, key, detail string) []Violation {
	s.inv.mu.Lock()
	defer s.inv.mu.Unlock()
	return s.inv.reconcileOneLocked(kind, key, detail)
}

func (s *Sim) ownershipDetail(n *v1.Node) string {
	return fmt.Sprintf("node %s has both %s=%s and %s=%s", n.Name,
		s.cfg.DevicePluginLabel, n.Labels[s.cfg.DevicePluginLabel], s.cfg.DRALabel, n.Labels[s.cfg.DRALabel])
}

func (s *Sim) markDirty() {
	select {
	case s.invDirty <- struct{}{}:
	default:
	}
}

func (s *Sim) invariantLoop(ctx context.Context) {
	t := time.NewTicker(2 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.invDirty:
			s.checkInvariants()
			// Debounce: a burst of events costs one check per 100 ms.
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
		case <-t.C:
			s.checkInvariants()
		}
	}
}

// checkInvariants runs both checks over the whole fleet.
func (s *Sim) checkInvariants() {
	if s.nodeLister == nil {
		return
	}
	own := map[string]string{}
	nodes, _ := s.nodeLister.List(labels.Everything())
	for _, n := range nodes {
		if s.nodes[n.Name] != nil && s.dpEnabled(n) && s.draEnabled(n) {
			own[n.Name] = s.ownershipDetail(n)
		}
	}
	s.report(s.inv.reconcile(kindOwnership, own))
	s.report(s.inv.reconcile(kindAllocation, s.allocationViolations()))
}

func (s *Sim) allocationViolations() map[string]string {
	out := map[string]string{}

	// DRA: which claims in use hold which device.
	users := map[string]map[types.UID]string{} // driver/pool/device -> claim uid -> ns/name
	draOnNode := map[string]map[string]bool{}  // node -> devices in use
	claims, _ := s.claimLister.List(labels.Everything())
	for _, c := range claims {
		a := c.Status.Allocation
		if a == nil || len(c.Status.ReservedFor) == 0 {
			continue
		}
		for _, r := range a.Devices.Results {
			if r.AdminAccess != nil && *r.AdminAccess {
				continue
			}
			key := r.Driver + "/" + r.Pool + "/" + r.Device
			if users[key] == nil {
				users[key] = map[types.UID]string{}
			}
			users[key][c.UID] = c.Namespace + "/" + c.Name
			// fleetsim's driver names each node's pool after the node; a
			// MIG device or placement uses its GPU.
			if r.Driver == s.cfg.Driver && s.nodes[r.Pool] != nil {
				if draOnNode[r.Pool] == nil {
					draOnNode[r.Pool] = map[string]bool{}
				}
				draOnNode[r.Pool][physicalDevice(r.Device)] = true
			}
		}
	}
	for key, u := range users {
		if len(u) > 1 {
			var names []string
			for _, n := range u {
				names = append(names, n)
			}
			sort.Strings(names)
			out["device/"+key] = fmt.Sprintf("device %s allocated to %d claims in use: %s", key, len(u), strings.Join(names, ", "))
		}
	}

	// Device plugin: extended-resource requests of the pods bound to the node.
	for _, name := range s.nodeOrder {
		sn := s.nodes[name]
		objs, _ := s.podIndexer.ByIndex(nodeIndex, name)
		var dp int64
		var dpPods []string
		for _, o := range objs {
			p := o.(*v1.Pod)
			if p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed || p.Status.ExtendedResourceClaimStatus != nil {
				continue
			}
			if n := s.legacyRequest(p); n > 0 {
				dp += n
				dpPods = append(dpPods, p.Namespace+"/"+p.Name)
			}
		}
		// Plugin units are shares of GPUs (replicas, MIG instances): the fewest GPUs they fill.
		dpGPUs := s.gpusForUnits(sn.shape, dp)
		dra := int64(len(draOnNode[name]))
		if dpGPUs+dra > int64(sn.devices) {
			sort.Strings(dpPods)
			out["node/"+name] = fmt.Sprintf("node %s: %d GPUs in use through the device plugin (%d units: %s) + %d through DRA > %d GPUs",
				name, dpGPUs, dp, strings.Join(dpPods, ", "), dra, sn.devices)
		}
	}
	return out
}
