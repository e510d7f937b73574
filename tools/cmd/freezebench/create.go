package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// firstReconcile creates a plan whose one pool selects no node and returns
// the time from its ADDED event to the first event that shows a status
// (drashift's first reconcile, plus the status write's round trip); then it
// pauses the plan and returns the time from the event of that change to the
// first that shows a status of the new generation. Every event is seen by
// this process's own watch. The plan is deleted again.
func (b *bench) firstReconcile(ctx context.Context, i int) (created, paused time.Duration, err error) {
	name := fmt.Sprintf("%s-new-%d", b.cfg.plan, i)
	plans := b.dyn.Resource(planGVR)
	w, err := plans.Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
	if err != nil {
		return 0, 0, fmt.Errorf("watch plan %s: %w", name, err)
	}
	defer w.Stop()
	plan := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "drashift.io/v1alpha1",
		"kind":       "MigrationPlan",
		"metadata":   map[string]any{"name": name},
		"spec": map[string]any{
			"driver":           b.cfg.driver,
			"extendedResource": "example.com/gpu",
			"deviceClassNames": []any{b.cfg.deviceClass},
			"pools": []any{map[string]any{
				"name":         "empty",
				"nodeSelector": map[string]any{"matchLabels": map[string]any{"freezebench.drashift.io/no-such-pool": "true"}},
			}},
		},
	}}
	if _, err := plans.Create(ctx, plan, metav1.CreateOptions{}); err != nil {
		return 0, 0, fmt.Errorf("create plan %s: %w", name, err)
	}
	defer func() { _ = plans.Delete(context.Background(), name, metav1.DeleteOptions{}) }()
	if created, err = b.reconciledAfter(ctx, w, name, 1); err != nil {
		return 0, 0, err
	}
	if _, err := plans.Patch(ctx, name, types.MergePatchType, []byte(`{"spec":{"paused":true}}`), metav1.PatchOptions{}); err != nil {
		return 0, 0, fmt.Errorf("pause plan %s: %w", name, err)
	}
	if paused, err = b.reconciledAfter(ctx, w, name, 2); err != nil {
		return 0, 0, err
	}
	return created, paused, nil
}

// reconciledAfter reads w until the plan has generation gen, then until its
// status says it was reconciled at gen (status.observedGeneration), and
// returns the time between the two events.
func (b *bench) reconciledAfter(ctx context.Context, w watch.Interface, name string, gen int64) (time.Duration, error) {
	var changed time.Time
	timeout := time.After(b.cfg.stageTimeout)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return 0, fmt.Errorf("the watch on plan %s ended", name)
			}
			now := time.Now()
			u, isPlan := ev.Object.(*unstructured.Unstructured)
			if !isPlan {
				continue
			}
			if changed.IsZero() && u.GetGeneration() >= gen {
				changed = now
			}
			observed, has, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
			if has && observed >= gen && !changed.IsZero() {
				return now.Sub(changed), nil
			}
		case <-timeout:
			return 0, fmt.Errorf("plan %s was not reconciled at generation %d within %v", name, gen, b.cfg.stageTimeout)
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

// eventRate counts the watch events of nodes, pods and claims the cluster
// produces while the benchmark runs, to show how busy it was: the share of
// gaps between two events shorter than the controller's 50 ms batching delay
// is what starved reconciles before they were scheduled by deadline.
type eventRate struct {
	mu     sync.Mutex
	start  time.Time
	last   time.Time
	events int
	gaps   []time.Duration
}

func (r *eventRate) seen(any) {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.events > 0 {
		r.gaps = append(r.gaps, now.Sub(r.last))
	}
	r.events++
	r.last = now
}

func (b *bench) countEvents(ctx context.Context) (*eventRate, error) {
	r := &eventRate{start: time.Now()}
	f := informers.NewSharedInformerFactory(b.cs, 0)
	h := cache.ResourceEventHandlerFuncs{AddFunc: r.seen, UpdateFunc: func(_, o any) { r.seen(o) }, DeleteFunc: r.seen}
	infs := []cache.SharedIndexInformer{f.Core().V1().Nodes().Informer(), f.Core().V1().Pods().Informer(),
		f.Resource().V1().ResourceClaims().Informer()}
	for _, inf := range infs {
		if _, err := inf.AddEventHandler(h); err != nil {
			return nil, err
		}
	}
	f.Start(ctx.Done())
	for _, inf := range infs {
		if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
			return nil, fmt.Errorf("the event counter's watches did not sync")
		}
	}
	r.mu.Lock()
	r.start, r.events, r.gaps = time.Now(), 0, nil // the initial lists are no events
	r.mu.Unlock()
	return r, nil
}

func (r *eventRate) summary() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	secs := time.Since(r.start).Seconds()
	short := 0
	for _, g := range r.gaps {
		if g < 50*time.Millisecond {
			short++
		}
	}
	pct := 0.0
	if len(r.gaps) > 0 {
		pct = 100 * float64(short) / float64(len(r.gaps))
	}
	med := time.Duration(0)
	if len(r.gaps) > 0 {
		med = median(r.gaps)
	}
	return fmt.Sprintf("%d node/pod/claim events in %.0f s (%.1f/s), median gap %s, %.0f%% of gaps under 50 ms",
		r.events, secs, float64(r.events)/secs, ms(med), pct)
}

// createRounds times the first reconcile of --create-rounds new plans.
func (b *bench) createRounds(ctx context.Context) error {
	if b.cfg.createRounds == 0 {
		return nil
	}
	var created, paused []time.Duration
	fmt.Println("plan created, then paused -> its first reconcile (status seen by the benchmark's watch)")
	for i := 1; i <= b.cfg.createRounds; i++ {
		c, p, err := b.firstReconcile(ctx, i)
		if err != nil {
			return err
		}
		created, paused = append(created, c), append(paused, p)
		fmt.Printf("  plan %d: created %s, paused %s\n", i, ms(c), ms(p))
		select {
		case <-time.After(b.cfg.settle):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	fmt.Printf("first reconcile: plans %d  created: median %s  worst %s;  paused: median %s  worst %s\n\n", len(created),
		ms(median(created)), ms(slices.Max(created)), ms(median(paused)), ms(slices.Max(paused)))
	return nil
}
