package gateway

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// ErrUnknownKey is a request signed with an access key ID VerifySigned does not know.
var ErrUnknownKey = errors.New("The security token included in the request is invalid.")

// VerifySigned checks a request to another local service that authorizes with IAM (the
// Service Center API, signing name execute-api) as the endpoint checks its own (auth.go):
// a SigV4 Authorization header for service, whose key secret knows, whose signature is
// the one that key's secret gives for the request and body, within 15 minutes of its
// X-Amz-Date. It returns the access key ID.
func VerifySigned(ctx context.Context, r *http.Request, body []byte, service string, secret func(keyID string) (string, bool), now time.Time) (string, error) {
	a, err := parseAuthorization(r)
	if err != nil {
		return "", err
	}
	s, ok := secret(a.keyID)
	if !ok {
		return a.keyID, ErrUnknownKey
	}
	if err := verifyAs(ctx, r, a, s, body, service, now); err != nil {
		return a.keyID, err
	}
	return a.keyID, nil
}
