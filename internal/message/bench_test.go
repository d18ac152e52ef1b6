package message_test

import (
	"testing"
	"time"

	"github.com/sundialhq/sundial/internal/message"
	"github.com/sundialhq/sundial/internal/timer"
)

func benchFiring() message.Firing {
	at := time.Date(2026, 11, 21, 18, 30, 0, 0, time.UTC)
	return message.Firing{V: message.Version, Timer: "OrderPush", Tenant: "acme", ScheduledAt: at, DueAt: at, Attempt: 1, Reason: message.ReasonSchedule}
}

// BenchmarkEncode measures building a message body (fetch and processor follow-ups, per firing).
func BenchmarkEncode(b *testing.B) {
	f := benchFiring()
	body, err := message.Encode(f)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := message.Encode(f); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecode measures reading and validating a body (processor, per record).
func BenchmarkDecode(b *testing.B) {
	body, err := message.Encode(benchFiring())
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := message.Decode(body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkForInstance measures deriving a firing from an instance (before every send).
func BenchmarkForInstance(b *testing.B) {
	in := timer.Instance{Key: timer.Key{Timer: "OrderPush", Tenant: "acme"}, Active: true,
		NextRun: time.Date(2026, 11, 21, 18, 30, 0, 0, time.UTC), PendingAttempt: 2,
		PendingScheduledAt: time.Date(2026, 11, 21, 18, 29, 50, 0, time.UTC)}
	b.ReportAllocs()
	for b.Loop() {
		f := message.ForInstance(in, message.ReasonRetry)
		if f.Attempt != 2 {
			b.Fatal(f)
		}
	}
}
