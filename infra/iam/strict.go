package iam

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// The engines behind the local endpoint read a request's JSON as the services do: a key is
// one exact name ("TableName", not "tablename"), and what the check reads must be what they
// read. encoding/json matches keys ignoring case and keeps the last of duplicates, so a body
// with "TableName" and "tablename" would be authorized for one table and run on another.
// The check therefore decodes each object it reads a name from strictly: keys match exactly,
// and a key repeated, or repeated in another case, refuses the request.

// object is one JSON object's members by their exact keys.
type object map[string]json.RawMessage

// strictObject decodes data, a JSON object, refusing duplicate keys and (when fold) keys
// that differ only in case. Nothing may follow the object.
func strictObject(data []byte, fold bool) (object, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	out := object{}
	folded := map[string]string{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("not JSON: %w", err)
		}
		key, _ := tok.(string)
		if _, dup := out[key]; dup {
			return nil, fmt.Errorf("the key %q appears twice (the service would read only one of them)", key)
		}
		if fold {
			lk := strings.ToLower(key)
			if other, dup := folded[lk]; dup {
				return nil, fmt.Errorf("the keys %q and %q differ only in case (the service reads only the exact name)", other, key)
			}
			folded[lk] = key
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("not JSON: %w", err)
		}
		out[key] = v
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("not JSON: data after the object")
	}
	return out, nil
}

// str is the string member key ("" when absent or null); another type is an error.
func (o object) str(key string) (string, error) {
	v, ok := o[key]
	if !ok || string(v) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", fmt.Errorf("%s is not a string", key)
	}
	return s, nil
}

// obj is the object member key, decoded strictly (nil when absent or null).
func (o object) obj(key string, fold bool) (object, error) {
	v, ok := o[key]
	if !ok || string(v) == "null" {
		return nil, nil
	}
	m, err := strictObject(v, fold)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	return m, nil
}

// list is the array member key (nil when absent or null).
func (o object) list(key string) ([]json.RawMessage, error) {
	v, ok := o[key]
	if !ok || string(v) == "null" {
		return nil, nil
	}
	var l []json.RawMessage
	if err := json.Unmarshal(v, &l); err != nil {
		return nil, fmt.Errorf("%s is not a list", key)
	}
	return l, nil
}
