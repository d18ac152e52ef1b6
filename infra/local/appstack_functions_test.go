package local

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/sam"
)

// An app stack update that changed only its timers says nothing about its functions (before,
// every update printed "functions …: not rebuilt"); a changed function is named as not
// rebuilt, an added one as not served.
func TestFunctionChanges(t *testing.T) {
	t.Parallel()
	fn := func(mem int) sam.Resource {
		return sam.Resource{Type: "AWS::Lambda::Function", Properties: map[string]any{"MemorySize": mem, "Handler": "bootstrap"}}
	}
	timers := func(schedule string) sam.Resource {
		return sam.Resource{Type: "Custom::SundialTimers", Properties: map[string]any{"Manifest": schedule}}
	}
	prev := &sam.Template{Resources: map[string]sam.Resource{"Invoices": fn(128), "Report": fn(128), "Timers": timers("every 1h")}}
	running := map[string]bool{"Invoices": true, "Report": true}

	next := &sam.Template{Resources: map[string]sam.Resource{"Invoices": fn(128), "Report": fn(128), "Timers": timers("every 2h")}}
	changed, added := functionChanges(prev, next, []string{"Invoices", "Report"}, running)
	require.Empty(t, changed, "only the timers changed")
	require.Empty(t, added)

	next = &sam.Template{Resources: map[string]sam.Resource{"Invoices": fn(256), "Report": fn(128), "New": fn(128), "Timers": timers("every 1h")}}
	changed, added = functionChanges(prev, next, []string{"Invoices", "New", "Report"}, running)
	require.Equal(t, []string{"Invoices"}, changed)
	require.Equal(t, []string{"New"}, added)
}
