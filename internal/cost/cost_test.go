package cost_test

import (
	"math"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/cost"
	"github.com/sundialhq/sundial/internal/metrics"
)

func calls(kv ...any) metrics.Snapshot {
	s := metrics.Snapshot{}
	for i := 0; i < len(kv); i += 3 {
		s[metrics.Op{Service: kv[i].(string), Operation: kv[i+1].(string)}] = metrics.Stat{Calls: int64(kv[i+2].(int))}
	}
	return s
}

// steady is ten firings processed as one batch in the current layout: a claim and a finish
// (UpdateItem) each, one BatchWriteItem of their log entries by the log writer, one watermark
// read, one receive, one follow-up send, one delete; a processor invocation of 200 ms and a
// log writer invocation of 50 ms.
func steady() cost.Window {
	return cost.Window{
		Firings: 10,
		Calls: calls("DynamoDB", "UpdateItem", 20, "DynamoDB", "BatchWriteItem", 1, "DynamoDB", "GetItem", 1,
			"SQS", "ReceiveMessage", 1, "SQS", "SendMessageBatch", 1, "SQS", "DeleteMessageBatch", 1),
		Lambda:           map[string]cost.Invocations{"processor": {Count: 1, BilledMs: 200}, "logwriter": {Count: 1, BilledMs: 50}},
		LogBytes:         5000,
		Items:            cost.ItemSizes{Timer: 700, Log: 400},
		MemoryMB:         128,
		LogRetentionDays: 30,
	}
}

func TestPerFiring(t *testing.T) {
	t.Parallel()
	const gbs = 0.25 * 0.125 / 10 // 250 ms of invocations at 128 MB, over ten firings
	cases := map[string]struct {
		w    func() cost.Window
		want cost.Usage
	}{
		"ABatchOfTen": {steady, cost.Usage{
			Requests: 2.5, DynamoRequests: 2.2, SQSRequests: 0.3,
			// Claim 1 + finish 1 + log item 1, and the log writer's one page of ten (700
			// bytes, 1 unit) over ten firings: the frequent timer's 3.1.
			WriteUnits: 3.1, ReadUnits: 0.1,
			LambdaRequests: 0.2, LambdaGBSeconds: gbs,
			LogIngestBytes: 500 + 60,
		}},
		"RareTimersMoveTheirDueKey": {func() cost.Window {
			w := steady()
			w.IndexMoves = 10 // every finish: 2 more writes, and the fetch reads each again (strongly consistent, two looks)
			return w
		}, cost.Usage{
			Requests: 2.5, DynamoRequests: 2.2, SQSRequests: 0.3,
			WriteUnits: 5.1, ReadUnits: 0.1 + 2,
			LambdaRequests: 0.2, LambdaGBSeconds: gbs,
			LogIngestBytes: 560,
		}},
		"RecoveryRereadsStaleKeys": {func() cost.Window {
			w := steady()
			w.StaleKeyMinutes = 20 // e.g. 10 frequent instances over 2 minutes: 20 reads of 0.5
			return w
		}, cost.Usage{
			Requests: 2.5, DynamoRequests: 2.2, SQSRequests: 0.3,
			WriteUnits: 3.1, ReadUnits: 0.1 + 1,
			LambdaRequests: 0.2, LambdaGBSeconds: gbs,
			LogIngestBytes: 560,
		}},
		"LargeItemsAndFailures": {func() cost.Window {
			w := steady()
			w.Calls = calls("DynamoDB", "UpdateItem", 21, "DynamoDB", "BatchWriteItem", 1)
			w.Items = cost.ItemSizes{Timer: 1500, Log: 900} // 2 KB and 1 KB
			w.Failed = 2
			return w
		}, cost.Usage{
			Requests: 2.2, DynamoRequests: 2.2,
			// Claims 10×2, finishes 10×2, one other update 2; logs 10×1; errorsByDay 2×1; the
			// page of ten 1 (its lines are 70 bytes, whatever the log item's size).
			WriteUnits:     (20 + 20 + 2 + 10 + 2 + 1) / 10.0,
			LambdaRequests: 0.2, LambdaGBSeconds: gbs,
			LogIngestBytes: 560,
		}},
		"LargeItemsCostMoreUnits": {func() cost.Window {
			w := steady()
			w.Items = cost.ItemSizes{Timer: 1025, Log: 2048} // 2 KB each: every write doubles
			return w
		}, cost.Usage{
			Requests: 2.5, DynamoRequests: 2.2, SQSRequests: 0.3,
			WriteUnits: 2 + 2 + 2 + 0.1, ReadUnits: 0.1,
			LambdaRequests: 0.2, LambdaGBSeconds: gbs,
			LogIngestBytes: 560,
		}},
		"OtherCallsAreChargedApart": {func() cost.Window {
			w := steady()
			// A fetch tick (watermark UpdateItem, 4 queries), two lost claims, a PutItem and a
			// DeleteItem, one failure.
			w.Calls = calls("DynamoDB", "UpdateItem", 23, "DynamoDB", "BatchWriteItem", 1, "DynamoDB", "GetItem", 1,
				"DynamoDB", "PutItem", 1, "DynamoDB", "DeleteItem", 1, "DynamoDB", "Query", 4,
				"SQS", "ReceiveMessage", 1, "SQS", "SendMessageBatch", 1, "SQS", "DeleteMessageBatch", 1)
			w.Failed = 1
			w.Lambda["fetch"] = cost.Invocations{Count: 1, BilledMs: 50}
			return w
		}, cost.Usage{
			// 23 + 1 + 1 + 1 + 1 + 4 DynamoDB requests, 3 SQS.
			Requests: 3.4, DynamoRequests: 3.1, SQSRequests: 0.3,
			// The firings' 3.1, three more updates, a put, a delete, errorsByDay for the failure.
			WriteUnits: 3.1 + 0.3 + 0.1 + 0.1 + 0.1, ReadUnits: 0.1 + 0.2,
			LambdaRequests: 0.3, LambdaGBSeconds: 0.3 * 0.125 / 10,
			LogIngestBytes: 500 + 90,
		}},
		"ATransactionIsAnotherWrite": {func() cost.Window {
			w := steady()
			w.Calls[metrics.Op{Service: "DynamoDB", Operation: "TransactWriteItems"}] = metrics.Stat{Calls: 10}
			return w
		}, cost.Usage{
			Requests: 3.5, DynamoRequests: 3.2, SQSRequests: 0.3,
			WriteUnits: 4.1, ReadUnits: 0.1,
			LambdaRequests: 0.2, LambdaGBSeconds: gbs,
			LogIngestBytes: 560,
		}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := cost.PerFiring(c.w())
			require.NoError(t, err)
			require.Positive(t, got.StorageGBMonths)
			got.StorageGBMonths = 0
			requireUsage(t, c.want, got)
		})
	}

	t.Run("LeavesEmptyPollsOut", func(t *testing.T) {
		t.Parallel()
		w := steady()
		w.Calls[metrics.Op{Service: "SQS", Operation: "ReceiveMessage"}] = metrics.Stat{Calls: 21}
		w.EmptyReceives = 20
		got, err := cost.PerFiring(w)
		require.NoError(t, err)
		require.InDelta(t, 2.5, got.Requests, 1e-9)
		require.InDelta(t, 0.3, got.SQSRequests, 1e-9)
	})

	t.Run("RefusesAnEmptyWindow", func(t *testing.T) {
		t.Parallel()
		_, err := cost.PerFiring(cost.Window{})
		require.ErrorIs(t, err, cost.ErrNoFirings)
	})

	t.Run("StorageKeepsTheLogItemAndItsPageLineForTheRetention", func(t *testing.T) {
		t.Parallel()
		w := steady()
		w.Items.Log = 1<<30 - cost.StorageOverheadBytes - cost.PageRefBytes // with its page line, 1 GB
		w.LogRetentionDays = 365
		got, err := cost.PerFiring(w)
		require.NoError(t, err)
		require.InDelta(t, 365.0/30, got.StorageGBMonths, 1e-9, "1 GB for a year of 30-day months")
		w.Failed = 5 // half the firings: their items also in errorsByDay
		got, err = cost.PerFiring(w)
		require.NoError(t, err)
		require.InDelta(t, (1+0.5*float64(1<<30-cost.PageRefBytes)/(1<<30))*365/30, got.StorageGBMonths, 1e-9)
	})
}

func TestNaive(t *testing.T) {
	t.Parallel()
	w := steady()
	w.EmptyReceives = 2
	got, err := cost.Naive(w)
	require.NoError(t, err)
	got.StorageGBMonths = 0
	requireUsage(t, cost.Usage{
		// Sundial's requests plus a watermark read per firing; send, receive, delete per firing.
		Requests: 3.1 + 3, DynamoRequests: 2.2 + 0.9, SQSRequests: 3,
		WriteUnits: 3.1, ReadUnits: 1,
		// One processor invocation per firing, each as long as a batch was (200 ms), and the
		// log writer's as measured (one of 50 ms over ten firings).
		LambdaRequests: 1.1, LambdaGBSeconds: 0.205 * 0.125,
		LogIngestBytes: 500 + 1.1*300,
	}, got)
}

func TestBill(t *testing.T) {
	t.Parallel()
	p := cost.Prices{
		DynamoWriteRequestUnit: 1, DynamoReadRequestUnit: 10, DynamoStorageGBMonth: 100,
		SQSRequest: 1000, LambdaRequest: 1e4, LambdaGBSecondARM64: 1e5, CloudWatchLogsIngestGB: 1e6,
		SchedulerInvocation: 7,
	}
	cases := map[string]struct {
		u    cost.Usage
		want float64
	}{
		"Nothing":      {cost.Usage{}, 0},
		"EachLine":     {cost.Usage{WriteUnits: 1, ReadUnits: 1, SQSRequests: 1, LambdaRequests: 1, LambdaGBSeconds: 1, LogIngestBytes: 1 << 30, StorageGBMonths: 1}, 1_111_111},
		"Fractions":    {cost.Usage{WriteUnits: 8, ReadUnits: 0.5, SQSRequests: 0.3}, 8 + 5 + 300},
		"RequestsOnly": {cost.Usage{Requests: 99, DynamoRequests: 99}, 0},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := p.Bill(c.u)
			require.InDelta(t, c.want, b.Total, 1e-6)
			sum := 0.0
			for _, l := range b.Lines {
				sum += l.USD
			}
			require.InDelta(t, b.Total, sum, 1e-6)
			m := b.Scale(1e6)
			require.InDelta(t, c.want*1e6, m.Total, 1e-3)
			require.InDelta(t, c.u.WriteUnits*1e6, m.Line("DynamoDB write request units").Quantity, 1e-6)
		})
	}
	require.Equal(t, 7.0, p.Scheduler().Total)
}

func TestUSEast1(t *testing.T) {
	t.Parallel()
	p := cost.USEast1
	require.NotEmpty(t, p.AsOf)
	// Per million: the figures the report quotes side by side.
	for name, c := range map[string]struct{ got, want float64 }{
		"DynamoDB WRU":         {p.DynamoWriteRequestUnit * 1e6, 0.625},
		"DynamoDB RRU":         {p.DynamoReadRequestUnit * 1e6, 0.125},
		"SQS":                  {p.SQSRequest * 1e6, 0.40},
		"Lambda requests":      {p.LambdaRequest * 1e6, 0.20},
		"EventBridge Schedule": {p.SchedulerInvocation * 1e6, 1.00},
	} {
		require.InDelta(t, c.want, c.got, 1e-9, name)
	}
	// 128 MB for one second on arm64.
	require.InDelta(t, 0.0000016667, 0.125*p.LambdaGBSecondARM64, 1e-10)
}

func TestItemSize(t *testing.T) {
	t.Parallel()
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	n := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	cases := map[string]struct {
		item map[string]types.AttributeValue
		want int
	}{
		"Empty":                   {nil, 0},
		"StringIsNamePlusBytes":   {map[string]types.AttributeValue{"pk": s("I#Tick")}, 2 + 6},
		"MultiByteString":         {map[string]types.AttributeValue{"n": s("日本")}, 1 + 6},
		"EpochMillis":             {map[string]types.AttributeValue{"nextRun": n("1795372200000")}, 7 + 1 + 4}, // 1795372 2: 8 digits
		"NumberTrimsZeros":        {map[string]types.AttributeValue{"x": n("-000120.500")}, 1 + 1 + 2},         // 1205
		"OddDigitCountRoundsUp":   {map[string]types.AttributeValue{"x": n("123")}, 1 + 1 + 2},
		"Zero":                    {map[string]types.AttributeValue{"x": n("0")}, 1 + 1},
		"Bool":                    {map[string]types.AttributeValue{"active": &types.AttributeValueMemberBOOL{Value: true}}, 6 + 1},
		"MapAddsThreePlusOneEach": {map[string]types.AttributeValue{"m": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"url": s("http://x")}}}, 1 + 3 + 1 + 3 + 8},
		"EmptyList":               {map[string]types.AttributeValue{"l": &types.AttributeValueMemberL{}}, 1 + 3},
		"StringSet":               {map[string]types.AttributeValue{"ss": &types.AttributeValueMemberSS{Value: []string{"a", "bc"}}}, 2 + 3},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, c.want, cost.ItemSize(c.item))
		})
	}
}

func requireUsage(t *testing.T, want, got cost.Usage) {
	t.Helper()
	const eps = 1e-9
	for _, f := range []struct {
		name      string
		want, got float64
	}{
		{"Requests", want.Requests, got.Requests},
		{"DynamoRequests", want.DynamoRequests, got.DynamoRequests},
		{"SQSRequests", want.SQSRequests, got.SQSRequests},
		{"WriteUnits", want.WriteUnits, got.WriteUnits},
		{"ReadUnits", want.ReadUnits, got.ReadUnits},
		{"LambdaRequests", want.LambdaRequests, got.LambdaRequests},
		{"LambdaGBSeconds", want.LambdaGBSeconds, got.LambdaGBSeconds},
		{"LogIngestBytes", want.LogIngestBytes, got.LogIngestBytes},
		{"StorageGBMonths", want.StorageGBMonths, got.StorageGBMonths},
	} {
		require.True(t, math.Abs(f.want-f.got) < eps, "%s: want %v, got %v", f.name, f.want, f.got)
	}
}
