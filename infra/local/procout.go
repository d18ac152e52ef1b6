package local

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"sync"
	"time"
)

// processOutput receives a function process's output (its stdout and stderr, as lambdarun
// forwards them) and gives it to the platform's logs as the in-process functions' records
// go: JSON records as they are to the JSON log, with the human line of an execution on Out.
// Lines that are not JSON (the runtime's own, a panic) become records of their own.
type processOutput struct {
	function string
	lines    *lineHandler // for the human lines only
	log      io.Writer    // the JSON log
	logMu    *sync.Mutex
	mu       sync.Mutex
	buf      []byte
}

func (o *processOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.buf = append(o.buf, p...)
	for {
		i := bytes.IndexByte(o.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		o.line(bytes.TrimSpace(o.buf[:i]))
		o.buf = o.buf[i+1:]
	}
}

func (o *processOutput) line(line []byte) {
	if len(line) == 0 {
		return
	}
	var m map[string]any
	if json.Unmarshal(line, &m) != nil {
		b, _ := json.Marshal(map[string]any{"time": time.Now().UTC(), "level": "INFO", "msg": "function output",
			"function": o.function, "line": string(line)})
		o.write(b)
		return
	}
	rec := recordOf(m)
	if rec.Level >= slog.LevelInfo {
		o.write(line) // the function runs at DEBUG for the human lines; the log keeps what Lambda's would
	}
	o.lines.print(rec)
}

func (o *processOutput) write(line []byte) {
	o.logMu.Lock()
	defer o.logMu.Unlock()
	_, _ = o.log.Write(append(line, '\n'))
}

// recordOf rebuilds the slog record a JSON handler wrote, with the value kinds the human
// line needs (instants as times, counts as integers).
func recordOf(m map[string]any) slog.Record {
	t, _ := time.Parse(time.RFC3339Nano, str(m["time"]))
	var level slog.Level
	_ = level.UnmarshalText([]byte(str(m["level"])))
	r := slog.NewRecord(t, level, str(m["msg"]), 0)
	for k, v := range m {
		switch k {
		case "time", "level", "msg":
			continue
		}
		switch v := v.(type) {
		case string:
			if ts, err := time.Parse(time.RFC3339Nano, v); err == nil {
				r.AddAttrs(slog.Time(k, ts))
			} else {
				r.AddAttrs(slog.String(k, v))
			}
		case float64:
			r.AddAttrs(slog.Int64(k, int64(v)))
		case bool:
			r.AddAttrs(slog.Bool(k, v))
		default:
			r.AddAttrs(slog.Any(k, v))
		}
	}
	return r
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
