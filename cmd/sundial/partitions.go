package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"

	"github.com/sundialhq/sundial/infra/localaws"
)

// partitionsFlag adds --partitions to fs: how many DynamoDB Local engines the local DynamoDB
// is partitioned over. Its apply, called after parsing, hands a given count to the engines'
// start through the environment variable they read (localaws.PartitionsEnv).
func partitionsFlag(fs *flag.FlagSet) (apply func() error) {
	n := fs.Int("partitions", 0, fmt.Sprintf("DynamoDB Local engines the items are spread over by partition key, as DynamoDB's partitions, 1 to %d (default %s, else the machine's cores, at least 2; a kept database keeps its count)",
		localaws.MaxPartitions, localaws.PartitionsEnv))
	return func() error {
		if *n == 0 {
			return nil
		}
		if *n < 1 || *n > localaws.MaxPartitions {
			return usageErr("--partitions %d: want 1 to %d", *n, localaws.MaxPartitions)
		}
		return os.Setenv(localaws.PartitionsEnv, strconv.Itoa(*n))
	}
}
