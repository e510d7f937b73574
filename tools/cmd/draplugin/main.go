// Command draplugin is a DRA driver's kubelet plugin for tests on
// tools/testenv's real nodes, written the way real drivers are: on
// k8s.io/dynamic-resource-allocation/kubeletplugin, which registers the
// driver with the kubelet (a socket in /var/lib/kubelet/plugins_registry),
// serves the kubelet's DRA gRPC API (NodePrepareResources,
// NodeUnprepareResources) and publishes the node's ResourceSlice. It runs in
// a DaemonSet selected by drashift's DRA ownership label.
//
//	draplugin --driver gpu.example.com --devices 4 --cdi-dir /var/run/cdi
//
// It publishes one pool named after the node, devices gpu-0..gpu-(N-1). For
// each prepared claim it writes a CDI spec, CDI-DIR/DRIVER-CLAIMUID.json,
// whose devices (one per allocated device, named CLAIMUID-DEVICE, so a name
// is never reused) give the container the environment variables
// GPU_DEVICE_<DEVICE>=<DEVICE> (dashes as underscores) and DRA_CLAIM_UID.
// Unprepare removes the spec. It reports its devices healthy to the kubelet
// (WatchHealthStatus, which the helper serves as DRAResourceHealth). The node
// comes from NODE_NAME (the downward
// API), the apiserver from the in-cluster configuration. SIGTERM stops
// serving, which unregisters the plugin; its ResourceSlice stays until the
// kubelet removes it.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"
	"k8s.io/dynamic-resource-allocation/resourceslice"
	"k8s.io/utils/ptr"
)

// The subset of a CDI spec (github.com/cncf-tags/container-device-interface,
// specs-go) this driver writes.
type cdiSpec struct {
	Version string      `json:"cdiVersion"`
	Kind    string      `json:"kind"`
	Devices []cdiDevice `json:"devices"`
}

type cdiDevice struct {
	Name           string            `json:"name"`
	ContainerEdits cdiContainerEdits `json:"containerEdits"`
}

type cdiContainerEdits struct {
	Env []string `json:"env"`
}

type driver struct {
	name    string
	kind    string // CDI kind: DRIVER/gpu
	cdiDir  string
	pool    string // the node's name
	devices []resourceapi.Device
	cancel  context.CancelCauseFunc
}

func (d *driver) specPath(claim types.UID) string {
	return filepath.Join(d.cdiDir, d.name+"-"+string(claim)+".json")
}

func (d *driver) PrepareResourceClaims(_ context.Context, claims []*resourceapi.ResourceClaim) (map[types.UID]kubeletplugin.PrepareResult, error) {
	result := make(map[types.UID]kubeletplugin.PrepareResult, len(claims))
	for _, claim := range claims {
		result[claim.UID] = d.prepare(claim)
	}
	return result, nil
}

func (d *driver) prepare(claim *resourceapi.ResourceClaim) kubeletplugin.PrepareResult {
	if claim.Status.Allocation == nil {
		return kubeletplugin.PrepareResult{Err: fmt.Errorf("claim %s/%s is not allocated", claim.Namespace, claim.Name)}
	}
	spec := cdiSpec{Version: "0.6.0", Kind: d.kind}
	var devices []kubeletplugin.Device
	for _, r := range claim.Status.Allocation.Devices.Results {
		if r.Driver != d.name {
			continue
		}
		if r.Pool != d.pool {
			return kubeletplugin.PrepareResult{Err: fmt.Errorf("claim %s/%s: device %s is in pool %s, not this node's %s",
				claim.Namespace, claim.Name, r.Device, r.Pool, d.pool)}
		}
		name := string(claim.UID) + "-" + r.Device
		spec.Devices = append(spec.Devices, cdiDevice{Name: name, ContainerEdits: cdiContainerEdits{Env: []string{
			"GPU_DEVICE_" + strings.ReplaceAll(strings.ToUpper(r.Device), "-", "_") + "=" + r.Device,
			"DRA_CLAIM_UID=" + string(claim.UID),
		}}})
		devices = append(devices, kubeletplugin.Device{
			Requests:     []string{r.Request},
			PoolName:     r.Pool,
			DeviceName:   r.Device,
			CDIDeviceIDs: []string{d.kind + "=" + name},
		})
	}
	if err := writeFileAtomic(d.specPath(claim.UID), spec); err != nil {
		return kubeletplugin.PrepareResult{Err: err}
	}
	log.Printf("prepared claim %s/%s (%s): %d devices, CDI spec %s", claim.Namespace, claim.Name, claim.UID, len(devices), d.specPath(claim.UID))
	return kubeletplugin.PrepareResult{Devices: devices}
}

// writeFileAtomic writes the spec beside its final name and renames it, so a
// runtime never reads half a spec.
func writeFileAtomic(path string, spec cdiSpec) error {
	data, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("write CDI spec: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write CDI spec: %w", err)
	}
	return nil
}

func (d *driver) UnprepareResourceClaims(_ context.Context, claims []kubeletplugin.NamespacedObject) (map[types.UID]error, error) {
	result := make(map[types.UID]error, len(claims))
	for _, claim := range claims {
		err := os.Remove(d.specPath(claim.UID))
		if errors.Is(err, os.ErrNotExist) { // unprepare is idempotent
			err = nil
		}
		result[claim.UID] = err
		log.Printf("unprepared claim %s (%s): %v", claim.NamespacedName, claim.UID, err)
	}
	return result, nil
}

// WatchHealthStatus reports every device healthy, again every 10 s so the
// kubelet's view never goes stale (30 s), until the kubelet stops watching:
// fake devices never fail.
func (d *driver) WatchHealthStatus(ctx context.Context, reports chan<- kubeletplugin.DeviceHealthReport) error {
	ticker := time.NewTicker(10 * time.Second)
	defer ticker.Stop()
	for {
		report := kubeletplugin.DeviceHealthReport{}
		for _, dev := range d.devices {
			report.Devices = append(report.Devices, kubeletplugin.DeviceHealth{
				PoolName: d.pool, DeviceName: dev.Name, Health: kubeletplugin.HealthStatusHealthy, LastUpdated: time.Now(),
			})
		}
		select {
		case <-ctx.Done():
			return nil
		case reports <- report:
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// HandleError: publishing errors are logged; a fatal one stops the plugin so
// the DaemonSet restarts it.
func (d *driver) HandleError(_ context.Context, err error, msg string) {
	log.Printf("%s: %v", msg, err)
	if !errors.Is(err, kubeletplugin.ErrRecoverable) {
		d.cancel(fmt.Errorf("%s: %w", msg, err))
	}
}

func main() {
	name := flag.String("driver", "gpu.example.com", "DRA driver name")
	count := flag.Int("devices", 4, "number of fake devices to publish")
	cdiDir := flag.String("cdi-dir", "/var/run/cdi", "directory for CDI specs, read by the container runtime")
	flag.Parse()
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	node := os.Getenv("NODE_NAME")
	if node == "" || *count < 1 {
		log.Fatal("NODE_NAME must name the node (downward API) and --devices be at least 1")
	}
	pluginDir := filepath.Join(kubeletplugin.KubeletPluginsDir, *name) // the helper's default, made here as drivers do
	for _, dir := range []string{*cdiDir, pluginDir} {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			log.Fatal(err)
		}
	}
	config, err := rest.InClusterConfig()
	if err != nil {
		log.Fatal(err)
	}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		log.Fatal(err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithCancelCause(ctx)
	devices := make([]resourceapi.Device, *count)
	for i := range devices {
		devices[i] = resourceapi.Device{
			Name: fmt.Sprintf("gpu-%d", i),
			Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
				"index": {IntValue: ptr.To(int64(i))},
				"uuid":  {StringValue: ptr.To(fmt.Sprintf("GPU-%s-%d", node, i))},
			},
		}
	}
	d := &driver{name: *name, kind: *name + "/gpu", cdiDir: *cdiDir, pool: node, devices: devices, cancel: cancel}
	helper, err := kubeletplugin.Start(ctx, d, kubeletplugin.DriverName(*name), kubeletplugin.NodeName(node),
		kubeletplugin.KubeClient(client), kubeletplugin.PluginDataDirectoryPath(pluginDir))
	if err != nil {
		log.Fatalf("start the kubelet plugin: %v", err)
	}
	if err := helper.PublishResources(ctx, resourceslice.DriverResources{Pools: map[string]resourceslice.Pool{
		node: {Slices: []resourceslice.Slice{{Devices: devices}}},
	}}); err != nil {
		log.Fatalf("publish resources: %v", err)
	}
	log.Printf("driver %s on node %s: registering, publishing %d devices, CDI specs in %s", *name, node, *count, *cdiDir)
	<-ctx.Done()
	helper.Stop()
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		log.Fatalf("stopped: %v", cause)
	}
	log.Printf("stopped")
}
