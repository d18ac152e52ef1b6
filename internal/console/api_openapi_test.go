package console

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/audit"
	"gopkg.in/yaml.v3"
)

type openAPI struct {
	Paths      map[string]map[string]any `yaml:"paths"`
	Components struct {
		Schemas map[string]struct {
			Properties map[string]any `yaml:"properties"`
			AllOf      []struct {
				Properties map[string]any `yaml:"properties"`
			} `yaml:"allOf"`
		} `yaml:"schemas"`
	} `yaml:"components"`
}

func readOpenAPI(t *testing.T) openAPI {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	require.True(t, ok)
	body, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "api", "openapi.yaml"))
	require.NoError(t, err)
	var doc openAPI
	require.NoError(t, yaml.Unmarshal(body, &doc))
	return doc
}

// TestOpenAPI keeps api/openapi.yaml and the server in step: the same routes, and every
// field the handlers write is documented.
func TestOpenAPI(t *testing.T) {
	t.Parallel()
	doc := readOpenAPI(t)
	srv, err := New(Options{Service: &Service{}, Token: NewToken()})
	require.NoError(t, err)

	t.Run("SameRoutes", func(t *testing.T) {
		var served, documented []string
		for _, rt := range srv.APIRoutes() {
			served = append(served, rt.Method+" "+rt.Pattern)
		}
		for path, ops := range doc.Paths {
			for method := range ops {
				if method != "parameters" {
					documented = append(documented, strings.ToUpper(method)+" "+path)
				}
			}
		}
		slices.Sort(served)
		slices.Sort(documented)
		require.Equal(t, served, documented)
	})

	t.Run("FieldsDocumented", func(t *testing.T) {
		var props func(name string) []string
		props = func(name string) []string {
			s := doc.Components.Schemas[name]
			keys := slices.Collect(maps.Keys(s.Properties))
			for _, part := range s.AllOf {
				keys = append(keys, slices.Collect(maps.Keys(part.Properties))...)
			}
			if name == "TimerDetail" {
				keys = append(keys, props("TimerRow")...)
			}
			slices.Sort(keys)
			return keys
		}
		for name, v := range map[string]any{
			"TimerRow": TimerRow{}, "TimerDetail": TimerDetail{}, "LogEntry": LogEntry{}, "LogPage": LogPage{}, "Health": Health{},
			"AuditRecord": audit.Record{App: "a", Timer: "t", Before: map[string]any{"x": 1}, After: map[string]any{"x": 2}, Reason: "r"},
		} {
			b, err := json.Marshal(v)
			require.NoError(t, err)
			var fields map[string]any
			require.NoError(t, json.Unmarshal(b, &fields))
			for f := range fields {
				require.Contains(t, props(name), f, "%s.%s is not in api/openapi.yaml", name, f)
			}
		}
	})
}
