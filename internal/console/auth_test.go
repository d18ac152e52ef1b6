package console

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestAuth(t *testing.T) {
	t.Parallel()
	const token = "0123456789abcdef0123456789abcdef"
	var mu sync.Mutex
	now := time.Date(2026, 11, 21, 18, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }

	t.Run("Bearer", func(t *testing.T) {
		a := newAuth(token, clock)
		for header, want := range map[string][2]bool{
			"":                          {false, false},
			"Bearer " + token:           {true, true},
			"bearer " + token:           {true, true},
			"Bearer  " + token + " ":    {true, true},
			"Bearer wrong":              {false, true},
			"Basic " + token:            {false, true},
			"Bearer " + token + "extra": {false, true},
			token:                       {false, true},
		} {
			r := httptest.NewRequest("GET", "/api/timers", nil)
			if header != "" {
				r.Header.Set("Authorization", header)
			}
			ok, present := a.bearer(r)
			require.Equal(t, want, [2]bool{ok, present}, "%q", header)
		}
		require.False(t, newAuth("", clock).tokenOK(""), "no token configured never matches")
	})

	t.Run("LoginCodesWorkOnceAndExpire", func(t *testing.T) {
		a := newAuth(token, clock)
		code := a.newLoginCode()
		require.True(t, a.redeem(code))
		require.False(t, a.redeem(code), "one use")
		require.False(t, a.redeem("made-up"))
		late := a.newLoginCode()
		advance(LoginLinkTTL + time.Second)
		require.False(t, a.redeem(late), "expired")
	})

	t.Run("SessionsExpireAndEnd", func(t *testing.T) {
		a := newAuth(token, clock)
		id, s := a.newSession("")
		r := httptest.NewRequest("GET", "/", nil)
		r.AddCookie(&http.Cookie{Name: sessionCookie, Value: id})
		got, ok := a.sessionOf(r)
		require.True(t, ok)
		require.Same(t, s, got)
		require.True(t, csrfOK(s, s.csrf))
		require.False(t, csrfOK(s, ""))
		require.False(t, csrfOK(s, s.csrf+"x"))
		require.False(t, csrfOK(nil, s.csrf))

		a.endSession(r)
		_, ok = a.sessionOf(r)
		require.False(t, ok, "logged out")

		id, _ = a.newSession("")
		r = httptest.NewRequest("GET", "/", nil)
		r.AddCookie(&http.Cookie{Name: sessionCookie, Value: id})
		advance(SessionTTL)
		_, ok = a.sessionOf(r)
		require.False(t, ok, "expired")

		forged := httptest.NewRequest("GET", "/", nil)
		forged.AddCookie(&http.Cookie{Name: sessionCookie, Value: "not-a-session"})
		_, ok = a.sessionOf(forged)
		require.False(t, ok)
	})

	t.Run("SessionsAreBounded", func(t *testing.T) {
		a := newAuth(token, clock)
		for range maxSessions + 10 {
			a.newSession("")
		}
		require.Len(t, a.sessions, maxSessions)
	})

	t.Run("FlashIsShownOnce", func(t *testing.T) {
		a := newAuth(token, clock)
		_, s := a.newSession("")
		a.setFlash(s, "done")
		require.Equal(t, "done", a.takeFlash(s))
		require.Empty(t, a.takeFlash(s))
	})
}

func TestParseCapacity(t *testing.T) {
	t.Parallel()
	c, err := ParseCapacity("4, 3,2,2")
	require.NoError(t, err)
	require.Equal(t, [4]int{4, 3, 2, 2}, c)
	c, err = ParseCapacity("")
	require.NoError(t, err)
	require.Equal(t, [4]int{}, c)
	for _, bad := range []string{"4,3,2", "a,b,c,d", "1,2,3,-4"} {
		_, err := ParseCapacity(bad)
		require.Error(t, err, bad)
	}
}
