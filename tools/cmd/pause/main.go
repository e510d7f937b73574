// Command pause is the sandbox ("pause") container of tools/testenv's real
// nodes, built here so that no image is pulled: it holds the pod's
// namespaces, reaps the zombies of a shared PID namespace and exits 0 on
// SIGINT or SIGTERM, as registry.k8s.io/pause does. Built static (no cgo).
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for sig := range sigs {
		if sig != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var status syscall.WaitStatus
			if pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil); pid <= 0 || err != nil {
				break
			}
		}
	}
}
