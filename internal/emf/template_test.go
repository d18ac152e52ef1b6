package emf_test

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/sundialhq/sundial/internal/emf"
	"github.com/sundialhq/sundial/internal/timer"
)

// node finds a mapping's value by key (nil if absent).
func node(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// sundialMetric is a reference to one of Sundial's metrics in the template.
type sundialMetric struct {
	where string
	name  string
	dims  map[string]string
}

// checkSundialMetric requires that a metric the template reads is one the functions emit:
// a catalogued name, under exactly one of its dimension sets, with dimension values the
// code produces.
func checkSundialMetric(t *testing.T, m sundialMetric) {
	t.Helper()
	def, ok := emf.Lookup(m.name)
	require.True(t, ok, "%s: metric %s is not emitted by any function (emf.Catalogue)", m.where, m.name)
	var names []string
	for k := range m.dims {
		names = append(names, k)
	}
	slices.Sort(names)
	found := false
	for _, set := range def.DimensionSets {
		s := slices.Clone(set)
		slices.Sort(s)
		found = found || slices.Equal(s, names)
	}
	require.True(t, found, "%s: %s is emitted with dimension sets %v, not %v", m.where, m.name, def.DimensionSets, names)
	outcomes := []string{string(timer.OutcomeSuccess), string(timer.OutcomeError), string(timer.OutcomeTimeout),
		string(timer.OutcomeRecovered), string(timer.OutcomeMissed)}
	for k, v := range m.dims {
		switch k {
		case emf.DimOutcome:
			if m.name == emf.Publishes {
				require.Contains(t, []string{emf.PublishSuccess, emf.PublishError}, v, m.where)
			} else {
				require.Contains(t, outcomes, v, "%s: Outcome %q is not a timer outcome", m.where, v)
			}
		case emf.DimPriority:
			require.Regexp(t, `^[1-4]$`, v, m.where)
		case emf.DimStatusClass:
			require.Regexp(t, `^[2-5]xx$`, v, m.where)
		}
	}
}

func dimsOf(n *yaml.Node) map[string]string {
	dims := map[string]string{}
	if n == nil {
		return dims
	}
	for _, d := range n.Content {
		dims[node(d, "Name").Value] = node(d, "Value").Value
	}
	return dims
}

// TestTemplateUsesEmittedMetrics parses template.yaml and ties every alarm and dashboard
// metric in the Sundial namespace to what internal/emf emits, and checks the alarms the
// operators rely on are there and notify the topic.
func TestTemplateUsesEmittedMetrics(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../template.yaml")
	require.NoError(t, err)
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal(b, &doc))
	resources := node(doc.Content[0], "Resources")
	require.NotNil(t, resources)

	var refs []sundialMetric
	alarms := map[string]*yaml.Node{}
	var dashboards []string
	for i := 0; i+1 < len(resources.Content); i += 2 {
		name, res := resources.Content[i].Value, resources.Content[i+1]
		props := node(res, "Properties")
		switch node(res, "Type").Value {
		case "AWS::CloudWatch::Alarm":
			alarms[name] = props
			if ns := node(props, "Namespace"); ns != nil && ns.Value == emf.Namespace {
				refs = append(refs, sundialMetric{name, node(props, "MetricName").Value, dimsOf(node(props, "Dimensions"))})
			}
			if ms := node(props, "Metrics"); ms != nil {
				for _, m := range ms.Content {
					metric := node(node(m, "MetricStat"), "Metric")
					if metric != nil && node(metric, "Namespace").Value == emf.Namespace {
						refs = append(refs, sundialMetric{name, node(metric, "MetricName").Value, dimsOf(node(metric, "Dimensions"))})
					}
				}
			}
			actions := node(props, "AlarmActions")
			require.NotNil(t, actions, "%s notifies someone", name)
			require.Equal(t, "!Ref", actions.Content[0].Tag, name)
			require.Equal(t, "AlarmTopic", actions.Content[0].Value, name)
		case "AWS::CloudWatch::Dashboard":
			body := node(props, "DashboardBody")
			require.Equal(t, "!Sub", body.Tag)
			dashboards = append(dashboards, body.Value)
		}
	}

	// Dashboard bodies are JSON once the !Sub placeholders are filled.
	placeholder := regexp.MustCompile(`\$\{[^}]+\}`)
	for _, body := range dashboards {
		var d struct {
			Widgets []struct {
				Type       string `json:"type"`
				Properties struct {
					Title   string  `json:"title"`
					Metrics [][]any `json:"metrics"`
				} `json:"properties"`
			} `json:"widgets"`
		}
		require.NoError(t, json.Unmarshal([]byte(placeholder.ReplaceAllString(body, "X")), &d))
		for _, w := range d.Widgets {
			for _, m := range w.Properties.Metrics {
				if m[0] != emf.Namespace {
					continue
				}
				ref := sundialMetric{where: "dashboard widget " + strconv.Quote(w.Properties.Title), name: m[1].(string), dims: map[string]string{}}
				for i := 2; i+1 < len(m); i += 2 {
					k, isName := m[i].(string)
					if !isName {
						break // the rendering options object
					}
					ref.dims[k] = m[i+1].(string)
				}
				refs = append(refs, ref)
			}
		}
	}
	require.NotEmpty(t, dashboards, "a dashboard")
	require.GreaterOrEqual(t, len(refs), 10)
	for _, r := range refs {
		checkSundialMetric(t, r)
	}

	// The alarms operators rely on (a stalled fetch, failing timers, dead letters, a log behind),
	// each with the behaviour that makes it fire when it should.
	fetch := alarms["FetchStalledAlarm"]
	require.NotNil(t, fetch)
	require.Equal(t, emf.FetchTicks, node(fetch, "MetricName").Value)
	require.Equal(t, "breaching", node(fetch, "TreatMissingData").Value, "no data at all means the fetch is not running")
	require.Equal(t, "3", node(fetch, "EvaluationPeriods").Value)
	// The alarm's period is one tick: the same mapping entry as the fetch's schedule.
	period := node(fetch, "Period")
	require.Equal(t, "!FindInMap", period.Tag)
	require.Equal(t, []string{"FetchTick", "FetchTickMinutes", "Seconds"}, []string{period.Content[0].Value, period.Content[1].Value, period.Content[2].Value})
	env := node(node(node(node(doc.Content[0], "Globals"), "Function"), "Environment"), "Variables")
	sched := node(env, "SUNDIAL_FETCH_SCHEDULE")
	require.Equal(t, "!FindInMap", sched.Tag)
	require.Equal(t, "FetchTickMinutes", sched.Content[1].Value)

	failing := alarms["TimersFailingAlarm"]
	require.NotNil(t, failing)
	require.Equal(t, "FailingFiringsThreshold", node(failing, "Threshold").Value)

	require.Equal(t, "ApproximateNumberOfMessagesVisible", node(alarms["DeadLetterQueueNotEmptyAlarm"], "MetricName").Value)
	for name, metric := range map[string]string{"ProcessorErrorsAlarm": "Errors", "ProcessorThrottledAlarm": "Throttles"} {
		a := alarms[name]
		require.NotNil(t, a, name)
		require.Equal(t, "AWS/Lambda", node(a, "Namespace").Value)
		require.Equal(t, metric, node(a, "MetricName").Value)
		require.Equal(t, map[string]string{"FunctionName": "ProcessorFunction"}, dimsOf(node(a, "Dimensions")))
	}
	// The log follows the timers table's stream: an alarm when the log writer falls behind it.
	behind := alarms["LogBehindAlarm"]
	require.NotNil(t, behind)
	require.Equal(t, "AWS/Lambda", node(behind, "Namespace").Value)
	require.Equal(t, "IteratorAge", node(behind, "MetricName").Value)
	require.Equal(t, map[string]string{"FunctionName": "LogWriterFunction"}, dimsOf(node(behind, "Dimensions")))
}
