// Command gpujob is the workload of tests on tools/testenv's real nodes: a
// container that runs for --duration (or until SIGTERM) and then exits 0,
// writing the devices it was given (its environment variables that start
// with GPU_ or DRA_, as a device plugin's Allocate or a CDI spec set them)
// to stdout and to the termination message file, where the kubelet reads
// them into the pod's status. `kubectl logs` needs the node reachable; the
// pod status does not.
//
//	gpujob --duration 30s
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"
)

func main() {
	duration := flag.Duration("duration", time.Minute, "how long to run")
	message := flag.String("termination-log", "/dev/termination-log", "file for the termination message")
	flag.Parse()
	var devices []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GPU_") || strings.HasPrefix(kv, "DRA_") {
			devices = append(devices, kv)
		}
	}
	sort.Strings(devices)
	report := strings.Join(devices, "\n")
	fmt.Println(report)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	select {
	case <-time.After(*duration):
	case <-sigs:
	}
	if err := os.WriteFile(*message, []byte(report), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
}
