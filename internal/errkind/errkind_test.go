package errkind_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/errkind"
)

func TestErrkind(t *testing.T) {
	t.Parallel()
	t.Run("SentinelKeepsItsMessageAndMatchesItsKind", func(t *testing.T) {
		t.Parallel()
		gone := errkind.New(errkind.NotFound, "timer not found")
		err := fmt.Errorf("run now Tick: %w", gone)
		require.EqualError(t, err, "run now Tick: timer not found")
		require.ErrorIs(t, err, gone)
		require.ErrorIs(t, err, errkind.NotFound)
		require.NotErrorIs(t, err, errkind.Invalid)
	})
	t.Run("EachKindHasOneStatusAndOneExitCode", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			err    error
			status int
			code   int
		}{
			{nil, 500, 0},
			{errors.New("dynamodb: connection refused"), 500, 1},
			{fmt.Errorf("%w: priority: 9 is out of range", errkind.Invalid), 400, 2},
			{errkind.New(errkind.NotFound, "timer not found"), 404, 3},
			{errkind.New(errkind.Conflict, "timer changed concurrently"), 409, 1},
			{errkind.Unauthorized, 401, 1},
			{errkind.Forbidden, 403, 1},
			{errkind.New(errkind.Unavailable, "stack not found"), 503, 1},
		} {
			if tc.err != nil {
				require.Equal(t, tc.status, errkind.HTTPStatus(tc.err), tc.err.Error())
			}
			require.Equal(t, tc.code, errkind.ExitCode(tc.err), fmt.Sprint(tc.err))
		}
	})
}
