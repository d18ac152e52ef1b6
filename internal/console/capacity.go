package console

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseCapacity reads "P1,P2,P3,P4" maximum concurrencies (the template's P1Concurrency..
// P4Concurrency); "" means unknown.
func ParseCapacity(s string) ([4]int, error) {
	var c [4]int
	if s == "" {
		return c, nil
	}
	parts := strings.Split(s, ",")
	if len(parts) != 4 {
		return c, fmt.Errorf("processor concurrency %q: want four numbers, P1..P4", s)
	}
	for i, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 0 {
			return c, fmt.Errorf("processor concurrency %q: %q is not a count", s, p)
		}
		c[i] = n
	}
	return c, nil
}
