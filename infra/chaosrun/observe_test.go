package chaosrun

import (
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestObserverCountsRecoveriesRefused(t *testing.T) {
	t.Parallel()
	o := newObserver(io.Discard)
	_, err := o.Write([]byte(`{"level":"INFO","msg":"recovery: lease extended since it was read; the execution goes on","function":"recovery","timer":"Async00"}` + "\n" +
		`{"level":"INFO","msg":"recovery sweep","recovered":1}` + "\n"))
	require.NoError(t, err)
	var rep Report
	rep.count(newKiller(0, 1), o.snapshot())
	require.Equal(t, 1, rep.RecoveriesRefused)
}
