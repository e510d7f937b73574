package main

import (
	"fmt"
	"io"
	"runtime/metrics"
	"sort"
	"sync"

	"k8s.io/client-go/tools/cache"
)

// counts holds, per resource, how many objects its informer added and has
// not deleted since: what the cache holds, without reading (and copying) it.
type counts struct {
	mu sync.Mutex
	n  map[string]int
}

func newCounts() *counts { return &counts{n: map[string]int{}} }

func (c *counts) add(resource string, d int) {
	c.mu.Lock()
	c.n[resource] += d
	c.mu.Unlock()
}

// handler counts resource's adds and deletes; updates change nothing.
func (c *counts) handler(resource string) cache.ResourceEventHandler {
	c.add(resource, 0) // listed from the start, even while empty
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { c.add(resource, 1) },
		DeleteFunc: func(any) { c.add(resource, -1) },
	}
}

// write prints "RESOURCE N" lines, sorted by resource, then the bytes of heap
// objects the last GC found live ("heap-live-bytes N"): the Go heap without
// the garbage GOGC lets accumulate before the next GC, which RSS includes.
func (c *counts) write(w io.Writer) {
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(live)
	defer fmt.Fprintf(w, "heap-live-bytes %d\n", live[0].Value.Uint64())
	c.mu.Lock()
	defer c.mu.Unlock()
	names := make([]string, 0, len(c.n))
	for r := range c.n {
		names = append(names, r)
	}
	sort.Strings(names)
	for _, r := range names {
		fmt.Fprintf(w, "%s %d\n", r, c.n[r])
	}
}
