// Command gpuplugin is a device plugin for tests on tools/testenv's real
// nodes: it speaks the kubelet's device-plugin API
// (k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1: Register, ListAndWatch,
// Allocate) and advertises N fake devices of one extended resource, as a GPU
// vendor's plugin does. It runs in a DaemonSet selected by drashift's
// device-plugin ownership label.
//
//	gpuplugin --resource example.com/gpu --devices 4 --plugin-dir /var/lib/kubelet/device-plugins
//
// It serves on PLUGIN-DIR/gpuplugin.sock, registers with PLUGIN-DIR/kubelet.sock,
// and registers again when the kubelet restarts (the kubelet then removes
// every plugin socket). A container that gets devices sees their IDs in
// GPU_DEVICES. SIGTERM unregisters by closing the socket and exits 0.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

const socketName = "gpuplugin.sock"

type plugin struct {
	pluginapi.UnimplementedDevicePluginServer
	devices []*pluginapi.Device
	stop    chan struct{}
}

func (p *plugin) GetDevicePluginOptions(context.Context, *pluginapi.Empty) (*pluginapi.DevicePluginOptions, error) {
	return &pluginapi.DevicePluginOptions{}, nil
}

func (p *plugin) ListAndWatch(_ *pluginapi.Empty, stream grpc.ServerStreamingServer[pluginapi.ListAndWatchResponse]) error {
	if err := stream.Send(&pluginapi.ListAndWatchResponse{Devices: p.devices}); err != nil {
		return err
	}
	select {
	case <-stream.Context().Done():
	case <-p.stop:
	}
	return nil
}

func (p *plugin) Allocate(_ context.Context, req *pluginapi.AllocateRequest) (*pluginapi.AllocateResponse, error) {
	resp := &pluginapi.AllocateResponse{}
	for _, c := range req.ContainerRequests {
		log.Printf("allocate %s", strings.Join(c.DevicesIds, ","))
		resp.ContainerResponses = append(resp.ContainerResponses, &pluginapi.ContainerAllocateResponse{
			Envs: map[string]string{"GPU_DEVICES": strings.Join(c.DevicesIds, ",")},
		})
	}
	return resp, nil
}

func (p *plugin) PreStartContainer(context.Context, *pluginapi.PreStartContainerRequest) (*pluginapi.PreStartContainerResponse, error) {
	return &pluginapi.PreStartContainerResponse{}, nil
}

func register(dir, resource string) error {
	conn, err := grpc.NewClient("unix://"+filepath.Join(dir, "kubelet.sock"),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = pluginapi.NewRegistrationClient(conn).Register(ctx, &pluginapi.RegisterRequest{
		Version: pluginapi.Version, Endpoint: socketName, ResourceName: resource,
	})
	return err
}

// serve listens on the plugin socket and registers; it returns when the
// socket is gone (a kubelet restart) or on a signal (true).
func serve(p *plugin, dir, resource string, sigs <-chan os.Signal) bool {
	sock := filepath.Join(dir, socketName)
	_ = os.Remove(sock)
	lis, err := net.Listen("unix", sock)
	if err != nil {
		log.Fatalf("listen %s: %v", sock, err)
	}
	p.stop = make(chan struct{})
	srv := grpc.NewServer()
	pluginapi.RegisterDevicePluginServer(srv, p)
	go func() { _ = srv.Serve(lis) }()
	defer func() {
		close(p.stop)
		srv.Stop()
		_ = os.Remove(sock)
	}()
	for {
		if err := register(dir, resource); err != nil {
			log.Printf("register with the kubelet: %v (retrying)", err)
			select {
			case <-sigs:
				return true
			case <-time.After(time.Second):
				continue
			}
		}
		break
	}
	log.Printf("registered %s with %d devices on %s", resource, len(p.devices), sock)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-sigs:
			return true
		case <-tick.C:
			if _, err := os.Stat(sock); err != nil {
				log.Printf("%s is gone (kubelet restarted): registering again", sock)
				return false
			}
		}
	}
}

func main() {
	resource := flag.String("resource", "example.com/gpu", "the extended resource advertised")
	n := flag.Int("devices", 4, "how many devices")
	dir := flag.String("plugin-dir", pluginapi.DevicePluginPath, "the kubelet's device-plugin directory")
	flag.Parse()
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	p := &plugin{}
	for i := 0; i < *n; i++ {
		p.devices = append(p.devices, &pluginapi.Device{ID: fmt.Sprintf("gpu-%d", i), Health: pluginapi.Healthy})
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	for !serve(p, *dir, *resource, sigs) {
	}
	log.Printf("stopped")
}
