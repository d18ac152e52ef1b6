package console

import (
	"fmt"
	"net/http"
	"time"

	"github.com/sundialhq/sundial/internal/errkind"
)

func boolParam(v, name string) (bool, error) {
	switch v {
	case "", "false", "0":
		return false, nil
	case "true", "1", "on":
		return true, nil
	}
	return false, fmt.Errorf("%w: %s must be true or false, not %q", errkind.Invalid, name, v)
}

func parseTimeout(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%w: timeout: want a duration such as 20m or 10s, got %q", errkind.Invalid, v)
	}
	return d, nil
}

func by(r *http.Request) string {
	p, _ := principalOf(r.Context())
	return p.name
}

func zoneName(z string) string {
	if z == "" {
		return "UTC"
	}
	return z
}
