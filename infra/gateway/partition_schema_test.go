package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"
)

// schemaEngine is a DynamoDB engine whose DescribeTable fails while failing > 0 (as a loaded
// DynamoDB Local answers 500) and which records the keys it is given to write.
type schemaEngine struct {
	mu      sync.Mutex
	failing int
	status  int // the failing DescribeTable's status
	puts    []string
}

func (e *schemaEngine) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	e.mu.Lock()
	defer e.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	switch strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "DynamoDB_20120810.") {
	case "DescribeTable":
		if e.failing > 0 {
			e.failing--
			w.WriteHeader(e.status)
			if e.status == http.StatusBadRequest {
				_, _ = io.WriteString(w, `{"__type":"com.amazonaws.dynamodb.v20120810#ResourceNotFoundException","message":"Cannot do operations on a non-existent table"}`)
				return
			}
			_, _ = io.WriteString(w, `{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"The request processing has failed because of an unknown error, exception or failure."}`)
			return
		}
		_, _ = io.WriteString(w, `{"Table":{"TableName":"t","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}]}}`)
	case "PutItem":
		var req struct{ Item map[string]struct{ S string } }
		_ = json.Unmarshal(body, &req)
		e.puts = append(e.puts, req.Item["pk"].S)
		_, _ = io.WriteString(w, `{}`)
	default:
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"__type":"com.amazon.coral.validate#ValidationException","message":"not served"}`)
	}
}

func (e *schemaEngine) written() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.puts...)
}

// A failure to read a table's key schema that is not the table's (the first engine failing,
// as under load) must not send a write to an engine that may not own its item: it went to
// the first engine, where the reads, routed to the owner, never found it. It is answered as
// a server error the SDK retries, and the retry goes to the owner. A table the engine does not
// know is still the first engine's to answer.
func TestPartitionSchemaFailureIsRetriedNotMisrouted(t *testing.T) {
	t.Parallel()
	engines := []*schemaEngine{{status: http.StatusInternalServerError}, {}}
	var urls []string
	for _, e := range engines {
		srv := httptest.NewServer(e)
		t.Cleanup(srv.Close)
		urls = append(urls, srv.URL)
	}
	g := &Gateway{EngineSecret: "s", Region: "us-east-1", Account: "123456789012", Partitions: urls}
	url, err := g.Start("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	db := dynamodb.NewFromConfig(aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(url), RetryMaxAttempts: 3,
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})

	pk := "" // a key the second engine owns
	for i := 0; pk == ""; i++ {
		if k := fmt.Sprint("k", i); g.parts.owner(json.RawMessage(`{"S":"`+k+`"}`)) == 1 {
			pk = k
		}
	}
	put := func() error {
		_, err := db.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String("t"),
			Item: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}}})
		return err
	}

	// DescribeTable fails once: the SDK's retry writes the item on its owner.
	engines[0].failing = 1
	require.NoError(t, put())
	require.Empty(t, engines[0].written(), "nothing written on the first engine, which does not own %s", pk)
	require.Equal(t, []string{pk}, engines[1].written(), "written once, on its owner")

	// It keeps failing: the caller is told (a retryable 500), nothing is written anywhere.
	g.parts.mu.Lock()
	delete(g.parts.schemas, "t")
	g.parts.mu.Unlock()
	engines[0].mu.Lock()
	engines[0].failing = 100
	engines[0].mu.Unlock()
	err = put()
	require.ErrorContains(t, err, "StatusCode: 500")
	require.ErrorContains(t, err, "InternalServerError")
	require.Empty(t, engines[0].written())
	require.Equal(t, []string{pk}, engines[1].written())

	// A table the engine does not know: the first engine answers the request.
	engines[0].mu.Lock()
	engines[0].failing, engines[0].status = 1, http.StatusBadRequest
	engines[0].mu.Unlock()
	require.NoError(t, put(), "the fake first engine accepts the write it is given")
	require.Equal(t, []string{pk}, engines[0].written(), "as one engine answers it")
}
