package schedule

import "testing"

// Quartz examples are those of the Quartz CronExpression documentation,
// EventBridge ones those of the EventBridge schedule-expression documentation,
// Unix ones from crontab(5). 2026-01-01 is a Thursday.
func TestNextQuartz(t *testing.T) {
	t.Parallel()
	checkNext(t, []nextCase{
		{"NoonDaily", "0 0 12 * * ?", "UTC", "2026-01-01T12:00:00Z", "2026-01-02T12:00:00Z"},
		{"QuestionInDayOfMonth", "0 15 10 ? * *", "UTC", "2026-01-01T10:15:00Z", "2026-01-02T10:15:00Z"},
		{"Year", "0 15 10 * * ? 2026", "UTC", "2025-06-01T00:00:00Z", "2026-01-01T10:15:00Z"},
		{"YearOver", "0 15 10 * * ? 2026", "UTC", "2026-12-31T10:15:00Z", ""},
		{"EveryMinuteOfAnHour", "0 * 14 * * ?", "UTC", "2026-01-01T14:59:00Z", "2026-01-02T14:00:00Z"},
		{"EveryMinuteInTheHour", "0 * 14 * * ?", "UTC", "2026-01-01T14:30:00Z", "2026-01-01T14:31:00Z"},
		{"Every5MinutesFrom0", "0 0/5 14 * * ?", "UTC", "2026-01-01T14:02:00Z", "2026-01-01T14:05:00Z"},
		{"Every5MinutesWraps", "0 0/5 14 * * ?", "UTC", "2026-01-01T14:55:00Z", "2026-01-02T14:00:00Z"},
		{"TwoHours", "0 0/5 14,18 * * ?", "UTC", "2026-01-01T14:55:00Z", "2026-01-01T18:00:00Z"},
		{"MinuteRange", "0 0-5 14 * * ?", "UTC", "2026-01-01T14:05:00Z", "2026-01-02T14:00:00Z"},
		{"WednesdaysInMarch", "0 10,44 14 ? 3 WED", "UTC", "2026-01-01T00:00:00Z", "2026-03-04T14:10:00Z"},
		{"WednesdaysInMarchSecond", "0 10,44 14 ? 3 WED", "UTC", "2026-03-04T14:10:00Z", "2026-03-04T14:44:00Z"},
		{"MonToFri", "0 15 10 ? * MON-FRI", "UTC", "2026-01-02T10:15:00Z", "2026-01-05T10:15:00Z"},
		{"Day15", "0 15 10 15 * ?", "UTC", "2026-01-15T10:15:00Z", "2026-02-15T10:15:00Z"},
		{"LastDay", "0 15 10 L * ?", "UTC", "2026-02-01T00:00:00Z", "2026-02-28T10:15:00Z"},
		{"LastDayLeap", "0 15 10 L * ?", "UTC", "2028-02-01T00:00:00Z", "2028-02-29T10:15:00Z"},
		{"SecondToLastDay", "0 15 10 L-2 * ?", "UTC", "2026-01-01T00:00:00Z", "2026-01-29T10:15:00Z"},
		{"SecondToLastDayFebruary", "0 15 10 L-2 * ?", "UTC", "2026-01-29T10:15:00Z", "2026-02-26T10:15:00Z"},
		{"LastFriday", "0 15 10 ? * 6L", "UTC", "2026-01-01T00:00:00Z", "2026-01-30T10:15:00Z"},
		{"LastFridayByName", "0 15 10 ? * friL", "UTC", "2026-01-30T10:15:00Z", "2026-02-27T10:15:00Z"},
		{"LastFridayInYears", "0 15 10 ? * 6L 2002-2005", "UTC", "2005-12-01T00:00:00Z", "2005-12-30T10:15:00Z"},
		{"LastFridayYearsOver", "0 15 10 ? * 6L 2002-2005", "UTC", "2026-01-01T00:00:00Z", ""},
		{"ThirdFriday", "0 15 10 ? * 6#3", "UTC", "2026-01-01T00:00:00Z", "2026-01-16T10:15:00Z"},
		{"Every5DaysFromThe1st", "0 0 12 1/5 * ?", "UTC", "2026-01-26T12:00:00Z", "2026-01-31T12:00:00Z"},
		{"Every5DaysRestartsMonthly", "0 0 12 1/5 * ?", "UTC", "2026-01-31T12:00:00Z", "2026-02-01T12:00:00Z"},
		{"November11", "0 11 11 11 11 ?", "UTC", "2026-01-01T00:00:00Z", "2026-11-11T11:11:00Z"},
		{"SeedShorthand", "/10 * * * * ?", "UTC", "2026-01-01T00:00:05Z", "2026-01-01T00:00:10Z"},
		{"SeedShorthandFraction", "/10 * * * * ?", "UTC", "2026-01-01T00:00:50.5Z", "2026-01-01T00:01:00Z"},
		{"SeedShorthandOnTheSecond", "/10 * * * * ?", "UTC", "2026-01-01T00:00:10Z", "2026-01-01T00:00:20Z"},
		{"StarSlash", "*/10 * * * * ?", "UTC", "2026-01-01T23:59:55Z", "2026-01-02T00:00:00Z"},
		{"SecondsList", "5,35 * * * * ?", "UTC", "2026-01-01T00:00:05Z", "2026-01-01T00:00:35Z"},
		{"LastWeekdaySaturday", "0 0 12 LW * ?", "UTC", "2026-02-01T00:00:00Z", "2026-02-27T12:00:00Z"},
		{"LastWeekdaySunday", "0 0 12 LW * ?", "UTC", "2026-05-01T00:00:00Z", "2026-05-29T12:00:00Z"},
		{"LastWeekdayWeekday", "0 0 12 LW * ?", "UTC", "2026-03-01T00:00:00Z", "2026-03-31T12:00:00Z"},
		{"NearestWeekday1stSaturday", "0 0 12 1W * ?", "UTC", "2026-07-15T00:00:00Z", "2026-08-03T12:00:00Z"},
		{"NearestWeekdaySunday", "0 0 12 15W * ?", "UTC", "2026-03-01T00:00:00Z", "2026-03-16T12:00:00Z"},
		{"NearestWeekdaySaturday", "0 0 12 15W * ?", "UTC", "2026-08-01T00:00:00Z", "2026-08-14T12:00:00Z"},
		{"NearestWeekday31stSunday", "0 0 12 31W * ?", "UTC", "2026-04-01T00:00:00Z", "2026-05-29T12:00:00Z"},
		// Quartz 2.5: L-nW, and L, W, LW, L-n as items of a day-of-month list (a union).
		{"LastDayOffsetWeekday", "0 15 10 L-5W * ? 2010", "UTC", "2009-12-01T00:00:00Z", "2010-01-26T10:15:00Z"},
		{"LastDayOffsetWeekdaySaturday", "0 15 10 L-5W * ? 2010", "UTC", "2010-08-31T00:00:00Z", "2010-09-24T10:15:00Z"},
		{"LastDayOffsetWeekdaySunday", "0 15 10 L-5W * ? 2010", "UTC", "2010-04-01T00:00:00Z", "2010-04-26T10:15:00Z"},
		{"LastDayOffsetWeekdayYearOver", "0 15 10 L-5W * ? 2010", "UTC", "2010-12-27T10:15:00Z", ""},
		{"LastDayOffsetWeekdayTooShort", "0 0 12 L-30W * ?", "UTC", "2026-02-01T00:00:00Z", "2026-03-02T12:00:00Z"},
		{"ListFirstAndLast", "0 0 12 1,L * ?", "UTC", "2026-01-01T12:00:00Z", "2026-01-31T12:00:00Z"},
		{"ListFirstAndLastWraps", "0 0 12 1,L * ?", "UTC", "2026-01-31T12:00:00Z", "2026-02-01T12:00:00Z"},
		{"ListNearestSaturdayAnd16", "0 0 12 2W,16 * ?", "UTC", "2026-04-30T00:00:00Z", "2026-05-01T12:00:00Z"},
		{"ListNearestSaturdayAnd16Then16", "0 0 12 2W,16 * ?", "UTC", "2026-05-01T12:00:00Z", "2026-05-16T12:00:00Z"},
		{"List1W15LW", "0 0 12 1W,15,LW * ?", "UTC", "2026-07-31T12:00:00Z", "2026-08-03T12:00:00Z"},
		{"List1W15LWThenLW", "0 0 12 1W,15,LW * ?", "UTC", "2026-08-15T12:00:00Z", "2026-08-31T12:00:00Z"},
		{"ListLMinus1WAndLMinus1", "0 0 12 L-1W,L-1 * ?", "UTC", "2026-05-01T00:00:00Z", "2026-05-29T12:00:00Z"},
		{"ListLMinus1WAndLMinus1Then", "0 0 12 L-1W,L-1 * ?", "UTC", "2026-05-29T12:00:00Z", "2026-05-30T12:00:00Z"},
		{"ListLMinus1WAndLMinus1Same", "0 0 12 L-1W,L-1 * ?", "UTC", "2026-01-01T00:00:00Z", "2026-01-30T12:00:00Z"},
		{"ListLMinus1WAndLMinus1SameOnce", "0 0 12 L-1W,L-1 * ?", "UTC", "2026-01-30T12:00:00Z", "2026-02-27T12:00:00Z"},
		{"LargestSteps", "/59 /59 /23 * * ?", "UTC", "2026-01-01T00:00:00Z", "2026-01-01T00:00:59Z"},
		{"LargestStepsWrap", "/59 /59 /23 * * ?", "UTC", "2026-01-01T00:59:59Z", "2026-01-01T23:00:00Z"},
		{"SaturdayIsL", "0 0 12 ? * L", "UTC", "2026-01-01T00:00:00Z", "2026-01-03T12:00:00Z"},
		{"FifthMonday", "0 0 12 ? * 2#5", "UTC", "2026-01-01T00:00:00Z", "2026-03-30T12:00:00Z"},
		{"LeapDay", "0 0 0 29 2 ?", "UTC", "2026-01-01T00:00:00Z", "2028-02-29T00:00:00Z"},
		{"NamesAnyCase", "0 0 12 ? JAN,jul mon#1", "UTC", "2026-01-05T12:00:00Z", "2026-07-06T12:00:00Z"},
		{"SevenFields", "30 45 9 ? * SUN 2027", "UTC", "2026-06-01T00:00:00Z", "2027-01-03T09:45:30Z"},
		{"YearStep", "0 0 0 1 1 ? 2026/4", "UTC", "2026-01-01T00:00:00Z", "2030-01-01T00:00:00Z"},
		{"Before1970", "0 0 12 * * ?", "UTC", "1969-12-31T12:00:00Z", "1970-01-01T12:00:00Z"},
		// Wall clock in the timer's zone, with the DST rules of every format.
		{"Kolkata", "0 0 9 * * ?", "Asia/Kolkata", "2026-01-01T00:00:00Z", "2026-01-01T09:00:00+05:30"},
		{"NewYorkGap", "0 30 2 * * ?", "America/New_York", "2026-03-08T00:00:00-05:00", "2026-03-08T03:30:00-04:00"},
		{"NewYorkGapSeconds", "*/20 * 2 * * ?", "America/New_York", "2026-03-08T01:59:59-05:00", "2026-03-08T03:00:00-04:00"},
		{"NewYorkGapSecondsFollow", "*/20 * 2 * * ?", "America/New_York", "2026-03-08T03:00:00-04:00", "2026-03-08T03:00:20-04:00"},
		{"NewYorkOverlapFirst", "0 30 1 * * ?", "America/New_York", "2026-11-01T00:00:00-04:00", "2026-11-01T01:30:00-04:00"},
		{"NewYorkOverlapNotTwice", "0 30 1 * * ?", "America/New_York", "2026-11-01T01:30:00-04:00", "2026-11-02T01:30:00-05:00"},
		{"NewYorkOverlapHalfHours", "0 */30 * * * ?", "America/New_York", "2026-11-01T01:30:00-04:00", "2026-11-01T02:00:00-05:00"},
		{"LisbonLastSundayGap", "0 30 1 ? * 1L", "Europe/Lisbon", "2026-03-01T00:00:00Z", "2026-03-29T02:30:00+01:00"},
	})
}

func TestNextUnixCron(t *testing.T) {
	t.Parallel()
	checkNext(t, []nextCase{
		{"Every15Minutes", "*/15 * * * *", "UTC", "2026-01-01T00:07:00Z", "2026-01-01T00:15:00Z"},
		{"OnTheMinute", "*/15 * * * *", "UTC", "2026-01-01T00:15:00Z", "2026-01-01T00:30:00Z"},
		{"Weekdays", "0 12 * * 1-5", "UTC", "2026-01-02T12:00:00Z", "2026-01-05T12:00:00Z"},
		{"SundayIs0", "0 0 * * 0", "UTC", "2026-01-01T00:00:00Z", "2026-01-04T00:00:00Z"},
		{"SundayIs7", "0 0 * * 7", "UTC", "2026-01-01T00:00:00Z", "2026-01-04T00:00:00Z"},
		{"SundayByName", "5 4 * * sun", "UTC", "2026-01-01T00:00:00Z", "2026-01-04T04:05:00Z"},
		{"RangeThrough7", "0 0 * * 5-7", "UTC", "2026-01-03T00:00:00Z", "2026-01-04T00:00:00Z"},
		{"Crontab5Example", "23 0-20/2 * * *", "UTC", "2026-01-01T20:23:00Z", "2026-01-02T00:23:00Z"},
		{"Crontab5ExampleStep", "23 0-20/2 * * *", "UTC", "2026-01-01T00:23:00Z", "2026-01-01T02:23:00Z"},
		{"Yearly", "0 0 1 1 *", "UTC", "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z"},
		{"MonthNames", "0 0 1 jan,JUL *", "UTC", "2026-01-01T00:00:00Z", "2026-07-01T00:00:00Z"},
		// Both day fields restricted: either one fires (the 1st, or any Monday).
		{"DayOrWeekdayMonday", "0 12 1 * MON", "UTC", "2026-01-01T12:00:00Z", "2026-01-05T12:00:00Z"},
		{"DayOrWeekdayThe1st", "0 12 1 * MON", "UTC", "2026-01-26T12:00:00Z", "2026-02-01T12:00:00Z"},
		// A day field starting with "*" is unrestricted, so the fields combine with AND.
		{"StarStepIsAnd", "0 12 */2 * MON", "UTC", "2026-01-05T12:00:00Z", "2026-01-19T12:00:00Z"},
		{"StarDayOfWeek", "0 12 15 * *", "UTC", "2026-01-01T00:00:00Z", "2026-01-15T12:00:00Z"},
		{"NewYorkGap", "30 2 * * *", "America/New_York", "2026-03-08T00:00:00-05:00", "2026-03-08T03:30:00-04:00"},
		{"NewYorkOverlap", "30 1 * * *", "America/New_York", "2026-11-01T01:30:00-04:00", "2026-11-02T01:30:00-05:00"},
	})
}

func TestNextEventBridgeCron(t *testing.T) {
	t.Parallel()
	checkNext(t, []nextCase{
		{"Daily10", "cron(0 10 * * ? *)", "UTC", "2026-01-01T10:00:00Z", "2026-01-02T10:00:00Z"},
		{"Daily1215", "cron(15 12 * * ? *)", "UTC", "2026-01-01T00:00:00Z", "2026-01-01T12:15:00Z"},
		{"Weekdays18", "cron(0 18 ? * MON-FRI *)", "UTC", "2026-01-02T18:00:00Z", "2026-01-05T18:00:00Z"},
		{"FirstOfMonth", "cron(0 8 1 * ? *)", "UTC", "2026-01-01T08:00:00Z", "2026-02-01T08:00:00Z"},
		{"Every15Minutes", "cron(0/15 * * * ? *)", "UTC", "2026-01-01T00:07:00Z", "2026-01-01T00:15:00Z"},
		{"Every10MinutesWeekdays", "cron(0/10 * ? * MON-FRI *)", "UTC", "2026-01-02T23:55:00Z", "2026-01-05T00:00:00Z"},
		{"Every5MinutesOfficeHours", "cron(0/5 8-17 ? * MON-FRI *)", "UTC", "2026-01-05T17:55:00Z", "2026-01-06T08:00:00Z"},
		{"FirstMonday", "cron(0 9 ? * 2#1 *)", "UTC", "2026-01-01T00:00:00Z", "2026-01-05T09:00:00Z"},
		{"LastDayOfYearOnly", "cron(0 12 L * ? 2026)", "UTC", "2026-12-01T00:00:00Z", "2026-12-31T12:00:00Z"},
		{"YearsOver", "cron(0 12 L * ? 2026)", "UTC", "2026-12-31T12:00:00Z", ""},
		{"Year2199", "cron(0 0 1 1 ? 2199)", "UTC", "2026-01-01T00:00:00Z", "2199-01-01T00:00:00Z"},
		{"Spaces", " cron( 0 10 * * ? * ) ", "UTC", "2026-01-01T10:00:00Z", "2026-01-02T10:00:00Z"},
		{"NewYorkGap", "cron(30 2 * * ? *)", "America/New_York", "2026-03-08T00:00:00-05:00", "2026-03-08T03:30:00-04:00"},
	})
}
