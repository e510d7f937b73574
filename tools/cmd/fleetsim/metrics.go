package main

// Counters and gauges, exposed on /metrics in the Prometheus text format
// (written by hand: a dozen series do not need a registry) and in the final
// JSON report. Counters are atomics bumped where things happen; gauges are
// computed from the informer caches at scrape time, so they cannot drift.

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

type Metrics struct {
	started time.Time

	doubleOwnership  atomic.Int64
	doubleAllocation atomic.Int64

	prepares        atomic.Int64
	preparesFailed  atomic.Int64
	unprepares      atomic.Int64
	driverMissing   atomic.Int64 // prepare attempts refused: driver not registered
	admissionFailed atomic.Int64 // device-plugin pods rejected at admission

	podsStarted   [numPaths]atomic.Int64
	podsRunning   [numPaths]atomic.Int64
	podsCompleted atomic.Int64
	podsFinalized atomic.Int64
	podsStuck     atomic.Int64 // gauge: deleted pods waiting for their driver to unprepare

	slicePublishes atomic.Int64
	sliceDeletes   atomic.Int64
	nodeHeartbeats atomic.Int64
	apiErrors      atomic.Int64
	faultChanges   atomic.Int64

	jobsCreated      [numPaths]atomic.Int64
	jobCreateErrors  atomic.Int64
	workloadFinished atomic.Bool

	draOps opHistogram // the kubelet's dra_operations_duration_seconds, per simulated node
}

// draBuckets span prepare delays from 0.1 s to 30 s, fine enough for a
// histogram_quantile to tell a 0.5 s prepare from a 5 s one.
var draBuckets = []float64{0.1, 0.2, 0.3, 0.5, 0.75, 1, 2, 3, 5, 10, 15, 20, 30}

type opKey struct {
	node, op string
	isError  bool
}

type opSeries struct {
	buckets []uint64 // per bucket, not cumulative; one more for +Inf
	count   uint64
	sum     float64
}

// opHistogram is the DRA kubelet's histogram of gRPC operations as each
// simulated node's kubelet would export it, with a node label standing for
// the instance label a real scrape of every kubelet adds.
type opHistogram struct {
	mu     sync.Mutex
	series map[opKey]*opSeries
}

func (h *opHistogram) observe(node, op string, isError bool, seconds float64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.series == nil {
		h.series = map[opKey]*opSeries{}
	}
	k := opKey{node, op, isError}
	s := h.series[k]
	if s == nil {
		s = &opSeries{buckets: make([]uint64, len(draBuckets)+1)}
		h.series[k] = s
	}
	i := sort.SearchFloat64s(draBuckets, seconds) // the first bucket whose bound is >= seconds
	s.buckets[i]++
	s.count++
	s.sum += seconds
}

func (h *opHistogram) write(w io.Writer) {
	h.mu.Lock()
	defer h.mu.Unlock()
	const name = "dra_operations_duration_seconds"
	fmt.Fprintf(w, "# HELP %s Latency histogram in seconds of DRA operations (the kubelet's), by node.\n# TYPE %s histogram\n", name, name)
	keys := make([]opKey, 0, len(h.series))
	for k := range h.series {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.node != b.node {
			return a.node < b.node
		}
		if a.op != b.op {
			return a.op < b.op
		}
		return !a.isError && b.isError
	})
	for _, k := range keys {
		s := h.series[k]
		l := fmt.Sprintf(`is_error="%t",node=%q,operation_name=%q`, k.isError, k.node, k.op)
		var cum uint64
		for i, b := range draBuckets {
			cum += s.buckets[i]
			fmt.Fprintf(w, "%s_bucket{%s,le=\"%g\"} %d\n", name, l, b, cum)
		}
		fmt.Fprintf(w, "%s_bucket{%s,le=\"+Inf\"} %d\n", name, l, s.count)
		fmt.Fprintf(w, "%s_sum{%s} %g\n%s_count{%s} %d\n", name, l, s.sum, name, l, s.count)
	}
}

func newMetrics() *Metrics { return &Metrics{started: time.Now()} }

// The path a pod's GPU comes through.
type podPath int

const (
	pathNone podPath = iota
	pathDevicePlugin
	pathDRA
	numPaths
)

func (p podPath) String() string {
	return [...]string{"none", "device-plugin", "dra"}[p]
}

type sample struct {
	name, help, kind string
	labels           string // already formatted: {a="b"}
	value            float64
}

// ownerState classifies a node by its ownership labels.
func (s *Sim) ownerState(n *v1.Node) string {
	dp, dra := s.dpEnabled(n), s.draEnabled(n)
	switch {
	case dp && dra:
		return "both"
	case dp:
		return "device-plugin"
	case dra:
		return "dra"
	}
	return "none"
}

func (s *Sim) samples() []sample {
	m := s.metrics
	counter := func(name, help string, v int64) sample {
		return sample{name: name, help: help, kind: "counter", value: float64(v)}
	}
	gauge := func(name, help, lbl string, v float64) sample {
		return sample{name: name, help: help, kind: "gauge", labels: lbl, value: v}
	}
	out := []sample{
		counter("fleetsim_double_ownership_total", "Times a node was seen with both ownership labels enabled.", m.doubleOwnership.Load()),
		counter("fleetsim_double_allocation_total", "Times a device was seen handed to two pods (node over-committed by device plugin + DRA, or one DRA device in two claims).", m.doubleAllocation.Load()),
		counter("fleetsim_prepares_total", "NodePrepareResources calls that ran (successful or failed).", m.prepares.Load()),
		counter("fleetsim_prepares_failed_total", "NodePrepareResources calls that failed by an injected fault.", m.preparesFailed.Load()),
		counter("fleetsim_prepare_driver_missing_total", "Prepare attempts refused because the DRA driver is not registered on the node.", m.driverMissing.Load()),
		counter("fleetsim_unprepares_total", "NodeUnprepareResources calls.", m.unprepares.Load()),
		counter("fleetsim_admission_failures_total", "Pods rejected at admission (extended resource without a device plugin, or more than one MPS unit per container).", m.admissionFailed.Load()),
		counter("fleetsim_pods_completed_total", "Pods that ran to completion.", m.podsCompleted.Load()),
		counter("fleetsim_pods_finalized_total", "Deleted pods whose deletion fleetsim finalized.", m.podsFinalized.Load()),
		counter("fleetsim_slice_publishes_total", "ResourceSlice creates and updates.", m.slicePublishes.Load()),
		counter("fleetsim_slice_deletes_total", "ResourceSlice deletions.", m.sliceDeletes.Load()),
		counter("fleetsim_node_heartbeats_total", "Node Lease renewals (a node's status is written when it changed, or every --status-report).", m.nodeHeartbeats.Load()),
		counter("fleetsim_api_errors_total", "API calls that failed (retried).", m.apiErrors.Load()),
		counter("fleetsim_fault_changes_total", "Fault changes made through POST /faults.", m.faultChanges.Load()),
		counter("fleetsim_job_create_errors_total", "Workload jobs that could not be created.", m.jobCreateErrors.Load()),
	}
	for p := podPath(0); p < numPaths; p++ {
		l := fmt.Sprintf(`{path=%q}`, p.String())
		out = append(out,
			sample{name: "fleetsim_pods_started_total", help: "Pods started, by the path their GPU came through.", kind: "counter", labels: l, value: float64(m.podsStarted[p].Load())},
			gauge("fleetsim_pods_running", "Pods running now, by the path their GPU came through.", l, float64(m.podsRunning[p].Load())))
	}
	for _, p := range []podPath{pathDevicePlugin, pathDRA} {
		out = append(out, sample{name: "fleetsim_jobs_created_total", help: "Workload jobs created, by the path they ask their GPU through.", kind: "counter",
			labels: fmt.Sprintf(`{path=%q}`, p.String()), value: float64(m.jobsCreated[p].Load())})
	}
	out = append(out, gauge("fleetsim_pods_stuck_terminating", "Pods whose containers stopped but whose claims cannot be unprepared because their driver is gone (deleted pods stay Terminating, finished pods do not reach Succeeded).", "", float64(m.podsStuck.Load())))

	owners := map[string]int{"device-plugin": 0, "dra": 0, "both": 0, "none": 0}
	if s.nodeLister != nil {
		nodes, _ := s.nodeLister.List(labels.Everything())
		for _, n := range nodes {
			if s.nodes[n.Name] != nil {
				owners[s.ownerState(n)]++
			}
		}
	}
	for _, k := range sortedKeys(owners) {
		out = append(out, gauge("fleetsim_nodes", "Simulated nodes by ownership-label state.", fmt.Sprintf(`{owner=%q}`, k), float64(owners[k])))
	}
	registered, published := 0, 0
	for _, n := range s.nodes {
		n.mu.Lock()
		if n.driverRegistered {
			registered++
		}
		if n.pluginRunning {
			published++
		}
		n.mu.Unlock()
	}
	out = append(out,
		gauge("fleetsim_drivers_registered", "Nodes whose simulated DRA driver is registered.", "", float64(registered)),
		gauge("fleetsim_device_plugins_running", "Nodes whose simulated device plugin is running.", "", float64(published)),
		gauge("fleetsim_violations_active", "Invariant violations present right now.", "", float64(s.inv.activeCount())),
	)
	return out
}

// writeMetrics writes the text format; the samples of one family must be
// contiguous, so they are grouped by name in order of first appearance.
func (s *Sim) writeMetrics(w io.Writer) {
	var order []string
	families := map[string][]sample{}
	for _, x := range s.samples() {
		if _, ok := families[x.name]; !ok {
			order = append(order, x.name)
		}
		families[x.name] = append(families[x.name], x)
	}
	for _, name := range order {
		f := families[name]
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", name, f[0].help, name, f[0].kind)
		for _, x := range f {
			fmt.Fprintf(w, "%s%s %g\n", x.name, x.labels, x.value)
		}
	}
	s.metrics.draOps.write(w)
}

// Report is the final JSON report, written on SIGTERM/SIGINT.
type Report struct {
	Started    time.Time          `json:"started"`
	Finished   time.Time          `json:"finished"`
	Seconds    float64            `json:"seconds"`
	Nodes      int                `json:"nodes"`
	Pools      []PoolSpec         `json:"pools"`
	Counters   map[string]float64 `json:"counters"`
	Violations []Violation        `json:"violations"`
	Faults     FaultSnapshot      `json:"faults"`
}

func (s *Sim) writeReport(path string) error {
	now := time.Now()
	r := Report{
		Started:    s.metrics.started,
		Finished:   now,
		Seconds:    now.Sub(s.metrics.started).Seconds(),
		Nodes:      len(s.nodes),
		Pools:      s.cfg.Pools,
		Counters:   map[string]float64{},
		Violations: s.inv.records(),
		Faults:     s.faults.Snapshot(),
	}
	for _, x := range s.samples() {
		// fleetsim_pods_running{path=dra}: no quotes, so keys stay readable in JSON.
		r.Counters[x.name+strings.ReplaceAll(x.labels, `"`, "")] = x.value
	}
	sort.Slice(r.Violations, func(i, j int) bool { return r.Violations[i].Time.Before(r.Violations[j].Time) })
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
