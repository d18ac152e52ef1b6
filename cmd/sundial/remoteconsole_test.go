package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// `sundial console` serves this machine only, and finds the region in an API Gateway URL.
func TestConsoleFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--listen", "0.0.0.0:8089", "--api", "https://x.example/api/"}, "serves this machine only"},
		{[]string{"--listen", "nope", "--api", "https://x.example/api/"}, "--listen"},
		{[]string{"--token", "short", "--api", "https://x.example/api/"}, "at least 16 characters"},
		{[]string{"extra"}, "unexpected argument"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), append([]string{"console"}, tc.args...), &stdout, &stderr)
		require.Equal(t, 2, code, "%v: %s", tc.args, stderr.String())
		require.Contains(t, stderr.String(), tc.want)
	}
	require.Equal(t, "eu-west-1", regionOf("https://abc123.execute-api.eu-west-1.amazonaws.com/api/", ""))
	require.Equal(t, "ap-south-1", regionOf("https://abc123.execute-api.eu-west-1.amazonaws.com/api/", "ap-south-1"))
	t.Setenv("AWS_REGION", "")
	require.Equal(t, "us-east-1", regionOf("http://127.0.0.1:8089/api/", ""))
}
