package schedule

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseAcceptsForms(t *testing.T) {
	t.Parallel()
	for _, expr := range []string{
		// OutSystems days.
		"22:00 Mon Fri", "10:00 14:00 Mon Tue Wed Thu Fri Sat Sun", "15:30 16", "15:30 1 15", "15:30 31", "15:30 01",
		"00:15 2nd Tue", "00:15 1st Mon 3rd Mon", "00:15 Last Fri", "00:15 4th Sun Last Sat", "22:00 Mon Mon",
		// rate and at.
		"rate(1 minute)", "rate(5 minutes)", "rate(1 hour)", "rate(12 hours)", "rate(1 day)", "rate(7 days)",
		"rate(36500 days)", " rate( 5 minutes ) ", "at(2026-12-01T10:00:00)", "at(2028-02-29T23:59:59)", "at(1999-01-01T00:00:00)",
		// Quartz.
		"/10 * * * * ?", "0/10 * * * * ?", "0 0 12 * * ?", "0 15 10 ? * MON-FRI", "0 15 10 L * ?", "0 15 10 L-2 * ?",
		"0 15 10 LW * ?", "0 15 10 15W * ?", "0 15 10 ? * 6L", "0 15 10 ? * FRIL", "0 15 10 ? * 6#3", "0 15 10 ? * fri#3",
		"0 15 10 ? * L", "0 15 10 * * ? 2026", "0 15 10 * * ? *", "0 15 10 * * ? 2026-2030,2035/5", "0 0 12 ? jan-mar,Dec sun,sat",
		"0 0 0 29 2 ?", "0 0 12 ? 2 6#5", "0 0 12 lw * ?", "0 0 12 l * ?",
		// Quartz 2.5: L-nW, and L, W, LW, L-n inside day-of-month lists; the largest steps.
		"0 15 10 L-5W * ? 2010", "0 0 12 l-3w * ?", "0 0 12 L-0W * ?", "0 0 12 1,L * ?", "0 0 12 2W,16 * ?",
		"0 0 12 1W,15,LW * ?", "0 0 12 L-1W,L-1 * ?", "0 0 12 1-5,L-2,20W * ?", "0 0 12 1/7,L * ?",
		"/59 /59 /23 * * ?", "0 0 0 1/31 */12 ?", "0 0 0 ? * 1/7", "cron(0 12 1,L * ? *)", "cron(0 12 L-2W * ? *)",
		// Unix.
		"* * * * *", "*/15 * * * *", "0 0 * * 0", "0 0 * * 7", "0 0 * * 1-7", "0 12 1 * MON", "23 0-20/2 * * *", "5 4 * * sun",
		"0 0 1,15 * 1-5", "0 0 30 1,3-12 *",
		// EventBridge.
		"cron(0 10 * * ? *)", "cron(0/5 8-17 ? * MON-FRI *)", "cron(0 9 ? * 2#1 *)", "cron(0 12 L * ? 2026-2199)", "cron(0 12 15W * ? *)",
	} {
		t.Run(expr, func(t *testing.T) {
			t.Parallel()
			s, err := Parse(expr, nil)
			require.NoError(t, err)
			require.Equal(t, expr, s.String())
		})
	}
}

func TestParseErrorsForms(t *testing.T) {
	t.Parallel()
	const days = `a weekday (Mon Tue Wed Thu Fri Sat Sun), a day of the month (1-31) or an nth weekday (1st, 2nd, 3rd, 4th or Last, then a weekday)`
	const unixNo = `is not part of 5-field Unix cron; use the Quartz (6 or 7 fields) or cron(...) form`
	tests := []struct{ expr, want string }{
		// OutSystems days.
		{"22:00 mon", `schedule "22:00 mon": unexpected "mon"; expected ` + days + ` (case-sensitive)`},
		{"22:00 Monday", `unexpected "Monday"; expected a weekday`},
		{"22:00 Mon 15", `schedule "22:00 Mon 15": unexpected "15" after weekdays: expected a weekday (Mon Tue Wed Thu Fri Sat Sun) (one kind of day per schedule)`},
		{"22:00 15 Mon", `unexpected "Mon" after days of the month: expected a day of the month (1-31)`},
		{"22:00 15 2nd Tue", `unexpected "2nd" after days of the month`},
		{"00:15 2nd Tue Mon", `unexpected "Mon" after nth weekdays: expected an nth weekday (1st, 2nd, 3rd, 4th or Last, then a weekday)`},
		{"00:15 2nd", `schedule "00:15 2nd": expected a weekday (Mon Tue Wed Thu Fri Sat Sun) after "2nd", got nothing`},
		{"00:15 Last 15", `expected a weekday (Mon Tue Wed Thu Fri Sat Sun) after "Last", got "15"`},
		{"00:15 last Fri", `unexpected "last"`},
		{"00:15 5th Tue", `unexpected "5th"; expected a day of the month (1-31) or an nth weekday`},
		{"15:30 32", `schedule "15:30 32": day of the month "32" out of range 1-31`},
		{"15:30 0", `day of the month "0" out of range 1-31`},
		{"22:00 Mon 23:00", `unexpected time "23:00" after the days; times come first`},
		{"22:00 Mon 2:00", `unexpected time "2:00" after the days`},
		{"25:00 Mon", `hour 25 out of range 00-23 in "25:00"`},
		// rate.
		{"rate(5 minute)", `schedule "rate(5 minute)": a rate value greater than 1 takes the plural unit "minutes", as in EventBridge`},
		{"rate(2 day)", `takes the plural unit "days"`},
		{"rate(1 minutes)", `schedule "rate(1 minutes)": a rate value of 1 takes the singular unit "minute", as in EventBridge`},
		{"rate(1 hours)", `takes the singular unit "hour"`},
		{"rate(0 minutes)", `rate value must be a positive integer, got "0"`},
		{"rate(-5 minutes)", `rate value must be a positive integer, got "-5"`},
		{"rate(1.5 hours)", `rate value must be a positive integer, got "1.5"`},
		{"rate(5 seconds)", `unknown unit "seconds"; expected "rate(N minute|minutes|hour|hours|day|days)" (rate has no seconds: use "every N s")`},
		{"rate(5 Minutes)", `unknown unit "Minutes"`},
		{"rate(5minutes)", `expected a value and a unit separated by a space, as in "rate(5 minutes)", got "5minutes"`},
		{"rate()", `expected a value and a unit separated by a space`},
		{"rate(5 minutes", `schedule "rate(5 minutes": missing ")" at the end; expected "rate(N minute|minutes|hour|hours|day|days)"`},
		{"rate(5 minutes) now", `missing ")" at the end`},
		{"rate((5 minutes))", `unexpected "(" inside rate(...)`},
		{"rate(36501 days)", `rate 36501 days is longer than 36500 days`},
		{"rate(99999999999999999999 minutes)", `is longer than 36500 days`},
		// at.
		{"at(2026-12-01T10:00:00Z)", `unexpected "Z" after the date-time; at() takes no fraction or offset: the timer's zone applies`},
		{"at(2026-12-01T10:00:00+01:00)", `unexpected "+01:00" after the date-time`},
		{"at(2026-12-01T10:00:00.5)", `unexpected ".5" after the date-time`},
		{"at(2026-12-01 10:00:00)", `expected "at(yyyy-mm-ddThh:mm:ss)", got "2026-12-01 10:00:00"`},
		{"at(2026-12-01)", `expected "at(yyyy-mm-ddThh:mm:ss)", got "2026-12-01"`},
		{"at(2026-12-1T10:00:00)", `expected "at(yyyy-mm-ddThh:mm:ss)"`},
		{"at(2026-1a-01T10:00:00)", `with digits only, got "2026-1a-01T10:00:00"`},
		{"at(2026-13-01T10:00:00)", `month 13 out of range 01-12 in "2026-13-01T10:00:00"`},
		{"at(2026-02-29T10:00:00)", `day 29 out of range 01-28 for 2026-02`},
		{"at(2026-04-31T10:00:00)", `day 31 out of range 01-30 for 2026-04`},
		{"at(2026-12-01T24:00:00)", `hour 24 out of range 00-23`},
		{"at(2026-12-01T10:60:00)", `minute 60 out of range 00-59`},
		{"at(2026-12-01T10:00:60)", `second 60 out of range 00-59`},
		{"at(2026-12-01T10:00:00", `missing ")" at the end; expected "at(yyyy-mm-ddThh:mm:ss)"`},
		// Cron fields.
		{"61 * * * *", `schedule "61 * * * *": minute field "61": "61" out of range 0-59`},
		{"0 24 * * *", `hour field "24": "24" out of range 0-23`},
		{"0 0 32 * *", `day-of-month field "32": "32" out of range 1-31`},
		{"0 0 * 13 *", `month field "13": "13" out of range 1-12`},
		{"0 0 * * 8", `day-of-week field "8": "8" out of range 0-7 (0 or 7 = SUN)`},
		{"0 0 12 ? * 0", `day-of-week field "0": "0" out of range 1-7 (1 = SUN .. 7 = SAT)`},
		{"0 0 12 ? * 1-8", `day-of-week field "1-8": "8" out of range 1-7`},
		{"60 0 12 * * ?", `second field "60": "60" out of range 0-59`},
		{"0 5,61 * * *", `hour field "5,61": "61" out of range 0-23`},
		{"0 0 * FOO *", `month field "FOO": unexpected "FOO"; expected a number 1-12 or a name JAN-DEC`},
		{"0 0 * * MOM", `day-of-week field "MOM": unexpected "MOM"; expected a number 0-7 or a name SUN-SAT (0 or 7 = SUN)`},
		{"0 0 * * MONDAY", `unexpected "MONDAY"`},
		{"0 5-2 * * *", `hour field "5-2": range "5-2" runs backwards; write it as a list, as in "5-23,0-2"`},
		{"0 0 * * FRI-MON", `range "FRI-MON" runs backwards`},
		{"0 */0 * * *", `hour field "*/0": step "0" must be a positive integer`},
		{"0 */x * * *", `step "x" must be a positive integer`},
		{"0 */61 * * *", `hour field "*/61": step 61 is larger than the field's largest value 23 (range 0-23)`},
		{"0 0 */24 * * ?", `hour field "*/24": step 24 is larger than the field's largest value 23`},
		{"/60 * * * * ?", `second field "/60": step 60 is larger than the field's largest value 59`},
		{"0 /60 * * * ?", `minute field "/60": step 60 is larger than the field's largest value 59`},
		{"*/60 * * * *", `minute field "*/60": step 60 is larger than the field's largest value 59`},
		{"0 0 0 1/32 * ?", `day-of-month field "1/32": step 32 is larger than the field's largest value 31`},
		{"0 0 0 ? */13 *", `month field "*/13": step 13 is larger than the field's largest value 12`},
		{"0 0 0 ? * 1/8", `day-of-week field "1/8": step 8 is larger than the field's largest value 7`},
		{"1,,2 * * * *", `minute field "1,,2": empty value in the list; expected a number 0-59`},
		{"1- * * * *", `minute field "1-": missing value; expected a number 0-59`},
		{"/10 * * * *", `minute field "/10": expected a value or "*" before "/" in "/10" (a bare "/N" is Quartz shorthand)`},
		{"? 0 * * *", `minute field "?": "?" is only allowed in the day-of-month or day-of-week field of the Quartz and cron(...) forms`},
		{"0 0 12 * JAN#2 ?", `month field "JAN#2": "#" is only allowed in the day-of-week field`},
		{"0 0 L * *", `day-of-month field "L": "L" ` + unixNo},
		{"0 0 ? * *", `day-of-month field "?": "?" ` + unixNo},
		{"0 0 * * 1#2", `day-of-week field "1#2": "1#2" ` + unixNo},
		{"0 0 * * 5L", `"5L" ` + unixNo},
		{"0 0 12 ? * 2025", `day-of-week field "2025": "2025" out of range 1-7`},
		{"0 0 12 15 * ? 2100", `year field "2100": "2100" out of range 1970-2099`},
		{"0 0 12 15 * ? 1969", `year field "1969": "1969" out of range 1970-2099`},
		{"0 0 12 * * ? 2026 x", `a cron expression has 5 fields (minute hour day-of-month month day-of-week) or 6-7 (Quartz: second first, optional year last), got 8`},
		{"0 0 12 *", `got 4; OutSystems times are written HH:MM`},
		// Quartz and EventBridge day fields.
		{"* * * * * *", `day-of-month "*" and day-of-week "*" are both set; one of them must be "?" (as in Quartz and EventBridge); 6 or 7 fields are Quartz: second minute hour day-of-month month day-of-week [year]`},
		{"0 0 12 15 * MON", `day-of-month "15" and day-of-week "MON" are both set; one of them must be "?"`},
		{"0 0 12 ? * ?", `day-of-month and day-of-week are both "?"; exactly one of them must be "?" (as in Quartz and EventBridge)`},
		{"0 0 12 1,? * ?", `day-of-month field "1,?": "?" must be alone in its field`},
		{"0 0 12 1,L-31W * ?", `day-of-month field "1,L-31W": the n in L-n must be 0-30, got "31"`},
		{"0 0 12 1,1-5W * ?", `the n in nW must be a day 1-31, got "1-5"`},
		{"0 0 12 L-W * ?", `day-of-month field "L-W": the n in L-n must be 0-30, got ""`},
		{"0 0 12 1,WL * ?", `day-of-month field "1,WL": unexpected "WL"; expected a number 1-31, L, L-n, LW, L-nW or nW`},
		{"0 0 12 ? * 2L,3", `day-of-week field "2L,3": L and # cannot be combined with other values in a list`},
		{"0 0 12 L-31 * ?", `day-of-month field "L-31": the n in L-n must be 0-30, got "31"`},
		{"0 0 12 32W * ?", `day-of-month field "32W": the n in nW must be a day 1-31, got "32"`},
		{"0 0 12 W * ?", `the n in nW must be a day 1-31, got ""`},
		{"0 0 12 1-5W * ?", `the n in nW must be a day 1-31, got "1-5"`},
		{"0 0 12 LX * ?", `day-of-month field "LX": unexpected "LX"; expected L, L-n, LW or L-nW`},
		{"0 0 12 ? * 6#6", `day-of-week field "6#6": the k in n#k must be 1-5, got "6"`},
		{"0 0 12 ? * 6#0", `the k in n#k must be 1-5, got "0"`},
		{"0 0 12 ? * 8#1", `day-of-week field "8#1": "8" out of range 1-7`},
		{"0 0 12 ? * 8L", `day-of-week field "8L": "8" out of range 1-7`},
		{"0 0 12 ? * L5", `day-of-week field "L5": unexpected "L5"; expected a number 1-7 or a name SUN-SAT (1 = SUN .. 7 = SAT), L, nL, n#k or ?`},
		// Expressions that can never fire are refused.
		{"0 0 30 2 *", `schedule "0 0 30 2 *": no date matches: the day-of-month "30", day-of-week "*", month and year fields never agree, so it would never fire`},
		{"0 0 0 31 2,4 ?", `no date matches`},
		{"0 0 0 29 2 ? 2027", `no date matches`},
		{"cron(0 0 31 6 ? *)", `no date matches`},
		// EventBridge.
		{"cron(0 10 * * ?)", `schedule "cron(0 10 * * ?)": cron() takes 6 fields (minute hour day-of-month month day-of-week year), got 5`},
		{"cron(0 0 10 * * ? *)", `cron() takes 6 fields`},
		{"cron(0 10 * * * *)", `day-of-month "*" and day-of-week "*" are both set; one of them must be "?" (as in Quartz and EventBridge)`},
		{"cron(0 10 * * ? 2200)", `year field "2200": "2200" out of range 1970-2199`},
		{"cron(/10 * * * ? *)", `minute field "/10": expected a value or "*" before "/"`},
		{"cron(0 10 * * ? *", `missing ")" at the end; expected "cron(minute hour day-of-month month day-of-week year)"`},
		{"Cron(0 10 * * ? *)", `unknown format`},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			t.Parallel()
			_, err := Parse(tt.expr, nil)
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrInvalid)
			require.ErrorContains(t, err, tt.want)
		})
	}
}
