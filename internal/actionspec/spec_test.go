package actionspec

import (
	"encoding/json"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

func TestSpecValidate(t *testing.T) {
	t.Parallel()
	httpSpec := func(url string, headers map[string]string) Spec {
		return Spec{HTTP: &HTTPSpec{URL: url, Headers: headers}}
	}
	tests := []struct {
		name    string
		spec    Spec
		wantErr string // substring; "" means valid
	}{
		{"http ok", httpSpec("https://example.com/hook", nil), ""},
		{"http with port and query", httpSpec("http://10.0.0.1:8080/x?y=1", nil), ""},
		{"lambda name", Spec{Lambda: &LambdaSpec{Function: "my-fn"}}, ""},
		{"lambda arn", Spec{Lambda: &LambdaSpec{Function: "arn:aws:lambda:us-east-1:123456789012:function:f:live"}}, ""},
		{"json content type restated", httpSpec("https://e.com", map[string]string{"content-type": "application/json; charset=utf-8"}), ""},
		{"auth header", httpSpec("https://e.com", map[string]string{"Authorization": "Bearer x"}), ""},

		{"neither", Spec{}, `action: exactly one of "http" or "lambda" is required`},
		{"both", Spec{HTTP: &HTTPSpec{URL: "https://e.com"}, Lambda: &LambdaSpec{Function: "f"}}, "not both"},
		{"empty url", httpSpec("  ", nil), "http.url is required"},
		{"relative url", httpSpec("/hook", nil), "absolute http:// or https://"},
		{"ftp url", httpSpec("ftp://e.com/x", nil), "absolute http:// or https://"},
		{"no host", httpSpec("http:///x", nil), "has no host"},
		{"port only", httpSpec("http://:80/x", nil), "has no host"},
		{"unparseable", httpSpec("http://e.com/%zz", nil), "not a valid URL"},
		{"password redacted", httpSpec("ftp://u:secret@e.com", nil), "u:xxxxx@e.com"},
		{"bad header name", httpSpec("https://e.com", map[string]string{"X Bad": "1"}), "not a valid header name"},
		{"empty header name", httpSpec("https://e.com", map[string]string{"": "1"}), "not a valid header name"},
		{"header injection", httpSpec("https://e.com", map[string]string{"X-A": "1\r\nX-B: 2"}), "control character"},
		{"host header", httpSpec("https://e.com", map[string]string{"host": "other"}), `"Host" cannot be set`},
		{"content length", httpSpec("https://e.com", map[string]string{"Content-Length": "1"}), "cannot be set"},
		{"non-json content type", httpSpec("https://e.com", map[string]string{"Content-Type": "text/plain"}), "must be application/json"},
		{"empty function", Spec{Lambda: &LambdaSpec{}}, "lambda.function is required"},
		{"function with space", Spec{Lambda: &LambdaSpec{Function: "my fn"}}, "must not contain spaces"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.spec.Validate()
			if tc.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.wantErr)
			require.NotContains(t, err.Error(), "secret", "validation errors must not leak credentials")
		})
	}
}

func TestSpecString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		spec Spec
		want string
	}{
		{Spec{HTTP: &HTTPSpec{URL: "https://e.com/hook", Headers: map[string]string{"X-Key": "k"}}}, "http POST https://e.com/hook"},
		{Spec{HTTP: &HTTPSpec{URL: "https://u:secret@e.com/hook"}}, "http POST https://u:xxxxx@e.com/hook"},
		{Spec{Lambda: &LambdaSpec{Function: "my-fn"}}, "lambda my-fn"},
		{Spec{}, "no action"},
		{Spec{HTTP: &HTTPSpec{}, Lambda: &LambdaSpec{}}, "invalid action (both http and lambda)"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, tc.spec.String())
		})
	}
}

// TestSpecEncodings pins the field names the manifest, the API and the table rely on.
func TestSpecEncodings(t *testing.T) {
	t.Parallel()
	want := Spec{HTTP: &HTTPSpec{URL: "https://e.com/x", Headers: map[string]string{"X-Key": "k"}}}

	var fromJSON Spec
	require.NoError(t, json.Unmarshal([]byte(`{"http":{"url":"https://e.com/x","headers":{"X-Key":"k"}}}`), &fromJSON))
	require.Equal(t, want, fromJSON)
	out, err := json.Marshal(Spec{Lambda: &LambdaSpec{Function: "f"}})
	require.NoError(t, err)
	require.JSONEq(t, `{"lambda":{"function":"f"}}`, string(out))

	var fromYAML Spec
	require.NoError(t, yaml.Unmarshal([]byte("http:\n  url: https://e.com/x\n  headers:\n    X-Key: k\n"), &fromYAML))
	require.Equal(t, want, fromYAML)

	av, err := attributevalue.MarshalMap(Spec{Lambda: &LambdaSpec{Function: "f"}})
	require.NoError(t, err)
	require.Contains(t, av, "lambda")
	require.NotContains(t, av, "http")
	var fromAV Spec
	require.NoError(t, attributevalue.UnmarshalMap(av, &fromAV))
	require.Equal(t, "f", fromAV.Lambda.Function)
}
