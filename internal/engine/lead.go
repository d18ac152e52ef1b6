package engine

import "time"

// A firing's claim should be made before its instant, so that the action starts on it: the
// processor claims a message as soon as it arrives and holds the action until the instant.
// SQS delays are whole seconds, so a message sent with a delay arrives up to a second early
// by itself (the fraction of a second its delay was truncated by). When many firings fall in
// the same second their claims queue behind each other, and the last ones would land after
// the instant: such firings are sent with a lead, a few whole seconds less delay, so that
// they arrive, and are claimed, earlier.
//
// The lead costs Lambda duration (the processor holds a claimed firing until its instant),
// so it is given only where the claims need it: the fetch knows how many firings fall in each
// second before it sends them (leadFor). A processor sending follow-ups does not, and sends
// them without a lead: one that led by how long its own recent claims took was measured and
// removed (docs/benchmarks.md: more Lambda duration, and invocations held longer under load,
// than the lateness it saved).

// MaxLead bounds a firing's lead. The processor holds a message that arrives up to
// MaxLead + 1 s early (the truncated fraction) until its instant; Processor.MaxEarly must be
// at least that (app sets it), or a message sent with a lead would be re-sent instead.
const MaxLead = time.Second

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
