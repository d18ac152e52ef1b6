package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/cfn"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/functions/internal/lambdatest"
	"github.com/sundialhq/sundial/internal/manifest"
	"github.com/sundialhq/sundial/internal/publish"
	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// The sample CloudFormation Create request goes through the handler main.go starts, with the
// manifest packaged as `make build-PublishFunction` packages it (examples/timers.yaml as
// timers.yaml beside the bootstrap, in LAMBDA_TASK_ROOT): every timer is created, and the
// function answers SUCCESS at the request's pre-signed URL. Only ResponseURL is replaced, by
// a server standing in for S3.
func TestSampleEvent(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	body, err := os.ReadFile("../../examples/timers.yaml")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, "timers.yaml"), body, 0o644))
	cfg, outs := lambdatest.Env(t, "publish", map[string]string{"LAMBDA_TASK_ROOT": root})
	_, ev := lambdatest.Event[cfn.Event](t)
	require.Equal(t, cfn.RequestCreate, ev.RequestType)
	require.Equal(t, "Custom::SundialPublish", ev.ResourceType)
	require.Contains(t, ev.ResourceProperties, "ServiceToken")

	var mu sync.Mutex
	var answers []cfn.Response
	s3 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var res cfn.Response
		if r.Method != http.MethodPut || json.Unmarshal(b, &res) != nil {
			http.Error(w, "want a PUT of a JSON response", http.StatusBadRequest)
			return
		}
		mu.Lock()
		answers = append(answers, res)
		mu.Unlock()
	}))
	t.Cleanup(s3.Close)
	ev.ResponseURL = s3.URL + "/response?X-Amz-Signature=x"
	payload, err := json.Marshal(ev)
	require.NoError(t, err)

	_, err = lambdatest.Invoke(t, "publish", handler(ctx), 300*time.Second, payload)
	require.NoError(t, err)

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, answers, 1, "one answer to CloudFormation")
	res := answers[0]
	require.Equal(t, cfn.StatusSuccess, res.Status, res.Reason)
	require.Equal(t, publish.PhysicalID, res.PhysicalResourceID)
	require.Equal(t, ev.RequestID, res.RequestID)
	require.Equal(t, ev.StackID, res.StackID)
	require.Equal(t, ev.LogicalResourceID, res.LogicalResourceID)
	require.NotZero(t, res.Data["Created"])

	m, err := manifest.Load(filepath.Join(root, "timers.yaml"))
	require.NoError(t, err)
	a := lambdatest.App(t, cfg, outs)
	for _, tm := range m.Timers {
		tenant := ""
		if tm.MultiTenant {
			tenant = m.Tenants[0]
		}
		in, err := a.Store.Get(ctx, timer.Key{Timer: tm.InstanceNames()[0], Tenant: tenant})
		require.NoError(t, err, "%s was created", tm.Name)
		require.Equal(t, tm.IsActive(), in.Active, tm.Name)
	}
}
