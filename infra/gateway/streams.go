package gateway

import (
	"bytes"
	"regexp"
	"strings"
)

// DynamoDB Local, run with -sharedDb as the local platform runs it, names every table, index
// and stream in its own region and account, whatever the request's: the timers table's
// stream is arn:aws:dynamodb:ddblocal:000000000000:table/NAME/stream/LABEL. The stack (and
// so the roles' policies and the event source mappings) names it in the stack's region, as
// AWS would. The gateway translates: DynamoDB Local's ARNs in its answers become the
// stack's (TableArn, LatestStreamArn, StreamArn, shard iterators, which begin with their
// stream's ARN, and the records' awsRegion), and the stack's in a DynamoDB Streams request
// become DynamoDB Local's — which answers a stream it does not know by its own name as not
// found, and a shard iterator naming another region as an empty shard, silently.
//
// Only the values of those fields are rewritten, never item data: in an item an attribute
// named like one of them is followed by {"S": …}, not by a string, and a string value's
// quotes are escaped.
const (
	engineRegion  = "ddblocal"
	engineAccount = "000000000000"
)

var (
	// engineARNField is what precedes an ARN to rewrite: one of the fields, then `":"`.
	engineARNField    = regexp.MustCompile(`"(?:TableArn|IndexArn|LatestStreamArn|StreamArn|LastEvaluatedStreamArn|ShardIterator|NextShardIterator)"\s*:\s*"$`)
	engineARNPrefix   = []byte("arn:aws:dynamodb:" + engineRegion + ":" + engineAccount + ":")
	engineRegionField = regexp.MustCompile(`("awsRegion"\s*:\s*")` + engineRegion + `"`)
	engineMarker      = []byte(":" + engineRegion + ":")
	compactRegion     = []byte(`"awsRegion":"` + engineRegion + `"`)
)

// arnTranslator maps between the stack's region and account and DynamoDB Local's.
type arnTranslator struct {
	region, account string
	toEngine        *regexp.Regexp
}

func newARNTranslator(region, account string) *arnTranslator {
	if region == "" || account == "" {
		return nil
	}
	return &arnTranslator{region: region, account: account,
		toEngine: regexp.MustCompile(`("(?:StreamArn|ExclusiveStartStreamArn|ShardIterator)"\s*:\s*")arn:aws:dynamodb:` +
			regexp.QuoteMeta(region) + `:` + regexp.QuoteMeta(account) + `:`)}
}

// request rewrites a DynamoDB Streams request's stream ARNs to DynamoDB Local's.
func (t *arnTranslator) request(target string, body []byte) []byte {
	if t == nil || !strings.HasPrefix(target, "DynamoDBStreams_") {
		return body
	}
	return t.toEngine.ReplaceAll(body, []byte("${1}arn:aws:dynamodb:"+engineRegion+":"+engineAccount+":"))
}

// response rewrites DynamoDB Local's ARNs in an answer to the stack's; changed reports
// whether it did.
func (t *arnTranslator) response(body []byte) (out []byte, changed bool) {
	if t == nil || !bytes.Contains(body, engineMarker) {
		return body, false
	}
	out = replaceEngineARNs(body, []byte("arn:aws:dynamodb:"+t.region+":"+t.account+":"))
	// Every stream record names its region: DynamoDB Local writes the field compactly, which
	// a plain replace handles at a fraction of the expression's cost (GetRecords answers of
	// hundreds of kilobytes); the expression catches any other spacing.
	out = bytes.ReplaceAll(out, compactRegion, []byte(`"awsRegion":"`+t.region+`"`))
	if bytes.Contains(out, []byte(`"`+engineRegion+`"`)) {
		out = engineRegionField.ReplaceAll(out, []byte("${1}"+t.region+`"`))
	}
	return out, !bytes.Equal(out, body)
}

// replaceEngineARNs replaces DynamoDB Local's ARN prefix where it begins the value of one of
// the ARN fields (engineARNField), and nowhere else. It looks for the prefix first and checks
// the field before it in a short window: an expression over the whole answer costs a
// GetRecords of hundreds of kilobytes several milliseconds, on every poll.
func replaceEngineARNs(body, repl []byte) []byte {
	const window = 64 // the longest field name, its quotes, the colon and some spacing
	var out []byte
	last := 0
	for i := 0; ; {
		j := bytes.Index(body[i:], engineARNPrefix)
		if j < 0 {
			break
		}
		j += i
		if engineARNField.Match(body[max(0, j-window):j]) {
			out = append(out, body[last:j]...)
			out = append(out, repl...)
			last = j + len(engineARNPrefix)
		}
		i = j + len(engineARNPrefix)
	}
	if out == nil {
		return body
	}
	return append(out, body[last:]...)
}
