// Command bootstrap is a test function for ProcessFunction: what it does depends on the
// payload's "op" (and, during init, on TEST_INIT), so that tests can make it echo, sleep
// past its timeout, fail, panic or exit.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
)

type request struct {
	Op   string          `json:"op"`
	Ms   int             `json:"ms"`
	Code int             `json:"code"`
	Msg  string          `json:"msg"`
	Data json.RawMessage `json:"data"`
}

type response struct {
	Data        json.RawMessage   `json:"data,omitempty"`
	RequestID   string            `json:"requestId"`
	ARN         string            `json:"arn"`
	DeadlineMs  int64             `json:"deadlineMs"`
	HasDeadline bool              `json:"hasDeadline"`
	PID         int               `json:"pid"`
	ChildPID    int               `json:"childPid,omitempty"`
	Env         map[string]string `json:"env"`
	Big         string            `json:"big,omitempty"`
}

// Refused is an error type of our own, reported with its type name as errorType.
type Refused struct{ Why string }

func (r *Refused) Error() string { return "refused: " + r.Why }

func handle(ctx context.Context, req request) (response, error) {
	lc, _ := lambdacontext.FromContext(ctx)
	dl, ok := ctx.Deadline()
	resp := response{Data: req.Data, RequestID: lc.AwsRequestID, ARN: lc.InvokedFunctionArn,
		DeadlineMs: dl.UnixMilli(), HasDeadline: ok, PID: os.Getpid(), Env: map[string]string{}}
	for _, kv := range os.Environ() {
		if k, v, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "AWS_") || strings.HasPrefix(k, "TEST_") || k == "_HANDLER" || k == "_X_AMZN_TRACE_ID" {
			resp.Env[k] = v
		}
	}
	switch req.Op {
	case "sleep": // deliberately deaf to ctx: a handler that overruns its deadline
		fmt.Printf("sleeping %d ms\n", req.Ms)
		time.Sleep(time.Duration(req.Ms) * time.Millisecond)
	case "spawn": // a grandchild in the same process group, then sleep
		child := exec.Command(os.Args[0])
		child.Env = append(os.Environ(), "TEST_CHILD=1")
		if err := child.Start(); err != nil {
			return resp, err
		}
		resp.ChildPID = child.Process.Pid
		time.Sleep(time.Duration(req.Ms) * time.Millisecond)
	case "error":
		return resp, errors.New(req.Msg)
	case "refuse":
		return resp, &Refused{Why: req.Msg}
	case "panic":
		panic(req.Msg)
	case "exit":
		fmt.Fprintln(os.Stderr, "exiting with", req.Code)
		os.Exit(req.Code)
	case "big":
		resp.Big = strings.Repeat("x", 7<<20)
	}
	return resp, nil
}

func main() {
	if os.Getenv("TEST_CHILD") != "" {
		time.Sleep(time.Hour)
		return
	}
	switch os.Getenv("TEST_INIT") {
	case "exit":
		fmt.Fprintln(os.Stderr, "init: cannot start")
		os.Exit(4)
	case "post": // report through the Runtime API, then hang: Lambda must kill it
		url := "http://" + os.Getenv("AWS_LAMBDA_RUNTIME_API") + "/2018-06-01/runtime/init/error"
		body := `{"errorType":"Custom.InitFailure","errorMessage":"no configuration"}`
		if resp, err := http.Post(url, "application/json", strings.NewReader(body)); err == nil {
			fmt.Println("init error posted:", resp.Status)
		}
		time.Sleep(time.Hour)
	case "hang":
		time.Sleep(time.Hour) // not select{}: Go would call that a deadlock and exit
	}
	fmt.Println("init done pid", os.Getpid())
	lambda.Start(handle)
}
