// Command kcp is a multi-call binary holding the upstream Kubernetes control
// plane that drashift's integration and end-to-end tests run against: etcd,
// kube-apiserver, kube-scheduler, kube-controller-manager and kubectl, all
// built from the upstream Go modules pinned in tools/go.mod, and the kubelet
// that runs a real node beside them (tools/testenv up DIR --real-nodes N).
// The same sources build every Kubernetes version tools/testenv offers
// (--version): the command constructors used here have kept their
// signatures from 1.34 to 1.37. Only the kubelet is left out (build tag
// nokubelet) of the versions other than the pinned one, which real nodes run.
//
// The component is chosen by the first argument (kcp kube-apiserver --flags...)
// or by the name the binary is invoked under. Each component runs in its own
// OS process: the upstream commands install global signal handlers and
// logging flags, and collide when two of them share a process.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	etcdmain "go.etcd.io/etcd/server/v3/etcdmain"
	"k8s.io/component-base/cli"
	kubectlcmd "k8s.io/kubectl/pkg/cmd"
	apiserverapp "k8s.io/kubernetes/cmd/kube-apiserver/app"
	cmapp "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	schedulerapp "k8s.io/kubernetes/cmd/kube-scheduler/app"
)

var components = map[string]func() *cobra.Command{
	"kube-apiserver":          apiserverapp.NewAPIServerCommand,
	"kube-controller-manager": cmapp.NewControllerManagerCommand,
	"kube-scheduler": func() *cobra.Command {
		return schedulerapp.NewSchedulerCommand()
	},
	"kubectl": kubectlcmd.NewDefaultKubectlCommand,
}

func usage() {
	names := "etcd"
	for name := range components {
		names += "|" + name
	}
	fmt.Fprintf(os.Stderr, "usage: kcp {%s} [flags]\n", names)
	os.Exit(2)
}

func main() {
	name := filepath.Base(os.Args[0])
	args := os.Args[1:]
	if name == "kcp" {
		if len(args) == 0 {
			usage()
		}
		name, args = args[0], args[1:]
	}
	if name == "etcd" {
		etcdmain.Main(append([]string{"etcd"}, args...))
		return
	}
	newCommand, ok := components[name]
	if !ok {
		usage()
	}
	cmd := newCommand()
	cmd.SetArgs(args)
	os.Exit(cli.Run(cmd))
}
