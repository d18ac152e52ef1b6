package local

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// State lets CLI commands find a running local platform without flags.
type State struct {
	Endpoint string `json:"endpoint"`
	Stack    string `json:"stack"`
	Region   string `json:"region,omitempty"`
	// Actions is the address of up's example actions (--actions): the manifests'
	// ${SUNDIAL_ACTIONS} for `sundial sync` against this platform.
	Actions string `json:"actions,omitempty"`
	// AppStacks are the apps' own stacks deployed on it (sundial up --app-stack).
	AppStacks []AppStackState `json:"appStacks,omitempty"`
}

// DefaultStateFile is where `sundial up` records its endpoint.
const DefaultStateFile = ".sundial/local.json"

// DefaultDataDir is where `sundial up` keeps the local DynamoDB's data.
const DefaultDataDir = ".sundial/dynamodb"

// WriteState records the state.
func WriteState(path string, s State) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("state: %w", err)
	}
	b, _ := json.MarshalIndent(s, "", "  ")
	// Written whole, then renamed: a reader (another sundial process) never sees half of it.
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("state: %w", err)
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("state: %w", err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("state: %w", err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("state: %w", err)
	}
	return os.Rename(tmp.Name(), path)
}

// ReadState reads the state; ok is false if there is none.
func ReadState(path string) (State, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return State{}, false
	}
	var s State
	if json.Unmarshal(b, &s) != nil || s.Endpoint == "" {
		return State{}, false
	}
	return s, true
}

// FindState finds a running `sundial up`'s state: DefaultStateFile in dir or its nearest parent
// that has one, as git finds its repository. looked lists the files tried, for an error that
// says where.
func FindState(dir string) (s State, path string, looked []string, ok bool) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	for {
		path = filepath.Join(abs, DefaultStateFile)
		looked = append(looked, path)
		if s, ok = ReadState(path); ok {
			return s, path, looked, true
		}
		parent := filepath.Dir(abs)
		if parent == abs {
			return State{}, "", looked, false
		}
		abs = parent
	}
}
