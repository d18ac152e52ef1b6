package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"gopkg.in/yaml.v3"

	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/itemsize"
)

// MaxExpandedBytes bounds a manifest's size with every alias (*name) replaced by what its
// anchor (&name) holds: yaml.v3's own alias guard counts nodes, not bytes, so one long value
// aliased many times would pass a node count and expand to gigabytes when synced.
const MaxExpandedBytes = 4 << 20

// ItemReserveBytes is what an instance item holds besides what its manifest entry sets: its
// keys (app, timer and tenant names of up to 128 characters each), its settings' numbers and
// its run state (the last error, the lease, the finish tokens). A dynamo test pins that a
// running instance at its largest fits in it.
const ItemReserveBytes = 16 << 10

// checkExpansion walks the document's nodes counting each scalar's bytes (and one per node),
// through aliases, and refuses a document larger than MaxExpandedBytes expanded. Sizes are
// memoised per node, so the walk is linear in the file whatever the aliases.
func checkExpansion(data []byte) error {
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil // the strict decode reports the empty manifest
		}
		return fmt.Errorf("%w: %v", errkind.Invalid, yamlProblems(data, err))
	}
	memo := map[*yaml.Node]int64{}
	var size func(n *yaml.Node, depth int) int64
	size = func(n *yaml.Node, depth int) int64 {
		if n == nil {
			return 0
		}
		if v, ok := memo[n]; ok {
			return v
		}
		if depth > 10000 {
			return MaxExpandedBytes + 1 // yaml.v3 refuses such nesting anyway
		}
		memo[n] = MaxExpandedBytes + 1 // an alias to a node being counted: refuse
		var v int64
		switch n.Kind {
		case yaml.AliasNode:
			v = size(n.Alias, depth+1)
		default:
			v = int64(len(n.Value)) + 1
			for _, c := range n.Content {
				v += size(c, depth+1)
				if v > MaxExpandedBytes {
					break
				}
			}
		}
		memo[n] = v
		return v
	}
	if got := size(&doc, 0); got > MaxExpandedBytes {
		return fmt.Errorf("%w: the manifest expands (its aliases *name replaced by their anchors' values) to more than %d bytes; write the values out or shorten them", errkind.Invalid, MaxExpandedBytes)
	}
	return nil
}

// InstanceItemBytes is the size, as DynamoDB counts it, an instance of the entry may reach in
// the timers table: what the entry sets (the action, the properties with a shard's tt_index
// and tt_total, the schedule and its options) plus ItemReserveBytes for the rest.
func (t Timer) InstanceItemBytes() (int, error) {
	props := t.Properties
	if t.Shards > 0 {
		props = make(map[string]string, len(t.Properties)+2)
		for k, v := range t.Properties {
			props[k] = v
		}
		props[PropShardIndex] = fmt.Sprint(t.Shards - 1)
		props[PropShardTotal] = fmt.Sprint(t.Shards)
	}
	action, err := attributevalue.Marshal(t.Action)
	if err != nil {
		return 0, err
	}
	n := itemsize.Value(action) + len(t.Schedule) + len(t.Timezone) + len(t.DST) + len(t.Misfire) + len(t.RetryBackoff) + len(t.Overlap)
	if len(props) > 0 {
		av, err := attributevalue.Marshal(props)
		if err != nil {
			return 0, err
		}
		n += itemsize.Value(av)
	}
	if len(t.Parameters) > 0 {
		av, err := attributevalue.Marshal(t.Parameters)
		if err != nil {
			return 0, err
		}
		n += itemsize.Value(av)
	}
	return n + ItemReserveBytes, nil
}

// DefinitionItemBytes is the size of the entry's definition item (its JSON, as a sync stores
// it, plus ItemReserveBytes).
func (t Timer) DefinitionItemBytes() (int, error) {
	spec, err := json.Marshal(t)
	if err != nil {
		return 0, err
	}
	return len(spec) + ItemReserveBytes, nil
}

// itemProblems reports an entry whose instance or definition item DynamoDB would refuse.
func (t Timer) itemProblems() []error {
	var errs []error
	if n, err := t.InstanceItemBytes(); err != nil {
		errs = append(errs, fmt.Errorf("encode: %v", err))
	} else if n > itemsize.MaxItemBytes {
		errs = append(errs, fmt.Errorf("properties/action: an instance would be a %d-byte item (what the entry sets, counted as DynamoDB counts it, plus %d bytes for its key and run state), over DynamoDB's %d-byte item limit; shorten the properties or headers", n, ItemReserveBytes, itemsize.MaxItemBytes))
	}
	if n, err := t.DefinitionItemBytes(); err != nil {
		errs = append(errs, fmt.Errorf("encode: %v", err))
	} else if n > itemsize.MaxItemBytes {
		errs = append(errs, fmt.Errorf("properties/action: the entry's stored definition (its JSON) would be a %d-byte item, over DynamoDB's %d-byte item limit; shorten the properties or headers (JSON escapes <, > and & as 6 bytes each)", n, itemsize.MaxItemBytes))
	}
	return errs
}
