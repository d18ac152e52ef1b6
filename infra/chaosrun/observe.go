package chaosrun

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"
	"time"
)

// Messages of the functions' logs that the run counts.
const (
	msgClaimLost    = "processor: claim lost; message acknowledged"
	msgZombie       = "processor: execution lost its lease before finishing; result discarded"
	msgNotRecorded  = "processor: could not record the execution"
	msgRequeued     = "re-sending a firing that was never claimed"
	msgMisfired     = "processor: misfired firing"
	msgInjected     = "chaos: injected fault"
	msgChaosStarted = "chaos: faults injected"
	msgBatchFailed  = "event source: invocation failed; batch will be redelivered"
	// msgLeaseLive: recovery read an expired lease (a stale read, a lagging index) that a
	// heartbeat had extended, and its write (leaseExpiresAt <= now) was refused.
	msgLeaseLive = "recovery: lease extended since it was read; the execution goes on"
)

// observer is the platform's JSON log (every function process's records pass through it on
// their way to the log file): it counts what the run reports.
type observer struct {
	out io.Writer

	mu      sync.Mutex
	buf     []byte
	msgs    map[string]int
	faults  map[string]int           // "service operation fault"
	zombies []string                 // execution ids whose result a processor discarded
	offsets map[string]time.Duration // node -> clock offset, as each process logged it
}

func newObserver(out io.Writer) *observer {
	return &observer{out: out, msgs: map[string]int{}, faults: map[string]int{}, offsets: map[string]time.Duration{}}
}

func (o *observer) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, err := o.out.Write(p); err != nil {
		return 0, err
	}
	o.buf = append(o.buf, p...)
	for {
		i := bytes.IndexByte(o.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		o.line(o.buf[:i])
		o.buf = o.buf[i+1:]
	}
}

func (o *observer) line(b []byte) {
	var r struct {
		Msg         string `json:"msg"`
		Service     string `json:"service"`
		Operation   string `json:"operation"`
		Fault       string `json:"fault"`
		ExecutionID string `json:"execution_id"`
		Node        string `json:"node"`
		OffsetMs    int64  `json:"clock_offset_ms"`
	}
	if len(b) == 0 || b[0] != '{' || json.Unmarshal(b, &r) != nil {
		return // the emulator's own lines
	}
	o.msgs[r.Msg]++
	switch r.Msg {
	case msgInjected:
		o.faults[r.Service+" "+r.Operation+" "+r.Fault]++
	case msgZombie:
		o.zombies = append(o.zombies, r.ExecutionID)
	case msgChaosStarted:
		o.offsets[r.Node] = time.Duration(r.OffsetMs) * time.Millisecond
	}
}

// snapshot is what the observer counted.
type snapshot struct {
	msgs    map[string]int
	faults  map[string]int
	zombies []string
	offsets map[string]time.Duration
}

func (o *observer) snapshot() snapshot {
	o.mu.Lock()
	defer o.mu.Unlock()
	s := snapshot{msgs: map[string]int{}, faults: map[string]int{}, zombies: append([]string(nil), o.zombies...), offsets: map[string]time.Duration{}}
	for k, v := range o.msgs {
		s.msgs[k] = v
	}
	for k, v := range o.faults {
		s.faults[k] = v
	}
	for k, v := range o.offsets {
		s.offsets[k] = v
	}
	return s
}
