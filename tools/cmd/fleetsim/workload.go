package main

// The workload generator: tenant namespaces submitting GPU Jobs at a steady
// rate, some asking for the extended resource (device-plugin style,
// resources.limits[example.com/gpu]: 1), some using a ResourceClaimTemplate
// (DRA style). A migration has to keep both kinds flowing; the pods complete
// after --job-duration (the fleetsim/duration annotation) so the Jobs finish
// and the fleet does not just fill up.

import (
	"context"
	"fmt"
	"log"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
)

const (
	workloadLabel    = "fleetsim.drashift.io/workload"
	claimTemplate    = "fleetsim-gpu"
	workloadImage    = "registry.invalid/fleetsim/job:1"
	serviceAccountTO = 2 * time.Minute
)

func (s *Sim) runWorkload(ctx context.Context) {
	defer s.metrics.workloadFinished.Store(true)
	for _, ns := range s.cfg.Workload {
		if err := s.prepareTenant(ctx, ns); err != nil {
			if ctx.Err() == nil {
				log.Printf("workload: namespace %s: %v; no jobs will be submitted", ns, err)
			}
			return
		}
	}
	interval := time.Duration(float64(time.Second) / s.cfg.Rate)
	log.Printf("workload: %s per job across %v for %v, %.0f%% DRA, each running %v",
		interval, s.cfg.Workload, s.cfg.Duration, s.cfg.Mix*100, s.cfg.JobDuration)
	end := time.Now().Add(s.cfg.Duration)
	t := time.NewTicker(interval)
	defer t.Stop()
	for i := 0; ; i++ {
		ns := s.cfg.Workload[i%len(s.cfg.Workload)]
		path := pathDevicePlugin
		if s.randFloat() < s.cfg.Mix {
			path = pathDRA
		}
		if err := s.createJob(ctx, ns, path); err != nil {
			if ctx.Err() != nil {
				return
			}
			s.metrics.jobCreateErrors.Add(1)
			log.Printf("workload: create job in %s: %v", ns, err)
		} else {
			s.metrics.jobsCreated[path].Add(1)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if time.Now().After(end) {
			log.Printf("workload: done after %v", s.cfg.Duration)
			return
		}
	}
}

// prepareTenant creates the namespace, waits for its default ServiceAccount
// (made by the real controller-manager; pods are not admitted before it
// exists) and creates the namespace's ResourceClaimTemplate.
func (s *Sim) prepareTenant(ctx context.Context, ns string) error {
	_, err := s.client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{workloadLabel: "tenant"}},
	}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, serviceAccountTO, true, func(ctx context.Context) (bool, error) {
		_, err := s.client.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		return fmt.Errorf("no default ServiceAccount after %v: %w", serviceAccountTO, err)
	}
	rct := &resourcev1.ResourceClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: claimTemplate, Namespace: ns},
		Spec: resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{
			Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
				Name:    "gpu",
				Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: s.cfg.DeviceClass},
			}}},
		}},
	}
	_, err = s.client.ResourceV1().ResourceClaimTemplates(ns).Create(ctx, rct, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("ResourceClaimTemplate: %w", err)
	}
	return nil
}

func (s *Sim) createJob(ctx context.Context, ns string, path podPath) error {
	kind := "dp"
	container := v1.Container{
		Name:  "main",
		Image: workloadImage,
		Env:   []v1.EnvVar{{Name: durationEnv, Value: s.cfg.JobDuration.String()}},
	}
	spec := v1.PodSpec{
		RestartPolicy:                 v1.RestartPolicyNever,
		TerminationGracePeriodSeconds: ptr.To[int64](5),
	}
	if path == pathDRA {
		kind = "dra"
		spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr.To(claimTemplate)}}
		container.Resources.Claims = []v1.ResourceClaim{{Name: "gpu"}}
	} else {
		one := resource.MustParse("1")
		res := s.cfg.WorkloadResources[int(s.metrics.jobsCreated[pathDevicePlugin].Load())%len(s.cfg.WorkloadResources)]
		container.Resources.Limits = v1.ResourceList{v1.ResourceName(res): one}
	}
	spec.Containers = []v1.Container{container}
	labels := map[string]string{workloadLabel: kind}
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "fleetsim-" + kind + "-", Namespace: ns, Labels: labels},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](3),
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{
					Labels:      labels,
					Annotations: map[string]string{durationKey: s.cfg.JobDuration.String()},
				},
				Spec: spec,
			},
		},
	}
	_, err := s.client.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{})
	return err
}
