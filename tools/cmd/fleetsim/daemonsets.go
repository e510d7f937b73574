package main

import (
	"context"
	"fmt"
	"log"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ensureDaemonSets creates the two DaemonSets a real cluster runs for the
// owners fleetsim simulates: the device plugin on nodes labelled
// --device-plugin-label=--enabled-value, the DRA driver's kubelet plugin on
// nodes labelled --dra-label=--enabled-value. They are what drashift's
// preflight looks for. Their pods are not fleetsim's business (the test
// control plane runs no DaemonSet controller unless it has real nodes); an
// existing DaemonSet is left as it is.
func (s *Sim) ensureDaemonSets(ctx context.Context) error {
	if s.cfg.DaemonSetNS == "" {
		return nil
	}
	for _, owner := range []struct{ name, label string }{
		{"fleetsim-device-plugin", s.cfg.DevicePluginLabel},
		{"fleetsim-dra-driver", s.cfg.DRALabel},
	} {
		labels := map[string]string{"app.kubernetes.io/name": owner.name, "app.kubernetes.io/managed-by": "fleetsim"}
		ds := &appsv1.DaemonSet{
			ObjectMeta: metav1.ObjectMeta{Name: owner.name, Namespace: s.cfg.DaemonSetNS, Labels: labels},
			Spec: appsv1.DaemonSetSpec{
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: v1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: v1.PodSpec{
						NodeSelector: map[string]string{owner.label: s.cfg.EnabledValue},
						Containers:   []v1.Container{{Name: "plugin", Image: "registry.invalid/" + owner.name}},
					},
				},
			},
		}
		_, err := s.client.AppsV1().DaemonSets(s.cfg.DaemonSetNS).Create(ctx, ds, metav1.CreateOptions{})
		switch {
		case apierrors.IsAlreadyExists(err):
			log.Printf("DaemonSet %s/%s exists; left as it is", s.cfg.DaemonSetNS, owner.name)
		case err != nil:
			return fmt.Errorf("create DaemonSet %s/%s: %w", s.cfg.DaemonSetNS, owner.name, err)
		default:
			log.Printf("DaemonSet %s/%s created, nodeSelector %s=%s", s.cfg.DaemonSetNS, owner.name, owner.label, s.cfg.EnabledValue)
		}
	}
	return nil
}
