// Package strictjson decodes exactly one JSON object into a struct: its keys must match the
// struct's json names exactly (encoding/json alone matches them case-insensitively, so
// "Priority" would be taken for "priority") and appear once (encoding/json keeps the last of
// duplicates), no other key may appear, and nothing may follow the object. What a sender
// meant is then never half-understood, nor read differently by another decoder. Only the
// object's own keys are checked, not those of nested objects.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// Decode decodes raw into v, a pointer to a struct.
func Decode(raw []byte, v any) error {
	if err := checkKeys(raw, Fields(v)); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("unexpected data after the JSON object")
	}
	return nil
}

// checkKeys requires raw to be a JSON object whose keys are all in fields, each once.
func checkKeys(raw []byte, fields []string) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	t, err := dec.Token()
	if err != nil {
		return fmt.Errorf("want a JSON object: %v", err)
	}
	if t != json.Delim('{') {
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

// fieldsOf caches Fields per struct type (a firing message is decoded per record).
var fieldsOf sync.Map

// Fields lists the JSON names of a struct's fields.
func Fields(v any) []string {
	t := reflect.TypeOf(v)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if names, ok := fieldsOf.Load(t); ok {
		return names.([]string)
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
	fieldsOf.Store(t, names)
	return names
}
