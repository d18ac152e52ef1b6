package console

import (
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/strictjson"
)

// decodeStrict decodes a request body holding exactly one JSON object into v (a pointer to
// a struct) with strictjson: keys must match v's json tags exactly — encoding/json alone
// would take "Priority" for "priority" — appear once, and nothing may follow the object. A
// client that sends anything else learns so, rather than having part of its request
// silently ignored.
func decodeStrict(body io.Reader, v any) error {
	raw, err := io.ReadAll(body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return err
		}
		return fmt.Errorf("%w: body: %v", errkind.Invalid, err)
	}
	if err := strictjson.Decode(raw, v); err != nil {
		return fmt.Errorf("%w: body: %v", errkind.Invalid, err)
	}
	return nil
}
