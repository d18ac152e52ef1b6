package gateway

import (
	"encoding/json"
	"net/http"
	"sync"
)

// AWS: a short poll (ReceiveMessage with WaitTimeSeconds 0 on a queue whose
// ReceiveMessageWaitTimeSeconds is 0) "samples a subset of SQS servers" and, with few messages
// in the queue, may answer none although some are there; a long poll asks every server
// (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-short-and-long-polling.html).
// fauxqs answers every poll from all its messages, so code that reads one empty short poll as
// an empty queue passed here and stopped early on AWS. shortPolls answers every other short
// poll of a queue empty, without asking the engine. It assumes the queues' own
// ReceiveMessageWaitTimeSeconds is 0 (the default), which template_test checks of the
// template's queues; a request's WaitTimeSeconds 0 overrides the queue's attribute on AWS too.
type shortPolls struct {
	mu      sync.Mutex
	sampled map[string]bool // queue URL -> its last short poll was answered empty
}

// missed reports whether this short poll of a ReceiveMessage body samples no message.
func (s *shortPolls) missed(body []byte) bool {
	var in struct {
		QueueUrl        string
		WaitTimeSeconds *int
	}
	if json.Unmarshal(body, &in) != nil || in.QueueUrl == "" || (in.WaitTimeSeconds != nil && *in.WaitTimeSeconds > 0) {
		return false // a long poll, or a request the engine will refuse on its own
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sampled == nil {
		s.sampled = map[string]bool{}
	}
	miss := !s.sampled[in.QueueUrl]
	s.sampled[in.QueueUrl] = miss
	return miss
}

// answerEmpty answers a ReceiveMessage as SQS does when it returns no message.
func answerEmpty(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte("{}"))
}
