package main

import (
	"errors"
	"fmt"
	"testing"

	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"
)

// A key the endpoint does not know (the shell's, or --endpoint given as another spelling of
// the platform's address) is answered with what to do, not only the service's error code.
func TestCredentialHint(t *testing.T) {
	t.Parallel()
	for _, code := range []string{"UnrecognizedClientException", "InvalidSignatureException", "InvalidClientTokenId", "SignatureDoesNotMatch"} {
		err := fmt.Errorf("describe stack: %w", &smithy.GenericAPIError{Code: code, Message: "refused"})
		require.Contains(t, credentialHint(err), ".sundial/local.json", code)
	}
	require.Empty(t, credentialHint(&smithy.GenericAPIError{Code: "ResourceNotFoundException"}))
	require.Empty(t, credentialHint(errors.New("plain")))
}
