package manifest

import (
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// Activiti's failedJobRetryTimeCycle (its job table's retry time cycle) is an ISO 8601 repeating interval: R3/PT10M
// is three retries ten minutes apart. Only the forms a retry policy needs are accepted: a
// repeat count and a duration of days, hours, minutes and seconds.
var retryCycle = regexp.MustCompile(`^R(\d{1,3})/P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$`)

// ParseRetryCycle reads "R<n>/P[nD][T[nH][nM][nS]]".
func ParseRetryCycle(s string) (retries int, delay time.Duration, err error) {
	m := retryCycle.FindStringSubmatch(s)
	if m == nil || s[len(s)-1] == 'T' || s[len(s)-1] == 'P' {
		return 0, 0, fmt.Errorf("%q is not a retry cycle; expected R<count>/<ISO 8601 duration> such as R3/PT10M", s)
	}
	retries, _ = strconv.Atoi(m[1])
	for i, unit := range []time.Duration{24 * time.Hour, time.Hour, time.Minute, time.Second} {
		if m[i+2] != "" {
			n, _ := strconv.Atoi(m[i+2])
			delay += time.Duration(n) * unit
		}
	}
	if retries > 100 {
		return 0, 0, fmt.Errorf("%q: at most 100 retries", s)
	}
	if delay > 24*time.Hour {
		return 0, 0, fmt.Errorf("%q: the delay must be at most 24h", s)
	}
	return retries, delay, nil
}
