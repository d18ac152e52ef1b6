package engine

import (
	"slices"
	"sync"
	"time"
)

// A firing's claim should be made before its instant, so that the action starts on it: the
// processor claims a message as soon as it arrives and holds the action until the instant.
// SQS delays are whole seconds, so a message sent with a delay arrives up to a second early
// by itself (the fraction of a second its delay was truncated by). When many firings fall in
// the same second their claims queue behind each other, and the last ones would land after
// the instant: such firings are sent with a lead, a few whole seconds less delay, so that
// they arrive, and are claimed, earlier.
//
// The lead costs Lambda duration (the processor holds a claimed firing until its instant),
// so it is given only where the claims need it:
//   - the fetch knows how many firings fall in each second before it sends them (leadFor);
//   - a processor sending follow-ups does not, and uses how long its own recent claims took
//     (claimLatency), which is what a crowded second costs on the stack as it is.

// MaxLead bounds a firing's lead. The processor holds a message that arrives up to
// MaxLead + 1 s early (the truncated fraction) until its instant; Processor.MaxEarly must be
// at least that (app sets it), or a message sent with a lead would be re-sent instead.
const MaxLead = 1 * time.Second

// DefaultClaimRate is the claims per second the fetch assumes a stack makes when it spreads
// a crowded second (Fetcher.ClaimRate): about what DynamoDB Local takes on two cores through
// the local endpoint; on AWS DynamoDB takes more, and a larger rate gives less lead.
const DefaultClaimRate = 400

// leadFor returns the lead of the i-th (0-based, in claim order: highest priority first) of
// the n firings due at the same instant, sent when the instant is ahead by `ahead`: claims
// are made at rate per second, so the i-th needs (n−i)/rate seconds before the instant, and
// arrives early by the fraction of a second SQS truncates from its delay without any lead.
func leadFor(i, n int, rate float64, ahead time.Duration) time.Duration {
	if n <= 0 || rate <= 0 || ahead <= 0 {
		return 0
	}
	need := time.Duration(float64(n-i) / rate * float64(time.Second))
	return wholeLead(need, ahead)
}

// LeadSlack is how late after its instant a claim may land rather than hold a firing a
// whole second more: a lone firing's claim takes milliseconds, and is not worth a lead.
const LeadSlack = 250 * time.Millisecond

// wholeLead is the whole seconds of lead that make a message sent `ahead` of its instant
// arrive at least `need` (less LeadSlack) before it, given the fraction SQS's whole-second
// delay leaves; at most MaxLead, and never more than the delay there is to take.
func wholeLead(need, ahead time.Duration) time.Duration {
	frac := ahead % time.Second
	need -= LeadSlack
	if need <= frac {
		return 0
	}
	lead := (need - frac + time.Second - 1) / time.Second * time.Second
	return min(lead, MaxLead, ahead-frac)
}

// claimLatency keeps how long a processor's recent claims took, from the message's arrival to
// the claim's acknowledgement, over a sliding window: the lead its follow-ups need. A message
// delivered late is not counted late: a lead would not help it (the event source's pollers
// were busy: a lead holds them longer still), more concurrency would.
type claimLatency struct {
	mu      sync.Mutex
	samples []latencySample // a ring of the last latencySamples
	next    int
}

type latencySample struct {
	at time.Time
	d  time.Duration
}

const (
	latencySamples = 512
	latencyWindow  = 30 * time.Second
)

// observe records one claim: the message arrived at `arrived` and its claim was
// acknowledged at `done`.
func (c *claimLatency) observe(arrived, done time.Time) {
	s := latencySample{at: done, d: max(done.Sub(arrived), 0)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.samples) < latencySamples {
		c.samples = append(c.samples, s)
		return
	}
	c.samples[c.next] = s
	c.next = (c.next + 1) % latencySamples
}

// need is the 99th percentile of the claims observed within the window before now (zero
// with fewer than 10 of them: a lone slow claim is not a crowd). The tail, not the median:
// a crowd's claims queue, and its last ones decide whether the crowd starts on time.
func (c *claimLatency) need(now time.Time) time.Duration {
	c.mu.Lock()
	ds := make([]time.Duration, 0, len(c.samples))
	for _, s := range c.samples {
		if now.Sub(s.at) <= latencyWindow {
			ds = append(ds, s.d)
		}
	}
	c.mu.Unlock()
	if len(ds) < 10 {
		return 0
	}
	slices.Sort(ds)
	return ds[len(ds)*99/100]
}
