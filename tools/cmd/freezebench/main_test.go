package main

import (
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		ds := make([]time.Duration, len(v))
		for i, x := range v {
			ds[i] = time.Duration(x) * time.Millisecond
		}
		return ds
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = 100 - i // 100 .. 1, unsorted
	}
	for _, c := range []struct {
		name string
		ds   []time.Duration
		p    float64
		want int
	}{
		{"one round is every percentile", ms(42), 99, 42},
		{"the 99th of 20 rounds is the worst", ms(5, 1, 9, 3, 7, 2, 8, 4, 6, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20), 99, 20},
		{"the 95th of 20 rounds is the 19th", ms(5, 1, 9, 3, 7, 2, 8, 4, 6, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20), 95, 19},
		{"the 99th of 100 rounds leaves the worst out", ms(hundred...), 99, 99},
		{"the 50th of 4 rounds is the second", ms(40, 10, 30, 20), 50, 20},
	} {
		if got := percentile(c.ds, c.p); got != time.Duration(c.want)*time.Millisecond {
			t.Errorf("%s: got %s, want %d ms", c.name, got, c.want)
		}
	}
}
