//go:build !nokubelet

package main

import (
	"context"

	"github.com/spf13/cobra"
	kubeletapp "k8s.io/kubernetes/cmd/kubelet/app"
)

// The kubelet of a real node (tools/testenv up DIR --real-nodes N), only in
// the build at the pinned version: the others are built with -tags nokubelet.
func init() {
	components["kubelet"] = func() *cobra.Command {
		return kubeletapp.NewKubeletCommand(context.Background())
	}
}
