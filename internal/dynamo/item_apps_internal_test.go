package dynamo

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/timer"
)

// TestStoredAppForms: the items the tables hold name the default app two ways — "default"
// in the app attribute (every item written since apps existed) or no app attribute (written
// before) — and both decode to the program's one spelling, ""; another app's decodes as
// written. The program's keys encode to the forms the tables hold: "default" in every app
// attribute and app-named key part, no app in an instance's or log entry's partition key.
func TestStoredAppForms(t *testing.T) {
	t.Parallel()
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	cases := []struct {
		name  string
		attrs map[string]types.AttributeValue // the item's app, timer and tenant attributes
		want  timer.Key
		attr  string // the app attribute the program writes for want
		pk    string // the instance's partition key
	}{
		{"default app written default", map[string]types.AttributeValue{"app": s("default"), "timer": s("Tick"), "tenant": s("acme")},
			timer.Key{Timer: "Tick", Tenant: "acme"}, "default", "T#Tick"},
		{"written before apps: no app attribute", map[string]types.AttributeValue{"timer": s("Tick")},
			timer.Key{Timer: "Tick"}, "default", "T#Tick"},
		{"another app", map[string]types.AttributeValue{"app": s("billing"), "timer": s("Tick"), "tenant": s("acme")},
			timer.Key{App: "billing", Timer: "Tick", Tenant: "acme"}, "billing", "T#billing:Tick"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			item := func(extra map[string]types.AttributeValue) map[string]types.AttributeValue {
				m := map[string]types.AttributeValue{}
				for k, v := range c.attrs {
					m[k] = v
				}
				for k, v := range extra {
					m[k] = v
				}
				return m
			}
			in, err := decodeInstance(item(map[string]types.AttributeValue{"pk": s(c.pk), "sk": s("I#" + c.want.Tenant), "kind": s("instance"), "schedule": s("every 1h")}))
			require.NoError(t, err)
			require.Equal(t, c.want, in.Key, "instance")

			var li logItem
			require.NoError(t, attributevalue.UnmarshalMap(item(nil), &li))
			require.Equal(t, c.want, li.execution().Key, "log entry")

			var al alertItem
			require.NoError(t, attributevalue.UnmarshalMap(item(map[string]types.AttributeValue{"rule": s("failed")}), &al))
			require.Equal(t, c.want, al.alert().Key, "alert")

			var bf backfillRecord
			require.NoError(t, attributevalue.UnmarshalMap(item(map[string]types.AttributeValue{"id": s("bf-1")}), &bf))
			require.Equal(t, c.want.App, bf.backfill().App, "backfill")
			require.Equal(t, c.want.App, bf.backfill().Key(c.want.Tenant).App, "backfill's instance key")

			// Encoding: the forms the tables hold, whichever way the key came in.
			enc := toItem(timer.Instance{Key: c.want})
			require.Equal(t, c.attr, enc.App)
			require.Equal(t, c.attr, enc.ByApp)
			require.Equal(t, c.pk, enc.PK)
			logged := toLogItem(timer.Execution{Key: c.want, Outcome: timer.OutcomeError, StartedAt: time.Unix(0, 0)}, time.Hour)
			require.Equal(t, c.attr, logged.App)
			require.Equal(t, c.want.String(), logged.PK)
			require.Regexp(t, "^"+c.attr+"#", logged.ErrDay)
			require.Equal(t, c.want.String()+"|failed", alertSK(c.want, "failed"))
			require.Equal(t, c.attr+"#Tick", backfillKey(c.want.App, "Tick")["sk"].(*types.AttributeValueMemberS).Value)
		})
	}
}

// TestStoredAppAttr is the table of the tables' app encoding and decoding.
func TestStoredAppAttr(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ program, stored string }{{"", "default"}, {"billing", "billing"}} {
		require.Equal(t, c.stored, appAttr(c.program))
		require.Equal(t, c.program, appOf(c.stored))
	}
	require.Equal(t, "", appOf(""), "an item written before apps existed")
	require.Equal(t, timer.Key{Timer: "T", Tenant: "x"}, keyOf("default", "T", "x"))
	require.Equal(t, timer.Key{Timer: "T"}, keyOf("", "T", ""))
}
