package cost

import (
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sundialhq/sundial/internal/itemsize"
)

// ItemSize is the size DynamoDB bills an item at, which is the size it counts against its
// item limit (itemsize.Item): for each attribute, its name's UTF-8 bytes plus its value's
// size.
func ItemSize(item map[string]types.AttributeValue) int { return itemsize.Item(item) }
