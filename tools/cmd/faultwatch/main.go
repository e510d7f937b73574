// faultwatch is the independent observer of tools/faults: a separate process
// that watches the API server (not drashift's status, not fleetsim's counters)
// and checks drashift's safety invariants on every change it sees.
//
// It records every ownership-label, step-annotation and cordon change of every
// node, every ResourceClaim deletion and every eviction, as JSON lines in
// --log, and reports a violation (a line "VIOLATION <check> <object>: <why>" on
// stdout) when
//   - two-owners: a node comes to have both ownership labels enabled, and
//     drashift enabled the one that made it so (by managedFields; when
//     another writer did, it is recorded, not a violation: drashift cannot
//     stop it, and refuses the node until the labels are put back);
//   - claim-deleted: a ResourceClaim is deleted while a pod it is reserved for
//     is bound to a node, uses it and has not finished. A pod uses the claims
//     it names (spec.resourceClaims, status.resourceClaimStatuses, the
//     scheduler's status.extendedResourceClaimStatus); one that names none is
//     taken to use it. Trial 10090: the scheduler made and reserved an
//     extended-resource claim for a pod, could bind neither the pod nor undo
//     the claim while the API server restarted, bound the pod 16 s later
//     with a claim it made anew, and kube-controller-manager deleted the
//     first as unused while the pod ran: recorded, not a violation. The claim watch may deliver
//     the deletion before the pod watch delivers the pod's end (trial 9014:
//     after an API server restart the claims relisted 70 ms before the pods,
//     and showed three claims kube-controller-manager had deleted once their
//     pods succeeded), so a deletion is judged by the pod watch's record of
//     each pod (bound, finished), once it has passed the deletion's
//     resourceVersion, as driver-gone below. A deletion a relist found
//     happened somewhere after the claim's last state the watch showed: a
//     pod that finished within that span is recorded as not judged;
//   - evicted: a pod is evicted through the Eviction API and --allow-evict is off;
//   - step-skipped: a node's drashift.io/step moves forward past a step of its
//     direction (legacy, draining, plugin-off, driver-on, verified, dra and the
//     mirror image back), between two changes the watch delivered in a row (a
//     node's first change after any relist of nodes is not judged: the relist
//     shows end points only);
//   - cordon-lifted: a node cordoned without drashift's mark
//     (drashift.io/cordoned-by-drashift) is uncordoned, other than by the
//     trial's person (faults.drashift.io/uncordoned-by=person in the same patch);
//   - freeze-lifted: a plan's Frozen condition goes from True to False while
//     spec.acknowledgedBreach does not name its recorded breach; or its freeze
//     parameter (ConfigMap drashift-system/drashift-freeze-<plan>, what the
//     admission policy reads) goes from frozen "true" to "false" while the
//     plan's spec.acknowledgedBreach does not name the parameter's breachId.
//     drashift lifts after it sees the acknowledgement, but the plan watch may
//     deliver it after the ConfigMap watch delivers the lift, so a lift is
//     judged once the plan watch has passed the lift's resourceVersion (or
//     after a minute), like driver-gone below;
//   - driver-gone: drashift turns a node's DRA driver label off while a pod
//     bound to the node and not finished holds a ResourceClaim (it may hold a
//     prepared device), or its device-plugin label off while such a pod
//     requests the plugin's extended resource without a claim. The pod watch
//     may deliver the pod's end after the node watch delivers the label, so
//     each label change is judged once the pod watch has passed the label
//     change's resourceVersion (or after a minute): a pod is a user when it
//     was seen bound before that resourceVersion and finished after it. This
//     compares resourceVersions as numbers, which a client of the API must
//     not do; an observer of its own test cluster, whose API server counts
//     etcd revisions, may. A pod deleted while the pod watch was cut (its end
//     unknown) is recorded as not judged. A label another writer turned off
//     is recorded only.
//
// Watches that relist (410, a cut connection) compare the state before and
// after the gap, so a change within the gap is judged by its end points. On
// SIGTERM it prints "violations N" and exits 1 when N > 0.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

const (
	annStep      = "drashift.io/step"
	annDirection = "drashift.io/direction"
	annCordoned  = "drashift.io/cordoned-by-drashift"
	// Set by tools/faults' person on call in the patch that uncordons a node it cordoned.
	annUncordonedBy = "faults.drashift.io/uncordoned-by"
)

// The steps of each direction, in order (docs/state-machines.md).
var chains = map[string][]string{
	"ToDRA":    {"legacy", "draining", "plugin-off", "driver-on", "verified", "dra"},
	"ToLegacy": {"dra", "draining-dra", "driver-off", "plugin-on", "verified-legacy", "legacy"},
}

// podUse is what the pod watch showed of one pod's use of its node's drivers.
type podUse struct {
	name       string
	node       string
	dra        bool   // holds a ResourceClaim (its own, or one the scheduler made for an extended resource)
	plugin     bool   // requests an extended resource without a claim: the device plugin serves it
	bound      uint64 // resourceVersion at which it was first seen bound to node
	finished   uint64 // resourceVersion at which it was first seen finished or deleted; 0 while not
	endUnknown bool   // deleted while the pod watch was cut
	// The ResourceClaims the pod names (spec.resourceClaims, status.resourceClaimStatuses, the one the
	// scheduler made for its extended resources), as far as the pod watch showed them.
	claims map[string]bool
}

// driverOff is a label change still to judge.
type driverOff struct {
	node, which string // which: "dra" or "plugin"
	rv          uint64
	at          time.Time
}

type observer struct {
	mu                sync.Mutex
	log               *json.Encoder
	pluginKey, draKey string
	enabled           string
	manager           string // drashift's field manager
	allowEvict        bool
	violations        int
	seenEvicted       map[string]bool
	// The relist after a failed node watch shows each node's end points
	// only, so a node's next change is not judged as a step.
	nodeGap gaps
	// driver-gone: pods by UID, the label changes waiting for the pod watch, what it has passed.
	extended []v1.ResourceName
	uses     map[string]*podUse
	pending  []driverOff
	podsRV   func() uint64
	// claim-deleted: the deletions waiting for the pod watch, and what the claim watch has passed.
	claims   []claimGone
	claimsRV func() uint64
	// The relist after a failed pod watch: a pod's first state after it may
	// have finished anywhere in the gap, so that end is not judged.
	podGap gaps
	// freeze-lifted by the parameter: the lifts waiting for the plan watch, a plan's
	// spec.acknowledgedBreach, and what the plan watch has passed.
	lifts   []paramLift
	planAck func(plan string) string
	plansRV func() uint64
}

// claimGone is a claim deletion still to judge: the pods it was reserved for and
// the resourceVersions between which it was deleted (seen, the last state the
// claim watch showed; rv, the deletion's, or for a deletion a relist found, the
// claim watch's resourceVersion a second after it: 0 until then).
type claimGone struct {
	name     string // namespace/name
	claim    string // name
	pods     []resourcev1.ResourceClaimConsumerReference
	seen, rv uint64
	at       time.Time
}

// paramLift is a freeze parameter's frozen "true" -> "false", still to judge.
type paramLift struct {
	plan, breach string
	rv           uint64
	at           time.Time
}

// gaps follows a watch's gaps: after one, each object's first change spans it.
type gaps struct {
	open bool
	seen map[string]bool // objects changed since the last gap
}

// opened records a gap (the watch failed or listed again).
func (g *gaps) opened() { g.open, g.seen = true, map[string]bool{} }

// spans: this change of key is its first since a gap; later ones follow each other again.
func (g *gaps) spans(key string) bool {
	if !g.open || g.seen[key] {
		return false
	}
	g.seen[key] = true
	return true
}

// rvOf parses a resourceVersion as the etcd revision it is on this cluster (0 when it is not a number).
func rvOf(s string) uint64 {
	v, _ := strconv.ParseUint(s, 10, 64)
	return v
}

func (o *observer) record(kind, name string, fields map[string]any) {
	fields["t"] = time.Now().UTC().Format(time.RFC3339Nano)
	fields["kind"] = kind
	fields["name"] = name
	_ = o.log.Encode(fields)
}

func (o *observer) violation(check, object, format string, args ...any) {
	o.violations++
	why := fmt.Sprintf(format, args...)
	fmt.Printf("VIOLATION %s %s: %s\n", check, object, why)
	o.record("violation", object, map[string]any{"check": check, "why": why})
}

func stepIndex(direction, step string) int {
	for i, s := range chains[direction] {
		if s == step {
			return i
		}
	}
	return -1
}

func (o *observer) node(old, cur *v1.Node) {
	o.mu.Lock()
	defer o.mu.Unlock()
	l, a := cur.Labels, cur.Annotations
	if l[o.pluginKey] == o.enabled && l[o.draKey] == o.enabled &&
		(old == nil || old.Labels[o.pluginKey] != o.enabled || old.Labels[o.draKey] != o.enabled) {
		o.twoOwners(old, cur)
	}
	if old == nil {
		o.record("node", cur.Name, map[string]any{"plugin": l[o.pluginKey], "dra": l[o.draKey],
			"step": a[annStep], "unschedulable": cur.Spec.Unschedulable, "event": "seen"})
		return
	}
	ol, oa := old.Labels, old.Annotations
	for which, key := range map[string]string{"dra": o.draKey, "plugin": o.pluginKey} {
		if ol[key] == o.enabled && l[key] != o.enabled {
			if w := labelWriter(cur, key); w != "" && w != o.manager {
				o.record("driver-off-by-another-writer", cur.Name, map[string]any{"which": which, "writer": w})
			} else {
				o.pending = append(o.pending, driverOff{node: cur.Name, which: which, rv: rvOf(cur.ResourceVersion), at: time.Now()})
			}
		}
	}
	if ol[o.pluginKey] == l[o.pluginKey] && ol[o.draKey] == l[o.draKey] && oa[annStep] == a[annStep] &&
		old.Spec.Unschedulable == cur.Spec.Unschedulable {
		return
	}
	o.record("node", cur.Name, map[string]any{"plugin": l[o.pluginKey], "dra": l[o.draKey], "step": a[annStep],
		"direction": a[annDirection], "unschedulable": cur.Spec.Unschedulable, "cordonedByDrashift": a[annCordoned]})
	if !o.nodeGap.spans(cur.Name) && oa[annStep] != "" && a[annStep] != "" && oa[annDirection] == a[annDirection] {
		from, to := stepIndex(a[annDirection], oa[annStep]), stepIndex(a[annDirection], a[annStep])
		if from >= 0 && to > from+1 {
			o.violation("step-skipped", cur.Name, "%s %s -> %s", a[annDirection], oa[annStep], a[annStep])
		}
	}
	if old.Spec.Unschedulable && !cur.Spec.Unschedulable && oa[annCordoned] != "true" {
		if a[annUncordonedBy] == "person" {
			// tools/faults' person on call lifted it (drashift asked: its canary's gate waited).
			o.record("cordon-lifted-by-person", cur.Name, map[string]any{})
		} else {
			o.violation("cordon-lifted", cur.Name, "uncordoned, but the cordon was not drashift's")
		}
	}
}

// twoOwners judges a node that has just come to carry both ownership labels
// enabled. The writer of a label is the manager its managedFields name (the
// last to change it). When a label enabled by this change (either, on a node
// first seen) was written by a manager other than drashift, a second writer
// made the two owners: recorded, and no violation of drashift's (drashift
// then refuses the node, OwnershipFight, and names the command that puts its
// labels back). A writer the managedFields do not name counts as drashift.
func (o *observer) twoOwners(old, cur *v1.Node) {
	writers := map[string]string{}
	foreign := false
	for _, key := range []string{o.pluginKey, o.draKey} {
		if old != nil && old.Labels[key] == o.enabled {
			continue // not enabled by this change
		}
		w := labelWriter(cur, key)
		writers[key] = w
		foreign = foreign || (w != "" && w != o.manager)
	}
	why := fmt.Sprintf("%s=%s and %s=%s, enabled by %v", o.pluginKey, o.enabled, o.draKey, o.enabled, writers)
	if foreign {
		o.record("two-owners-by-another-writer", cur.Name, map[string]any{"why": why})
		return
	}
	o.violation("two-owners", cur.Name, "%s", why)
}

// labelWriter: the field manager that last changed the label key, "" when none is named.
func labelWriter(n *v1.Node, key string) string {
	for _, m := range n.ManagedFields {
		if m.FieldsV1 == nil {
			continue
		}
		var f struct {
			Metadata struct {
				Labels map[string]any `json:"f:labels"`
			} `json:"f:metadata"`
		}
		if json.Unmarshal(m.FieldsV1.Raw, &f) == nil {
			if _, ok := f.Metadata.Labels["f:"+key]; ok {
				return m.Manager
			}
		}
	}
	return ""
}

// claimDeleted queues a claim's deletion for judgeClaims (relisted: a relist found it gone).
func (o *observer) claimDeleted(c *resourcev1.ResourceClaim, relisted bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	g := claimGone{name: c.Namespace + "/" + c.Name, claim: c.Name, seen: rvOf(c.ResourceVersion), at: time.Now()}
	for _, r := range c.Status.ReservedFor {
		if r.Resource == "pods" {
			g.pods = append(g.pods, r)
		}
	}
	if len(g.pods) == 0 {
		o.record("claim-deleted", g.name, map[string]any{"reservedFor": len(c.Status.ReservedFor), "runningUsers": nil})
		return
	}
	if !relisted {
		g.rv = g.seen // a watch's deletion event carries the deletion's resourceVersion
	}
	o.claims = append(o.claims, g)
}

// judgeClaims judges the claim deletions the pod watch has passed, or that waited a minute for it
// (stopping: records the others as not judged). A user is a pod the pod watch saw bound before the
// deletion and not finished by then. The scheduler may reserve a claim for a pod it then cannot
// bind (trial 3003: the API server was restarting) and delete the extended-resource claim it made:
// that pod runs nowhere, and the pod watch never saw it bound.
func (o *observer) judgeClaims(stopping bool) {
	podsRV := o.podsPassed()
	keep := o.claims[:0]
	for _, g := range o.claims {
		if g.rv == 0 && time.Since(g.at) >= time.Second && o.claimsRV != nil {
			g.rv = max(o.claimsRV(), g.seen)
		}
		if (g.rv == 0 || podsRV < g.rv) && time.Since(g.at) < time.Minute {
			if stopping {
				o.record("claim-deleted", g.name, map[string]any{"reservedFor": len(g.pods),
					"notJudged": "the observer stopped before the pod watch passed the deletion"})
			} else {
				keep = append(keep, g)
			}
			continue
		}
		if g.rv == 0 {
			g.rv = g.seen
		}
		var users, unjudged, other []string
		for _, r := range g.pods {
			u := o.uses[string(r.UID)]
			if u == nil {
				continue
			}
			if !u.uses(g.claim) {
				other = append(other, r.Name)
				continue
			}
			u.tally(g.seen, g.rv, r.Name, &users, &unjudged)
		}
		o.record("claim-deleted", g.name, map[string]any{"reservedFor": len(g.pods), "rv": g.rv,
			"runningUsers": users, "notJudged": unjudged, "reservedForPodsUsingOthers": other})
		if len(users) > 0 {
			o.violation("claim-deleted", g.name, "deleted while reserved for running pods %v", users)
		}
	}
	o.claims = keep
}

func (o *observer) pod(p *v1.Pod) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.use(p, false, false)
	key := p.Namespace + "/" + p.Name
	for _, c := range p.Status.Conditions {
		if c.Type == v1.DisruptionTarget && c.Status == v1.ConditionTrue && c.Reason == "EvictionByEvictionAPI" &&
			!o.seenEvicted[key] {
			o.seenEvicted[key] = true
			o.record("evicted", key, map[string]any{"node": p.Spec.NodeName})
			if !o.allowEvict {
				o.violation("evicted", key, "evicted through the Eviction API on %s; no pool says Evict", p.Spec.NodeName)
			}
		}
	}
}

// use follows one pod's use of its node's drivers: bound, finished, deleted (gone: a deletion event;
// unknown: the deletion was missed while the watch was cut).
func (o *observer) use(p *v1.Pod, gone, unknown bool) {
	u := o.uses[string(p.UID)]
	if u == nil {
		if p.Spec.NodeName == "" {
			return
		}
		u = &podUse{name: p.Namespace + "/" + p.Name, node: p.Spec.NodeName, bound: rvOf(p.ResourceVersion)}
		u.dra = len(p.Spec.ResourceClaims) > 0 || p.Status.ExtendedResourceClaimStatus != nil
		u.plugin = !u.dra && (o.asksExtended(p.Spec.InitContainers) || o.asksExtended(p.Spec.Containers))
		if !u.dra && !u.plugin {
			return
		}
		o.uses[string(p.UID)] = u
	}
	u.names(p)
	afterGap := o.podGap.spans(string(p.UID))
	if u.finished != 0 || u.endUnknown {
		return
	}
	if !gone && p.Status.Phase != v1.PodSucceeded && p.Status.Phase != v1.PodFailed {
		return
	}
	// The resourceVersion of the write that showed the end, unless a watch gap hid that write.
	if unknown || afterGap {
		u.endUnknown = true
	} else {
		u.finished = rvOf(p.ResourceVersion)
	}
}

// names adds the ResourceClaims p names to what u knows of them.
func (u *podUse) names(p *v1.Pod) {
	add := func(name *string) {
		if name != nil && *name != "" {
			if u.claims == nil {
				u.claims = map[string]bool{}
			}
			u.claims[*name] = true
		}
	}
	for i := range p.Spec.ResourceClaims {
		add(p.Spec.ResourceClaims[i].ResourceClaimName)
	}
	for i := range p.Status.ResourceClaimStatuses {
		add(p.Status.ResourceClaimStatuses[i].ResourceClaimName)
	}
	if e := p.Status.ExtendedResourceClaimStatus; e != nil {
		add(&e.ResourceClaimName)
	}
}

// uses: the pod may use the claim. A pod that names claims, none of them this one, does not: the
// scheduler reserved this claim for it and then bound it with another (trial 10090).
func (u *podUse) uses(claim string) bool {
	return len(u.claims) == 0 || u.claims[claim]
}

// tally adds name to users when the pod was in use at a change the watch places somewhere after seen
// and at or before rv (seen == rv: exactly there), and to unjudged when that cannot be told. It was
// not in use when it was bound only at rv or later, or had finished by seen; it was when it had not
// finished by rv; a watch gap over its end, or an end between seen and rv, leaves it unknown.
func (u *podUse) tally(seen, rv uint64, name string, users, unjudged *[]string) {
	switch {
	case u.bound >= rv || (u.finished != 0 && u.finished <= seen):
	case u.endUnknown || (u.finished != 0 && u.finished <= rv):
		*unjudged = append(*unjudged, name)
	default:
		*users = append(*users, name)
	}
}

// asksExtended: a container requests or limits one of the device plugin's extended resources.
func (o *observer) asksExtended(cs []v1.Container) bool {
	for _, c := range cs {
		for _, r := range o.extended {
			_, req := c.Resources.Requests[r]
			_, lim := c.Resources.Limits[r]
			if req || lim {
				return true
			}
		}
	}
	return false
}

// podsPassed: the resourceVersion the pod watch has passed (0 before it runs).
func (o *observer) podsPassed() uint64 {
	if o.podsRV == nil {
		return 0
	}
	return o.podsRV()
}

// judgeDriversOff judges the label changes the pod watch has passed, or that waited a minute for it
// (stopping: records the others as not judged).
func (o *observer) judgeDriversOff(stopping bool) {
	podsRV := o.podsPassed()
	keep := o.pending[:0]
	for _, d := range o.pending {
		if podsRV < d.rv && time.Since(d.at) < time.Minute {
			if stopping {
				o.record("driver-off", d.node, map[string]any{"which": d.which, "rv": d.rv,
					"notJudged": "the observer stopped before the pod watch passed the change"})
			} else {
				keep = append(keep, d)
			}
			continue
		}
		var users, unjudged []string
		for _, u := range o.uses {
			if u.node != d.node || (d.which == "dra" && !u.dra) || (d.which == "plugin" && !u.plugin) {
				continue
			}
			u.tally(d.rv, d.rv, u.name, &users, &unjudged)
		}
		o.record("driver-off", d.node, map[string]any{"which": d.which, "rv": d.rv, "users": users, "notJudged": unjudged})
		if len(users) > 0 {
			o.violation("driver-gone", d.node, "%s label turned off at resourceVersion %d while %v used it", d.which, d.rv, users)
		}
	}
	o.pending = keep
}

func frozenCondition(u *unstructured.Unstructured) string {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Frozen" {
			s, _ := m["status"].(string)
			return s
		}
	}
	return ""
}

func (o *observer) plan(old, cur *unstructured.Unstructured) {
	o.mu.Lock()
	defer o.mu.Unlock()
	was, is := frozenCondition(old), frozenCondition(cur)
	if was == is {
		return
	}
	breach, _, _ := unstructured.NestedString(old.Object, "status", "breach", "id")
	ack, _, _ := unstructured.NestedString(cur.Object, "spec", "acknowledgedBreach")
	o.record("plan-frozen", cur.GetName(), map[string]any{"frozen": is, "breach": breach, "acknowledged": ack})
	if was == "True" && is == "False" && (breach == "" || ack != breach) {
		o.violation("freeze-lifted", cur.GetName(), "Frozen True -> False; breach %q, acknowledgedBreach %q", breach, ack)
	}
}

func (o *observer) parameter(old, cur *v1.ConfigMap) {
	o.mu.Lock()
	defer o.mu.Unlock()
	was, is := old.Data["frozen"] == "true", cur.Data["frozen"] == "true"
	if was == is && old.Data["breachId"] == cur.Data["breachId"] {
		return
	}
	o.record("freeze-parameter", cur.Name, map[string]any{"plan": cur.Data["plan"], "frozen": is, "breach": cur.Data["breachId"]})
	if was && !is {
		o.lifts = append(o.lifts, paramLift{plan: cur.Data["plan"], breach: old.Data["breachId"], rv: rvOf(cur.ResourceVersion), at: time.Now()})
		o.judgeLifts(false)
	}
}

// judgeLifts judges the freeze parameters' lifts the plan watch has caught up with (all of them when stopping).
func (o *observer) judgeLifts(stopping bool) {
	keep := o.lifts[:0]
	for _, l := range o.lifts {
		ack := o.planAck(l.plan)
		if ack == l.breach && l.breach != "" {
			continue
		}
		if !stopping && o.plansRV() < l.rv && time.Since(l.at) < time.Minute {
			keep = append(keep, l)
			continue
		}
		o.violation("freeze-lifted", l.plan, "freeze parameter frozen -> false; breach %q, acknowledgedBreach %q", l.breach, ack)
	}
	o.lifts = keep
}

// watchWithGaps is an informer of resource whose every list after the first, and every watch error,
// calls gap: what the relist shows spans whatever the watch missed.
func watchWithGaps(cs *kubernetes.Clientset, resource string, obj runtime.Object, gap func(how string)) cache.SharedIndexInformer {
	lw := cache.NewListWatchFromClient(cs.CoreV1().RESTClient(), resource, "", fields.Everything())
	var mu sync.Mutex
	lists := 0
	listed := func(how string) {
		mu.Lock()
		n := lists
		lists++
		mu.Unlock()
		if n > 0 {
			gap(how)
		}
	}
	inf := cache.NewSharedIndexInformer(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			listed("relist")
			return lw.ListWithContextFunc(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			if opts.SendInitialEvents != nil && *opts.SendInitialEvents {
				listed("relist (watch-list)")
			}
			return lw.WatchFuncWithContext(ctx, opts)
		},
	}, obj, 0, cache.Indexers{})
	_ = inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *cache.Reflector, err error) {
		gap(err.Error())
		cache.DefaultWatchErrorHandler(ctx, r, err)
	})
	return inf
}

func main() {
	var kubeconfig, logPath string
	o := &observer{seenEvicted: map[string]bool{}, uses: map[string]*podUse{}}
	var extended string
	flag.StringVar(&kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the cluster to watch")
	flag.StringVar(&logPath, "log", "faultwatch.jsonl", "where to record every change seen (JSON lines)")
	flag.StringVar(&o.pluginKey, "device-plugin-label", "drashift.io/device-plugin", "ownership label of the device plugin")
	flag.StringVar(&o.draKey, "dra-label", "drashift.io/dra-driver", "ownership label of the DRA driver")
	flag.StringVar(&o.enabled, "enabled-value", "true", "ownership label value meaning enabled")
	flag.StringVar(&o.manager, "drashift-manager", "drashift", "the field manager of drashift's writes (managedFields)")
	flag.BoolVar(&o.allowEvict, "allow-evict", false, "a pool of the plan says Evict: evictions are allowed")
	flag.StringVar(&extended, "extended-resources", "example.com/gpu", "the device plugin's extended resources, comma-separated")
	flag.Parse()
	for _, r := range strings.Split(extended, ",") {
		if r != "" {
			o.extended = append(o.extended, v1.ResourceName(r))
		}
	}

	f, err := os.Create(logPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "faultwatch:", err)
		os.Exit(2)
	}
	defer f.Close()
	o.log = json.NewEncoder(f)
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, "faultwatch:", err)
		os.Exit(2)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	dyn := dynamic.NewForConfigOrDie(cfg)
	stop := make(chan struct{})
	inf := informers.NewSharedInformerFactory(cs, 0)
	// The node and pod informers run on ListWatches of their own that mark
	// every list after the first as a gap: a watch that ends on a 410 (a
	// compaction, an apiserver restart) is relisted without the watch error
	// handler ever being called, and the relist's updates span whatever was
	// missed.
	nodeInf := watchWithGaps(cs, "nodes", &v1.Node{}, func(how string) {
		o.mu.Lock()
		defer o.mu.Unlock()
		o.nodeGap.opened()
		o.record("watch-gap", "nodes", map[string]any{"error": how})
	})
	podInf := watchWithGaps(cs, "pods", &v1.Pod{}, func(how string) {
		o.mu.Lock()
		defer o.mu.Unlock()
		o.podGap.opened()
		o.record("watch-gap", "pods", map[string]any{"error": how})
	})
	o.podsRV = func() uint64 { return rvOf(podInf.LastSyncResourceVersion()) }
	_, _ = podInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { o.pod(obj.(*v1.Pod)) },
		UpdateFunc: func(_, obj any) { o.pod(obj.(*v1.Pod)) },
		DeleteFunc: func(obj any) {
			o.mu.Lock()
			defer o.mu.Unlock()
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				if p, ok := t.Obj.(*v1.Pod); ok {
					o.use(p, true, true)
				}
			} else if p, ok := obj.(*v1.Pod); ok {
				o.use(p, true, false)
			}
		},
	})
	_, _ = nodeInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { o.node(nil, obj.(*v1.Node)) },
		UpdateFunc: func(old, obj any) { o.node(old.(*v1.Node), obj.(*v1.Node)) },
		DeleteFunc: func(obj any) {
			if n, ok := obj.(*v1.Node); ok {
				o.mu.Lock()
				o.record("node", n.Name, map[string]any{"event": "deleted"})
				o.mu.Unlock()
			}
		},
	})
	claimInf := inf.Resource().V1().ResourceClaims().Informer()
	o.claimsRV = func() uint64 { return rvOf(claimInf.LastSyncResourceVersion()) }
	_, _ = claimInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		DeleteFunc: func(obj any) {
			t, relisted := obj.(cache.DeletedFinalStateUnknown)
			if relisted {
				obj = t.Obj
			}
			if c, ok := obj.(*resourcev1.ResourceClaim); ok {
				o.claimDeleted(c, relisted)
			}
		},
	})
	dinf := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
	plans := schema.GroupVersionResource{Group: "drashift.io", Version: "v1alpha1", Resource: "migrationplans"}
	planInf := dinf.ForResource(plans).Informer()
	_, _ = planInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, obj any) { o.plan(old.(*unstructured.Unstructured), obj.(*unstructured.Unstructured)) },
	})
	o.plansRV = func() uint64 { return rvOf(planInf.LastSyncResourceVersion()) }
	o.planAck = func(name string) string {
		obj, ok, _ := planInf.GetStore().GetByKey(name)
		if u, isU := obj.(*unstructured.Unstructured); ok && isU {
			ack, _, _ := unstructured.NestedString(u.Object, "spec", "acknowledgedBreach")
			return ack
		}
		return ""
	}
	pinf := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace("drashift-system"),
		informers.WithTweakListOptions(func(lo *metav1.ListOptions) { lo.LabelSelector = "drashift.io/freeze-parameter=true" }))
	_, _ = pinf.Core().V1().ConfigMaps().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, obj any) { o.parameter(old.(*v1.ConfigMap), obj.(*v1.ConfigMap)) },
	})
	inf.Start(stop)
	dinf.Start(stop)
	pinf.Start(stop)
	go nodeInf.Run(stop)
	go podInf.Run(stop)
	cache.WaitForCacheSync(stop, nodeInf.HasSynced, podInf.HasSynced)
	inf.WaitForCacheSync(stop)
	dinf.WaitForCacheSync(stop)
	pinf.WaitForCacheSync(stop)
	fmt.Println("watching")

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	tick := time.NewTicker(time.Second)
	for waiting := true; waiting; {
		select {
		case <-sig:
			waiting = false
		case <-tick.C:
			o.mu.Lock()
			o.judgeDriversOff(false)
			o.judgeClaims(false)
			o.judgeLifts(false)
			o.mu.Unlock()
		}
	}
	close(stop)
	o.mu.Lock()
	defer o.mu.Unlock()
	o.judgeDriversOff(true)
	o.judgeClaims(true)
	o.judgeLifts(true)
	fmt.Printf("violations %d\n", o.violations)
	if o.violations > 0 {
		f.Close()
		os.Exit(1)
	}
}
