package lambdarun

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// Positions keeps stream event sources' positions: per stream and shard, the last record
// done (everything up to it delivered, filtered out or discarded), or that the shard is done.
type Positions interface {
	Position(streamArn, shard string) (after string, done bool)
	SetPosition(streamArn, shard, after string, done bool) error
}

// PositionsFile keeps positions in a JSON file (the local platform's, next to the kept
// database, so that a restart reads on where the last run stopped rather than from the
// stream's start).
type PositionsFile struct {
	path string
	mu   sync.Mutex
	m    map[string]map[string]position
}

type position struct {
	After string `json:"after,omitempty"`
	Done  bool   `json:"done,omitempty"`
}

// OpenPositions reads the file at path, if there is one.
func OpenPositions(path string) (*PositionsFile, error) {
	f := &PositionsFile{path: path, m: map[string]map[string]position{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return nil, fmt.Errorf("stream positions: %w", err)
	}
	if err := json.Unmarshal(b, &f.m); err != nil {
		return nil, fmt.Errorf("stream positions %s: %w", path, err)
	}
	return f, nil
}

// Position implements Positions.
func (f *PositionsFile) Position(streamArn, shard string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.m[streamArn][shard]
	return p.After, p.Done
}

// SetPosition implements Positions: the file is rewritten (atomically) at each change.
func (f *PositionsFile) SetPosition(streamArn, shard, after string, done bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m[streamArn] == nil {
		f.m[streamArn] = map[string]position{}
	}
	p := position{After: after, Done: done}
	if f.m[streamArn][shard] == p {
		return nil
	}
	f.m[streamArn][shard] = p
	b, err := json.MarshalIndent(f.m, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(f.path), filepath.Base(f.path)+".*")
	if err != nil {
		return fmt.Errorf("stream positions: %w", err)
	}
	if _, err := tmp.Write(b); err != nil {
		_ = tmp.Close()
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("stream positions: %w", err)
	}
	if err := tmp.Close(); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("stream positions: %w", err)
	}
	if err := os.Rename(tmp.Name(), f.path); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("stream positions: %w", err)
	}
	return nil
}
