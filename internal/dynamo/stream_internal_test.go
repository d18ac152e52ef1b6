package dynamo

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/actionspec"
	"github.com/sundialhq/sundial/internal/timer"
)

// images returns the item as Store writes it before (old) and after (new) a change, with the
// attributes the finish adds.
func images(t *testing.T, before, after timer.Instance, extra map[string]types.AttributeValue) (map[string]types.AttributeValue, map[string]types.AttributeValue) {
	t.Helper()
	o, err := attributevalue.MarshalMap(toItem(before))
	require.NoError(t, err)
	n, err := attributevalue.MarshalMap(toItem(after))
	require.NoError(t, err)
	for k, v := range extra {
		n[k] = v
	}
	return o, n
}

func TestExecutionFromImages(t *testing.T) {
	base := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	idle := timer.Instance{
		Key:      timer.Key{Timer: "Nightly", Tenant: "acme"},
		Settings: timer.Settings{Schedule: "every 5m", Timeout: time.Minute, MaxRetries: 1, RetryDelay: 10 * time.Second, Action: actionspec.Spec{HTTP: &actionspec.HTTPSpec{URL: "http://x"}}},
		Active:   true, NextRun: base, Version: 7,
	}
	running, err := idle.Claim(timer.Claim{Due: base, ScheduledAt: base, Attempt: 1, ExecutionID: "exec-1", By: "p1", Now: base.Add(20 * time.Millisecond)})
	require.NoError(t, err)
	next := func(t time.Time) (time.Time, bool) { return base.Add(5 * time.Minute), true }
	ended := func(res timer.RunResult) (timer.Finish, timer.Instance) {
		dec := timer.Decide(running, res, next)
		after, err := running.Apply(dec)
		require.NoError(t, err)
		return dec, after
	}
	finishAttrs := func(dec timer.Finish) map[string]types.AttributeValue {
		m := map[string]types.AttributeValue{"lastExecId": &types.AttributeValueMemberS{Value: dec.Fence.ExecutionID}}
		if dec.GaveUp {
			m["lastGaveUp"] = &types.AttributeValueMemberBOOL{Value: true}
		}
		return m
	}

	t.Run("a finish yields its execution", func(t *testing.T) {
		for _, res := range []timer.RunResult{
			{Outcome: timer.OutcomeSuccess, Finished: base.Add(2 * time.Second), Output: `{"sent":3,"note":"é"}`},
			{Outcome: timer.OutcomeError, Error: "boom", Finished: base.Add(time.Second)}, // a retry is pending
		} {
			dec, after := ended(res)
			o, n := images(t, running, after, finishAttrs(dec))
			got, ok, err := ExecutionFromImages(o, n)
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, timer.NewExecution(running, dec), got, "%s", res.Outcome)
		}
	})
	t.Run("giving up is carried", func(t *testing.T) {
		retry := running
		retry.RunAttempt, retry.MaxRetries = 2, 1
		dec := timer.Decide(retry, timer.RunResult{Outcome: timer.OutcomeError, Error: "again", Finished: base.Add(time.Second)}, next)
		require.True(t, dec.GaveUp, "the last retry failed")
		after, err := retry.Apply(dec)
		require.NoError(t, err)
		o, n := images(t, retry, after, finishAttrs(dec))
		got, ok, err := ExecutionFromImages(o, n)
		require.NoError(t, err)
		require.True(t, ok)
		require.True(t, got.GaveUp)
		require.Equal(t, timer.NewExecution(retry, dec), got)
	})
	t.Run("skipped instants are carried", func(t *testing.T) {
		prior := running
		prior.SkippedInstants, prior.SkippedSince = 4, base.Add(-time.Hour)
		every := func(t time.Time) (time.Time, bool) { return t.Truncate(time.Minute).Add(time.Minute), true }
		dec := timer.Decide(prior, timer.RunResult{Outcome: timer.OutcomeSuccess, Finished: base.Add(150 * time.Second)}, every)
		require.Equal(t, 2, dec.Skipped)
		after, err := prior.Apply(dec)
		require.NoError(t, err)
		o, n := images(t, prior, after, finishAttrs(dec))
		got, ok, err := ExecutionFromImages(o, n)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, 2, got.Skipped, "this finish's, not the counter's total")
		require.Equal(t, timer.NewExecution(prior, dec), got)
	})
	t.Run("other records are not executions", func(t *testing.T) {
		o, n := images(t, idle, running, nil) // the claim
		_, ok, err := ExecutionFromImages(o, n)
		require.NoError(t, err)
		require.False(t, ok, "a claim")
		extended := running
		extended.LeaseExpiresAt = extended.LeaseExpiresAt.Add(time.Second)
		o, n = images(t, running, extended, nil)
		_, ok, err = ExecutionFromImages(o, n)
		require.NoError(t, err)
		require.False(t, ok, "a lease extension")
		_, ok, err = ExecutionFromImages(o, nil)
		require.NoError(t, err)
		require.False(t, ok, "a removal")
		_, ok, err = ExecutionFromImages(nil, n)
		require.NoError(t, err)
		require.False(t, ok, "an insert")
	})
	t.Run("an execution removed without its finish is reported", func(t *testing.T) {
		_, after := ended(timer.RunResult{Outcome: timer.OutcomeSuccess, Finished: base.Add(time.Second)})
		o, n := images(t, running, after, map[string]types.AttributeValue{"lastExecId": &types.AttributeValueMemberS{Value: "exec-0"}})
		_, ok, err := ExecutionFromImages(o, n)
		require.ErrorIs(t, err, ErrNotAFinish)
		require.False(t, ok)
	})
}

// The log writer receives images as Lambda encodes them; converting them gives the SDK's
// values, nested ones included.
func TestFromStreamImage(t *testing.T) {
	var img map[string]events.DynamoDBAttributeValue
	require.NoError(t, json.Unmarshal([]byte(`{
		"s": {"S": "x"}, "n": {"N": "12.5"}, "b": {"BOOL": true}, "z": {"NULL": true}, "bin": {"B": "AQI="},
		"ss": {"SS": ["a","b"]}, "ns": {"NS": ["1","2"]}, "bs": {"BS": ["AQ=="]},
		"l": {"L": [{"S": "y"}, {"N": "3"}]}, "m": {"M": {"k": {"M": {"deep": {"S": "v"}}}}}
	}`), &img))
	got, err := FromStreamImage(img)
	require.NoError(t, err)
	want := map[string]types.AttributeValue{
		"s": &types.AttributeValueMemberS{Value: "x"}, "n": &types.AttributeValueMemberN{Value: "12.5"},
		"b": &types.AttributeValueMemberBOOL{Value: true}, "z": &types.AttributeValueMemberNULL{Value: true},
		"bin": &types.AttributeValueMemberB{Value: []byte{1, 2}},
		"ss":  &types.AttributeValueMemberSS{Value: []string{"a", "b"}}, "ns": &types.AttributeValueMemberNS{Value: []string{"1", "2"}},
		"bs": &types.AttributeValueMemberBS{Value: [][]byte{{1}}},
		"l":  &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberS{Value: "y"}, &types.AttributeValueMemberN{Value: "3"}}},
		"m": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"k": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"deep": &types.AttributeValueMemberS{Value: "v"}}}}},
	}
	require.Equal(t, want, got)
}

// FuzzStreamRecord feeds arbitrary record images through what the log writer does with them:
// it must answer (an execution, not one, or an error), never panic.
func FuzzStreamRecord(f *testing.F) {
	f.Add([]byte(`{"execId": {"S": "e"}, "timer": {"S": "T"}, "runAttempt": {"N": "1"}}`), []byte(`{"lastExecId": {"S": "e"}, "timer": {"S": "T"}}`))
	f.Add([]byte(`{"execId": {"S": "e"}}`), []byte(`{"lastExecId": {"S": "other"}}`))
	f.Add([]byte(`{"execId": {"N": "x"}}`), []byte(`{"nextRun": {"S": "soon"}}`))
	f.Fuzz(func(t *testing.T, oldJSON, newJSON []byte) {
		var oldImg, newImg map[string]events.DynamoDBAttributeValue
		if json.Unmarshal(oldJSON, &oldImg) != nil || json.Unmarshal(newJSON, &newImg) != nil {
			return
		}
		o, err := FromStreamImage(oldImg)
		if err != nil {
			return
		}
		n, err := FromStreamImage(newImg)
		if err != nil {
			return
		}
		e, ok, err := ExecutionFromImages(o, n)
		if ok && (err != nil || e.ExecutionID == "") {
			t.Fatalf("accepted a record without an execution id: %+v, %v", e, err)
		}
	})
}
