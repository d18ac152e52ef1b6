package itemsize

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"
)

func TestItemCountsNamesAndValuesAsDynamoDB(t *testing.T) {
	t.Parallel()
	item := map[string]types.AttributeValue{
		"pk":  &types.AttributeValueMemberS{Value: "T#héllo"}, // 2 + 8 (é is 2 bytes)
		"n":   &types.AttributeValueMemberN{Value: "12300"},   // 1 + (3 digits: 2) + 1
		"ok":  &types.AttributeValueMemberBOOL{Value: true},   // 2 + 1
		"nul": &types.AttributeValueMemberNULL{Value: true},   // 3 + 1
		"b":   &types.AttributeValueMemberB{Value: []byte{1, 2, 3}},
		"m": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{ // 1 + 3 + (1+1+1) + (1+2+3)
			"a":  &types.AttributeValueMemberS{Value: "x"},
			"bb": &types.AttributeValueMemberL{Value: nil},
		}},
		"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{ // 1 + 3 + (1+2)
			&types.AttributeValueMemberS{Value: "yz"},
		}},
	}
	require.Equal(t, 10+4+3+4+4+(4+3+6)+(4+3), Item(item))
	require.Equal(t, 2, Number("0.001"))
	require.Equal(t, 3, Number("-1234"))
	require.Equal(t, 3, Number("123"))
	require.Equal(t, 20, Number("12345678901234567890123456789012345678"))
}
