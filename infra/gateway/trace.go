package gateway

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/sundialhq/sundial/infra/iam"
)

// SQS keeps the X-Ray trace header a message was sent with as its AWSTraceHeader system
// attribute: the X-Amzn-Trace-Id header of the SendMessage or SendMessageBatch request (which
// aws-sdk-go-v2's recursion detection middleware sets from _X_AMZN_TRACE_ID inside Lambda), or
// the AWSTraceHeader the request names in MessageSystemAttributes. Lambda's recursive loop
// detection reads it (infra/lambdarun/lineage.go). The SQS engine (fauxqs) keeps none, so the
// gateway records it by message ID from the send's answer and adds it to ReceiveMessage's
// answers when the receiver asks for it (MessageSystemAttributeNames or AttributeNames All or
// AWSTraceHeader). A deleted message's record is forgotten; one never deleted (moved to a
// dead-letter queue, or expired) is forgotten after SQS's longest retention, 14 days.

const (
	traceHeader    = "X-Amzn-Trace-Id"
	awsTraceHeader = "AWSTraceHeader"
	maxRetention   = 14 * 24 * time.Hour
)

type sqsTraces struct {
	mu       sync.Mutex
	byID     map[string]tracedMessage // message ID → its trace header
	byHandle map[string]string        // receipt handle → message ID
	pruned   time.Time
}

type tracedMessage struct {
	header string
	sent   time.Time
}

type sqsMessageAttr struct {
	StringValue string `json:"StringValue"`
}

// serveSQS forwards an SQS request, keeping the trace headers of the messages it sends and
// giving them back to the receivers; a short poll may be answered empty first, as SQS's
// sampling may (shortpoll.go).
func (g *Gateway) serveSQS(w http.ResponseWriter, r *http.Request, op, upstream string, body []byte) {
	if op == "ReceiveMessage" && g.polls.missed(body) {
		answerEmpty(w) // shortpoll.go
		return
	}
	switch op {
	case "SendMessage", "SendMessageBatch", "ReceiveMessage", "DeleteMessage", "DeleteMessageBatch":
	default:
		g.forward(w, r, iam.SQS, upstream, body)
		return
	}
	rec := &recorder{header: http.Header{}, status: http.StatusOK}
	g.forward(rec, r, iam.SQS, upstream, body)
	out := rec.body.Bytes()
	if rec.status == http.StatusOK {
		if b, err := g.traces.observe(op, callerTrace(r), body, out, time.Now()); err != nil {
			g.Log.Warn("gateway: SQS trace headers not kept for this request", "operation", op, "error", err)
		} else {
			out = b
		}
	}
	for k, v := range rec.header {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	w.WriteHeader(rec.status)
	_, _ = w.Write(out)
}

// callerTrace is the request's X-Amzn-Trace-Id, which the SDK percent-encodes.
func callerTrace(r *http.Request) string {
	h := r.Header.Get(traceHeader)
	if u, err := url.PathUnescape(h); err == nil {
		return u
	}
	return h
}

// observe records what a successful request tells about trace headers and returns the answer
// to give the caller (ReceiveMessage's with AWSTraceHeader added).
func (t *sqsTraces) observe(op, caller string, req, resp []byte, now time.Time) ([]byte, error) {
	switch op {
	case "SendMessage":
		var in struct {
			Attrs map[string]sqsMessageAttr `json:"MessageSystemAttributes"`
		}
		var out struct{ MessageId string }
		if err := unmarshal2(req, &in, resp, &out); err != nil {
			return resp, err
		}
		t.sent(out.MessageId, traceOf(in.Attrs, caller), now)
	case "SendMessageBatch":
		var in struct {
			Entries []struct {
				Id    string
				Attrs map[string]sqsMessageAttr `json:"MessageSystemAttributes"`
			}
		}
		var out struct {
			Successful []struct{ Id, MessageId string }
		}
		if err := unmarshal2(req, &in, resp, &out); err != nil {
			return resp, err
		}
		for _, s := range out.Successful {
			for _, e := range in.Entries {
				if e.Id == s.Id {
					t.sent(s.MessageId, traceOf(e.Attrs, caller), now)
				}
			}
		}
	case "DeleteMessage":
		var in struct{ ReceiptHandle string }
		if err := json.Unmarshal(req, &in); err != nil {
			return resp, err
		}
		t.deleted(in.ReceiptHandle)
	case "DeleteMessageBatch":
		var in struct {
			Entries []struct{ Id, ReceiptHandle string }
		}
		var out struct{ Successful []struct{ Id string } }
		if err := unmarshal2(req, &in, resp, &out); err != nil {
			return resp, err
		}
		for _, s := range out.Successful {
			for _, e := range in.Entries {
				if e.Id == s.Id {
					t.deleted(e.ReceiptHandle)
				}
			}
		}
	case "ReceiveMessage":
		return t.received(req, resp)
	}
	return resp, nil
}

func unmarshal2(req []byte, in any, resp []byte, out any) error {
	if err := json.Unmarshal(req, in); err != nil {
		return err
	}
	return json.Unmarshal(resp, out)
}

// traceOf: the AWSTraceHeader the request names wins over the caller's header.
func traceOf(attrs map[string]sqsMessageAttr, caller string) string {
	if a, ok := attrs[awsTraceHeader]; ok && a.StringValue != "" {
		return a.StringValue
	}
	return caller
}

func (t *sqsTraces) sent(id, header string, now time.Time) {
	if id == "" || header == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byID == nil {
		t.byID, t.byHandle, t.pruned = map[string]tracedMessage{}, map[string]string{}, now
	}
	t.byID[id] = tracedMessage{header: header, sent: now}
	if now.Sub(t.pruned) > time.Hour {
		t.pruned = now
		for id, m := range t.byID {
			if now.Sub(m.sent) > maxRetention {
				delete(t.byID, id)
			}
		}
		for h, id := range t.byHandle {
			if _, ok := t.byID[id]; !ok {
				delete(t.byHandle, h)
			}
		}
	}
}

func (t *sqsTraces) deleted(handle string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if id, ok := t.byHandle[handle]; ok {
		delete(t.byHandle, handle)
		delete(t.byID, id)
	}
}

// received adds AWSTraceHeader to the answer's messages that have one, if the receiver asked
// for it, and remembers their receipt handles (for the delete).
func (t *sqsTraces) received(req, resp []byte) ([]byte, error) {
	var in struct{ AttributeNames, MessageSystemAttributeNames []string }
	if err := json.Unmarshal(req, &in); err != nil {
		return resp, err
	}
	wanted := false
	for _, n := range append(in.AttributeNames, in.MessageSystemAttributeNames...) {
		wanted = wanted || n == "All" || n == awsTraceHeader
	}
	var out map[string]any
	d := json.NewDecoder(bytes.NewReader(resp))
	d.UseNumber()
	if err := d.Decode(&out); err != nil {
		return resp, err
	}
	msgs, _ := out["Messages"].([]any)
	t.mu.Lock()
	defer t.mu.Unlock()
	changed := false
	for _, x := range msgs {
		m, _ := x.(map[string]any)
		id, _ := m["MessageId"].(string)
		handle, _ := m["ReceiptHandle"].(string)
		tm, ok := t.byID[id]
		if !ok {
			continue
		}
		if handle != "" {
			t.byHandle[handle] = id
		}
		if !wanted {
			continue
		}
		attrs, _ := m["Attributes"].(map[string]any)
		if attrs == nil {
			attrs = map[string]any{}
			m["Attributes"] = attrs
		}
		attrs[awsTraceHeader] = tm.header
		changed = true
	}
	if !changed {
		return resp, nil
	}
	return json.Marshal(out)
}
