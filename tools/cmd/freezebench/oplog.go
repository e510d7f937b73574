package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// freezeEnforcedMsg is the line drashift-controller logs once the API server
// has taken the freeze parameter's write (controller/plan_controller.c,
// pc_on_write), with the write's round trip in write_ms.
const freezeEnforcedMsg = "freeze enforced: new claims for the plan's classes are denied"

// enforcement is drashift's own account of one freeze: when it decided (the
// write sent) and how long the API server took to answer the write.
type enforcement struct {
	decided time.Time
	write   time.Duration
}

// logfmt splits one drashift log line into its key=value fields; a value may
// be double-quoted with backslash escapes.
func logfmt(line string) map[string]string {
	f := map[string]string{}
	for s := strings.TrimSpace(line); s != ""; s = strings.TrimLeft(s, " ") {
		eq := strings.IndexByte(s, '=')
		if eq <= 0 {
			break
		}
		key, rest := s[:eq], s[eq+1:]
		var val string
		if strings.HasPrefix(rest, `"`) {
			end := 1
			for end < len(rest) && rest[end] != '"' {
				if rest[end] == '\\' {
					end++
				}
				end++
			}
			if end >= len(rest) {
				break
			}
			v, err := strconv.Unquote(rest[:end+1])
			if err != nil {
				break
			}
			val, s = v, rest[end+1:]
		} else if sp := strings.IndexByte(rest, ' '); sp >= 0 {
			val, s = rest[:sp], rest[sp:]
		} else {
			val, s = rest, ""
		}
		f[key] = val
	}
	return f
}

// findEnforcement looks in log for the freeze of breach id of plan.
func findEnforcement(log []byte, plan, id string) (enforcement, bool) {
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, freezeEnforcedMsg) {
			continue
		}
		f := logfmt(line)
		if f["msg"] != freezeEnforcedMsg || f["plan"] != plan || f["breach"] != id {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, f["time"])
		ms, err2 := strconv.Atoi(f["write_ms"])
		if err != nil || err2 != nil || ms < 0 {
			continue
		}
		write := time.Duration(ms) * time.Millisecond
		return enforcement{decided: at.Add(-write), write: write}, true
	}
	return enforcement{}, false
}

// operatorEnforcement waits for drashift's log line for breach id (it may
// trail the denial by a moment) and reads it. Each poll reads only what the
// log gained since the last complete line already read: rounds come one
// after the other, so a round's line is never before that point.
func (b *bench) operatorEnforcement(ctx context.Context, id string) (enforcement, error) {
	deadline := time.Now().Add(b.cfg.stageTimeout)
	for {
		fresh, err := b.readOperatorLog()
		if err != nil {
			return enforcement{}, err
		}
		if e, ok := findEnforcement(fresh, b.cfg.plan, id); ok {
			return e, nil
		}
		if time.Now().After(deadline) {
			return enforcement{}, fmt.Errorf("%s has no %q line for breach %s after %v", b.cfg.operatorLog, freezeEnforcedMsg, id, b.cfg.stageTimeout)
		}
		select {
		case <-ctx.Done():
			return enforcement{}, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// readOperatorLog returns the complete lines the log gained since the last call.
func (b *bench) readOperatorLog() ([]byte, error) {
	f, err := os.Open(b.cfg.operatorLog)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(b.logRead, io.SeekStart); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	complete := bytes.LastIndexByte(data, '\n') + 1 // a line still being written waits for the next call
	b.logRead += int64(complete)
	return data[:complete], nil
}
