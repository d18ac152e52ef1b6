package dynamo

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sundialhq/sundial/internal/schedule"
	"github.com/sundialhq/sundial/internal/timer"
)

// An operator's calendar edit is an item of the timers table (pk "CALENDAR", sk
// "<app>#<name>", kind "calendar"); like the owner records it has no index attribute, so
// the engine never reads it: the rules reach the engine copied into each instance.
const (
	calendarPK   = "CALENDAR"
	kindCalendar = "calendar"
)

type calendarItem struct {
	App  string `dynamodbav:"app"`
	Name string `dynamodbav:"name"`
	schedule.CalendarRules
	EditedAt int64  `dynamodbav:"editedAt"`
	EditedBy string `dynamodbav:"editedBy"`
	Stamp    string `dynamodbav:"stamp,omitempty"`
}

func (it calendarItem) edit() timer.CalendarEdit {
	return timer.CalendarEdit{App: appOf(it.App), Name: it.Name, CalendarRules: it.CalendarRules,
		At: fromMs(it.EditedAt), By: it.EditedBy, Stamp: it.Stamp}
}

// CalendarEdits implements admin.CalendarStore.
func (s *Store) CalendarEdits(ctx context.Context) ([]timer.CalendarEdit, error) {
	items, err := queryPartition[calendarItem](ctx, s, calendarPK, "calendar edits")
	if err != nil {
		return nil, err
	}
	out := make([]timer.CalendarEdit, 0, len(items))
	for _, it := range items {
		out = append(out, it.edit())
	}
	return out, nil
}

// PutCalendarEdit implements admin.CalendarStore: one UpdateItem (the API function's policy
// allows UpdateItem on the timers table, not PutItem).
func (s *Store) PutCalendarEdit(ctx context.Context, e timer.CalendarEdit) error {
	app := appAttr(e.App)
	n := expression.Name
	upd := expression.Set(n("kind"), expression.Value(kindCalendar)).Set(n("app"), expression.Value(app)).
		Set(n("name"), expression.Value(e.Name)).Set(n("editedAt"), expression.Value(ms(e.At))).
		Set(n("editedBy"), expression.Value(e.By))
	if e.Stamp != "" {
		upd = upd.Set(n("stamp"), expression.Value(e.Stamp))
	} else {
		upd = upd.Remove(n("stamp"))
	}
	for name, list := range map[string][]string{"dates": e.Dates, "yearly": e.Yearly, "ranges": e.Ranges, "weekdays": e.Weekdays} {
		if len(list) > 0 {
			upd = upd.Set(n(name), expression.Value(list))
		} else {
			upd = upd.Remove(n(name))
		}
	}
	key := map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: calendarPK},
		"sk": &types.AttributeValueMemberS{Value: app + "#" + e.Name},
	}
	if _, err := s.update(ctx, s.timers, key, upd, nil, types.ReturnValueNone); err != nil {
		return fmt.Errorf("save calendar %s of app %s: %w", e.Name, app, err)
	}
	return nil
}

// The default app's calendars (environment-wide: another app's timers may name them) are
// items of the timers table too (pk "SHAREDCAL", sk the name), written by the default app's
// publish, one UpdateItem each, and read by other apps' publishes and the operators' edits.
const sharedCalendarPK = "SHAREDCAL"

type sharedCalendarItem struct {
	Name string `dynamodbav:"name"`
	schedule.CalendarRules
}

// SharedCalendars implements admin.CalendarStore.
func (s *Store) SharedCalendars(ctx context.Context) ([]timer.Calendar, error) {
	items, err := queryPartition[sharedCalendarItem](ctx, s, sharedCalendarPK, "the default app's calendars")
	if err != nil {
		return nil, err
	}
	out := make([]timer.Calendar, 0, len(items))
	for _, it := range items {
		out = append(out, timer.Calendar{Name: it.Name, CalendarRules: it.CalendarRules})
	}
	return out, nil
}

// PutSharedCalendars implements admin.CalendarStore.
func (s *Store) PutSharedCalendars(ctx context.Context, cals []timer.Calendar) error {
	n := expression.Name
	for _, c := range cals {
		upd := expression.Set(n("kind"), expression.Value("shared-calendar")).Set(n("name"), expression.Value(c.Name))
		for name, list := range map[string][]string{"dates": c.Dates, "yearly": c.Yearly, "ranges": c.Ranges, "weekdays": c.Weekdays} {
			if len(list) > 0 {
				upd = upd.Set(n(name), expression.Value(list))
			} else {
				upd = upd.Remove(n(name))
			}
		}
		key := map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: sharedCalendarPK},
			"sk": &types.AttributeValueMemberS{Value: c.Name},
		}
		if _, err := s.update(ctx, s.timers, key, upd, nil, types.ReturnValueNone); err != nil {
			return fmt.Errorf("save the default app's calendar %s: %w", c.Name, err)
		}
	}
	return nil
}
