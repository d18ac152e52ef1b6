package localaws

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// PartitionsEnv sets how many DynamoDB Local engines the local DynamoDB is partitioned over
// (infra/gateway/partition.go): a number ≥ 1, or empty for the default (DefaultPartitions).
const PartitionsEnv = "SUNDIAL_DYNAMODB_PARTITIONS"

// MaxPartitions bounds the engines started (each DynamoDB Local is a JVM of ~600 MB).
const MaxPartitions = 8

// DefaultPartitions is the machine's cores, at least 2 and at most MaxPartitions: each
// engine serves its requests on one SQLite thread, so more engines than cores gain nothing.
func DefaultPartitions() int { return min(max(runtime.NumCPU(), 2), MaxPartitions) }

// partitionsFile, in a kept database's directory, records how many engines its items were
// spread over: their placement depends on it.
const partitionsFile = "sundial-partitions"

// partitionDir is engine i's database directory: the first engine's is dbPath itself (so a
// database kept before partitioning is the first engine's), the others' below it.
func partitionDir(dbPath string, i int) string {
	if dbPath == "" || i == 0 {
		return dbPath
	}
	return filepath.Join(dbPath, "partition-"+strconv.Itoa(i))
}

// Partitions decides how many engines serve DynamoDB: requested (0: $SUNDIAL_DYNAMODB_PARTITIONS,
// else DefaultPartitions), unless a kept database in dbPath was written with another count,
// which is kept (an explicit other count is refused: the items would be looked for on the
// wrong engines). A database kept before partitioning is one engine's.
func Partitions(dbPath string, requested int) (int, error) {
	explicit := requested > 0
	if !explicit {
		if v := strings.TrimSpace(os.Getenv(PartitionsEnv)); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > MaxPartitions {
				return 0, fmt.Errorf("%s=%q: want a number of engines from 1 to %d", PartitionsEnv, v, MaxPartitions)
			}
			requested, explicit = n, true
		}
	}
	if requested > MaxPartitions {
		return 0, fmt.Errorf("%d DynamoDB partitions: at most %d", requested, MaxPartitions)
	}
	if !explicit {
		requested = DefaultPartitions()
	}
	if dbPath == "" {
		return requested, nil
	}
	kept := 0
	if b, err := os.ReadFile(filepath.Join(dbPath, partitionsFile)); err == nil {
		if kept, err = strconv.Atoi(strings.TrimSpace(string(b))); err != nil || kept < 1 {
			return 0, fmt.Errorf("%s: not a count of partitions: %q", filepath.Join(dbPath, partitionsFile), b)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return 0, err
	} else if dbs, _ := filepath.Glob(filepath.Join(dbPath, "*.db")); len(dbs) > 0 {
		kept = 1 // kept before the local DynamoDB was partitioned
	}
	switch {
	case kept == 0:
		return requested, nil
	case explicit && kept != requested:
		return 0, fmt.Errorf("the database in %s was kept with its items spread over %d DynamoDB engines; it cannot be read with %d (ask for %d, or start on an empty --data directory)",
			dbPath, kept, requested, kept)
	}
	return kept, nil
}

// recordPartitions writes the count into a kept database's directory.
func recordPartitions(dbPath string, n int) error {
	if dbPath == "" {
		return nil
	}
	if err := os.MkdirAll(dbPath, 0o700); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dbPath, partitionsFile), []byte(strconv.Itoa(n)+"\n"), 0o600)
}
