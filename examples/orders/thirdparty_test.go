package orders

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func startThirdParty(t *testing.T) *ThirdParty {
	t.Helper()
	tp := NewThirdParty(1)
	_, err := tp.Start("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, tp.Close()) })
	return tp
}

func push(t *testing.T, tp *ThirdParty, id int64) error {
	t.Helper()
	o := Order{ID: id, Desc: "order", State: StateCompleted, CreateTime: 1}
	return (&HTTPPusher{}).Push(context.Background(), tp.PushURL(), o, PushMeta{Timer: "T-1", Execution: "E1", Shard: Shard{1, 5}, Attempt: 2})
}

func control(t *testing.T, tp *ThirdParty, query string) (int, string) {
	t.Helper()
	resp, err := http.Post(tp.URL()+"/control?"+query, "", nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

func TestThirdPartyRecordsPushes(t *testing.T) {
	t.Parallel()
	tp := startThirdParty(t)
	require.NoError(t, push(t, tp, 6))
	require.NoError(t, push(t, tp, 6), "an idempotent receiver accepts a repeat")
	require.NoError(t, push(t, tp, 11))

	rs := tp.Receipts()
	require.Len(t, rs, 3)
	r := rs[0]
	require.Equal(t, int64(6), r.OrderID)
	require.Equal(t, StateCompleted, r.OrderState)
	require.True(t, r.Accepted)
	require.False(t, r.Duplicate)
	require.Equal(t, "order-6", r.IdempotencyKey)
	require.Equal(t, "T-1", r.Timer)
	require.Equal(t, "E1", r.Execution)
	require.Equal(t, "1/5", r.Shard)
	require.Equal(t, 2, r.Attempt)
	require.Equal(t, "order", r.Order.Desc)
	require.WithinDuration(t, time.Now(), r.At, 5*time.Second)
	require.True(t, rs[1].Duplicate)
	require.Equal(t, map[int64]int{6: 2, 11: 1}, tp.Accepted())
	require.Equal(t, Stats{Requests: 3, Accepted: 3, Duplicates: 1, Orders: 2}, tp.Stats())

	resp, err := http.Get(tp.URL() + "/received?order=11")
	require.NoError(t, err)
	defer resp.Body.Close()
	var got []Receipt
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&got))
	require.Len(t, got, 1)
	require.Equal(t, int64(11), got[0].OrderID)
}

func TestThirdPartyFailsOnDemand(t *testing.T) {
	t.Parallel()

	t.Run("GoAPI", func(t *testing.T) {
		t.Parallel()
		tp := startThirdParty(t)
		tp.FailAll(true)
		err := push(t, tp, 1)
		var pe *PushError
		require.ErrorAs(t, err, &pe)
		require.Equal(t, http.StatusServiceUnavailable, pe.Status)
		require.Contains(t, err.Error(), "third party answered 503")
		tp.FailAll(false)
		require.NoError(t, push(t, tp, 1))

		tp.FailOrder(2, 2)
		require.Error(t, push(t, tp, 2))
		require.NoError(t, push(t, tp, 3), "other orders go through")
		require.Error(t, push(t, tp, 2))
		require.NoError(t, push(t, tp, 2), "failed exactly twice")

		tp.FailOrder(4, Always)
		for range 5 {
			require.Error(t, push(t, tp, 4))
		}
		tp.FailNone()
		require.NoError(t, push(t, tp, 4))
		require.Equal(t, Failures{Order: map[int64]int{}}, tp.Failures())

		require.Error(t, tp.FailRate(1.5))
		require.NoError(t, tp.FailRate(0.5))
		failed := 0
		for id := range int64(200) {
			if push(t, tp, 100+id) != nil {
				failed++
			}
		}
		require.InDelta(t, 100, failed, 30, "about half fail at rate 0.5")
		st := tp.Stats()
		require.Equal(t, st.Requests, st.Accepted+st.Refused)
		require.Zero(t, st.Duplicates)
	})

	t.Run("HTTPControl", func(t *testing.T) {
		t.Parallel()
		tp := startThirdParty(t)
		status, body := control(t, tp, "fail=all")
		require.Equal(t, http.StatusOK, status, body)
		require.JSONEq(t, `{"all":true,"rate":0,"order":{}}`, body)
		require.Error(t, push(t, tp, 1))
		status, _ = control(t, tp, "fail=none")
		require.Equal(t, http.StatusOK, status)
		require.NoError(t, push(t, tp, 1))

		status, body = control(t, tp, "order=7&times=2")
		require.Equal(t, http.StatusOK, status, body)
		require.JSONEq(t, `{"all":false,"rate":0,"order":{"7":2}}`, body)
		require.Error(t, push(t, tp, 7))
		require.Error(t, push(t, tp, 7))
		require.NoError(t, push(t, tp, 7))

		status, _ = control(t, tp, "order=8&times=always")
		require.Equal(t, http.StatusOK, status)
		require.Equal(t, Always, tp.Failures().Order[8])
		status, _ = control(t, tp, "order=8") // times defaults to 1
		require.Equal(t, http.StatusOK, status)
		require.Equal(t, 1, tp.Failures().Order[8])

		status, _ = control(t, tp, "rate=0.25")
		require.Equal(t, http.StatusOK, status)
		require.InDelta(t, 0.25, tp.Failures().Rate, 1e-9)

		for _, bad := range []struct{ query, msg string }{
			{"", "nothing to do"},
			{"fail=some", `fail="some": want all or none`},
			{"order=x", `order="x": want an order id`},
			{"order=1&times=-2", `times="-2": want a count >= 0 or always`},
			{"times=2", "times needs order=ID"},
			{"rate=2", `rate="2": want a number 0..1`},
			{"color=red", `unknown parameter "color"`},
		} {
			before := tp.Failures()
			status, body := control(t, tp, bad.query)
			require.Equal(t, http.StatusBadRequest, status, bad.query)
			var e struct{ Error string }
			require.NoError(t, json.Unmarshal([]byte(body), &e), body)
			require.Contains(t, e.Error, bad.msg, bad.query)
			require.Equal(t, before, tp.Failures(), "a refused control changes nothing: %s", bad.query)
		}

		resp, err := http.Get(tp.URL() + "/stats")
		require.NoError(t, err)
		defer resp.Body.Close()
		var st Stats
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&st))
		require.Equal(t, tp.Stats(), st)
	})

	t.Run("NotAnOrder", func(t *testing.T) {
		t.Parallel()
		tp := startThirdParty(t)
		resp, err := http.Post(tp.PushURL(), "application/json", nil)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusBadRequest, resp.StatusCode)
		require.Empty(t, tp.Receipts())
	})
}

func TestHTTPPusherTransportError(t *testing.T) {
	t.Parallel()
	tp := startThirdParty(t)
	url := tp.PushURL()
	require.NoError(t, tp.Close())
	err := (&HTTPPusher{}).Push(context.Background(), url, Order{ID: 1}, PushMeta{})
	var pe *PushError
	require.ErrorAs(t, err, &pe)
	require.Zero(t, pe.Status)
	require.NotNil(t, errors.Unwrap(err))
}
