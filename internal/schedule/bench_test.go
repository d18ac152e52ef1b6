package schedule

import (
	"testing"
	"time"
)

func BenchmarkNext(b *testing.B) {
	benchmarks := []struct{ name, expr, zone string }{
		{"DailyUTC", "02:00 10:00 18:00", "UTC"},
		{"DailyNewYork", "02:00 10:00 18:00", "America/New_York"},
		{"Every15mNewYork", "every 15m", "America/New_York"},
		{"Every10sUTC", "every 10s", "UTC"},
	}
	for _, bm := range benchmarks {
		b.Run(bm.name, func(b *testing.B) {
			s, err := Parse(bm.expr, mustLoad(b, bm.zone))
			if err != nil {
				b.Fatal(err)
			}
			start := time.Date(2026, 3, 7, 0, 0, 0, 0, time.UTC)
			at := start
			b.ReportAllocs()
			for b.Loop() {
				// Follow the schedule through a DST weekend, then start over.
				at, _ = s.Next(at)
				if at.Sub(start) > 72*time.Hour {
					at = start
				}
			}
		})
	}
}
