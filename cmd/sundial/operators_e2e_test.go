package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/local"
	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/dynamo"
)

// TestUpOperators runs `sundial up --operators FILE` and sends signed requests to its
// console's API as to API Gateway: billing's operator reads the default app and is refused
// its Run Now, naming the route's ARN on the stack's API; a key no one has is refused; the
// administrator's key (.sundial/local.json) is allowed.
func TestUpOperators(t *testing.T) {
	if testing.Short() {
		t.Skip("runs sundial up against the emulator")
	}
	t.Parallel()
	actions := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	t.Cleanup(actions.Close)
	dir := t.TempDir()
	manifestPath := writeManifestIn(t, dir, fmt.Sprintf(`timers:
  - {name: Nightly, schedule: "02:00 Mon", action: {http: {url: "%s/ok"}}}
`, actions.URL))
	opsPath := filepath.Join(dir, "operators.yaml")
	require.NoError(t, os.WriteFile(opsPath, []byte(`operators:
  - name: billing-ops
    accessKeyId: AKIDBILLINGOPS
    secretAccessKey: "billing-secret"
    policies:
      - {Version: "2012-10-17", Statement: [{Effect: Allow, Action: "execute-api:Invoke", Resource: "arn:aws:execute-api:*:*:*/*/GET/*"}]}
      - {Version: "2012-10-17", Statement: [{Effect: Allow, Action: "execute-api:Invoke", Resource: ["arn:aws:execute-api:*:*:*/*/POST/api/apps/billing/*", "arn:aws:execute-api:*:*:*/*/PATCH/api/apps/billing/*"]}]}
`), 0o600))
	printed := startPlatform(t, dir, manifestPath, []string{"SUNDIAL_CONSOLE_TOKEN="}, "--console", "127.0.0.1:0", "--operators", opsPath).Banner
	require.Contains(t, printed, "operators", "up says operators are in force")
	base := strings.TrimSuffix(printed["console"], "/")
	st, ok := local.ReadState(filepath.Join(dir, local.DefaultStateFile))
	require.True(t, ok)

	send := func(method, path, key, secret string) (int, string) {
		req, err := http.NewRequest(method, base+path, nil)
		require.NoError(t, err)
		sum := sha256.Sum256(nil)
		require.NoError(t, v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: key, SecretAccessKey: secret},
			req, hex.EncodeToString(sum[:]), "execute-api", "us-east-1", time.Now()))
		req.Body = io.NopCloser(bytes.NewReader(nil))
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	status, body := send("GET", "/api/apps/default/timers/Nightly", "AKIDBILLINGOPS", "billing-secret")
	require.Equal(t, http.StatusOK, status, body)
	status, body = send("POST", "/api/apps/default/timers/Nightly/deactivate", "AKIDBILLINGOPS", "billing-secret")
	require.Equal(t, http.StatusForbidden, status, body)
	require.Contains(t, body, "User: billing-ops is not authorized to perform: execute-api:Invoke on resource: arn:aws:execute-api:us-east-1:000000000000:")
	require.Contains(t, body, "/$default/POST/api/apps/default/timers/Nightly/deactivate")
	require.NotContains(t, body, ":local/$default", "the ARN names the stack's API (the first label of ApiUrl)")
	status, body = send("POST", "/api/apps/default/timers/Nightly/deactivate", "AKIDNOONE", "x")
	require.Equal(t, http.StatusForbidden, status, body)
	status, body = send("POST", "/api/apps/default/timers/Nightly/deactivate", st.AccessKeyID, st.SecretAccessKey)
	require.Equal(t, http.StatusOK, status, "the administrator's key: %s", body)
	require.Contains(t, body, "deactivated")

	// Every action is in the audit trail once, with its caller: the API's (as the API
	// function's role, which may add records) and the CLI's.
	endpoint := st.Endpoint
	_, errOut, code := cli(t, dir, "run-now", "Nightly", "--endpoint", endpoint)
	require.Equal(t, 0, code, errOut)
	_, errOut, code = cli(t, dir, "tenants", "add", "acme", "--endpoint", endpoint)
	require.Equal(t, 0, code, errOut)
	_, errOut, code = cli(t, dir, "timers", "edit", "Nightly", "--priority", "2", "--endpoint", endpoint)
	require.Equal(t, 0, code, errOut)
	_, errOut, code = cli(t, dir, "dlq", "redrive", "--endpoint", endpoint)
	require.Equal(t, 0, code, errOut)
	_, errOut, code = cli(t, dir, "sync", manifestPath, "--endpoint", endpoint)
	require.Equal(t, 0, code, errOut)
	out, errOut, code := cli(t, dir, "audit", "--json", "--endpoint", endpoint)
	require.Equal(t, 0, code, errOut)
	recs := jsonLines[audit.Record](t, out)
	var got []string
	for _, r := range recs {
		got = append(got, r.Action+" "+r.Timer+" by "+r.Who)
	}
	me := cliActor()
	// (The oldest: the publish of `up --manifest`, audited as `sundial sync`'s.)
	require.Equal(t, []string{"sync  by " + me, "dlq-redrive  by " + me, "edit Nightly by " + me, "tenant-add  by " + me, "run-now Nightly by " + me, "deactivate Nightly by administrator", "sync  by " + me}, got)
	// The CLI with the operator's keys goes through the same API: it reads every app, runs
	// its own app's timer, edits it, and is refused another app's.
	billing := filepath.Join(dir, "billing.yaml")
	require.NoError(t, os.WriteFile(billing, []byte(fmt.Sprintf("app: billing\ntimers:\n  - {name: Invoice, schedule: \"every 1h\", action: {http: {url: \"%s/ok\"}}}\n", actions.URL)), 0o644))
	_, errOut, code = cli(t, dir, "sync", billing, "--endpoint", endpoint)
	require.Equal(t, 0, code, errOut)
	opEnv := []string{"AWS_ACCESS_KEY_ID=AKIDBILLINGOPS", "AWS_SECRET_ACCESS_KEY=billing-secret", "AWS_SESSION_TOKEN=", "AWS_PROFILE=",
		"AWS_REGION=us-east-1", "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null"}
	api := base + "/api/"
	out, errOut, code = cliEnv(t, dir, opEnv, "run-now", "--app", "billing", "Invoice", "--api", api)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "firing sent")
	_, errOut, code = cliEnv(t, dir, opEnv, "timers", "edit", "--app", "billing", "Invoice", "--priority", "2", "--api", api)
	require.Equal(t, 0, code, errOut)
	_, errOut, code = cliEnv(t, dir, opEnv, "deactivate", "Nightly", "--api", api)
	require.Equal(t, 1, code, "refused: %s", errOut)
	require.Contains(t, errOut, "User: billing-ops is not authorized to perform: execute-api:Invoke on resource:")
	out, errOut, code = cliEnv(t, dir, opEnv, "timers", "list", "--json", "--api", api)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, `"name":"Invoice"`)
	require.Contains(t, out, `"name":"Nightly"`, "reads every app")
	out, errOut, code = cliEnv(t, dir, opEnv, "timers", "show", "--app", "billing", "Invoice", "--api", api)
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `(?m)^priority:\s+2$`, out, "the operator's edit, in the readable view")
	require.Contains(t, out, "next runs (UTC):")
	// Backfills through the API: the operator starts and cancels one of its app's timer, and
	// is refused another app's.
	hour := time.Now().UTC().Truncate(time.Hour)
	rng := []string{"--from", hour.Add(-3 * time.Hour).Format(time.RFC3339), "--to", hour.Add(-time.Hour).Format(time.RFC3339), "--detach", "--api", api}
	out, errOut, code = cliEnv(t, dir, opEnv, append([]string{"backfill", "--app", "billing", "Invoice"}, rng...)...)
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `running: [0-3]/3 done`, out)
	out, errOut, code = cliEnv(t, dir, opEnv, "backfill", "cancel", "--app", "billing", "Invoice", "--api", api)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, " cancelled: ")
	_, errOut, code = cliEnv(t, dir, opEnv, append([]string{"backfill", "Nightly"}, rng...)...)
	require.Equal(t, 1, code, "refused: %s", errOut)
	require.Contains(t, errOut, "/POST/api/apps/default/timers/Nightly/backfill")
	_, errOut, code = cliEnv(t, dir, opEnv, "logs", "--app", "default", "--timer", "Nightly", "--limit", "600", "--api", api)
	require.Equal(t, 0, code, errOut)
	out, errOut, code = cliEnv(t, dir, opEnv, "health", "--json", "--api", api)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "Invoice")
	require.Contains(t, out, "Nightly", "reads every app")
	// Tenants and the DLQ through the API: the administrator's key may, billing's operator
	// may not (environment-wide operations).
	adminEnv := []string{"AWS_ACCESS_KEY_ID=" + st.AccessKeyID, "AWS_SECRET_ACCESS_KEY=" + st.SecretAccessKey, "AWS_SESSION_TOKEN=", "AWS_PROFILE=",
		"AWS_REGION=us-east-1", "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null"}
	_, errOut, code = cliEnv(t, dir, adminEnv, "tenants", "add", "globex", "--api", api)
	require.Equal(t, 0, code, errOut)
	out, errOut, code = cliEnv(t, dir, opEnv, "tenants", "list", "--json", "--api", api)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "globex")
	_, errOut, code = cliEnv(t, dir, opEnv, "tenants", "remove", "globex", "--api", api)
	require.Equal(t, 1, code, errOut)
	require.Contains(t, errOut, "/DELETE/api/tenants/globex")
	_, errOut, code = cliEnv(t, dir, opEnv, "dlq", "redrive", "--api", api)
	require.Equal(t, 1, code, errOut)
	_, errOut, code = cliEnv(t, dir, adminEnv, "dlq", "redrive", "--api", api)
	require.Equal(t, 0, code, errOut)
	_, errOut, code = cliEnv(t, dir, adminEnv, "tenants", "remove", "globex", "--api", api)
	require.Equal(t, 0, code, errOut)
	out, errOut, code = cliEnv(t, dir, adminEnv, "audit", "--who", "administrator", "--json", "--api", api)
	require.Equal(t, 0, code, errOut)
	for _, action := range []string{"tenant-add", "tenant-remove", "dlq-redrive"} {
		require.Contains(t, out, `"action":"`+action+`"`)
	}

	out, errOut, code = cliEnv(t, dir, opEnv, "audit", "--app", "billing", "--json", "--api", api)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, `"who":"billing-ops"`, "the API records the operator")

	// A bulk pause with a note until an instant: shown with the timer, ended by the
	// platform itself, and audited as such.
	// 12 s: the listing below must come before it ends, two CLI calls on a loaded machine.
	until := time.Now().Add(12 * time.Second).UTC().Format(time.RFC3339)
	out, errOut, code = cli(t, dir, "deactivate", "--app", "billing", "--all", "--note", "month-end freeze", "--until", until, "--endpoint", endpoint)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "activates them again at "+until)
	out, errOut, code = cli(t, dir, "timers", "list", "--app", "billing", "--endpoint", endpoint)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "paused billing:Invoice by "+cliActor())
	require.Contains(t, out, "resumes "+until+"): month-end freeze")
	require.Eventually(t, func() bool {
		out, _, code := cli(t, dir, "timers", "list", "--app", "billing", "--json", "--endpoint", endpoint)
		return code == 0 && strings.Contains(out, `"active":true`) && !strings.Contains(out, "month-end freeze")
	}, 45*time.Second, 500*time.Millisecond, "the platform activates them again at --until")
	// The sweep activates each timer, then records it: the record follows the activation.
	require.Eventually(t, func() bool {
		out, _, code = cli(t, dir, "audit", "--app", "billing", "--who", "platform", "--json", "--endpoint", endpoint)
		return code == 0 && strings.Contains(out, `"action":"activate"`)
	}, 10*time.Second, 300*time.Millisecond, "the platform's activation is audited: %s", out)
	require.Contains(t, out, "month-end freeze")

	out, errOut, code = cli(t, dir, "audit", "--timer", "Nightly", "--app", "default", "--endpoint", endpoint)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "run-now")
	require.NotContains(t, out, "tenant-add")
	require.Contains(t, out, "priority: 3 → 2") // the edit's before and after, in words
	require.NotContains(t, out, "map[")
	requireIAMClean(t, dir, endpoint)

	// Tampering must be detectable whoever wrote: every writer above (the API's role, the CLI, the platform's recovery)
	// appended to one hash chain, which verifies; a record deleted and one altered behind
	// the platform's back (plain DynamoDB calls with the administrator's key) are named.
	out, errOut, code = cli(t, dir, "audit", "verify", "--endpoint", endpoint)
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	require.Contains(t, out, "OK         no record deleted, changed or inserted")
	ddb := dynamodb.NewFromConfig(adminConfig(t, dir, endpoint))
	logTable := ""
	tables, err := ddb.ListTables(context.Background(), &dynamodb.ListTablesInput{})
	require.NoError(t, err)
	for _, name := range tables.TableNames {
		if strings.Contains(name, "LogTable") {
			logTable = name
		}
	}
	require.NotEmpty(t, logTable, "tables: %v", tables.TableNames)
	day := dynamo.AuditPrefix + time.Now().UTC().Format(time.DateOnly)
	page, err := ddb.Query(context.Background(), &dynamodb.QueryInput{TableName: &logTable, KeyConditionExpression: aws.String("pk = :p"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: day}}, ConsistentRead: aws.Bool(true)})
	require.NoError(t, err)
	var runNow, tenantAdd map[string]types.AttributeValue
	for _, it := range page.Items {
		rec := it["record"].(*types.AttributeValueMemberS).Value
		switch {
		case strings.Contains(rec, `"action":"run-now"`) && strings.Contains(rec, `"timer":"Nightly"`) && runNow == nil:
			runNow = it
		case strings.Contains(rec, `"action":"tenant-add"`) && strings.Contains(rec, `"acme"`):
			tenantAdd = it
		}
	}
	require.NotNil(t, runNow)
	require.NotNil(t, tenantAdd)
	keyOf := func(it map[string]types.AttributeValue) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"pk": it["pk"], "sk": it["sk"]}
	}
	_, err = ddb.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: &logTable, Key: keyOf(runNow)})
	require.NoError(t, err)
	_, err = ddb.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{TableName: &logTable, Key: keyOf(tenantAdd),
		UpdateExpression: aws.String("SET #r = :r"), ExpressionAttributeNames: map[string]string{"#r": "record"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":r": &types.AttributeValueMemberS{
			Value: strings.Replace(tenantAdd["record"].(*types.AttributeValueMemberS).Value, `"acme"`, `"globex"`, 1)}}})
	require.NoError(t, err)
	out, errOut, code = cli(t, dir, "audit", "verify", "--endpoint", endpoint)
	require.Equal(t, 1, code, "%s\n%s", out, errOut)
	seq := func(it map[string]types.AttributeValue) string { return it["seq"].(*types.AttributeValueMemberN).Value }
	require.Regexp(t, `(?m)^deleted\s+#`+seq(runNow)+`\s+record #`+seq(runNow)+` is missing, between `, out)
	require.Regexp(t, `(?m)^changed\s+#`+seq(tenantAdd)+`\s+record #`+seq(tenantAdd)+` does not match its hash: .* tenant-add by `+me, out)
	require.Contains(t, errOut, "the trail was tampered with: 2 finding(s)")

	// .sundial holds the administrator's key and the database: the user's only.
	for path, want := range map[string]os.FileMode{".sundial": 0o700, ".sundial/local.json": 0o600, ".sundial/dynamodb": 0o700} {
		fi, err := os.Stat(filepath.Join(dir, path))
		require.NoError(t, err)
		require.Equal(t, want, fi.Mode().Perm(), path)
	}
	// Every engine's database (the partitioned DynamoDB keeps engine i > 0 in partition-<i>/):
	// its directories 0700, its files 0600.
	files := 0
	require.NoError(t, filepath.WalkDir(filepath.Join(dir, ".sundial", "dynamodb"), func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		fi, err := d.Info()
		require.NoError(t, err)
		want := os.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		} else {
			files++
		}
		require.Equal(t, want, fi.Mode().Perm(), p)
		return nil
	}))
	require.NotZero(t, files)
}
