package schedule

import (
	"testing"
	"time"
)

type benchCase struct{ name, expr, zone string }

// benchNext follows each schedule from 2026-03-07 through New York's DST
// weekend, starting over after 72 hours (or at the end of a one-time schedule),
// so sparse schedules measure one long jump per call.
func benchNext(b *testing.B, benchmarks []benchCase) {
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
				next, ok := s.Next(at)
				at = next
				if !ok || at.Sub(start) > 72*time.Hour {
					at = start
				}
			}
		})
	}
}

func BenchmarkNext(b *testing.B) {
	benchNext(b, []benchCase{
		{"DailyUTC", "02:00 10:00 18:00", "UTC"},
		{"DailyNewYork", "02:00 10:00 18:00", "America/New_York"},
		{"Every15mNewYork", "every 15m", "America/New_York"},
		{"Every10sUTC", "every 10s", "UTC"},
		{"WeekdaysNewYork", "22:00 Mon Fri", "America/New_York"},
		{"NthWeekdayNewYork", "00:15 2nd Tue", "America/New_York"},
		{"Rate5mNewYork", "rate(5 minutes)", "America/New_York"},
		{"AtNewYork", "at(2026-12-01T10:00:00)", "America/New_York"},
	})
}

func BenchmarkNextCron(b *testing.B) {
	benchNext(b, []benchCase{
		{"QuartzSeedEvery10sUTC", "/10 * * * * ?", "UTC"},
		{"QuartzSeedEvery10sNewYork", "/10 * * * * ?", "America/New_York"},
		{"QuartzNoonNewYork", "0 0 12 * * ?", "America/New_York"},
		{"QuartzLastFridayNewYork", "0 15 10 ? * 6L", "America/New_York"},
		{"QuartzNearestWeekdayNewYork", "0 0 12 15W * ?", "America/New_York"},
		{"QuartzLeapDayNewYork", "0 0 0 29 2 ?", "America/New_York"},
		{"QuartzFifthFridayInFebruary", "0 0 12 ? 2 6#5", "America/New_York"},
		{"UnixOfficeHoursNewYork", "*/15 9-17 * * 1-5", "America/New_York"},
		{"UnixDayOrWeekdayUTC", "0 12 1,15 * MON", "UTC"},
		{"EventBridgeFirstMondayNewYork", "cron(0 9 ? * 2#1 *)", "America/New_York"},
	})
}
