package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBurstFloor(t *testing.T) {
	for _, tc := range []struct {
		name             string
		update, batch    float64
		partitions       int
		p99              float64
		floor, efficient float64
	}{
		// 1,000 firings × (2 × 1.2 ms + 0.6 ms) = 3 s of engine time, over 2 engines 1.5 s.
		{"two engines", 1.2, 0.6, 2, 3.0, 1.5, 2},
		{"one engine", 1.2, 0.6, 1, 1.5, 3.0, 0.5},
		{"no partitions recorded counts one", 1.2, 0.6, 0, 3.0, 3.0, 1},
		{"no service times: no floor", 0, 0, 2, 3.0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &results{DynamoDBPartitions: tc.partitions, LatenessP99: tc.p99,
				Precision: &loadResult{Spec: loadSpec{Timers: 1000}},
				Ceiling:   ceilings{ProbeLarge: map[string]float64{"DynamoDB.UpdateItem": tc.update, "DynamoDB.BatchWriteItem": tc.batch}}}
			r.burstFloor()
			require.InDelta(t, tc.floor, r.BurstFloor, 1e-9)
			require.InDelta(t, tc.efficient, r.BurstEfficiency, 1e-9)
		})
	}
}
