// Command auditwriter is Sundial's audit writer Lambda function: the only role allowed to
// append to the audit trail. The API and recovery functions invoke it synchronously with the
// record; it validates it and appends it to the hash chain (see internal/auditwriter).
package main

import (
	"context"
	"encoding/json"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/sundialhq/sundial/internal/auditwriter"
	roleaudit "github.com/sundialhq/sundial/internal/role/auditwriter"
)

func main() { lambda.Start(handler(context.Background())) }

// handler is the function's Lambda handler (a RequestResponse invoke), wired from the
// environment as on Lambda; main_test.go invokes it with event.json.
func handler(ctx context.Context) func(context.Context, json.RawMessage) (auditwriter.Response, error) {
	return roleaudit.Lambda(ctx)
}
