package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestFindEnforcement(t *testing.T) {
	log := []byte(`time=2026-12-06T14:17:17.043Z level=debug msg="write answered" what="freeze parameter (freeze)" node="" status=ok ms=77
time=2026-12-06T14:17:17.100Z level=info msg="freeze enforced: new claims for the plan's classes are denied" plan=other breach=a-capacityDrift-1 write_ms=5
time=2026-12-06T14:17:17.118Z level=info msg="freeze enforced: new claims for the plan's classes are denied" plan=freezebench breach=a-capacityDrift-1 write_ms=77
time=2026-12-06T14:17:18.000Z level=info msg="freeze enforced: new claims for the plan's classes are denied" plan=freezebench breach=a-capacityDrift-2 write_ms=9
`)
	e, ok := findEnforcement(log, "freezebench", "a-capacityDrift-1")
	if !ok {
		t.Fatal("the line for plan freezebench, breach a-capacityDrift-1 was not found")
	}
	want := time.Date(2026, 12, 6, 14, 17, 17, 41e6, time.UTC) // answered at .118, the write took 77 ms
	if !e.decided.Equal(want) || e.write != 77*time.Millisecond {
		t.Errorf("got decided %v, write %v; want %v, 77ms", e.decided, e.write, want)
	}
	if _, ok := findEnforcement(log, "freezebench", "a-capacityDrift-3"); ok {
		t.Error("found a breach the log does not have")
	}
	if _, ok := findEnforcement([]byte(`time=x level=info msg="freeze enforced: new claims for the plan's classes are denied" plan=freezebench breach=b write_ms=1`), "freezebench", "b"); ok {
		t.Error("a line with a malformed time was read")
	}
}

func TestLogfmt(t *testing.T) {
	f := logfmt(`time=2026-12-06T14:17:17.118Z level=info msg="a \"quoted\" = value" empty="" last=x`)
	for k, v := range map[string]string{"time": "2026-12-06T14:17:17.118Z", "level": "info", "msg": `a "quoted" = value`, "empty": "", "last": "x"} {
		if f[k] != v {
			t.Errorf("%s: got %q, want %q", k, f[k], v)
		}
	}
}

func TestReadOperatorLogReadsEachCompleteLineOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "operator.log")
	if err := os.WriteFile(path, []byte("first line\nsecond li"), 0o644); err != nil {
		t.Fatal(err)
	}
	b := &bench{cfg: &config{operatorLog: path}}
	for _, c := range []struct{ appended, want string }{
		{"", "first line\n"},
		{"", ""}, // the second line is still being written
		{"ne\nthird", "second line\n"},
		{"\n", "third\n"},
	} {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(c.appended); err != nil {
			t.Fatal(err)
		}
		f.Close()
		got, err := b.readOperatorLog()
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != c.want {
			t.Errorf("after appending %q: read %q, want %q", c.appended, got, c.want)
		}
	}
}
