package schedule

// Lambda images and scratch containers carry no zoneinfo; embedding it makes
// LoadLocation behave the same everywhere.
import _ "time/tzdata"
