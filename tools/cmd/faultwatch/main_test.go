package main

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

func newObserver() *observer {
	return &observer{log: json.NewEncoder(&bytes.Buffer{}), pluginKey: "p", draKey: "d", enabled: "true", manager: "drashift",
		seenEvicted: map[string]bool{}, uses: map[string]*podUse{}, extended: []v1.ResourceName{"example.com/gpu"}}
}

func node(plugin, dra, direction, step string, cordoned, ours bool) *v1.Node {
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{"p": plugin, "d": dra},
		Annotations: map[string]string{}}, Spec: v1.NodeSpec{Unschedulable: cordoned}}
	if step != "" {
		n.Annotations[annStep], n.Annotations[annDirection] = step, direction
	}
	if ours {
		n.Annotations[annCordoned] = "true"
	}
	return n
}

// byPerson marks n as uncordoned by tools/faults' person on call.
func byPerson(n *v1.Node) *v1.Node {
	n.Annotations[annUncordonedBy] = "person"
	return n
}

// Each check reports what it must, and the ordinary path of a handover reports nothing.
func TestNodeChecks(t *testing.T) {
	for _, c := range []struct {
		name     string
		old, cur *v1.Node
		want     int
	}{
		{"two owners", node("false", "false", "", "", false, false), node("true", "true", "", "", false, false), 1},
		{"next step", node("true", "false", "ToDRA", "draining", true, true), node("false", "false", "ToDRA", "plugin-off", true, true), 0},
		{"skipped step", node("true", "false", "ToDRA", "draining", true, true), node("false", "true", "ToDRA", "driver-on", true, true), 1},
		{"rollback mid-way", node("false", "true", "ToDRA", "driver-on", true, true), node("false", "true", "ToLegacy", "draining-dra", true, true), 0},
		{"own cordon lifted", node("false", "true", "ToDRA", "verified", true, true), node("false", "true", "ToDRA", "dra", false, false), 0},
		{"foreign cordon lifted", node("false", "true", "ToDRA", "verified", true, false), node("false", "true", "ToDRA", "dra", false, false), 1},
		{"foreign cordon lifted by the trial's person", node("false", "true", "ToDRA", "dra", true, false), byPerson(node("false", "true", "ToDRA", "dra", false, false)), 0},
	} {
		o := newObserver()
		o.node(c.old, c.cur)
		if o.violations != c.want {
			t.Errorf("%s: %d violations, want %d", c.name, o.violations, c.want)
		}
	}
}

// Who enabled the second label decides: drashift (or a writer not named) is a violation, once; a
// second writer (trial 3007: kubectl label turned the plugin back on a node drashift had just taken
// to DRA) is recorded only.
func TestTwoOwnersByWriter(t *testing.T) {
	wrote := func(n *v1.Node, manager string, keys ...string) *v1.Node {
		f := `{"f:metadata":{"f:labels":{`
		for i, k := range keys {
			if i > 0 {
				f += ","
			}
			f += `"f:` + k + `":{}`
		}
		n.ManagedFields = append(n.ManagedFields, metav1.ManagedFieldsEntry{Manager: manager, Operation: "Update",
			FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(f + "}}}")}})
		return n
	}
	onDRA := wrote(node("false", "true", "ToDRA", "dra", false, false), "drashift", "p", "d")
	for _, c := range []struct {
		name string
		cur  *v1.Node
		want int
	}{
		{"drashift enabled both", wrote(node("true", "true", "ToDRA", "dra", false, false), "drashift", "p", "d"), 1},
		{"writer not named", node("true", "true", "ToDRA", "dra", false, false), 1},
		{"another writer turned the plugin back on", wrote(wrote(node("true", "true", "ToDRA", "dra", false, false),
			"drashift", "d"), "kubectl-label", "p"), 0},
	} {
		o := newObserver()
		o.node(onDRA, c.cur)
		o.node(c.cur, c.cur) // the same state seen again is not judged again
		if o.violations != c.want {
			t.Errorf("%s: %d violations, want %d", c.name, o.violations, c.want)
		}
	}
}

// podStep is one pod change the pod watch delivers.
type podStep struct {
	pod     *v1.Pod
	deleted bool
	gap     bool // the pod watch relisted before this
}

// deliver hands the observer what the pod watch delivers.
func deliver(o *observer, steps []podStep) {
	for _, s := range steps {
		if s.gap {
			o.podGap.opened()
		}
		o.use(s.pod, s.deleted, false)
	}
}

// judgedOnPass: judge finds nothing before the pod watch passes the change (at 20, or at 30 for a
// relisted claim), then, once it has passed, leaves nothing pending and reports want violations.
func judgedOnPass(t *testing.T, name string, o *observer, podsRV *uint64, judge func(bool), pending func() int, want int) {
	t.Helper()
	judge(false)
	if o.violations != 0 {
		t.Errorf("%s: judged before the pod watch passed the change", name)
	}
	*podsRV = 50
	judge(false)
	if o.violations != want || pending() != 0 {
		t.Errorf("%s: %d violations (%d pending), want %d", name, o.violations, pending(), want)
	}
}

// A claim deletion is judged by what the pod watch showed of each pod it was reserved for, once the
// pod watch has passed the deletion: never by the order in which the two watches deliver.
func TestClaimDeletedUnderRunningPod(t *testing.T) {
	pod := func(rv string, phase v1.PodPhase, node string) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job", UID: "u", ResourceVersion: rv},
			Spec:   v1.PodSpec{NodeName: node, ResourceClaims: []v1.PodResourceClaim{{Name: "gpu"}}},
			Status: v1.PodStatus{Phase: phase}}
	}
	// A pod the scheduler bound with the extended-resource claim it made, named claim.
	extended := func(rv string, phase v1.PodPhase, node, claim string) *v1.Pod {
		p := pod(rv, phase, node)
		p.Spec.ResourceClaims = nil
		p.Status.ExtendedResourceClaimStatus = &v1.PodExtendedResourceClaimStatus{ResourceClaimName: claim}
		return p
	}
	// A pod whose claim from a template kube-controller-manager named claim.
	templated := func(rv string, phase v1.PodPhase, node, claim string) *v1.Pod {
		p := pod(rv, phase, node)
		p.Status.ResourceClaimStatuses = []v1.PodResourceClaimStatus{{Name: "gpu", ResourceClaimName: &claim}}
		return p
	}
	for _, c := range []struct {
		name     string
		relisted bool // a relist found the claim gone; the claim watch is at 30 by then
		before   []podStep
		after    []podStep // delivered by the pod watch after the claim's deletion
		want     int
	}{
		// The scheduler reserved the claim, then could not bind the pod (trial 3003: the API server
		// was restarting) and deleted the extended-resource claim it had made: the pod runs nowhere.
		{"never bound", false, []podStep{{pod: pod("10", v1.PodPending, "")}}, nil, 0},
		{"running", false, []podStep{{pod: pod("10", v1.PodRunning, "n")}}, nil, 1},
		{"running, ends later", false, []podStep{{pod: pod("10", v1.PodRunning, "n")}}, []podStep{{pod: pod("25", v1.PodSucceeded, "n")}}, 1},
		{"finished before", false, []podStep{{pod: pod("10", v1.PodRunning, "n")}, {pod: pod("15", v1.PodSucceeded, "n")}}, nil, 0},
		// Trial 9014: the claim watch relisted first and showed the deletion while the pod watch
		// still showed the pod running; the pod had succeeded at 15.
		{"finished before, delivered after", false, []podStep{{pod: pod("10", v1.PodRunning, "n")}}, []podStep{{pod: pod("15", v1.PodSucceeded, "n")}}, 0},
		{"deleted before, delivered after", false, []podStep{{pod: pod("10", v1.PodRunning, "n")}}, []podStep{{pod: pod("16", v1.PodRunning, "n"), deleted: true}}, 0},
		{"end hidden by a pod watch gap", false, []podStep{{pod: pod("10", v1.PodRunning, "n")}}, []podStep{{pod: pod("40", v1.PodSucceeded, "n"), gap: true}}, 0},
		{"bound after", false, nil, []podStep{{pod: pod("25", v1.PodRunning, "n")}}, 0},
		{"relisted, running", true, []podStep{{pod: pod("10", v1.PodRunning, "n")}}, nil, 1},
		{"relisted, finished before its last state", true, []podStep{{pod: pod("10", v1.PodRunning, "n")}}, []podStep{{pod: pod("11", v1.PodSucceeded, "n")}}, 0},
		{"relisted, finished within the span", true, []podStep{{pod: pod("10", v1.PodRunning, "n")}}, []podStep{{pod: pod("25", v1.PodSucceeded, "n")}}, 0},
		{"relisted, finished after the relist", true, []podStep{{pod: pod("10", v1.PodRunning, "n")}}, []podStep{{pod: pod("35", v1.PodSucceeded, "n")}}, 1},
		// Trial 10090: the scheduler reserved claim c for the pod, could not bind it while the API
		// server restarted, then bound it with a claim it made anew, c2; kube-controller-manager
		// deleted c as unused while the pod ran on c2.
		{"running on another claim the scheduler made", false, []podStep{{pod: pod("5", v1.PodPending, "")}, {pod: extended("10", v1.PodRunning, "n", "c2")}}, nil, 0},
		{"running on the extended-resource claim", false, []podStep{{pod: extended("10", v1.PodRunning, "n", "c")}}, nil, 1},
		{"running on the claim from its template", false, []podStep{{pod: templated("10", v1.PodRunning, "n", "c")}}, nil, 1},
		{"running on another claim from its template", false, []podStep{{pod: templated("10", v1.PodRunning, "n", "c3")}}, nil, 0},
	} {
		o := newObserver()
		podsRV := uint64(0)
		o.podsRV = func() uint64 { return podsRV }
		o.claimsRV = func() uint64 { return 30 }
		deliver(o, c.before)
		rv := "20"
		if c.relisted {
			rv = "12" // the claim's last state the watch showed
		}
		o.claimDeleted(&resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c", ResourceVersion: rv},
			Status: resourcev1.ResourceClaimStatus{ReservedFor: []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: "job", UID: "u"}}}},
			c.relisted)
		if c.relisted {
			o.claims[0].at = o.claims[0].at.Add(-2 * time.Second) // the claim watch has had its second
		}
		o.judgeClaims(false)
		deliver(o, c.after)
		judgedOnPass(t, c.name, o, &podsRV, o.judgeClaims, func() int { return len(o.claims) }, c.want)
	}
}

func TestEviction(t *testing.T) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job"}, Status: v1.PodStatus{Conditions: []v1.PodCondition{
		{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: "EvictionByEvictionAPI"}}}}
	o := newObserver()
	o.pod(pod)
	o.pod(pod) // the same eviction seen again counts once
	if o.violations != 1 {
		t.Fatalf("eviction without Evict: %d violations, want 1", o.violations)
	}
	o = newObserver()
	o.allowEvict = true
	o.pod(pod)
	if o.violations != 0 {
		t.Fatalf("eviction with --allow-evict: %d violations, want 0", o.violations)
	}
}

func plan(frozen, breach, ack string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "p"},
		"spec":     map[string]any{"acknowledgedBreach": ack},
		"status": map[string]any{"breach": map[string]any{"id": breach},
			"conditions": []any{map[string]any{"type": "Frozen", "status": frozen}}},
	}}
}

func TestFreezeLifted(t *testing.T) {
	o := newObserver()
	o.plan(plan("True", "b1", ""), plan("False", "b1", ""))
	if o.violations != 1 {
		t.Fatalf("freeze lifted without acknowledgement: %d violations, want 1", o.violations)
	}
	o = newObserver()
	o.plan(plan("True", "b1", ""), plan("False", "b1", "b1"))
	if o.violations != 0 {
		t.Fatalf("freeze lifted after acknowledgement: %d violations, want 0", o.violations)
	}
}

func param(frozen, breach, rv string) *v1.ConfigMap {
	return &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "drashift-freeze-p", ResourceVersion: rv},
		Data: map[string]string{"plan": "p", "frozen": frozen, "breachId": breach}}
}

// A freeze parameter lifted without the plan's acknowledgement of its breach is
// a violation, judged once the plan watch has passed the lift (or at the end).
func TestFreezeParameterLifted(t *testing.T) {
	for _, c := range []struct {
		name       string
		ack        string
		plansRV    uint64
		violations int
	}{
		{"acknowledged", "b2", 100, 0},
		{"acknowledged, the plan watch behind", "b2", 5, 0},
		{"another breach acknowledged", "b1", 100, 1},
		{"nothing acknowledged", "", 100, 1},
	} {
		o := newObserver()
		o.planAck = func(string) string { return c.ack }
		o.plansRV = func() uint64 { return c.plansRV }
		o.parameter(param("true", "b2", "9"), param("true", "b2", "10"))  // nothing changed
		o.parameter(param("false", "b1", "9"), param("true", "b2", "10")) // frozen: a new breach
		o.parameter(param("true", "b2", "10"), param("false", "b2", "11"))
		o.judgeLifts(true)
		if o.violations != c.violations {
			t.Errorf("%s: %d violations, want %d", c.name, o.violations, c.violations)
		}
	}
	// The plan watch behind and no acknowledgement seen yet: judged later, not now.
	o := newObserver()
	o.planAck = func(string) string { return "" }
	o.plansRV = func() uint64 { return 5 }
	o.parameter(param("true", "b2", "10"), param("false", "b2", "11"))
	if o.violations != 0 || len(o.lifts) != 1 {
		t.Fatalf("judged before the plan watch caught up: %d violations, %d waiting", o.violations, len(o.lifts))
	}
}

// After the node watch failed, a node's first change spans the gap (its end
// points only): it is not judged as a step; the change after it is.
func TestStepAcrossWatchGap(t *testing.T) {
	o := newObserver()
	o.nodeGap.opened()
	o.node(node("true", "false", "ToDRA", "draining", true, true), node("false", "true", "ToDRA", "dra", false, false))
	if o.violations != 0 {
		t.Fatalf("a change across the gap: %d violations, want 0", o.violations)
	}
	o.node(node("false", "true", "ToLegacy", "dra", false, false), node("false", "true", "ToLegacy", "driver-off", true, true))
	if o.violations != 1 {
		t.Fatalf("a skip after the gap: %d violations, want 1", o.violations)
	}
}

// A driver outlives its users: a label drashift turns off while a pod bound to the node before that
// still runs is a violation, judged only once the pod watch has passed the change; a pod that
// finished before it, was bound after it, uses the other driver, or whose end a watch gap hid is
// not; a label another writer turned off is recorded only.
func TestDriverGone(t *testing.T) {
	pod := func(uid, rv string, dra bool, phase v1.PodPhase) *v1.Pod {
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: uid, UID: types.UID(uid), ResourceVersion: rv},
			Spec:   v1.PodSpec{NodeName: "n", Containers: []v1.Container{{Name: "c"}}},
			Status: v1.PodStatus{Phase: phase}}
		if dra {
			p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu"}}
		} else {
			p.Spec.Containers[0].Resources.Limits = v1.ResourceList{"example.com/gpu": resource.MustParse("1")}
		}
		return p
	}
	off := func(which string, rv string, writer string) (*v1.Node, *v1.Node) {
		old, cur := node("false", "true", "ToLegacy", "draining-dra", true, true), node("false", "false", "ToLegacy", "driver-off", true, true)
		if which == "plugin" {
			old, cur = node("true", "false", "ToDRA", "draining", true, true), node("false", "false", "ToDRA", "plugin-off", true, true)
		}
		cur.ResourceVersion = rv
		if writer != "" {
			key := map[string]string{"dra": "d", "plugin": "p"}[which]
			cur.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: writer, FieldsType: "FieldsV1",
				FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{"f:` + key + `":{}}}}`)}}}
		}
		return old, cur
	}
	for _, c := range []struct {
		name   string
		which  string
		writer string
		steps  []podStep
		want   int
	}{
		{"finished before", "dra", "", []podStep{{pod: pod("a", "10", true, v1.PodRunning)}, {pod: pod("a", "15", true, v1.PodSucceeded)}}, 0},
		{"finished after", "dra", "", []podStep{{pod: pod("a", "10", true, v1.PodRunning)}, {pod: pod("a", "25", true, v1.PodSucceeded)}}, 1},
		{"still running", "dra", "", []podStep{{pod: pod("a", "10", true, v1.PodRunning)}}, 1},
		{"deleted after, running", "dra", "", []podStep{{pod: pod("a", "10", true, v1.PodRunning)}, {pod: pod("a", "26", true, v1.PodRunning), deleted: true}}, 1},
		{"bound after", "dra", "", []podStep{{pod: pod("a", "30", true, v1.PodRunning)}}, 0},
		{"the other driver's user", "dra", "", []podStep{{pod: pod("a", "10", false, v1.PodRunning)}}, 0},
		{"plugin user", "plugin", "", []podStep{{pod: pod("a", "10", false, v1.PodRunning)}}, 1},
		{"plugin off, DRA user", "plugin", "", []podStep{{pod: pod("a", "10", true, v1.PodRunning)}}, 0},
		{"end hidden by a gap", "dra", "", []podStep{{pod: pod("a", "10", true, v1.PodRunning)}, {pod: pod("a", "25", true, v1.PodSucceeded), gap: true}}, 0},
		{"turned off by another writer", "dra", "kubectl-label", []podStep{{pod: pod("a", "10", true, v1.PodRunning)}}, 0},
	} {
		o := newObserver()
		podsRV := uint64(0)
		o.podsRV = func() uint64 { return podsRV }
		old, cur := off(c.which, "20", c.writer)
		o.node(old, cur)
		deliver(o, c.steps)
		judgedOnPass(t, c.name, o, &podsRV, o.judgeDriversOff, func() int { return len(o.pending) }, c.want)
	}
}
