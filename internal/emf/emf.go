// Package emf writes CloudWatch Embedded Metric Format (EMF) log lines: one JSON object per
// line whose "_aws" member tells CloudWatch Logs which root members are metrics, under which
// namespace and dimensions. Lambda sends a function's output to its log group, and CloudWatch
// extracts the metrics from there: no PutMetricData call, no extra permission, and locally
// the same lines are simply part of the function's log.
//
// Specification: https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html
package emf

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"
)

// Unit is a CloudWatch metric unit (the spec's StandardUnit values).
type Unit string

// Units used here.
const (
	Count        Unit = "Count"
	Milliseconds Unit = "Milliseconds"
)

// Metric is one metric's value, or its values: with Values set (at most MaxValues), the
// member is an array and CloudWatch takes each element as one sample (the specification's
// "array of numbers"), so one line can carry many samples of the same metric.
type Metric struct {
	Name   string
	Unit   Unit
	Value  float64
	Values []float64
}

// Group is metrics published under the same dimension sets (one metric directive). Each
// dimension set names dimension keys (at most 30) whose values are in Record.Dimensions; an
// empty set publishes the metrics without dimensions, and nil means just that.
type Group struct {
	DimensionSets [][]string
	Metrics       []Metric
}

// Record is one EMF document. Properties are extra members kept in the line (for people and
// log queries) but not published as metrics.
type Record struct {
	Dimensions map[string]string
	Groups     []Group
	Properties map[string]any
}

// Limits of the specification.
const (
	MaxDimensionsPerSet = 30
	MaxMetrics          = 100
	MaxValues           = 100
)

// Writer writes records as EMF lines; safe for concurrent use (a line is one Write).
type Writer struct {
	w         io.Writer
	namespace string
	now       func() time.Time
	mu        sync.Mutex
}

// NewWriter writes to w (a Lambda function's stdout) in the namespace; now stamps each line
// (nil: time.Now).
func NewWriter(w io.Writer, namespace string, now func() time.Time) *Writer {
	if now == nil {
		now = time.Now
	}
	return &Writer{w: w, namespace: namespace, now: now}
}

type metadata struct {
	Timestamp         int64             `json:"Timestamp"`
	CloudWatchMetrics []metricDirective `json:"CloudWatchMetrics"`
}

type metricDirective struct {
	Namespace  string             `json:"Namespace"`
	Dimensions [][]string         `json:"Dimensions"`
	Metrics    []metricDefinition `json:"Metrics"`
}

type metricDefinition struct {
	Name string `json:"Name"`
	Unit Unit   `json:"Unit,omitempty"`
}

// Encode returns the EMF line for r (with its newline). A record that breaks the
// specification's rules (a dimension without a value, a metric named like another member,
// too many metrics or dimensions) is an error: CloudWatch would drop it silently.
func (w *Writer) Encode(r Record) ([]byte, error) {
	root := make(map[string]any, len(r.Properties)+len(r.Dimensions)+1)
	for k, v := range r.Properties {
		root[k] = v
	}
	for k, v := range r.Dimensions {
		if _, clash := root[k]; clash || k == "_aws" {
			return nil, fmt.Errorf("emf: dimension %q clashes with another member", k)
		}
		root[k] = v
	}
	directives := make([]metricDirective, 0, len(r.Groups))
	for _, g := range r.Groups {
		if len(g.Metrics) == 0 || len(g.Metrics) > MaxMetrics {
			return nil, fmt.Errorf("emf: %d metrics in one directive (1..%d)", len(g.Metrics), MaxMetrics)
		}
		sets := g.DimensionSets
		if sets == nil {
			sets = [][]string{{}}
		}
		for _, set := range sets {
			if len(set) > MaxDimensionsPerSet {
				return nil, fmt.Errorf("emf: %d dimensions in one set (at most %d)", len(set), MaxDimensionsPerSet)
			}
			for _, d := range set {
				if v := r.Dimensions[d]; v == "" {
					return nil, fmt.Errorf("emf: dimension %q has no value", d)
				}
			}
		}
		defs := make([]metricDefinition, 0, len(g.Metrics))
		for _, m := range g.Metrics {
			if _, clash := root[m.Name]; clash || m.Name == "" || m.Name == "_aws" {
				return nil, fmt.Errorf("emf: metric name %q is empty or used by another member", m.Name)
			}
			switch {
			case len(m.Values) > MaxValues:
				return nil, fmt.Errorf("emf: metric %q has %d values (at most %d)", m.Name, len(m.Values), MaxValues)
			case len(m.Values) > 0:
				root[m.Name] = m.Values
			default:
				root[m.Name] = m.Value
			}
			defs = append(defs, metricDefinition{Name: m.Name, Unit: m.Unit})
		}
		directives = append(directives, metricDirective{Namespace: w.namespace, Dimensions: sets, Metrics: defs})
	}
	if len(directives) == 0 {
		return nil, fmt.Errorf("emf: a record needs at least one metric")
	}
	root["_aws"] = metadata{Timestamp: w.now().UnixMilli(), CloudWatchMetrics: directives}
	b, err := json.Marshal(root)
	if err != nil {
		return nil, fmt.Errorf("emf: %w", err)
	}
	return append(b, '\n'), nil
}

// Emit writes r as one line.
func (w *Writer) Emit(r Record) error {
	b, err := w.Encode(r)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err = w.w.Write(b)
	return err
}
