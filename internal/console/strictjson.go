package console

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"github.com/sundialhq/sundial/internal/errkind"
)

// decodeStrict decodes a request body holding exactly one JSON object into v (a pointer to
// a struct): keys must match v's json tags exactly — encoding/json alone would take
// "Priority" for "priority" — appear once, and nothing may follow the object. A client that
// sends anything else learns so, rather than having part of its request silently ignored.
func decodeStrict(body io.Reader, v any) error {
	raw, err := io.ReadAll(body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return err
		}
		return fmt.Errorf("%w: body: %v", errkind.Invalid, err)
	}
	if err := checkKeys(raw, jsonFields(v)); err != nil {
		return fmt.Errorf("%w: body: %v", errkind.Invalid, err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: body: %v", errkind.Invalid, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: body: unexpected data after the JSON object", errkind.Invalid)
	}
	return nil
}

// checkKeys requires raw to be a JSON object whose keys are all in fields, each once.
func checkKeys(raw []byte, fields []string) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return errors.New("want a JSON object")
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := t.(string)
		if !slices.Contains(fields, key) {
			return fmt.Errorf("unknown field %q (fields are %s, case-sensitive)", key, strings.Join(fields, ", "))
		}
		if seen[key] {
			return fmt.Errorf("field %q given twice", key)
		}
		seen[key] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return err
		}
	}
	return nil
}

// jsonFields lists the JSON names of a struct's fields.
func jsonFields(v any) []string {
	t := reflect.TypeOf(v)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var names []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		names = append(names, name)
	}
	return names
}
