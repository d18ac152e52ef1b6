package schedule

import "testing"

// OutSystems times with weekdays, days of the month and nth weekdays (2026-01-01
// is a Thursday).
func TestNextOutSystemsDays(t *testing.T) {
	t.Parallel()
	checkNext(t, []nextCase{
		// "22:00 Mon Fri": every Monday and Friday at 22:00.
		{"WeekdaysThuToFri", "22:00 Mon Fri", "UTC", "2026-01-01T12:00:00Z", "2026-01-02T22:00:00Z"},
		{"WeekdaysFriToMon", "22:00 Mon Fri", "UTC", "2026-01-02T22:00:00Z", "2026-01-05T22:00:00Z"},
		{"WeekdaysSameDayLater", "10:00 14:00 Mon", "UTC", "2026-01-05T10:00:00Z", "2026-01-05T14:00:00Z"},
		{"WeekdaysNextWeek", "10:00 14:00 Mon", "UTC", "2026-01-05T14:00:00Z", "2026-01-12T10:00:00Z"},
		{"WeekdaysSunSat", "09:00 Sat Sun", "UTC", "2026-01-04T09:00:00Z", "2026-01-10T09:00:00Z"},
		{"WeekdaysKolkata", "09:00 Mon", "Asia/Kolkata", "2026-01-04T20:00:00Z", "2026-01-05T09:00:00+05:30"},
		// "15:30 16": the 16th of every month; "15:30 1 15": the 1st and 15th.
		{"MonthDay", "15:30 16", "UTC", "2026-01-16T15:30:00Z", "2026-02-16T15:30:00Z"},
		{"MonthDayLaterThisMonth", "15:30 16", "UTC", "2026-01-02T00:00:00Z", "2026-01-16T15:30:00Z"},
		{"MonthDays", "15:30 1 15", "UTC", "2026-01-15T16:00:00Z", "2026-02-01T15:30:00Z"},
		{"MonthDaysUnsorted", "15:30 15 1", "UTC", "2026-01-01T15:30:00Z", "2026-01-15T15:30:00Z"},
		{"Day31SkipsFebruary", "15:30 31", "UTC", "2026-01-31T15:30:00Z", "2026-03-31T15:30:00Z"},
		{"Day31SkipsApril", "15:30 31", "UTC", "2026-03-31T16:00:00Z", "2026-05-31T15:30:00Z"},
		{"Day29SkipsCommonFebruary", "12:00 29", "UTC", "2026-01-29T13:00:00Z", "2026-03-29T12:00:00Z"},
		{"Day29LeapFebruary", "12:00 29", "UTC", "2028-01-29T13:00:00Z", "2028-02-29T12:00:00Z"},
		{"MonthDayYearBoundary", "00:00 1", "UTC", "2026-12-01T00:00:00Z", "2027-01-01T00:00:00Z"},
		// "00:15 2nd Tue": the 2nd Tuesday of every month; Last is our extension.
		{"SecondTuesday", "00:15 2nd Tue", "UTC", "2026-01-01T00:00:00Z", "2026-01-13T00:15:00Z"},
		{"SecondTuesdayNextMonth", "00:15 2nd Tue", "UTC", "2026-01-13T00:15:00Z", "2026-02-10T00:15:00Z"},
		{"FirstMonday", "08:00 1st Mon", "UTC", "2026-01-01T00:00:00Z", "2026-01-05T08:00:00Z"},
		{"ThirdWednesday", "08:00 3rd Wed", "UTC", "2026-04-01T00:00:00Z", "2026-04-15T08:00:00Z"},
		{"FourthSunday", "00:15 4th Sun", "UTC", "2026-03-01T00:00:00Z", "2026-03-22T00:15:00Z"},
		{"LastFriday", "00:15 Last Fri", "UTC", "2026-01-01T00:00:00Z", "2026-01-30T00:15:00Z"},
		{"LastFridayNextMonth", "00:15 Last Fri", "UTC", "2026-01-30T00:15:00Z", "2026-02-27T00:15:00Z"},
		{"LastSundayOn31st", "00:15 Last Sun", "UTC", "2026-05-01T00:00:00Z", "2026-05-31T00:15:00Z"},
		{"SeveralNth", "00:15 1st Mon 3rd Mon", "UTC", "2026-01-05T00:15:00Z", "2026-01-19T00:15:00Z"},
		{"SeveralNthAndTimes", "06:00 18:00 1st Mon Last Fri", "UTC", "2026-01-05T06:00:00Z", "2026-01-05T18:00:00Z"},
		// DST days (New York: 2026-03-08 and 2026-11-01 are Sundays).
		{"NewYorkSundayGap", "02:30 Sun", "America/New_York", "2026-03-07T12:00:00-05:00", "2026-03-08T03:30:00-04:00"},
		{"NewYorkSecondSundayGap", "02:30 2nd Sun", "America/New_York", "2026-03-01T12:00:00-05:00", "2026-03-08T03:30:00-04:00"},
		{"NewYorkFirstSundayOverlap", "01:30 1st Sun", "America/New_York", "2026-11-01T00:00:00-04:00", "2026-11-01T01:30:00-04:00"},
		{"NewYorkFirstSundayNotTwice", "01:30 1st Sun", "America/New_York", "2026-11-01T01:30:00-04:00", "2026-12-06T01:30:00-05:00"},
		{"NewYorkMonthDayOverlap", "01:30 1", "America/New_York", "2026-10-31T12:00:00-04:00", "2026-11-01T01:30:00-04:00"},
		{"LisbonLastSundayGap", "01:30 Last Sun", "Europe/Lisbon", "2026-03-01T00:00:00Z", "2026-03-29T02:30:00+01:00"},
	})
}
