package timer

import "time"

// FetchState is what the fetch records at every tick.
type FetchState struct {
	Watermark time.Time // firings due up to here have been enqueued
	LastTick  time.Time // when the latest tick advanced the watermark
}
