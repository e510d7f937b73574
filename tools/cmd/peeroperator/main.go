// Command peeroperator is the operator drashift is compared with in
// tools/bench scale: one written the usual way, in Go with
// sigs.k8s.io/controller-runtime, whose manager caches the kinds
// drashift-controller caches (Nodes, Pods, ResourceClaims, ResourceSlices,
// DeviceClasses as typed objects; MigrationPlans as unstructured, as an
// operator without generated types for a CRD does) and runs a controller
// for MigrationPlans. It migrates nothing: its reconciler reads the plan from
// the cache and returns, so what it costs is the cost of the cache and the
// machinery around it.
//
// It prints "synced SECONDS" on stdout once WaitForCacheSync returns (seconds
// since the process started) and serves the number of objects each informer
// has added and not deleted on http://ADDR/counts, one "RESOURCE N" line each,
// and its live heap after the last GC ("heap-live-bytes N"), so the benchmark
// can wait until both operators hold the same objects before it reads their
// RSS, and show the heap beside it. Counting in event handlers keeps reads of that endpoint
// from copying the cache, which would show in the RSS being measured.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

var planGVK = schema.GroupVersionKind{Group: "drashift.io", Version: "v1alpha1", Kind: "MigrationPlan"}

// planReconciler reads the plan from the cache, as any reconciler starts.
type planReconciler struct{ client client.Client }

func (r planReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	plan := &unstructured.Unstructured{}
	plan.SetGroupVersionKind(planGVK)
	return reconcile.Result{}, client.IgnoreNotFound(r.client.Get(ctx, req.NamespacedName, plan))
}

func main() {
	start := time.Now()
	// --kubeconfig is controller-runtime's own flag (ctrl.GetConfig reads it).
	addr := flag.String("addr", "127.0.0.1:0", "address of the /counts endpoint")
	flag.Parse()
	log.SetLogger(zap.New(zap.UseDevMode(false)))
	if err := run(start, *addr); err != nil {
		fmt.Fprintln(os.Stderr, "peeroperator:", err)
		os.Exit(1)
	}
}

func run(start time.Time, addr string) error {
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return err
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		return err
	}
	plan := &unstructured.Unstructured{}
	plan.SetGroupVersionKind(planGVK)
	if err := ctrl.NewControllerManagedBy(mgr).For(plan).Named("migrationplan").
		Complete(planReconciler{client: mgr.GetClient()}); err != nil {
		return err
	}

	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer cancel()
	counts := newCounts()
	kinds := []struct {
		resource string
		obj      client.Object
	}{
		{"nodes", &corev1.Node{}},
		{"pods", &corev1.Pod{}},
		{"resourceclaims", &resourcev1.ResourceClaim{}},
		{"resourceslices", &resourcev1.ResourceSlice{}},
		{"deviceclasses", &resourcev1.DeviceClass{}},
		{"migrationplans", plan},
	}
	for _, k := range kinds {
		inf, err := mgr.GetCache().GetInformer(ctx, k.obj)
		if err != nil {
			return fmt.Errorf("informer for %s: %w", k.resource, err)
		}
		if _, err := inf.AddEventHandler(counts.handler(k.resource)); err != nil {
			return err
		}
	}

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/counts", func(w http.ResponseWriter, _ *http.Request) { counts.write(w) })
	go func() { _ = http.Serve(ln, mux) }()
	fmt.Printf("counts http://%s/counts\n", ln.Addr())

	errc := make(chan error, 1)
	go func() { errc <- mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return fmt.Errorf("caches did not sync: %v", <-errc)
	}
	fmt.Printf("synced %.3f\n", time.Since(start).Seconds())
	return <-errc
}
