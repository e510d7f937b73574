// Command fleetsim plays kubelet, device plugin and DRA driver for a fleet of
// fake GPU nodes against a real Kubernetes API server (the control plane of
// tools/testenv). There is no kubelet in that control plane: nodes are plain
// Node objects, so something has to keep them Ready, advertise their devices
// the way a device plugin or a DRA driver would, and move bound pods through
// their lifecycle. fleetsim does that, and while it does, it checks the two
// invariants a migration from device plugins to DRA must never break: no node
// owned by both, no device handed to two pods.
//
// It is written against client-go, independent of drashift's own C client, so
// that a bug in one cannot hide a bug in the other.
//
// Files:
//
//	main.go         flags, wiring, signal handling, the final report
//	nodes.go        Node objects, Ready condition, node Lease, the not-ready taint
//	deviceplugin.go extended-resource capacity/allocatable from the ownership label
//	driver.go       ResourceSlices from the ownership label, driver registration
//	kubelet.go      bound pods: prepare, run, complete, terminate, finalize
//	invariants.go   double ownership and double allocation checks
//	workload.go     the job generator for tenant namespaces
//	metrics.go      counters, gauges, /metrics, the JSON report
//	faults.go       per-pool and per-node fault knobs, POST /faults
//	shapes.go       device shapes per pool: time-slicing, MIG, partitionable
//	                devices, several slices, a NIC driver; GFD's labels
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	resourcelisters "k8s.io/client-go/listers/resource/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// PoolSpec is one entry of --pools: NAME:NODESxGPUS.
type PoolSpec struct {
	Name  string `json:"name"`
	Nodes int    `json:"nodes"`
	GPUs  int    `json:"gpus"`
}

// Config holds every flag.
type Config struct {
	Kubeconfig        string
	Pools             []PoolSpec
	Shapes            map[string]*Shape
	PoolLabel         string
	ModelLabel        string
	GPUModel          string
	GPUMemory         string
	FeatureLabels     int
	ExtendedResource  string
	Driver            string
	DeviceClass       string
	DaemonSetNS       string
	DevicePluginLabel string
	DRALabel          string
	EnabledValue      string
	DisabledValue     string
	InitialOwner      string
	MetricsAddr       string
	CapacityLag       time.Duration
	PrepareDelay      time.Duration
	StartDelay        time.Duration
	SliceRemovalDelay time.Duration
	Heartbeat         time.Duration
	StatusReport      time.Duration
	Faults            string
	Report            string
	Seed              uint64

	Workload          []string
	WorkloadResources []string
	Rate              float64
	Duration          time.Duration
	JobDuration       time.Duration
	Mix               float64
}

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

func parsePools(s string) ([]PoolSpec, error) {
	var pools []PoolSpec
	seen := map[string]bool{}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, shape, ok := strings.Cut(item, ":")
		nodes, gpus, ok2 := strings.Cut(shape, "x")
		if !ok || !ok2 {
			return nil, fmt.Errorf("pool %q: want NAME:NODESxGPUS, e.g. a:4x8", item)
		}
		if !dnsLabel.MatchString(name) || len(name) > 50 {
			return nil, fmt.Errorf("pool %q: the name must be a short DNS label (it prefixes node names)", item)
		}
		if seen[name] {
			return nil, fmt.Errorf("pool %q given twice", name)
		}
		seen[name] = true
		n, err1 := strconv.Atoi(nodes)
		g, err2 := strconv.Atoi(gpus)
		if err1 != nil || err2 != nil || n < 1 || n > 250 || g < 1 || g > 128 {
			return nil, fmt.Errorf("pool %q: 1..250 nodes of 1..128 GPUs", item)
		}
		pools = append(pools, PoolSpec{Name: name, Nodes: n, GPUs: g})
	}
	if len(pools) == 0 {
		return nil, errors.New("--pools names no pool")
	}
	return pools, nil
}

// parseRate accepts "0.5/s", "30/m", "100/h" or a bare number per second.
func parseRate(s string) (float64, error) {
	num, unit, _ := strings.Cut(strings.TrimSpace(s), "/")
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("rate %q: want a positive number per s, m or h (0.5/s)", s)
	}
	switch unit {
	case "", "s":
		return v, nil
	case "m":
		return v / 60, nil
	case "h":
		return v / 3600, nil
	}
	return 0, fmt.Errorf("rate %q: unit must be s, m or h", s)
}

func parseFlags(args []string) (*Config, error) {
	c := &Config{}
	fs := flag.NewFlagSet("fleetsim", flag.ContinueOnError)
	var pools, workload, rate, shapes, workloadResources string
	fs.StringVar(&c.Kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the cluster to simulate nodes in")
	fs.StringVar(&pools, "pools", "a:4x8", "pools as NAME:NODESxGPUS[,...]; nodes are named NAME-0..NAME-(NODES-1)")
	fs.StringVar(&shapes, "shapes", "", "device shapes per pool, e.g. ts:replicas=4,mig:mig=1g.10gb*3+3g.40gb*1,mig:partitionable,mig:slices=2,a:nic=2 (shapes.go)")
	fs.StringVar(&c.PoolLabel, "pool-label", "drashift.io/pool", "node label carrying the pool name")
	fs.StringVar(&c.ModelLabel, "model-label", "fleetsim.drashift.io/gpu-model", "node label carrying the GPU model")
	fs.StringVar(&c.GPUModel, "gpu-model", "sim-a100", "GPU model (node label and device attribute)")
	fs.StringVar(&c.GPUMemory, "gpu-memory", "80Gi", "memory capacity of each simulated GPU")
	fs.IntVar(&c.FeatureLabels, "feature-labels", 0, "labels in the style of Node Feature Discovery and GPU Feature Discovery on each node (nvidia.com/gpu.*, feature.node.kubernetes.io/cpu-cpuid.*, ...); a real GPU node has about 200")
	fs.StringVar(&c.ExtendedResource, "extended-resource", "example.com/gpu", "extended resource the device plugin advertises")
	fs.StringVar(&c.Driver, "driver", "gpu.example.com", "DRA driver name")
	fs.StringVar(&c.DeviceClass, "device-class", "gpu.example.com", "DeviceClass to create (empty: none)")
	fs.StringVar(&c.DaemonSetNS, "daemonset-namespace", "kube-system", "namespace of the device plugin's and the DRA driver's DaemonSets fleetsim creates, selecting the ownership labels (empty: none)")
	fs.StringVar(&c.DevicePluginLabel, "device-plugin-label", "drashift.io/device-plugin", "node label that enables the device plugin")
	fs.StringVar(&c.DRALabel, "dra-label", "drashift.io/dra-driver", "node label that enables the DRA driver")
	fs.StringVar(&c.EnabledValue, "enabled-value", "true", "ownership label value meaning enabled")
	fs.StringVar(&c.DisabledValue, "disabled-value", "false", "ownership label value meaning disabled (any other value or no label is disabled too)")
	fs.StringVar(&c.InitialOwner, "initial-owner", "device-plugin", "owner labelled on nodes fleetsim creates: device-plugin, dra or none")
	fs.StringVar(&c.MetricsAddr, "metrics-addr", "127.0.0.1:0", "listen address of /metrics, /faults, /healthz")
	fs.DurationVar(&c.CapacityLag, "capacity-lag", 5*time.Minute, "delay from allocatable dropping to capacity dropping when the device plugin stops (the kubelet's endpoint grace period: 5m)")
	fs.DurationVar(&c.PrepareDelay, "prepare-delay", 500*time.Millisecond, "NodePrepareResources latency")
	fs.DurationVar(&c.StartDelay, "start-delay", 200*time.Millisecond, "container start latency for pods without claims")
	fs.DurationVar(&c.SliceRemovalDelay, "slice-removal-delay", 30*time.Second, "delay before a stopped driver's ResourceSlices are deleted (the kubelet's wiping delay: 30s)")
	fs.DurationVar(&c.Heartbeat, "heartbeat", 10*time.Second, "Lease renewal, and the interval at which a node's status is computed and written when it changed, as a changed extended resource (the kubelet's nodeStatusUpdateFrequency: 10s)")
	fs.DurationVar(&c.StatusReport, "status-report", 5*time.Minute, "an unchanged node status is written again this long after the last write (the kubelet's nodeStatusReportFrequency: 5m); its heartbeat is the Lease")
	fs.StringVar(&c.Faults, "faults", "", "faults, e.g. pool=a:prepare-delay=5s,node=a-1:prepare-fail-rate=0.5,node=a-2:driver-crash,node=a-3:missing-devices=2")
	fs.StringVar(&c.Report, "report", "", "write a JSON report with all counters here on SIGTERM/SIGINT")
	fs.Uint64Var(&c.Seed, "seed", 0, "random seed for fault rolls and the workload mix (0: from the clock)")
	fs.StringVar(&workload, "workload", "", "tenant namespaces to submit jobs in (comma separated; empty: no workload)")
	fs.StringVar(&rate, "rate", "0.5/s", "job submission rate across all tenant namespaces")
	fs.DurationVar(&c.Duration, "duration", 5*time.Minute, "how long to submit jobs")
	fs.DurationVar(&c.JobDuration, "job-duration", 30*time.Second, "how long each job's pod runs")
	fs.StringVar(&workloadResources, "workload-resources", "", "extended resources device-plugin jobs ask for, in turn (comma separated; empty: --extended-resource)")
	fs.Float64Var(&c.Mix, "mix", 0.5, "fraction of jobs that use a ResourceClaimTemplate; the rest request the extended resource")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	var err error
	if c.Pools, err = parsePools(pools); err != nil {
		return nil, err
	}
	if c.Shapes, err = parseShapes(shapes, c.Pools); err != nil {
		return nil, err
	}
	for _, r := range strings.Split(workloadResources, ",") {
		if r = strings.TrimSpace(r); r != "" {
			c.WorkloadResources = append(c.WorkloadResources, r)
		}
	}
	if len(c.WorkloadResources) == 0 {
		c.WorkloadResources = []string{c.ExtendedResource}
	}
	switch c.InitialOwner {
	case "device-plugin", "dra", "none":
	default:
		return nil, fmt.Errorf("--initial-owner %q: one of device-plugin, dra, none", c.InitialOwner)
	}
	if c.EnabledValue == c.DisabledValue {
		return nil, errors.New("--enabled-value and --disabled-value must differ")
	}
	if c.DevicePluginLabel == c.DRALabel {
		return nil, errors.New("--device-plugin-label and --dra-label must differ")
	}
	if c.FeatureLabels < 0 {
		return nil, errors.New("--feature-labels is a count, 0 or more")
	}
	if c.Mix < 0 || c.Mix > 1 {
		return nil, errors.New("--mix is a fraction between 0 and 1")
	}
	if c.Heartbeat < time.Second {
		return nil, errors.New("--heartbeat must be at least 1s")
	}
	if c.StatusReport < c.Heartbeat {
		return nil, errors.New("--status-report must be at least --heartbeat")
	}
	for _, ns := range strings.Split(workload, ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			if !dnsLabel.MatchString(ns) {
				return nil, fmt.Errorf("--workload: %q is not a namespace name", ns)
			}
			c.Workload = append(c.Workload, ns)
		}
	}
	if c.Rate, err = parseRate(rate); err != nil {
		return nil, err
	}
	if c.Seed == 0 {
		c.Seed = uint64(time.Now().UnixNano())
	}
	return c, nil
}

// Sim is the whole simulated fleet: one process standing in for the kubelets,
// device plugins and DRA drivers of every node.
type Sim struct {
	cfg     *Config
	client  kubernetes.Interface
	metrics *Metrics
	faults  *Faults
	inv     *Invariants

	rngMu sync.Mutex
	rng   *rand.Rand

	nodes     map[string]*simNode // fixed at start; the map is never written afterwards
	nodeOrder []string

	nodeLister  corelisters.NodeLister
	podLister   corelisters.PodLister
	podIndexer  cache.Indexer
	claimLister resourcelisters.ResourceClaimLister
	// The driver's slices as the informer has them, with the driver's own
	// writes seen at once, as the upstream resourceslice controller keeps
	// them: a sync that ran before the informer showed the last write would
	// otherwise find the pool split across two generations and write it all
	// again, and keep readers seeing it incomplete.
	slices cache.MutationCache

	nodeQueue workqueue.TypedRateLimitingInterface[string]
	podQueue  workqueue.TypedRateLimitingInterface[string]

	podsMu sync.Mutex
	pods   map[string]*podState // by namespace/name, only touched by that key's worker

	broadcaster record.EventBroadcaster
	recMu       sync.Mutex
	recorders   map[string]record.EventRecorder

	invDirty chan struct{}
}

func (s *Sim) randFloat() float64 {
	s.rngMu.Lock()
	defer s.rngMu.Unlock()
	return s.rng.Float64()
}

// recorder returns an event recorder that reports as the kubelet of one node,
// the way `kubectl describe pod` shows kubelet events (source kubelet, host).
func (s *Sim) recorder(node string) record.EventRecorder {
	s.recMu.Lock()
	defer s.recMu.Unlock()
	r, ok := s.recorders[node]
	if !ok {
		r = s.broadcaster.NewRecorder(scheme.Scheme, v1.EventSource{Component: "kubelet", Host: node})
		s.recorders[node] = r
	}
	return r
}

const (
	nodeIndex = "spec.nodeName"
)

func main() {
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	log.SetPrefix("fleetsim: ")
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		log.Printf("error: %v", err)
		os.Exit(2)
	}
	if err := run(cfg); err != nil {
		log.Printf("error: %v", err)
		os.Exit(1)
	}
}

func run(cfg *Config) error {
	restCfg, err := clientcmd.BuildConfigFromFlags("", cfg.Kubeconfig)
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	// One client speaks for the whole fleet, and every kubelet has a rate
	// limit of its own (kubeAPIQPS 50): a shared limit would queue a big
	// fleet's heartbeats behind each other (at 100 QPS, 1,000 Leases alone
	// took all of it). No client limit: the API server's priority and
	// fairness limits a fleet, as it limits a real one.
	restCfg.QPS = -1
	restCfg.UserAgent = "fleetsim"
	client, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return err
	}

	s := &Sim{
		cfg:       cfg,
		client:    client,
		metrics:   newMetrics(),
		inv:       newInvariants(),
		rng:       rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
		nodes:     map[string]*simNode{},
		pods:      map[string]*podState{},
		recorders: map[string]record.EventRecorder{},
		invDirty:  make(chan struct{}, 1),
	}
	for pi, p := range cfg.Pools {
		for i := range p.Nodes {
			n := newSimNode(p, pi, i)
			if sh := cfg.Shapes[p.Name]; sh != nil {
				n.shape = sh
			}
			s.nodes[n.name] = n
			s.nodeOrder = append(s.nodeOrder, n.name)
		}
	}
	s.faults = newFaults(cfg.Pools, s.nodes)
	if cfg.Faults != "" {
		if err := s.faults.Apply(cfg.Faults); err != nil {
			return fmt.Errorf("--faults: %w", err)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// Listen before anything else so a test can read the address at once.
	ln, err := net.Listen("tcp", cfg.MetricsAddr)
	if err != nil {
		return fmt.Errorf("metrics listener: %w", err)
	}
	srv := &http.Server{Handler: s.httpHandler(), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Printf("metrics server: %v", err)
		}
	}()
	fmt.Printf("metrics http://%s\n", ln.Addr())

	s.broadcaster = record.NewBroadcaster(record.WithContext(ctx))
	s.broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})

	if err := s.ensureDeviceClass(ctx); err != nil {
		return err
	}
	if err := s.ensureDaemonSets(ctx); err != nil {
		return err
	}
	if err := s.registerNodes(ctx); err != nil {
		return err
	}

	s.nodeQueue = workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "nodes"})
	s.podQueue = workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "pods"})

	// Informers with a resync: a missed or coalesced event is made good within
	// the resync period, as in any controller.
	const resync = 30 * time.Second
	nodeFactory := informers.NewSharedInformerFactoryWithOptions(client, resync,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = cfg.PoolLabel }))
	factory := informers.NewSharedInformerFactory(client, resync)
	sliceFactory := informers.NewSharedInformerFactoryWithOptions(client, resync,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("spec.driver", cfg.Driver).String()
		}))

	nodeInf := nodeFactory.Core().V1().Nodes()
	podInf := factory.Core().V1().Pods()
	claimInf := factory.Resource().V1().ResourceClaims()
	sliceInf := sliceFactory.Resource().V1().ResourceSlices()
	byNode := cache.Indexers{nodeIndex: func(obj any) ([]string, error) {
		switch o := obj.(type) {
		case *v1.Pod:
			return []string{o.Spec.NodeName}, nil
		case *resourcev1.ResourceSlice:
			return []string{ptr.Deref(o.Spec.NodeName, "")}, nil
		}
		return nil, nil
	}}
	if err := podInf.Informer().AddIndexers(byNode); err != nil {
		return err
	}
	if err := sliceInf.Informer().AddIndexers(byNode); err != nil {
		return err
	}
	s.nodeLister = nodeInf.Lister()
	s.podLister = podInf.Lister()
	s.podIndexer = podInf.Informer().GetIndexer()
	s.claimLister = claimInf.Lister()
	// Room for a few slices per node; an entry pushed out only costs one
	// rewrite the informer would have spared.
	s.slices = cache.NewIntegerResourceVersionMutationCacheWithOptions(klog.Background(), sliceInf.Informer().GetStore(),
		cache.MutationCacheOptions{Indexer: sliceInf.Informer().GetIndexer(), TTL: time.Minute, IncludeAdds: true,
			MaxCacheSize: max(100, 4*len(s.nodes))})
	if err := s.addHandlers(nodeInf.Informer(), podInf.Informer(), claimInf.Informer(), sliceInf.Informer()); err != nil {
		return err
	}
	nodeFactory.Start(ctx.Done())
	factory.Start(ctx.Done())
	sliceFactory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), nodeInf.Informer().HasSynced, podInf.Informer().HasSynced,
		claimInf.Informer().HasSynced, sliceInf.Informer().HasSynced) {
		return errors.New("informer caches did not sync")
	}

	var wg sync.WaitGroup
	startWorkers := func(n int, f func(context.Context)) {
		for range n {
			wg.Add(1)
			go func() { defer wg.Done(); f(ctx) }()
		}
	}
	startWorkers(8, s.nodeWorker)
	startWorkers(4, s.podWorker)
	wg.Add(2)
	go func() { defer wg.Done(); s.heartbeatLoop(ctx) }()
	go func() { defer wg.Done(); s.invariantLoop(ctx) }()
	for _, name := range s.nodeOrder {
		s.nodeQueue.Add(name)
	}

	workloadDone := make(chan struct{})
	if len(cfg.Workload) > 0 {
		go func() { defer close(workloadDone); s.runWorkload(ctx) }()
	} else {
		close(workloadDone)
	}

	fmt.Printf("ready nodes=%d pools=%d\n", len(s.nodes), len(cfg.Pools))
	log.Printf("simulating %d nodes in %d pools; driver %s, extended resource %s",
		len(s.nodes), len(cfg.Pools), cfg.Driver, cfg.ExtendedResource)

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	sig := <-sigs
	log.Printf("%v: shutting down", sig)

	// One last full check so the report reflects the final state.
	s.checkInvariants()
	cancel()
	s.nodeQueue.ShutDown()
	s.podQueue.ShutDown()
	waitTimeout(&wg, 5*time.Second)
	<-workloadDone
	s.broadcaster.Shutdown()
	shutdownCtx, done := context.WithTimeout(context.Background(), 2*time.Second)
	defer done()
	_ = srv.Shutdown(shutdownCtx)

	if cfg.Report != "" {
		if err := s.writeReport(cfg.Report); err != nil {
			return fmt.Errorf("report: %w", err)
		}
		log.Printf("report written to %s", cfg.Report)
	}
	return nil
}

func waitTimeout(wg *sync.WaitGroup, d time.Duration) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
		log.Printf("workers did not stop within %v", d)
	}
}

// ensureDeviceClass creates the DeviceClass that selects this driver's devices
// and, where the API serves it (DRAExtendedResource, beta and on in 1.36),
// maps the extended resource to it, so pods asking for example.com/gpu can be
// served by DRA on nodes whose device plugin is off. An existing class is left
// as it is: the operator's manifests may own it.
func (s *Sim) ensureDeviceClass(ctx context.Context) error {
	if s.cfg.DeviceClass == "" {
		return nil
	}
	dc := &resourcev1.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: s.cfg.DeviceClass, Labels: map[string]string{"app.kubernetes.io/managed-by": "fleetsim"}},
		Spec: resourcev1.DeviceClassSpec{
			Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{
				Expression: fmt.Sprintf("device.driver == %q", s.cfg.Driver),
			}}},
			ExtendedResourceName: ptr.To(s.cfg.ExtendedResource),
		},
	}
	got, err := s.client.ResourceV1().DeviceClasses().Create(ctx, dc, metav1.CreateOptions{})
	switch {
	case apierrors.IsAlreadyExists(err):
		log.Printf("DeviceClass %s exists; left as it is", s.cfg.DeviceClass)
		return nil
	case apierrors.IsInvalid(err) || apierrors.IsBadRequest(err):
		// An API server that rejects the field: create the class without it.
		log.Printf("DeviceClass with extendedResourceName rejected (%v); creating it without", err)
		dc.Spec.ExtendedResourceName = nil
		_, err = s.client.ResourceV1().DeviceClasses().Create(ctx, dc, metav1.CreateOptions{})
		return err
	case err != nil:
		return fmt.Errorf("create DeviceClass %s: %w", s.cfg.DeviceClass, err)
	}
	if got.Spec.ExtendedResourceName == nil {
		// Disabled feature gates drop the field silently.
		log.Printf("DeviceClass %s created; the API server dropped extendedResourceName (DRAExtendedResource off)", got.Name)
	} else {
		log.Printf("DeviceClass %s created, extendedResourceName %s", got.Name, *got.Spec.ExtendedResourceName)
	}
	return nil
}

func (s *Sim) httpHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		s.writeMetrics(w)
	})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/faults", func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
		case http.MethodPost:
			body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			spec := strings.TrimSpace(string(body))
			if err := s.faults.Apply(spec); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			log.Printf("faults changed: %s", spec)
			s.metrics.faultChanges.Add(1)
			// Fault changes act like driver restarts or config pushes: every
			// node re-evaluates its driver state and slices.
			for _, name := range s.nodeOrder {
				s.nodeQueue.Add(name)
			}
		default:
			http.Error(w, "GET or POST", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(s.faults.Snapshot())
	})
	return mux
}

// addHandlers routes informer events to the work queues and the invariant
// checker. Handlers only enqueue keys: the work happens in the workers, where
// a key is never handled twice at once and failures retry with backoff.
func (s *Sim) addHandlers(nodeInf, podInf, claimInf, sliceInf cache.SharedIndexInformer) error {
	unwrap := func(obj any) any {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			return t.Obj
		}
		return obj
	}
	onNode := func(obj any) {
		n, ok := unwrap(obj).(*v1.Node)
		if !ok || s.nodes[n.Name] == nil {
			return
		}
		s.nodeQueue.Add(n.Name)
		s.checkOwnership(n)
		s.markDirty()
	}
	onPod := func(obj any) {
		p, ok := unwrap(obj).(*v1.Pod)
		if !ok || s.nodes[p.Spec.NodeName] == nil {
			return
		}
		if key, err := cache.MetaNamespaceKeyFunc(p); err == nil {
			s.podQueue.Add(key)
		}
		s.markDirty()
	}
	onClaim := func(obj any) {
		c, ok := unwrap(obj).(*resourcev1.ResourceClaim)
		if !ok {
			return
		}
		// The pods a claim is reserved for may be waiting for it.
		for _, r := range c.Status.ReservedFor {
			if r.Resource == "pods" && r.APIGroup == "" {
				s.podQueue.Add(c.Namespace + "/" + r.Name)
			}
		}
		s.markDirty()
	}
	// One handler for the slices, so the driver's view learns of a change
	// before the node's sync that the change queues can read it.
	onSlice := func(obj any, deleted bool) {
		sl, ok := unwrap(obj).(*resourcev1.ResourceSlice)
		if !ok {
			return
		}
		if deleted {
			s.slices.OnDelete(sl)
		} else {
			s.slices.OnAddOrUpdate(sl)
		}
		if sl.Spec.NodeName == nil || s.nodes[*sl.Spec.NodeName] == nil {
			return
		}
		// Someone else changed or deleted our slice: the driver puts it back.
		s.nodeQueue.Add(*sl.Spec.NodeName)
		s.markDirty()
	}
	if _, err := sliceInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { onSlice(obj, false) },
		UpdateFunc: func(_, obj any) { onSlice(obj, false) },
		DeleteFunc: func(obj any) { onSlice(obj, true) },
	}); err != nil {
		return err
	}
	handlers := []struct {
		inf cache.SharedIndexInformer
		f   func(any)
	}{{nodeInf, onNode}, {podInf, onPod}, {claimInf, onClaim}}
	for _, h := range handlers {
		f := h.f
		if _, err := h.inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    f,
			UpdateFunc: func(_, obj any) { f(obj) },
			DeleteFunc: f,
		}); err != nil {
			return err
		}
	}
	return nil
}
