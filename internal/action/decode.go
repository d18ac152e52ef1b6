package action

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sundialhq/sundial/actionkit"
	"github.com/sundialhq/sundial/internal/timer"
)

// excerptMax bounds what a failure carries into logs and DynamoDB items.
const excerptMax = 512

// Excerpt returns at most excerptMax bytes of b as valid UTF-8: cut at a rune boundary, with
// invalid bytes replaced, so the result is always safe to store and print.
func Excerpt(b []byte) string { return clip(b, excerptMax) }

// output is what the execution's log keeps of a successful answer: at most
// actionkit.OutputMaxBytes of valid UTF-8, a longer answer (or one the reader cut, truncated)
// ending with actionkit.OutputTruncated within that bound.
func output(b []byte, truncated bool) string {
	if t := bytes.TrimSpace(b); len(t) == 0 || string(t) == "null" {
		return "" // no answer (a Go Lambda function returning only an error answers null)
	}
	s := clip(b, actionkit.OutputMaxBytes)
	if !truncated && s == clip(b, 3*len(b)) { // all of it (an invalid byte becomes 3)
		return s
	}
	return clip([]byte(s), actionkit.OutputMaxBytes-len(actionkit.OutputTruncated)) + actionkit.OutputTruncated
}

func clip(b []byte, limit int) string {
	b = bytes.TrimSpace(b)
	var sb strings.Builder
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		chunk := b[:size]
		if r == utf8.RuneError && size == 1 {
			chunk = []byte(string(utf8.RuneError))
		}
		if sb.Len()+len(chunk) > limit {
			break
		}
		sb.Write(chunk)
		b = b[size:]
	}
	return sb.String()
}

// decodeResult finds the action's requested next run in its response body.
//
// A body that is not a JSON object (empty, plain text, an array, broken JSON) carries no
// request and yields nil: actions are not obliged to answer in JSON. A "nextRun" key whose value
// is null is likewise no request. But an object whose "nextRun" is not an RFC3339 string is an
// error: the action asked for something that cannot be honoured, and guessing would move the
// timer somewhere nobody chose.
func decodeResult(body []byte) (*time.Time, error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return nil, nil
	}
	var obj map[string]json.RawMessage // a map, not a struct: the key match must be exact-case
	if json.Unmarshal(body, &obj) != nil {
		return nil, nil
	}
	raw, ok := obj["nextRun"]
	if !ok || string(raw) == "null" {
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("invalid nextRun %s: must be an RFC3339 string", clip(raw, 64))
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return nil, fmt.Errorf("invalid nextRun %q: must be an RFC3339 time like 2006-01-02T15:04:05Z", clip([]byte(s), 64))
	}
	t = t.UTC()
	return &t, nil
}

// answer is what Sundial acts on in a successful answer beside its output: the next run it
// asks for and the state it hands to the next run.
type answer struct {
	NextRun *time.Time
	// State is the answer's "state", compacted (nil: none; "": null, remove it).
	State *string
	// Report is the answer's "summary", "counters" and "warnings", normalized.
	Report timer.Report
}

// Answer is the Result of a complete answer (body) with the given status: its nextRun, state and
// report decoded, its start kept as Output. An answer that cannot be decoded is an error.
func Answer(status int, body []byte) (Result, error) {
	a, err := decodeAnswer(body)
	if err != nil {
		return Result{}, err
	}
	return Result{Status: status, NextRun: a.NextRun, State: a.State, Report: a.Report, Output: output(body, false)}, nil
}

// decodeAnswer reads an answer's "nextRun" (decodeResult) and "state". A body that is not a
// JSON object carries neither. A "state" that is over timer.StateMaxBytes is an error: the
// action meant to keep it, and dropping it silently would hand the next run a stale one.
func decodeAnswer(body []byte) (answer, error) {
	next, err := decodeResult(body)
	if err != nil {
		return answer{}, err
	}
	a := answer{NextRun: next}
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return a, nil
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) != nil {
		return a, nil
	}
	if raw, ok := obj["state"]; ok {
		s, err := timer.ValidateState(raw)
		if err != nil {
			return answer{}, err
		}
		a.State = &s
	}
	r, err := decodeReport(obj)
	if err != nil {
		return answer{}, err
	}
	a.Report = r
	return a, nil
}

// decodeReport reads an answer's "summary" (a string), "counters" (an object of numbers) and
// "warnings" (an array of strings, or one string); null is absent. Another type is an error,
// as for nextRun: the action meant to say something Sundial cannot read.
func decodeReport(obj map[string]json.RawMessage) (timer.Report, error) {
	var r timer.Report
	if raw, ok := obj["summary"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &r.Summary); err != nil {
			return r, fmt.Errorf(`invalid "summary" %s: must be a string`, clip(raw, 64))
		}
	}
	if raw, ok := obj["counters"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &r.Counters); err != nil {
			return r, fmt.Errorf(`invalid "counters" %s: must be an object of numbers, e.g. {"rows": 1200}`, clip(raw, 64))
		}
	}
	if raw, ok := obj["warnings"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &r.Warnings); err != nil {
			var one string
			if json.Unmarshal(raw, &one) != nil {
				return r, fmt.Errorf(`invalid "warnings" %s: must be an array of strings`, clip(raw, 64))
			}
			r.Warnings = []string{one}
		}
	}
	return r.Normalize()
}
