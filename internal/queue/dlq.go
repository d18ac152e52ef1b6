package queue

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/message"
)

// DLQAPI is the part of the SQS client the dead-letter tools use.
type DLQAPI interface {
	API
	ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, optFns ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	DeleteMessage(ctx context.Context, in *sqs.DeleteMessageInput, optFns ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error)
	AttributesAPI
}

// DLQ inspects and replays the dead-letter queue.
type DLQ struct {
	api    DLQAPI
	url    string
	queues *Queues
}

// NewDLQ returns the tools for the dead-letter queue at url; redriven firings go to queues.
func NewDLQ(api DLQAPI, url string, queues *Queues) *DLQ {
	return &DLQ{api: api, url: url, queues: queues}
}

// Dead is one dead-lettered message.
type Dead struct {
	MessageID    string          `json:"messageId"`
	SentAt       time.Time       `json:"sentAt"`
	ReceiveCount int             `json:"receiveCount"`
	Body         string          `json:"body"`
	Firing       *message.Firing `json:"firing,omitempty"`
	DecodeError  string          `json:"decodeError,omitempty"`
	Priority     int             `json:"priority"`
	// BodyBytes is the body's whole size when a listing's page kept only its first
	// ListBodyBytes (SQS takes messages up to 1 MiB; a page stays under 1 MB).
	BodyBytes int `json:"bodyBytes,omitempty"`
	receipt   string
}

// ListBodyBytes is how much of a message's body a paged listing keeps: our own firings are a
// few hundred bytes; a larger body (sent by something else) is cut there, BodyBytes saying
// its size, so that a page of them stays under 1 MB. A redrive sends the whole message.
const ListBodyBytes = 64 << 10

// hold is how long listed messages stay hidden while a listing pages through the queue.
const hold = 30 * time.Second

// wait is each receive's long poll. A short poll (WaitTimeSeconds 0, the queue's default)
// samples some of SQS's servers and may answer empty while messages remain; a long poll asks
// them all, and returns as soon as one message is there.
const wait = 1

// recounts is how many more long polls an empty answer earns while the queue's approximate
// counts still show messages the listing has not seen (the counts lag the receives).
const recounts = 3

// IncompleteError says a listing or redrive ended with messages it could not see: the
// queue's approximate counts still showed them after its last empty long poll — held by
// another listing or redrive (for up to 30 s), being received by someone else, or not yet
// counted away. What was listed is returned beside it.
type IncompleteError struct {
	Seen    int // messages this call received
	Unseen  int // about how many more the queue counts (visible, in flight or delayed)
	Visible int // of those, visible at the last count
}

func (e *IncompleteError) Error() string {
	return fmt.Sprintf("the dead-letter queue counts about %d more message(s) than the %d seen (%d visible at the last count; "+
		"the rest held by another listing or redrive, for up to %s): run it again shortly", e.Unseen, e.Seen, e.Visible, ListHold)
}

// List returns up to max messages without consuming them (they are made visible again).
func (d *DLQ) List(ctx context.Context, max int) ([]Dead, error) {
	msgs, err := d.receive(ctx, max, hold, 0)
	d.release(ctx, msgs)
	return msgs, err
}

// ListHold is how long a paged listing keeps the messages of its pages hidden: SQS has no
// cursor, so a page's messages stay in flight (ReceiveMessage's VisibilityTimeout) until the
// listing's deadline, which is how the next page receives others. A page asked for after
// the deadline is refused (the earlier pages' messages are visible again).
const ListHold = 2 * time.Minute

// ListPosition is where a paged listing is: its deadline and how many messages its pages
// hold hidden.
type ListPosition struct {
	Until time.Time `json:"until"`
	Seen  int       `json:"seen"`
}

// ErrListingExpired is a page asked for after its listing's deadline.
var ErrListingExpired = errors.New("the listing's hold ran out: the messages of its earlier pages are visible again; list from the first page")

// ListPage receives up to max messages the listing at pos has not seen (pos zero: a new
// listing, held until now+ListHold) and keeps them hidden until the listing's deadline. more
// says the queue may hold more (max received); next is the position after this page. A page
// of a listing that saw the whole queue releases its messages at once.
func (d *DLQ) ListPage(ctx context.Context, max int, pos ListPosition, now time.Time) (msgs []Dead, next ListPosition, more bool, err error) {
	if pos.Until.IsZero() {
		pos.Until = now.Add(ListHold)
	}
	left := pos.Until.Sub(now)
	if left < 5*time.Second { // a receive takes a long poll; its holds must end with the listing's
		return nil, pos, false, ErrListingExpired
	}
	msgs, err = d.receive(ctx, max, left.Truncate(time.Second), pos.Seen)
	msgs = dedupe(msgs) // SQS delivers at least once: a page lists a message once
	for i := range msgs {
		if m := &msgs[i]; len(m.Body) > ListBodyBytes {
			m.BodyBytes, m.Body = len(m.Body), strings.ToValidUTF8(m.Body[:ListBodyBytes], "")
		}
	}
	pos.Seen += len(msgs)
	more = err == nil && len(msgs) == max
	if !more && pos.Seen == len(msgs) {
		d.release(ctx, msgs) // a one-page listing hides nothing after it
	}
	return msgs, pos, more, err
}

// dedupe drops a message received twice (SQS's at-least-once delivery), keeping the first.
func dedupe(msgs []Dead) []Dead {
	seen := map[string]bool{}
	out := msgs[:0]
	for _, m := range msgs {
		if !seen[m.MessageID] {
			seen[m.MessageID] = true
			out = append(out, m)
		}
	}
	return out
}

// Release makes messages visible again (a page cut short gives back those it leaves out).
func (d *DLQ) Release(ctx context.Context, msgs []Dead) { d.release(ctx, msgs) }

// RedriveResult says what a redrive did.
type RedriveResult struct {
	Redriven []Dead `json:"redriven"`
	Kept     []Dead `json:"kept"` // malformed: replaying cannot help; they stay for inspection
}

// Redrive sends every well-formed firing among up to max messages back to its priority
// queue, where the claim decides again whether it runs, and deletes it from the DLQ.
func (d *DLQ) Redrive(ctx context.Context, max int) (RedriveResult, error) {
	var res RedriveResult
	msgs, err := d.receive(ctx, max, hold, 0)
	var incomplete *IncompleteError
	if err != nil && !errors.As(err, &incomplete) {
		d.release(ctx, msgs)
		return res, err
	}
	var errs []error
	if incomplete != nil {
		errs = append(errs, incomplete) // what was received is redriven; the rest is said
	}
	for _, m := range msgs {
		if m.Firing == nil {
			res.Kept = append(res.Kept, m)
			continue
		}
		out := engine.Outgoing{Firing: *m.Firing, Priority: m.Priority}
		if err := d.queues.Send(ctx, []engine.Outgoing{out}); err != nil {
			errs = append(errs, fmt.Errorf("redrive %s: %w", m.MessageID, err))
			res.Kept = append(res.Kept, m)
			continue
		}
		if _, err := d.api.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &d.url, ReceiptHandle: &m.receipt}); err != nil {
			// Sent but not deleted: a later redrive sends it again, and the claim admits one.
			errs = append(errs, fmt.Errorf("delete %s from the DLQ: %w", m.MessageID, err))
		}
		res.Redriven = append(res.Redriven, m)
	}
	d.release(ctx, res.Kept)
	return res, errors.Join(errs...)
}

// receive takes up to max messages, each hidden for hide. It stops at an empty long poll
// only when the queue's approximate counts agree that nothing else is there (besides the
// held messages an earlier page of the listing holds); if they still disagree after
// recounts more polls, what it received comes with an *IncompleteError.
func (d *DLQ) receive(ctx context.Context, max int, hide time.Duration, held int) ([]Dead, error) {
	var out []Dead
	empties := 0
	for len(out) < max {
		r, err := d.api.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl: &d.url, MaxNumberOfMessages: int32(min(10, max-len(out))), VisibilityTimeout: int32(hide / time.Second),
			WaitTimeSeconds:             wait,
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
			MessageAttributeNames:       []string{"All"},
		})
		if err != nil {
			return out, fmt.Errorf("receive from the DLQ: %w", err)
		}
		for _, m := range r.Messages {
			out = append(out, dead(m))
		}
		if len(r.Messages) > 0 {
			empties = 0
			continue
		}
		c, err := depthOf(ctx, d.api, d.url)
		if err != nil {
			return out, fmt.Errorf("count the DLQ's messages: %w", err)
		}
		total, visible := c.Visible+c.InFlight+c.Delayed, c.Visible
		// Our own received messages are in flight: the queue agrees when it counts no more.
		if total <= held+len(out) {
			return out, nil
		}
		if empties++; empties > recounts {
			return out, &IncompleteError{Seen: len(out), Unseen: total - held - len(out), Visible: visible}
		}
	}
	return out, nil
}

func (d *DLQ) release(ctx context.Context, msgs []Dead) {
	for _, m := range msgs {
		_, _ = d.api.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: &d.url, ReceiptHandle: &m.receipt, VisibilityTimeout: 0})
	}
}

func dead(m types.Message) Dead {
	dm := Dead{MessageID: aws.ToString(m.MessageId), Body: aws.ToString(m.Body), receipt: aws.ToString(m.ReceiptHandle), Priority: 3}
	if ms, err := strconv.ParseInt(m.Attributes["SentTimestamp"], 10, 64); err == nil {
		dm.SentAt = time.UnixMilli(ms).UTC()
	}
	dm.ReceiveCount, _ = strconv.Atoi(m.Attributes["ApproximateReceiveCount"])
	if v, ok := m.MessageAttributes["priority"]; ok {
		if p, err := strconv.Atoi(aws.ToString(v.StringValue)); err == nil && p >= 1 && p <= 4 {
			dm.Priority = p
		}
	}
	if f, err := message.Decode(dm.Body); err != nil {
		dm.DecodeError = err.Error()
	} else {
		dm.Firing = &f
	}
	return dm
}
