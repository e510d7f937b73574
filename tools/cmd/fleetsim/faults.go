package main

// Fault knobs. A fault is set for the whole fleet, a pool or a node; the most
// specific setting wins (node over pool over all), so a test can slow a whole
// pool and crash the driver of one node in it.
//
// Syntax (the --faults flag and the body of POST /faults):
//
//	ITEM[,ITEM...]               items may also be separated by newlines or ';'
//	ITEM  = SCOPE:KNOB[:KNOB...]
//	SCOPE = all | pool=NAME | node=NAME
//	KNOB  = prepare-delay=DURATION     NodePrepareResources latency
//	      | prepare-fail-rate=FLOAT    probability (0..1) that a prepare fails
//	      | driver-crash[=BOOL]        driver unregistered: slices go, prepares fail
//	      | prepare-timeout[=BOOL]     every prepare times out (gRPC DeadlineExceeded): retryable
//	      | stale-slices[=BOOL]        an unregistered driver's slices stay (the kubelet's wipe fails)
//	      | missing-devices=INT        slices publish that many devices fewer
//	      | clear                      forget every knob of this scope
//
// Example: pool=a:prepare-delay=5s,node=a-1:prepare-fail-rate=0.5,node=a-2:driver-crash
// Undo one: node=a-2:driver-crash=false (or node=a-2:clear).
// An item is validated in full before any of it applies: a typo changes nothing.

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// FaultSettings holds the knobs set on one scope; nil means "not set here".
type FaultSettings struct {
	PrepareDelay    *time.Duration `json:"prepareDelay,omitempty"`
	PrepareFailRate *float64       `json:"prepareFailRate,omitempty"`
	DriverCrash     *bool          `json:"driverCrash,omitempty"`
	MissingDevices  *int           `json:"missingDevices,omitempty"`
	PrepareTimeout  *bool          `json:"prepareTimeout,omitempty"`
	StaleSlices     *bool          `json:"staleSlices,omitempty"`
}

func (f *FaultSettings) empty() bool {
	return f.PrepareDelay == nil && f.PrepareFailRate == nil && f.DriverCrash == nil && f.MissingDevices == nil &&
		f.PrepareTimeout == nil && f.StaleSlices == nil
}

// overlay copies the knobs set in o over f.
func (f *FaultSettings) overlay(o *FaultSettings) {
	if o == nil {
		return
	}
	if o.PrepareDelay != nil {
		f.PrepareDelay = o.PrepareDelay
	}
	if o.PrepareFailRate != nil {
		f.PrepareFailRate = o.PrepareFailRate
	}
	if o.DriverCrash != nil {
		f.DriverCrash = o.DriverCrash
	}
	if o.MissingDevices != nil {
		f.MissingDevices = o.MissingDevices
	}
	if o.PrepareTimeout != nil {
		f.PrepareTimeout = o.PrepareTimeout
	}
	if o.StaleSlices != nil {
		f.StaleSlices = o.StaleSlices
	}
}

// Effective is what one node runs with, after defaults and overrides.
type Effective struct {
	PrepareDelay    time.Duration
	PrepareFailRate float64
	DriverCrash     bool
	MissingDevices  int
	PrepareTimeout  bool
	StaleSlices     bool
}

type Faults struct {
	mu    sync.Mutex
	all   FaultSettings
	pools map[string]*FaultSettings
	nodes map[string]*FaultSettings

	knownPools map[string]bool
	knownNodes map[string]bool
}

func newFaults(pools []PoolSpec, nodes map[string]*simNode) *Faults {
	f := &Faults{
		pools:      map[string]*FaultSettings{},
		nodes:      map[string]*FaultSettings{},
		knownPools: map[string]bool{},
		knownNodes: map[string]bool{},
	}
	for _, p := range pools {
		f.knownPools[p.Name] = true
	}
	for n := range nodes {
		f.knownNodes[n] = true
	}
	return f
}

type faultItem struct {
	scope, name string
	clear       bool
	set         FaultSettings
}

func parseFaultItem(item string, knownPools, knownNodes map[string]bool) (faultItem, error) {
	parts := strings.Split(item, ":")
	var fi faultItem
	scope := parts[0]
	switch {
	case scope == "all" || scope == "*":
		fi.scope = "all"
	case strings.HasPrefix(scope, "pool="):
		fi.scope, fi.name = "pool", strings.TrimPrefix(scope, "pool=")
		if !knownPools[fi.name] {
			return fi, fmt.Errorf("%q: no pool %q in this fleet", item, fi.name)
		}
	case strings.HasPrefix(scope, "node="):
		fi.scope, fi.name = "node", strings.TrimPrefix(scope, "node=")
		if !knownNodes[fi.name] {
			return fi, fmt.Errorf("%q: no node %q in this fleet", item, fi.name)
		}
	default:
		return fi, fmt.Errorf("%q: scope must be all, pool=NAME or node=NAME", item)
	}
	if len(parts) < 2 {
		return fi, fmt.Errorf("%q: no knob after the scope", item)
	}
	for _, knob := range parts[1:] {
		key, val, hasVal := strings.Cut(strings.TrimSpace(knob), "=")
		switch key {
		case "prepare-delay":
			d, err := time.ParseDuration(val)
			if err != nil || d < 0 {
				return fi, fmt.Errorf("%q: prepare-delay wants a duration such as 5s", item)
			}
			fi.set.PrepareDelay = &d
		case "prepare-fail-rate":
			r, err := strconv.ParseFloat(val, 64)
			if err != nil || r < 0 || r > 1 {
				return fi, fmt.Errorf("%q: prepare-fail-rate wants a number from 0 to 1", item)
			}
			fi.set.PrepareFailRate = &r
		case "driver-crash", "prepare-timeout", "stale-slices":
			b := true
			if hasVal {
				var err error
				if b, err = strconv.ParseBool(val); err != nil {
					return fi, fmt.Errorf("%q: %s wants true or false", item, key)
				}
			}
			switch key {
			case "driver-crash":
				fi.set.DriverCrash = &b
			case "prepare-timeout":
				fi.set.PrepareTimeout = &b
			default:
				fi.set.StaleSlices = &b
			}
		case "missing-devices":
			k, err := strconv.Atoi(val)
			if err != nil || k < 0 {
				return fi, fmt.Errorf("%q: missing-devices wants a count >= 0", item)
			}
			fi.set.MissingDevices = &k
		case "clear":
			fi.clear = true
		default:
			return fi, fmt.Errorf("%q: unknown knob %q (prepare-delay, prepare-fail-rate, driver-crash, prepare-timeout, stale-slices, missing-devices, clear)", item, key)
		}
	}
	return fi, nil
}

// Apply parses spec and, only if all of it is valid, applies it.
func (f *Faults) Apply(spec string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var items []faultItem
	for _, raw := range strings.FieldsFunc(spec, func(r rune) bool { return r == ',' || r == ';' || r == '\n' }) {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		fi, err := parseFaultItem(raw, f.knownPools, f.knownNodes)
		if err != nil {
			return err
		}
		items = append(items, fi)
	}
	if len(items) == 0 {
		return fmt.Errorf("no fault in %q", spec)
	}
	for _, fi := range items {
		var target *FaultSettings
		switch fi.scope {
		case "all":
			target = &f.all
		case "pool":
			if f.pools[fi.name] == nil {
				f.pools[fi.name] = &FaultSettings{}
			}
			target = f.pools[fi.name]
		case "node":
			if f.nodes[fi.name] == nil {
				f.nodes[fi.name] = &FaultSettings{}
			}
			target = f.nodes[fi.name]
		}
		if fi.clear {
			*target = FaultSettings{}
		}
		target.overlay(&fi.set)
	}
	for k, v := range f.pools {
		if v.empty() {
			delete(f.pools, k)
		}
	}
	for k, v := range f.nodes {
		if v.empty() {
			delete(f.nodes, k)
		}
	}
	return nil
}

// For returns the settings node runs with; defaultPrepare is --prepare-delay.
func (f *Faults) For(pool, node string, defaultPrepare time.Duration) Effective {
	f.mu.Lock()
	defer f.mu.Unlock()
	var s FaultSettings
	s.overlay(&f.all)
	s.overlay(f.pools[pool])
	s.overlay(f.nodes[node])
	e := Effective{PrepareDelay: defaultPrepare}
	if s.PrepareDelay != nil {
		e.PrepareDelay = *s.PrepareDelay
	}
	if s.PrepareFailRate != nil {
		e.PrepareFailRate = *s.PrepareFailRate
	}
	if s.DriverCrash != nil {
		e.DriverCrash = *s.DriverCrash
	}
	if s.MissingDevices != nil {
		e.MissingDevices = *s.MissingDevices
	}
	if s.PrepareTimeout != nil {
		e.PrepareTimeout = *s.PrepareTimeout
	}
	if s.StaleSlices != nil {
		e.StaleSlices = *s.StaleSlices
	}
	return e
}

// FaultSnapshot is the JSON shape of GET /faults and of the report.
type FaultSnapshot struct {
	All   FaultSettings            `json:"all"`
	Pools map[string]FaultSettings `json:"pools"`
	Nodes map[string]FaultSettings `json:"nodes"`
	Spec  string                   `json:"spec"`
}

func (f *Faults) Snapshot() FaultSnapshot {
	f.mu.Lock()
	defer f.mu.Unlock()
	snap := FaultSnapshot{All: f.all, Pools: map[string]FaultSettings{}, Nodes: map[string]FaultSettings{}}
	var spec []string
	add := func(scope string, s *FaultSettings) {
		var knobs []string
		if s.PrepareDelay != nil {
			knobs = append(knobs, "prepare-delay="+s.PrepareDelay.String())
		}
		if s.PrepareFailRate != nil {
			knobs = append(knobs, "prepare-fail-rate="+strconv.FormatFloat(*s.PrepareFailRate, 'g', -1, 64))
		}
		if s.DriverCrash != nil {
			knobs = append(knobs, "driver-crash="+strconv.FormatBool(*s.DriverCrash))
		}
		if s.MissingDevices != nil {
			knobs = append(knobs, "missing-devices="+strconv.Itoa(*s.MissingDevices))
		}
		if s.PrepareTimeout != nil {
			knobs = append(knobs, "prepare-timeout="+strconv.FormatBool(*s.PrepareTimeout))
		}
		if s.StaleSlices != nil {
			knobs = append(knobs, "stale-slices="+strconv.FormatBool(*s.StaleSlices))
		}
		if len(knobs) > 0 {
			spec = append(spec, scope+":"+strings.Join(knobs, ":"))
		}
	}
	add("all", &f.all)
	for _, k := range sortedKeys(f.pools) {
		snap.Pools[k] = *f.pools[k]
		add("pool="+k, f.pools[k])
	}
	for _, k := range sortedKeys(f.nodes) {
		snap.Nodes[k] = *f.nodes[k]
		add("node="+k, f.nodes[k])
	}
	snap.Spec = strings.Join(spec, ",")
	return snap
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
