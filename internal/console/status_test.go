package console_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/console"
)

func TestRecordStatus(t *testing.T) {
	t.Parallel()
	var got []int
	h := console.RecordStatus(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/teapot":
			w.WriteHeader(http.StatusTeapot)
			w.WriteHeader(http.StatusOK) // superfluous: the first status is the answer
		case "/implicit":
			_, _ = w.Write([]byte("ok"))
		}
	}), func(status int) { got = append(got, status) })
	for _, p := range []string{"/teapot", "/implicit", "/nothing"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", p, nil))
	}
	require.Equal(t, []int{http.StatusTeapot, http.StatusOK, http.StatusOK}, got)
}
