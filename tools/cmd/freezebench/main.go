// Command freezebench measures how fast drashift's freeze bites: the time from
// an SLO signal crossing its threshold to the first ResourceClaim the API
// server denies. tools/bench freeze builds and starts everything it needs (a
// control plane, fleetsim, drashift-controller, a MigrationPlan whose canary
// is baking on DRA) and then runs this program; it is not meant to be run by
// hand.
//
// One round:
//  1. POST a missing-devices fault for the canary node to fleetsim: the node's
//     DRA driver publishes fewer devices in its ResourceSlice than the node had
//     under the device plugin, so the pool's capacityDrift signal crosses its
//     threshold (maxCapacityDrift, 0).
//  2. t0: this program's own watch on ResourceSlices sees the node's device
//     count drop. That is the crossing as any client of the API can see it.
//  3. Right after the POST a prober starts sending a server-side dry-run CREATE
//     of a ResourceClaim for the plan's DeviceClass every --probe-interval.
//     Validating admission, the freeze's ValidatingAdmissionPolicy included,
//     runs on dry-run requests, and nothing is stored. t1: the answer to the
//     first probe refused with 403 Forbidden by a message naming the plan.
//     Each round also checks that a real CREATE is refused at that point.
//  4. Re-arm: restore the devices, wait for the signal to Pass again,
//     acknowledge the breach (spec.acknowledgedBreach) and wait until a probe
//     is admitted again.
//
// Its watches also note when the freeze parameter (the ConfigMap
// drashift-system/drashift-freeze-<plan>) turned frozen=true and when
// status.breach appeared on the plan: drashift writes both in the reconcile
// that decides the breach, the parameter first. With --operator-log it also
// reads drashift's own account of each freeze (the line it logs once the API
// server has taken the parameter's write, with the write's time), and splits
// t1-t0 three ways: drashift deciding (t0 -> the write sent, on the wall
// clock both processes share), the API server writing the parameter, and the
// rest (watches and admission seeing the parameter). Every other time is this
// process's monotonic clock.
//
// Like every benchmark it prints numbers and judges none: it exits non-zero
// only when something it measures malfunctions (a stage times out, the breach
// names another signal, a real claim is admitted while dry-run ones are not).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

const (
	freezeNamespace = "drashift-system"
	// The signal the fault drives; a breach of any other one is a malfunction.
	driftSignal = "capacityDrift"
)

var planGVR = schema.GroupVersionResource{Group: "drashift.io", Version: "v1alpha1", Resource: "migrationplans"}

type config struct {
	kubeconfig    string
	fleetsim      string
	plan          string
	pool          string
	node          string
	namespace     string
	driver        string
	deviceClass   string
	rounds        int
	missing       int
	probeInterval time.Duration
	stageTimeout  time.Duration
	settle        time.Duration
	createRounds  int
	verbose       bool
	operatorLog   string
}

func parseFlags(args []string) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("freezebench", flag.ContinueOnError)
	fs.StringVar(&c.kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the cluster (an identity that may create claims and patch the plan)")
	fs.StringVar(&c.fleetsim, "fleetsim", "", "fleetsim's HTTP base URL (the one it prints as 'metrics http://...')")
	fs.StringVar(&c.plan, "plan", "", "MigrationPlan to freeze")
	fs.StringVar(&c.pool, "pool", "a", "the plan's pool the canary belongs to")
	fs.StringVar(&c.node, "node", "", "the pool's canary node (on DRA, baking)")
	fs.StringVar(&c.namespace, "namespace", "freezebench", "namespace for the dry-run probe claims")
	fs.StringVar(&c.driver, "driver", "gpu.example.com", "DRA driver whose ResourceSlices carry the node's devices")
	fs.StringVar(&c.deviceClass, "device-class", "gpu.example.com", "DeviceClass the probe claims ask for (one of the plan's)")
	fs.IntVar(&c.rounds, "rounds", 10, "rounds to measure")
	fs.IntVar(&c.missing, "missing-devices", 1, "devices the fault takes out of the canary's slices")
	fs.DurationVar(&c.probeInterval, "probe-interval", 15*time.Millisecond, "time between the starts of two probes")
	fs.DurationVar(&c.stageTimeout, "stage-timeout", 60*time.Second, "longest wait for any one stage before giving up")
	fs.DurationVar(&c.settle, "settle", time.Second, "pause between rounds once claims are admitted again")
	fs.IntVar(&c.createRounds, "create-rounds", 5, "plans to create, one at a time, timing each one's first reconcile (0: none)")
	fs.BoolVar(&c.verbose, "v", false, "log every stage of every round on stderr")
	fs.StringVar(&c.operatorLog, "operator-log", "", "drashift-controller's log: split each round into drashift's decision, the freeze parameter's write and the rest")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	switch {
	case fs.NArg() > 0:
		return nil, fmt.Errorf("unexpected arguments: %v", fs.Args())
	case c.fleetsim == "" || c.plan == "" || c.node == "":
		return nil, errors.New("--fleetsim, --plan and --node are required")
	case c.rounds < 1:
		return nil, errors.New("--rounds must be at least 1")
	case c.missing < 1:
		return nil, errors.New("--missing-devices must be at least 1")
	case c.probeInterval <= 0:
		return nil, errors.New("--probe-interval must be positive")
	case c.createRounds < 0:
		return nil, errors.New("--create-rounds must not be negative")
	}
	c.fleetsim = strings.TrimSuffix(c.fleetsim, "/")
	return c, nil
}

// observer holds what the three watches saw. Handlers run on the informers'
// goroutines and stamp the time they saw a change; the round loop reads the
// stamps. Each "first" is armed by the round and set once, by the first event
// that meets its condition, so later events cannot move it.
type observer struct {
	cfg *config

	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every change

	sliceDevices map[string]int // slice name -> devices, the canary's slices of the driver
	plan         *unstructured.Unstructured
	param        map[string]string // the freeze parameter's data

	armed     bool
	baseline  int             // the canary's devices before the fault
	oldBreach map[string]bool // breach ids seen before this round
	firstDrop time.Time       // t0
	firstBr   time.Time       // status.breach with a new id
	brID      string
	brSignal  string
	firstPar  time.Time // freeze parameter frozen=true for that id (or any new id)
}

func newObserver(cfg *config) *observer {
	return &observer{cfg: cfg, changed: make(chan struct{}), sliceDevices: map[string]int{}, oldBreach: map[string]bool{}}
}

// notify wakes every waiter; called with mu held.
func (o *observer) notify() {
	close(o.changed)
	o.changed = make(chan struct{})
}

func (o *observer) devicesLocked() int {
	n := 0
	for _, d := range o.sliceDevices {
		n += d
	}
	return n
}

// check runs the "first" conditions after any change; called with mu held.
func (o *observer) checkLocked(now time.Time) {
	if !o.armed {
		return
	}
	if o.firstDrop.IsZero() && o.devicesLocked() < o.baseline {
		o.firstDrop = now
	}
	if o.firstBr.IsZero() && o.plan != nil {
		id, _, _ := unstructured.NestedString(o.plan.Object, "status", "breach", "id")
		if id != "" && !o.oldBreach[id] {
			o.firstBr = now
			o.brID = id
			o.brSignal, _, _ = unstructured.NestedString(o.plan.Object, "status", "breach", "signal")
		}
	}
	if o.firstPar.IsZero() && o.param["frozen"] == "true" && o.param["breachId"] != "" && !o.oldBreach[o.param["breachId"]] {
		o.firstPar = now
	}
}

func (o *observer) onSlice(obj any, deleted bool) {
	now := time.Now()
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	sl, ok := obj.(*resourcev1.ResourceSlice)
	if !ok || sl.Spec.Driver != o.cfg.driver || sl.Spec.NodeName == nil || *sl.Spec.NodeName != o.cfg.node {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if deleted {
		delete(o.sliceDevices, sl.Name)
	} else {
		o.sliceDevices[sl.Name] = len(sl.Spec.Devices)
	}
	o.checkLocked(now)
	o.notify()
}

func (o *observer) onPlan(obj any) {
	now := time.Now()
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || u.GetName() != o.cfg.plan {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.plan = u
	o.checkLocked(now)
	o.notify()
}

func (o *observer) onParam(obj any) {
	now := time.Now()
	cm, ok := obj.(*v1.ConfigMap)
	if !ok {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.param = cm.Data
	o.checkLocked(now)
	o.notify()
}

// waitFor blocks until cond (called with mu held) holds, or the stage times out.
func (o *observer) waitFor(ctx context.Context, timeout time.Duration, what string, cond func() bool) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		o.mu.Lock()
		ok, ch := cond(), o.changed
		o.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-deadline.C:
			return fmt.Errorf("timed out after %v waiting for %s", timeout, what)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// signalVerdict is the plan's current verdict for one pool's signal ("" if not shown).
func (o *observer) signalVerdictLocked(pool, name string) string {
	if o.plan == nil {
		return ""
	}
	sigs, _, _ := unstructured.NestedSlice(o.plan.Object, "status", "signals")
	for _, s := range sigs {
		m, ok := s.(map[string]any)
		if ok && m["pool"] == pool && m["name"] == name {
			v, _ := m["verdict"].(string)
			return v
		}
	}
	return ""
}

type bench struct {
	start   time.Time
	cfg     *config
	cs      *kubernetes.Clientset
	dyn     dynamic.Interface
	obs     *observer
	httpc   *http.Client
	claims  int   // real claims created by the admission check (must stay 0)
	logRead int64 // bytes of --operator-log read so far (complete lines)
}

// stage logs a stage of a round on stderr with -v: the UTC wall clock (to
// read beside drashift-controller's log, which KEEP_TESTENV=1 keeps) and the
// seconds since the start.
func (b *bench) stage(format string, args ...any) {
	if b.cfg.verbose {
		fmt.Fprintf(os.Stderr, "freezebench: %s %9.3f s  %s\n", time.Now().UTC().Format("15:04:05.000"), time.Since(b.start).Seconds(), fmt.Sprintf(format, args...))
	}
}

// probe sends one dry-run CREATE of a claim for the DeviceClass. It returns
// whether the freeze denied it; any other refusal is an error.
func (b *bench) probe(ctx context.Context, dryRun bool) (denied bool, msg string, err error) {
	claim := &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "freezebench-"},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
			Requests: []resourcev1.DeviceRequest{{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: b.cfg.deviceClass}}},
		}},
	}
	opts := metav1.CreateOptions{}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	got, err := b.cs.ResourceV1().ResourceClaims(b.cfg.namespace).Create(ctx, claim, opts)
	switch {
	case err == nil:
		if !dryRun {
			b.claims++
			_ = b.cs.ResourceV1().ResourceClaims(b.cfg.namespace).Delete(ctx, got.Name, metav1.DeleteOptions{})
		}
		return false, "", nil
	case apierrors.IsForbidden(err) && strings.Contains(err.Error(), "MigrationPlan "+b.cfg.plan):
		return true, err.Error(), nil
	default:
		return false, "", fmt.Errorf("create claim (dry-run %v): %w", dryRun, err)
	}
}

type probeResult struct {
	deniedAt     time.Time // answer to the first denied probe
	lastAdmitted time.Time // send time of the last probe admitted before it
	probes       int
	msg          string
	err          error
}

// prober probes every interval until the first denial.
func (b *bench) prober(ctx context.Context, started time.Time) probeResult {
	r := probeResult{lastAdmitted: started}
	tick := time.NewTicker(b.cfg.probeInterval)
	defer tick.Stop()
	for {
		sent := time.Now()
		denied, msg, err := b.probe(ctx, true)
		r.probes++
		switch {
		case err != nil:
			r.err = err
			return r
		case denied:
			r.deniedAt, r.msg = time.Now(), msg
			return r
		}
		r.lastAdmitted = sent
		select {
		case <-tick.C:
		case <-ctx.Done():
			r.err = fmt.Errorf("no claim denied within %v of the fault (%d probes admitted)", b.cfg.stageTimeout, r.probes)
			return r
		}
	}
}

func (b *bench) postFault(ctx context.Context, spec string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.cfg.fleetsim+"/faults", strings.NewReader(spec))
	if err != nil {
		return err
	}
	resp, err := b.httpc.Do(req)
	if err != nil {
		return fmt.Errorf("POST /faults %q: %w", spec, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST /faults %q: %s: %s", spec, resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}

type roundResult struct {
	sliceAfterPost time.Duration // t0 - POST answered (fleetsim and the watch; not part of the measure)
	breach         time.Duration // status.breach seen - t0
	param          time.Duration // freeze parameter frozen=true seen - t0
	denial         time.Duration // t1 - t0: the measure
	window         time.Duration // t1 - send of the last admitted probe: when the freeze began to bite is inside it
	probes         int
	lift           time.Duration // acknowledgement answered -> first probe admitted again
	// From drashift's log (--operator-log):
	decided time.Duration // drashift sent the freeze parameter's write - t0 (drashift's part)
	write   time.Duration // the write sent -> answered (the API server's)
}

func (b *bench) round(ctx context.Context) (roundResult, error) {
	var res roundResult
	o, cfg := b.obs, b.cfg
	o.mu.Lock()
	if o.devicesLocked() != o.baseline {
		o.mu.Unlock()
		return res, fmt.Errorf("node %s has %d devices before the fault, want %d", cfg.node, o.devicesLocked(), o.baseline)
	}
	o.armed = true
	o.firstDrop, o.firstBr, o.firstPar, o.brID, o.brSignal = time.Time{}, time.Time{}, time.Time{}, "", ""
	o.mu.Unlock()

	if err := b.postFault(ctx, fmt.Sprintf("node=%s:missing-devices=%d", cfg.node, cfg.missing)); err != nil {
		return res, err
	}
	posted := time.Now()
	b.stage("fault posted")
	pctx, cancel := context.WithTimeout(ctx, cfg.stageTimeout)
	done := make(chan probeResult, 1)
	go func() { done <- b.prober(pctx, posted) }()
	pr := <-done
	cancel()
	if pr.err != nil {
		return res, pr.err
	}
	b.stage("first denial after %d probes", pr.probes)
	// The watches may lag the prober: give them the stage timeout.
	if err := o.waitFor(ctx, cfg.stageTimeout, "the watches to see the slice drop, the breach and the parameter", func() bool {
		return !o.firstDrop.IsZero() && !o.firstBr.IsZero() && !o.firstPar.IsZero()
	}); err != nil {
		return res, err
	}
	o.mu.Lock()
	t0, tb, tp, id, sig := o.firstDrop, o.firstBr, o.firstPar, o.brID, o.brSignal
	brNow, _, _ := unstructured.NestedMap(o.plan.Object, "status", "breach")
	o.armed = false
	o.oldBreach[id] = true
	o.mu.Unlock()
	if sig != driftSignal {
		return res, fmt.Errorf("breach %s is for signal %q, want %q: the round did not measure what it claims", id, sig, driftSignal)
	}
	if !strings.Contains(pr.msg, driftSignal) {
		return res, fmt.Errorf("the denial does not name %s: %s", driftSignal, pr.msg)
	}
	// A dry-run denial must mean a real one.
	denied, _, err := b.probe(ctx, false)
	if err != nil {
		return res, err
	} else if !denied {
		return res, errors.New("a real claim was admitted while dry-run claims were denied")
	}
	res = roundResult{
		sliceAfterPost: t0.Sub(posted),
		breach:         tb.Sub(t0),
		param:          tp.Sub(t0),
		denial:         pr.deniedAt.Sub(t0),
		window:         pr.deniedAt.Sub(pr.lastAdmitted),
		probes:         pr.probes,
	}
	if cfg.operatorLog != "" {
		e, err := b.operatorEnforcement(ctx, id)
		if err != nil {
			return res, err
		}
		// Wall clocks: the log's time has no monotonic reading.
		res.decided, res.write = e.decided.Sub(t0.Round(0)), e.write
	}
	b.stage("status.breach now: %v", brNow)
	res.lift, err = b.rearm(ctx, id)
	return res, err
}

// rearm restores the devices, waits for the signal to pass, acknowledges the
// breach and waits until claims are admitted again.
func (b *bench) rearm(ctx context.Context, breachID string) (time.Duration, error) {
	o, cfg := b.obs, b.cfg
	b.stage("breach %s recorded; restoring the devices", breachID)
	if err := b.postFault(ctx, fmt.Sprintf("node=%s:missing-devices=0", cfg.node)); err != nil {
		return 0, err
	}
	if err := o.waitFor(ctx, cfg.stageTimeout, "the canary's devices to come back", func() bool { return o.devicesLocked() == o.baseline }); err != nil {
		return 0, err
	}
	b.stage("devices back")
	if err := o.waitFor(ctx, cfg.stageTimeout, driftSignal+" to Pass again", func() bool {
		return o.signalVerdictLocked(cfg.pool, driftSignal) == "Pass"
	}); err != nil {
		return 0, err
	}
	b.stage("%s passes; acknowledging", driftSignal)
	patch := fmt.Sprintf(`{"spec":{"acknowledgedBreach":%q}}`, breachID)
	if _, err := b.dyn.Resource(planGVR).Patch(ctx, cfg.plan, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		return 0, fmt.Errorf("acknowledge breach %s: %w", breachID, err)
	}
	acked := time.Now()
	for {
		denied, _, err := b.probe(ctx, true)
		if err != nil {
			return 0, err
		}
		if !denied {
			break
		}
		if time.Since(acked) > cfg.stageTimeout {
			return 0, fmt.Errorf("claims still denied %v after acknowledging breach %s", cfg.stageTimeout, breachID)
		}
		time.Sleep(20 * time.Millisecond)
	}
	lift := time.Since(acked)
	b.stage("claims admitted again")
	// Breach ids carry the second they were recorded in: the next breach must
	// fall in a later second than the acknowledged one, and the controller's
	// queue should be idle again.
	select {
	case <-time.After(cfg.settle):
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	return lift, nil
}

// startWatches starts the three informers and waits for their first lists.
func (b *bench) startWatches(ctx context.Context) error {
	o := b.obs
	f := informers.NewSharedInformerFactory(b.cs, 0)
	sliceInf := f.Resource().V1().ResourceSlices().Informer()
	if _, err := sliceInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { o.onSlice(obj, false) },
		UpdateFunc: func(_, obj any) { o.onSlice(obj, false) },
		DeleteFunc: func(obj any) { o.onSlice(obj, true) },
	}); err != nil {
		return err
	}
	pf := informers.NewSharedInformerFactoryWithOptions(b.cs, 0, informers.WithNamespace(freezeNamespace),
		informers.WithTweakListOptions(func(lo *metav1.ListOptions) {
			lo.FieldSelector = fields.OneTermEqualSelector("metadata.name", "drashift-freeze-"+b.cfg.plan).String()
		}))
	paramInf := pf.Core().V1().ConfigMaps().Informer()
	if _, err := paramInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    o.onParam,
		UpdateFunc: func(_, obj any) { o.onParam(obj) },
	}); err != nil {
		return err
	}
	df := dynamicinformer.NewFilteredDynamicSharedInformerFactory(b.dyn, 0, "", func(lo *metav1.ListOptions) {
		lo.FieldSelector = fields.OneTermEqualSelector("metadata.name", b.cfg.plan).String()
	})
	planInf := df.ForResource(planGVR).Informer()
	if _, err := planInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    o.onPlan,
		UpdateFunc: func(_, obj any) { o.onPlan(obj) },
	}); err != nil {
		return err
	}
	f.Start(ctx.Done())
	pf.Start(ctx.Done())
	df.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), sliceInf.HasSynced, paramInf.HasSynced, planInf.HasSynced) {
		return errors.New("the watches did not sync")
	}
	return nil
}

// freezeTarget is the crossing -> first denial the project aims for at 1,000 busy nodes, at the 99th percentile.
const freezeTarget = 150 * time.Millisecond

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)) }

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// percentile is the nearest-rank p-th percentile (0 < p <= 100) of ds: the
// smallest value that at least p% of ds are at or under. With fewer than 100
// rounds the 99th is the worst.
func percentile(ds []time.Duration, p float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return s[max(rank, 1)-1]
}

func run(ctx context.Context, cfg *config) error {
	rc, err := clientcmd.BuildConfigFromFlags("", cfg.kubeconfig)
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	rc.QPS = -1 // no client-side rate limit: probes go out every --probe-interval
	rc.UserAgent = "freezebench"
	b := &bench{start: time.Now(), cfg: cfg, obs: newObserver(cfg), httpc: &http.Client{Timeout: 10 * time.Second}}
	if b.cs, err = kubernetes.NewForConfig(rc); err != nil {
		return err
	}
	if b.dyn, err = dynamic.NewForConfig(rc); err != nil {
		return err
	}
	if err := b.startWatches(ctx); err != nil {
		return err
	}
	rate, err := b.countEvents(ctx)
	if err != nil {
		return err
	}
	o := b.obs
	if err := o.waitFor(ctx, cfg.stageTimeout, "the canary's ResourceSlice", func() bool { return o.devicesLocked() > cfg.missing }); err != nil {
		return err
	}
	o.mu.Lock()
	o.baseline = o.devicesLocked()
	if o.plan == nil {
		o.mu.Unlock()
		return fmt.Errorf("no MigrationPlan %s", cfg.plan)
	}
	if id, _, _ := unstructured.NestedString(o.plan.Object, "status", "breach", "id"); id != "" {
		o.oldBreach[id] = true
	}
	o.mu.Unlock()
	if denied, msg, err := b.probe(ctx, true); err != nil {
		return err
	} else if denied {
		return fmt.Errorf("claims are denied before the first fault: %s", msg)
	}

	if err := b.createRounds(ctx); err != nil {
		return err
	}
	fmt.Printf("canary %s: %d devices in its %s slice; fault: missing-devices=%d; a dry-run claim every %v\n\n",
		cfg.node, o.baseline, cfg.driver, cfg.missing, cfg.probeInterval)
	fmt.Println("       slice seen  ---------------------------- after the signal crossing (t0) ----------------------------          probes   lift after")
	fmt.Println("round  after POST  drashift decided  parameter write took  status.breach  parameter  first 403   window   sent     acknowledging")
	split := func(d time.Duration) string {
		if cfg.operatorLog == "" {
			return "-"
		}
		return ms(d)
	}
	row := func(label string, r roundResult) {
		fmt.Printf("%-5s %11s %17s %21s %14s %10s %10s %8s %6d %17s\n", label, ms(r.sliceAfterPost), split(r.decided),
			split(r.write), ms(r.breach), ms(r.param), ms(r.denial), ms(r.window), r.probes, ms(r.lift))
	}
	var all []roundResult
	for i := 1; i <= cfg.rounds; i++ {
		r, err := b.round(ctx)
		if err != nil {
			return fmt.Errorf("round %d: %w", i, err)
		}
		all = append(all, r)
		row(fmt.Sprint(i), r)
	}
	// each is one column of the rounds.
	each := func(get func(roundResult) time.Duration) []time.Duration {
		ds := make([]time.Duration, len(all))
		for i, r := range all {
			ds[i] = get(r)
		}
		return ds
	}
	med := func(get func(roundResult) time.Duration) time.Duration { return median(each(get)) }
	denials := each(func(r roundResult) time.Duration { return r.denial })
	lifts := each(func(r roundResult) time.Duration { return r.lift })
	row("med", roundResult{
		sliceAfterPost: med(func(r roundResult) time.Duration { return r.sliceAfterPost }),
		breach:         med(func(r roundResult) time.Duration { return r.breach }),
		param:          med(func(r roundResult) time.Duration { return r.param }),
		denial:         median(denials),
		window:         med(func(r roundResult) time.Duration { return r.window }),
		probes:         int(med(func(r roundResult) time.Duration { return time.Duration(r.probes) })),
		lift:           median(lifts),
		decided:        med(func(r roundResult) time.Duration { return r.decided }),
		write:          med(func(r roundResult) time.Duration { return r.write }),
	})

	// Dry-run stored nothing, and the admission checks left nothing behind.
	list, err := b.cs.ResourceV1().ResourceClaims(cfg.namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	if len(list.Items) > 0 || b.claims > 0 {
		return fmt.Errorf("%d claims stored in %s (%d admitted by real creates): dry-run probes must store nothing", len(list.Items), cfg.namespace, b.claims)
	}
	under := 0
	for _, d := range denials {
		if d <= freezeTarget {
			under++
		}
	}
	fmt.Printf("\nfreeze: rounds %d  median %s  p95 %s  p99 %s  worst %s  (signal crossing = ResourceSlice update seen by the benchmark's watch; first denial = first 403 of a dry-run claim CREATE)\n",
		len(all), ms(median(denials)), ms(percentile(denials, 95)), ms(percentile(denials, 99)), ms(slices.Max(denials)))
	fmt.Printf("freeze: %d of %d rounds within %s\n", under, len(all), ms(freezeTarget))
	if cfg.operatorLog != "" {
		decided := each(func(r roundResult) time.Duration { return r.decided })
		writes := each(func(r roundResult) time.Duration { return r.write })
		fmt.Printf("of that, drashift deciding (t0 -> the parameter's write sent): median %s  p99 %s  worst %s\n",
			ms(median(decided)), ms(percentile(decided, 99)), ms(slices.Max(decided)))
		fmt.Printf("         the API server writing the parameter (sent -> answered): median %s  p99 %s  worst %s\n",
			ms(median(writes)), ms(percentile(writes, 99)), ms(slices.Max(writes)))
	}
	fmt.Printf("acknowledged -> claims admitted again: median %s  worst %s\n", ms(median(lifts)), ms(slices.Max(lifts)))
	fmt.Printf("cluster: %s\n", rate.summary())
	return nil
}

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "freezebench:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg); err != nil {
		if ctx.Err() != nil {
			fmt.Fprintln(os.Stderr, "freezebench: interrupted")
			os.Exit(130)
		}
		fmt.Fprintln(os.Stderr, "freezebench: error:", err)
		os.Exit(1)
	}
}
