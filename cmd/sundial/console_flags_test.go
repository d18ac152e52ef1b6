package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// selfSigned writes a throwaway certificate and key for sundial.example.
func selfSigned(t *testing.T) (certPath, keyPath string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sundial.example"},
		DNSNames: []string{"sundial.example"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	kb, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	dir := t.TempDir()
	certPath, keyPath = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	require.NoError(t, os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600))
	return certPath, keyPath
}

// TestConsoleExposure: `sundial up` refuses to serve the console beyond loopback in clear
// text, before it starts anything.
func TestConsoleExposure(t *testing.T) {
	t.Parallel()
	cert, key := selfSigned(t)
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"EveryInterfaceWithoutTLS": {[]string{"--console", "0.0.0.0:8089"}, "clear text"},
		"AllInterfacesShorthand":   {[]string{"--console", ":8089"}, "clear text"},
		"LANAddressWithoutTLS":     {[]string{"--console", "192.0.2.10:8089"}, "clear text"},
		"NameWithoutTLS":           {[]string{"--console", "sundial.example:8089"}, "clear text"},
		"CertWithoutKey":           {[]string{"--console", "0.0.0.0:8089", "--tls-cert", cert}, "both --tls-cert and --tls-key"},
		"UnreadableCert":           {[]string{"--console", "0.0.0.0:8089", "--tls-cert", key, "--tls-key", key}, "--tls-cert/--tls-key"},
		"EveryInterfaceUnnamed":    {[]string{"--console", "0.0.0.0:8089", "--tls-cert", cert, "--tls-key", key}, "--console-host"},
		"MissingOperators":         {[]string{"--operators", "/nonexistent/operators.yaml"}, "--operators"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append([]string{"up", "--state", t.TempDir(), "--template", "/nonexistent/template.yaml"}, tc.args...), &stdout, &stderr)
			require.Equal(t, 2, code, stderr.String())
			require.Contains(t, stderr.String(), tc.want)
			require.NotContains(t, stdout.String(), "starting", "refused before starting anything")
		})
	}

	t.Run("LoopbackNeedsNoTLSAndATLSConsoleIsLinkedByItsName", func(t *testing.T) {
		t.Parallel()
		co := consoleOptions{addr: "127.0.0.1:8089"}
		require.NoError(t, co.check())
		require.Equal(t, "http://127.0.0.1:8089", consoleBase(co, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8089}))

		co = consoleOptions{addr: "0.0.0.0:8443", tlsCert: cert, tlsKey: key, hosts: "sundial.example, ops.example:443"}
		require.NoError(t, co.check())
		require.Equal(t, []string{"sundial.example", "ops.example:443"}, co.hostList())
		require.Equal(t, "https://sundial.example:8443", consoleBase(co, &net.TCPAddr{IP: net.IPv4zero, Port: 8443}))
	})
}
