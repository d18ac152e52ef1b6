package dynamo

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sundialhq/sundial/internal/timer"
)

// A calendar edit in transit (timer.CalendarMark) is an attribute of the fetch's watermark
// item (META/FETCH): "calmark:<app>#<name>" = the edit's stamp. The item is written by
// every tick (AdvanceWatermarkMarks returns it whole), so the fetch learns of an edit with
// no read of its own; while no edit is in transit the item is as before.
const calMarkPrefix = "calmark:"

func calMarkAttr(app, name string) string {
	return calMarkPrefix + timer.AppName(app) + "#" + name
}

// calendarMarks reads the marks of a watermark item.
func calendarMarks(item map[string]types.AttributeValue) []timer.CalendarMark {
	var out []timer.CalendarMark
	for k, v := range item {
		rest, ok := strings.CutPrefix(k, calMarkPrefix)
		sv, isS := v.(*types.AttributeValueMemberS)
		if !ok || !isS {
			continue
		}
		app, name, ok := strings.Cut(rest, "#")
		if !ok {
			continue
		}
		out = append(out, timer.CalendarMark{App: appOf(app), Name: name, Stamp: sv.Value})
	}
	slices.SortFunc(out, func(a, b timer.CalendarMark) int {
		return strings.Compare(a.App+"#"+a.Name, b.App+"#"+b.Name)
	})
	return out
}

// MarkCalendarEdit puts m on the watermark item (replacing an earlier edit's of the same
// calendar): from this write on, every fetch tick applies the edit to a due instance it
// has not reached.
func (s *Store) MarkCalendarEdit(ctx context.Context, m timer.CalendarMark) error {
	upd := expression.Set(expression.Name(calMarkAttr(m.App, m.Name)), expression.Value(m.Stamp))
	if _, err := s.update(ctx, s.timers, metaKey, upd, nil, types.ReturnValueNone); err != nil {
		return fmt.Errorf("mark calendar %s of app %s in transit: %w", m.Name, timer.AppName(m.App), err)
	}
	return nil
}

// UnmarkCalendarEdit removes m from the watermark item if it is still there (a later edit
// of the calendar replaced it: its mark stays).
func (s *Store) UnmarkCalendarEdit(ctx context.Context, m timer.CalendarMark) error {
	n := expression.Name(calMarkAttr(m.App, m.Name))
	cond := n.Equal(expression.Value(m.Stamp))
	_, err := s.update(ctx, s.timers, metaKey, expression.Remove(n), &cond, types.ReturnValueNone)
	if isConditionFailed(err) {
		return nil
	}
	return err
}

// CalendarMarks reads the calendar edits in transit (one GetItem of the watermark item).
func (s *Store) CalendarMarks(ctx context.Context) ([]timer.CalendarMark, error) {
	out, err := s.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.timers, Key: metaKey, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("get calendar marks: %w", err)
	}
	return calendarMarks(out.Item), nil
}

// CalendarEdit reads one operator's calendar edit (GetItem; timer.ErrNotFound: none).
func (s *Store) CalendarEdit(ctx context.Context, app, name string) (timer.CalendarEdit, error) {
	key := map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: calendarPK},
		"sk": &types.AttributeValueMemberS{Value: timer.AppName(app) + "#" + name},
	}
	out, err := s.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.timers, Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return timer.CalendarEdit{}, fmt.Errorf("get calendar edit %s of app %s: %w", name, timer.AppName(app), err)
	}
	if len(out.Item) == 0 {
		return timer.CalendarEdit{}, fmt.Errorf("%w: no edit of calendar %s of app %s", timer.ErrNotFound, name, timer.AppName(app))
	}
	var it calendarItem
	if err := attributevalue.UnmarshalMap(out.Item, &it); err != nil {
		return timer.CalendarEdit{}, fmt.Errorf("decode calendar edit: %w", err)
	}
	return it.edit(), nil
}
