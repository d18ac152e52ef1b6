package gateway

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/sundialhq/sundial/infra/iam"
)

// EventBridge's PutEvents, emulated: the gateway checks the entries as EventBridge does (at
// most 10 and 256 KB a request, Source, DetailType and a JSON-object Detail on each), gives
// each entry an event id, and hands every event, as EventBridge delivers it to a rule's
// target (version, id, detail-type, source, account, time, region, resources, detail), to
// the sink SetEvents names. Every bus is taken as existing; no rules are evaluated.

// EventSink receives each event put: the bus's ARN and the event's JSON.
type EventSink func(busARN string, event []byte)

// SNSSink receives each message published to an SNS topic (the local platform emulates
// Publish only: every topic is taken as existing, nobody is subscribed).
type SNSSink func(topicARN, subject, message string)

// SetSNS routes SNS's Publish to sink (nil: Publish is not served).
func (g *Gateway) SetSNS(sink SNSSink) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.snsSink = sink
}

// serveSNS answers an SNS request the IAM check allowed, as SNS's query protocol does.
func (g *Gateway) serveSNS(w http.ResponseWriter, req iam.Request) {
	g.mu.RLock()
	sink := g.snsSink
	g.mu.RUnlock()
	if req.Operation != "Publish" || sink == nil {
		writeXMLError(w, http.StatusBadRequest, "InvalidAction", "the local platform emulates SNS's Publish only")
		return
	}
	msg := req.Form.Get("Message")
	if msg == "" || len(msg) > 256*1024 {
		writeXMLError(w, http.StatusBadRequest, "InvalidParameter", "Invalid parameter: Message (empty, or over 256 KB)")
		return
	}
	sink(req.Form.Get("TopicArn"), req.Form.Get("Subject"), msg)
	w.Header().Set("Content-Type", "text/xml")
	fmt.Fprintf(w, `<PublishResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><PublishResult><MessageId>%s</MessageId></PublishResult><ResponseMetadata><RequestId>%s</RequestId></ResponseMetadata></PublishResponse>`,
		newEventID(), newEventID())
}

// EventsFault makes PutEvents fail as EventBridge can (tests): for a request of n entries,
// call fails the whole request (HTTP 500, InternalException), else each entry whose failed[i]
// is set is refused (ErrorCode InternalFailure, counted in FailedEntryCount).
type EventsFault func(n int) (call bool, failed []bool)

// SetEventsFault injects faults into PutEvents (nil: none).
func (g *Gateway) SetEventsFault(f EventsFault) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.eventFault = f
}

// SetEvents routes EventBridge's PutEvents to sink (nil: PutEvents is not served).
func (g *Gateway) SetEvents(sink EventSink) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.eventSink = sink
}

func (g *Gateway) eventsSink() (EventSink, EventsFault) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.eventSink, g.eventFault
}

type putEventsEntry struct {
	Source, DetailType, Detail, EventBusName string
	Resources                                []string
	Time                                     *json.Number
}

type putEventsResult struct {
	EventId      string `json:",omitempty"`
	ErrorCode    string `json:",omitempty"`
	ErrorMessage string `json:",omitempty"`
}

// deliveredEvent is an event as EventBridge delivers it to a target.
type deliveredEvent struct {
	Version    string          `json:"version"`
	ID         string          `json:"id"`
	DetailType string          `json:"detail-type"`
	Source     string          `json:"source"`
	Account    string          `json:"account"`
	Time       string          `json:"time"`
	Region     string          `json:"region"`
	Resources  []string        `json:"resources"`
	Detail     json.RawMessage `json:"detail"`
}

// serveEvents answers an EventBridge request the IAM check allowed.
func (g *Gateway) serveEvents(w http.ResponseWriter, req iam.Request) {
	sink, fault := g.eventsSink()
	if req.Operation != "PutEvents" || sink == nil {
		writeJSON11Error(w, http.StatusBadRequest, "UnknownOperationException", "the local platform emulates EventBridge's PutEvents only")
		return
	}
	var in struct{ Entries []putEventsEntry }
	if err := json.Unmarshal(req.Body, &in); err != nil {
		writeJSON11Error(w, http.StatusBadRequest, "SerializationException", "the body is not PutEvents JSON: "+err.Error())
		return
	}
	if len(in.Entries) == 0 || len(in.Entries) > 10 {
		writeJSON11Error(w, http.StatusBadRequest, "ValidationException",
			fmt.Sprintf("1 validation error detected: Value at 'entries' failed to satisfy constraint: Member must have length between 1 and 10 (got %d)", len(in.Entries)))
		return
	}
	size := 0
	for _, e := range in.Entries {
		if e.Time != nil {
			size += 14
		}
		size += len(e.Source) + len(e.DetailType) + len(e.Detail)
		for _, r := range e.Resources {
			size += len(r)
		}
	}
	if size > 256*1024 {
		writeJSON11Error(w, http.StatusBadRequest, "ValidationException", fmt.Sprintf("Total size of the entries in the request is over the limit (%d bytes, 262144 allowed).", size))
		return
	}
	var failed []bool
	if fault != nil {
		var call bool
		if call, failed = fault(len(in.Entries)); call {
			writeJSON11Error(w, http.StatusInternalServerError, "InternalException", "injected fault: the request failed")
			return
		}
	}
	env := iam.Env{Region: g.Region, Account: g.Account}
	out := struct {
		FailedEntryCount int
		Entries          []putEventsResult
	}{}
	for i, e := range in.Entries {
		if i < len(failed) && failed[i] {
			out.FailedEntryCount++
			out.Entries = append(out.Entries, putEventsResult{ErrorCode: "InternalFailure", ErrorMessage: "injected fault: entry not taken"})
			continue
		}
		res, ev := g.putEvent(e)
		if res.ErrorCode != "" {
			out.FailedEntryCount++
		} else {
			sink(env.EventBusARN(e.EventBusName), ev)
		}
		out.Entries = append(out.Entries, res)
	}
	body, _ := json.Marshal(out)
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// putEvent checks one entry and builds the event delivered for it.
func (g *Gateway) putEvent(e putEventsEntry) (putEventsResult, []byte) {
	if e.Source == "" || e.DetailType == "" || e.Detail == "" {
		return putEventsResult{ErrorCode: "InvalidArgument", ErrorMessage: "Parameters Source, DetailType and Detail must be specified."}, nil
	}
	var detail map[string]json.RawMessage
	if err := json.Unmarshal([]byte(e.Detail), &detail); err != nil || detail == nil {
		return putEventsResult{ErrorCode: "MalformedDetail", ErrorMessage: "Detail is malformed."}, nil
	}
	at := time.Now().UTC()
	if e.Time != nil {
		f, err := e.Time.Float64()
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return putEventsResult{ErrorCode: "InvalidArgument", ErrorMessage: "Parameter Time is not valid."}, nil
		}
		sec, frac := math.Modf(f)
		at = time.Unix(int64(sec), int64(frac*1e9)).UTC()
	}
	id := newEventID()
	resources := e.Resources
	if resources == nil {
		resources = []string{}
	}
	ev, _ := json.Marshal(deliveredEvent{Version: "0", ID: id, DetailType: e.DetailType, Source: e.Source, Account: g.Account,
		Time: at.Truncate(time.Second).Format(time.RFC3339), Region: g.Region, Resources: resources, Detail: json.RawMessage(e.Detail)})
	return putEventsResult{EventId: id}, ev
}

// newEventID is a random UUID, as EventBridge's event ids are.
func newEventID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := fmt.Sprintf("%x", b)
	return strings.Join([]string{h[0:8], h[8:12], h[12:16], h[16:20], h[20:32]}, "-")
}

func writeJSON11Error(w http.ResponseWriter, status int, typ, msg string) {
	body, _ := json.Marshal(map[string]string{"__type": typ, "message": msg})
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Header().Set("X-Amzn-ErrorType", typ)
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
