// Package itemsize counts the size of a DynamoDB item as DynamoDB counts it against its
// 400 KB item limit ("DynamoDB item sizes and formats", Amazon DynamoDB Developer Guide): the
// sum of the UTF-8 lengths of the attribute names and the sizes of the values, where a string
// is its UTF-8 bytes, a binary its raw bytes, a number 1 byte per two significant digits plus
// 1, a boolean or null 1 byte, and a list or map 3 bytes plus its elements, each 1 byte more
// (a map's element also counts its name).
package itemsize

import (
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// MaxItemBytes is DynamoDB's item size limit (400 KB, names and values).
const MaxItemBytes = 400 * 1024

// Item is the size of an item: its attribute names and values.
func Item(item map[string]types.AttributeValue) int {
	n := 0
	for name, v := range item {
		n += len(name) + Value(v)
	}
	return n
}

// Value is the size of one attribute value (without its name).
func Value(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return Number(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberSS:
		n := 0
		for _, s := range v.Value {
			n += len(s)
		}
		return n
	case *types.AttributeValueMemberNS:
		n := 0
		for _, s := range v.Value {
			n += Number(s)
		}
		return n
	case *types.AttributeValueMemberBS:
		n := 0
		for _, b := range v.Value {
			n += len(b)
		}
		return n
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += 1 + Value(e)
		}
		return n
	case *types.AttributeValueMemberM:
		n := 3
		for name, e := range v.Value {
			n += 1 + len(name) + Value(e)
		}
		return n
	}
	return 0
}

// Number is the size of a number: 1 byte per two significant digits (leading and trailing
// zeroes trimmed, rounded up) plus 1.
func Number(s string) int {
	s = strings.TrimLeft(s, "+-")
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		s = s[:i]
	}
	s = strings.Replace(s, ".", "", 1)
	s = strings.Trim(s, "0")
	return (len(s)+1)/2 + 1
}
